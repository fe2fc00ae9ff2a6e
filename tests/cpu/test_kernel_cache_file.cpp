// The kernel cache's disk entries against damage and hostile files, without NVRTC or a GPU: an
// entry that is a FIFO, a symlink, a directory, a sparse 8 GiB file or a corrupted file is never
// loaded, never hangs or exhausts memory, and is cleared away so the next write succeeds; the
// cache folder must be private to this user.
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backend/cuda/kernel_cache_file.hpp"
#include "common/bounded_run.hpp"
#include "core/files.hpp"

using namespace dgemm;

namespace {

const std::string kKey = "0123456789abcdef0123456789abcdef";

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("dgemm_kcache_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path);
    ::chmod(path.c_str(), 0700);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string entry() const { return (path / (kKey + ".cubin")).string(); }
};

const std::vector<char> kCubin = {'\x7f', 'E', 'L', 'F', 1, 2, 3};

bool is_regular(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// read_cache_entry in a child with a 10 s and 1 GiB bound: "hit", "miss" or an exception.
std::string bounded_read(const std::string& path) {
  const test::BoundedResult r = test::run_bounded(
      [&] {
        jit::CacheEntry e;
        return std::string(jit::read_cache_entry(path, kKey, &e) ? "hit" : "miss");
      },
      10.0);
  return r.finished ? r.text : "hung";
}

// After an unusable entry was met, the cache works again: a write lands and reads back.
void expect_cache_works_again(const std::string& path) {
  BOOST_TEST(jit::write_cache_entry(path, kKey, kCubin, "log"));
  jit::CacheEntry e;
  BOOST_TEST(jit::read_cache_entry(path, kKey, &e));
  BOOST_TEST((e.cubin == kCubin));
  BOOST_TEST(e.log == "log");
}

}  // namespace

BOOST_AUTO_TEST_CASE(entries_round_trip_and_damage_is_detected_and_removed) {
  TempDir dir;
  const std::string path = dir.entry();
  BOOST_REQUIRE(jit::write_cache_entry(path, kKey, kCubin, "ptxas info"));
  jit::CacheEntry e;
  BOOST_REQUIRE(jit::read_cache_entry(path, kKey, &e));
  BOOST_TEST((e.cubin == kCubin));
  BOOST_TEST(e.log == "ptxas info");
  BOOST_TEST(!jit::read_cache_entry(path, "ffffffffffffffffffffffffffffffff", &e));  // another key: not ours
  BOOST_TEST(!exists(path));
  // One flipped byte in the payload: the checksum catches it and the entry goes.
  BOOST_REQUIRE(jit::write_cache_entry(path, kKey, kCubin, "ptxas info"));
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64 + 9);
    f.put('\x55');
  }
  BOOST_TEST(!jit::read_cache_entry(path, kKey, &e));
  BOOST_TEST(!exists(path));
  expect_cache_works_again(path);
}

BOOST_AUTO_TEST_CASE(a_fifo_entry_neither_hangs_nor_stays) {
  TempDir dir;
  const std::string path = dir.entry();
  BOOST_REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  BOOST_TEST(bounded_read(path) == "miss");  // `deepgemm warm` used to hang here
  BOOST_TEST(!exists(path));
  expect_cache_works_again(path);
}

BOOST_AUTO_TEST_CASE(a_symlink_entry_is_never_followed) {
  TempDir dir, elsewhere;
  // A valid entry outside the cache, and a link to it where the cache looks.
  const std::string outside = elsewhere.entry();
  BOOST_REQUIRE(jit::write_cache_entry(outside, kKey, {'e', 'v', 'i', 'l'}, ""));
  const std::string path = dir.entry();
  BOOST_REQUIRE(::symlink(outside.c_str(), path.c_str()) == 0);
  jit::CacheEntry e;
  BOOST_TEST(!jit::read_cache_entry(path, kKey, &e));
  BOOST_TEST(!exists(path));         // the link is gone
  BOOST_TEST(is_regular(outside));   // what it pointed to is untouched
  expect_cache_works_again(path);
}

BOOST_AUTO_TEST_CASE(a_directory_entry_is_moved_aside) {
  TempDir dir;
  const std::string path = dir.entry();
  std::filesystem::create_directories(path + "/inside");
  BOOST_TEST(bounded_read(path) == "miss");  // moved aside, its contents kept
  BOOST_TEST(!exists(path));
  expect_cache_works_again(path);  // the kernel was never cached again before
}

BOOST_AUTO_TEST_CASE(a_huge_claimed_payload_is_not_allocated) {
  TempDir dir;
  const std::string path = dir.entry();
  // A consistent header for an 8 GiB entry, in a sparse file of that size: the old reader
  // allocated 8 GiB before the checksum (bad_alloc on every compile, and the entry stayed).
  BOOST_REQUIRE(jit::write_cache_entry(path, kKey, kCubin, ""));
  const uint64_t size = uint64_t(8) << 30, payload = size - 64;
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(48);
    f.write(reinterpret_cast<const char*>(&payload), 8);
  }
  BOOST_REQUIRE(::truncate(path.c_str(), off_t(size)) == 0);
  BOOST_TEST(bounded_read(path) == "miss");
  BOOST_TEST(!exists(path));
  expect_cache_works_again(path);
}

BOOST_AUTO_TEST_CASE(temporaries_never_reuse_a_planted_file) {
  TempDir dir;
  const std::string path = dir.entry();
  BOOST_REQUIRE(write_file_atomically(path, "first"));
  BOOST_REQUIRE(write_file_atomically(path, "second"));
  std::string text;
  BOOST_REQUIRE(read_regular_file(path, 100, false, &text).status == ReadStatus::Ok);
  BOOST_TEST(text == "second");
  // Nothing but the entry is left behind.
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir.path)) (void)f, ++files;
  BOOST_TEST(files == 1);
}

BOOST_AUTO_TEST_CASE(the_cache_folder_must_be_private) {
  TempDir dir;
  const std::string sub = (dir.path / "a" / "b").string();
  BOOST_TEST(prepare_private_dir(sub) == "");  // created, mode 0700
  struct stat st;
  BOOST_REQUIRE(::stat(sub.c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 077) == 0u);
  ::chmod(sub.c_str(), 0775);
  BOOST_TEST(prepare_private_dir(sub).find("writable by group or others (mode 0775)") != std::string::npos);
  ::chmod(sub.c_str(), 0757);
  BOOST_TEST(prepare_private_dir(sub).find("writable by group or others") != std::string::npos);
  ::chmod(sub.c_str(), 0755);
  BOOST_TEST(prepare_private_dir(sub) == "");
  if (::geteuid() != 0) {
    BOOST_TEST(prepare_private_dir("/").find("owned by uid 0") != std::string::npos);
  } else {
    // As root (CI runs so) "/" is ours: give a folder to another user instead, so the ownership
    // rule is checked on every run, not only by unprivileged ones.
    const std::string foreign = (dir.path / "foreign").string();
    BOOST_REQUIRE(prepare_private_dir(foreign) == "");
    if (::chown(foreign.c_str(), 65534, 65534) == 0)
      BOOST_TEST(prepare_private_dir(foreign).find("owned by uid 65534, not by this user") != std::string::npos);
    else  // a user namespace without uid 65534
      BOOST_TEST_MESSAGE("chown to uid 65534 failed (" << std::strerror(errno) << "): ownership rule not checked");
  }
  const std::string file = (dir.path / "plain").string();
  std::ofstream(file) << "x";
  BOOST_TEST(prepare_private_dir(file).find("not a folder") != std::string::npos);
  // A folder this process owns but where nothing can be created, even by root: writes fail
  // (and report it) instead of pretending.
  BOOST_TEST(prepare_private_dir("/proc/self/fdinfo") == "");
  BOOST_TEST(!jit::write_cache_entry("/proc/self/fdinfo/" + kKey + ".cubin", kKey, kCubin, ""));
}
