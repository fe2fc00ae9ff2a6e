// Disk entries of the kernel cache (see kernel_cache_file.hpp).
#include "backend/cuda/kernel_cache_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "core/files.hpp"

namespace dgemm {
namespace jit {
namespace {

constexpr char kMagic[8] = {'D', 'G', 'E', 'M', 'M', 'J', 'I', 'T'};
constexpr std::uint32_t kFormat = 1;
struct Header {
  char magic[8];
  std::uint32_t format;
  std::uint32_t reserved;
  char key[32];
  std::uint64_t payload_size;
  std::uint64_t payload_checksum;
};
static_assert(sizeof(Header) == 64, "fixed header layout");

std::uint64_t checksum(const char* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ static_cast<unsigned char>(data[i])) * 0x100000001b3ull;
  return h;
}

// Gets an unusable entry out of the way: removed, or (a directory, whose contents are not ours
// to delete) renamed aside. Best effort: if even that fails, compiles still work, uncached.
void discard(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    ::unlink(path.c_str());
    return;
  }
  static std::atomic<unsigned> counter{0};
  const std::string aside =
      path + ".unusable." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  ::rename(path.c_str(), aside.c_str());
}

}  // namespace

std::string encode_cache_entry(const std::string& key, const std::vector<char>& cubin, const std::string& log) {
  std::string payload(8 + cubin.size() + log.size(), '\0');
  const std::uint64_t cubin_size = cubin.size();
  std::memcpy(&payload[0], &cubin_size, 8);
  if (!cubin.empty()) std::memcpy(&payload[8], cubin.data(), cubin.size());
  if (!log.empty()) std::memcpy(&payload[8 + cubin.size()], log.data(), log.size());
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.format = kFormat;
  std::memcpy(h.key, key.data(), key.size() < 32 ? key.size() : 32);
  h.payload_size = payload.size();
  h.payload_checksum = checksum(payload.data(), payload.size());
  return std::string(reinterpret_cast<const char*>(&h), sizeof h) + payload;
}

bool decode_cache_entry(const char* data, std::size_t size, const std::string& key, CacheEntry* out) {
  Header h;
  if (size < sizeof h || key.size() != 32) return false;
  std::memcpy(&h, data, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.format != kFormat || h.reserved != 0 ||
      std::memcmp(h.key, key.data(), 32) != 0 || h.payload_size != size - sizeof h || h.payload_size < 8)
    return false;
  const char* payload = data + sizeof h;
  if (checksum(payload, h.payload_size) != h.payload_checksum) return false;
  std::uint64_t cubin_size;
  std::memcpy(&cubin_size, payload, 8);
  if (cubin_size == 0 || cubin_size > h.payload_size - 8) return false;
  out->cubin.assign(payload + 8, payload + 8 + cubin_size);
  out->log.assign(payload + 8 + cubin_size, payload + h.payload_size);
  return true;
}

bool read_cache_entry(const std::string& path, const std::string& key, CacheEntry* out) {
  std::string bytes;
  const ReadResult r = read_regular_file(path, kMaxCacheEntryBytes, /*follow_symlinks=*/false, &bytes);
  if (r.status == ReadStatus::Missing) return false;
  if (r.status == ReadStatus::Ok && decode_cache_entry(bytes.data(), bytes.size(), key, out)) return true;
  discard(path);  // damaged, truncated, planted, or not a file at all
  return false;
}

bool write_cache_entry(const std::string& path, const std::string& key, const std::vector<char>& cubin,
                       const std::string& log) {
  return write_file_atomically(path, encode_cache_entry(key, cubin, log));
}

}  // namespace jit
}  // namespace dgemm
