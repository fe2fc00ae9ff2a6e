// Hardware description files: the five shipped machines load (embedded and from the source tree),
// overrides change only what they name, and every bad file is an ArchFileError that names the
// file, the line and the field.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/bounded_run.hpp"
#include "core/error.hpp"
#include "plan/arch_file.hpp"
#include "plan/planner.hpp"

using namespace dgemm;

namespace {

// A YAML file in a fresh temporary folder, removed when the test ends.
struct TempYaml {
  std::string path;
  explicit TempYaml(const std::string& text, const std::string& name = "arch.yaml") {
    static int counter = 0;
    auto dir = std::filesystem::temp_directory_path() /
               ("dgemm_arch_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
    path = (dir / name).string();
    std::ofstream(path) << text;
  }
  ~TempYaml() { std::filesystem::remove_all(std::filesystem::path(path).parent_path()); }
};

HardwareDesc h200() { return apply_arch_file(cpu_hardware(), "h200"); }

// Runs apply_arch_text and returns the error message (fails the test when nothing is thrown).
std::string error_of(const std::string& text, const HardwareDesc& base = cpu_hardware()) {
  try {
    apply_arch_text(base, text, "bad.yaml");
  } catch (const Error& e) {
    BOOST_TEST(int(e.status()) == int(Status::ArchFileError));
    return e.what();
  }
  BOOST_FAIL("no error for:\n" + text);
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(all_five_builtin_descriptions_load) {
  auto names = builtin_arch_names();
  for (const char* want : {"a100", "h100", "h200", "l40s", "mi300x"}) {
    BOOST_TEST_CONTEXT(want) {
      BOOST_TEST((std::find(names.begin(), names.end(), want) != names.end()));
      HardwareDesc hw = apply_arch_file(cpu_hardware(), want);
      BOOST_TEST(hw.sm_count > 1);
      BOOST_TEST(hw.smem_per_block_optin > 0);
      BOOST_TEST(hw.smem_per_block_optin <= hw.smem_per_sm);
      BOOST_TEST(hw.mem_bandwidth_gbs > 0);
      BOOST_TEST(hw.peak_tflops_bf16 > 0);
      BOOST_TEST(!hw.mma_shapes.empty());
    }
  }
  BOOST_TEST(apply_arch_file(cpu_hardware(), "H200.yaml").sm_count == 132);  // name, any case, suffix
}

BOOST_AUTO_TEST_CASE(source_tree_files_match_the_embedded_ones) {
  const char* root = std::getenv("DEEPGEMM_TEST_SOURCE_DIR");
  BOOST_TEST_REQUIRE(root, "DEEPGEMM_TEST_SOURCE_DIR is not set (run through CTest)");
  for (const std::string& name : builtin_arch_names()) {
    BOOST_TEST_CONTEXT(name) {
      std::string path = std::string(root) + "/src/plan/arch/" + name + ".yaml";
      std::ifstream in(path);
      BOOST_TEST_REQUIRE(bool(in));
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      BOOST_TEST(text == std::string(builtin_arch_text(name)));
      HardwareDesc a = apply_arch_file(cpu_hardware(), path), b = apply_arch_file(cpu_hardware(), name);
      BOOST_TEST(a.name == b.name);
      BOOST_TEST(a.smem_per_block_optin == b.smem_per_block_optin);
    }
  }
}

BOOST_AUTO_TEST_CASE(datasheet_figures) {
  HardwareDesc h = h200();
  BOOST_TEST(int(h.vendor) == int(Vendor::Nvidia));
  BOOST_TEST(h.cc() == 90);
  BOOST_TEST(h.sm_count == 132);
  BOOST_TEST(h.smem_per_sm == 228L * 1024);
  BOOST_TEST(h.smem_per_block_optin == 232448L);  // 227 KB
  BOOST_TEST(h.mem_bandwidth_gbs == 4800.0);
  BOOST_TEST(h.has_tma);
  BOOST_TEST(h.has_wgmma);
  BOOST_TEST(h.can_run_kernels);

  HardwareDesc a = apply_arch_file(cpu_hardware(), "a100");
  BOOST_TEST(a.cc() == 80);
  BOOST_TEST(a.sm_count == 108);
  BOOST_TEST(a.smem_per_block_optin == 163L * 1024);
  BOOST_TEST(a.peak_tflops_fp8 == 0.0);
  BOOST_TEST(!a.has_tma);

  HardwareDesc l = apply_arch_file(cpu_hardware(), "l40s");
  BOOST_TEST(l.cc() == 89);
  BOOST_TEST(l.max_warps_per_sm == 48);
  BOOST_TEST(l.smem_per_block_optin == 99L * 1024);

  HardwareDesc m = apply_arch_file(cpu_hardware(), "mi300x");
  BOOST_TEST(int(m.vendor) == int(Vendor::Amd));
  BOOST_TEST(m.warp_size == 64);
  BOOST_TEST(!m.can_run_kernels);
  BOOST_TEST(m.mma_shapes.front().instruction == "mfma");
}

BOOST_AUTO_TEST_CASE(partial_file_overrides_only_its_fields) {
  TempYaml f("# plan for a GPU shared between processes\nshared_mem_per_block: 82KB\n");
  HardwareDesc base = h200();
  HardwareDesc hw = apply_arch_file(base, f.path);
  BOOST_TEST(hw.smem_per_block_optin == 82L * 1024);
  BOOST_TEST(hw.smem_per_sm == base.smem_per_sm);
  BOOST_TEST(hw.sm_count == base.sm_count);
  BOOST_TEST(hw.mem_bandwidth_gbs == base.mem_bandwidth_gbs);
  BOOST_TEST(hw.mma_shapes.size() == base.mma_shapes.size());
  BOOST_TEST(contains(hw.name, base.name));
  BOOST_TEST(contains(hw.name, f.path));  // the plan says it was overridden
}

BOOST_AUTO_TEST_CASE(whole_file_replaces_the_base) {
  // Applied on top of an H200, the A100 file leaves nothing of the H200.
  HardwareDesc hw = apply_arch_file(h200(), "a100");
  BOOST_TEST(hw.sm_count == 108);
  BOOST_TEST(!hw.has_wgmma);
  BOOST_TEST(hw.name == "NVIDIA A100 SXM4 80GB");
}

BOOST_AUTO_TEST_CASE(extends_starts_from_a_builtin) {
  HardwareDesc hw = apply_arch_text(cpu_hardware(), "extends: h200\nname: h200-shared\nshared_mem_per_block: 82KB\n", "x.yaml");
  BOOST_TEST(hw.sm_count == 132);
  BOOST_TEST(hw.smem_per_block_optin == 83968L);
  BOOST_TEST(hw.name == "h200-shared");
}

BOOST_AUTO_TEST_CASE(size_suffixes) {
  auto smem = [](const std::string& v) {
    return apply_arch_text(h200(), "shared_mem_per_block: " + v + "\n", "s.yaml").smem_per_block_optin;
  };
  BOOST_TEST(smem("232448") == 232448L);
  BOOST_TEST(smem("227KB") == 232448L);
  BOOST_TEST(smem("227 KiB") == 232448L);
  BOOST_TEST(smem("0.125MB") == 131072L);
  BOOST_TEST(smem("100kb") == 102400L);
}

BOOST_AUTO_TEST_CASE(unknown_field_names_file_line_and_field) {
  std::string msg = error_of("sm_count: 100\nshared_mem_per_blok: 82KB\n");
  BOOST_TEST(contains(msg, "bad.yaml:2:"));
  BOOST_TEST(contains(msg, "shared_mem_per_blok"));
  BOOST_TEST(contains(msg, "unknown field"));
}

BOOST_AUTO_TEST_CASE(wrong_types_and_bad_values) {
  std::string msg = error_of("# comment\n\nsm_count: lots\n");
  BOOST_TEST(contains(msg, "bad.yaml:3:"));
  BOOST_TEST(contains(msg, "'sm_count'"));
  BOOST_TEST(contains(msg, "expected an integer"));

  msg = error_of("sm_count: 0\n");
  BOOST_TEST(contains(msg, ":1:"));
  BOOST_TEST(contains(msg, "out of range"));

  msg = error_of("shared_mem_per_block: 82QB\n");
  BOOST_TEST(contains(msg, "'shared_mem_per_block'"));
  BOOST_TEST(contains(msg, "unit"));

  msg = error_of("has_tma: maybe\n");
  BOOST_TEST(contains(msg, "'has_tma'"));

  msg = error_of("sm_count: [1, 2]\n");
  BOOST_TEST(contains(msg, "expected a single value"));

  msg = error_of("peak_tflops:\n  bf16: 900\n  tf32: 400\n");
  BOOST_TEST(contains(msg, ":3:"));
  BOOST_TEST(contains(msg, "peak_tflops.tf32"));

  msg = error_of("mma_shapes:\n  - {a_type: bf16, acc_type: f32, m: 64, n: 256, k: 16, instruction: wmma}\n");
  BOOST_TEST(contains(msg, "mma_shapes[0].instruction"));

  msg = error_of("vendor: intel\n");
  BOOST_TEST(contains(msg, "'vendor'"));

  msg = error_of("compute_capability: nine\n");
  BOOST_TEST(contains(msg, "'compute_capability'"));

  msg = error_of("sm_count: 10\nsm_count: 20\n");
  BOOST_TEST(contains(msg, ":2:"));
  BOOST_TEST(contains(msg, "twice"));
}

BOOST_AUTO_TEST_CASE(inconsistent_values_are_refused) {
  std::string msg = error_of("shared_mem_per_block: 300KB\n", h200());
  BOOST_TEST(contains(msg, "'shared_mem_per_block'"));
  BOOST_TEST(contains(msg, "exceeds shared_mem_per_sm"));
}

BOOST_AUTO_TEST_CASE(whole_file_must_be_complete) {
  std::string msg = error_of("name: half a GPU\nvendor: nvidia\nsm_count: 10\n");
  BOOST_TEST(contains(msg, "bad.yaml:2:"));
  BOOST_TEST(contains(msg, "missing"));
}

BOOST_AUTO_TEST_CASE(invalid_yaml_and_missing_files) {
  std::string msg = error_of("sm_count: 10\n  bad indent: [\n");
  BOOST_TEST(contains(msg, "not valid YAML"));
  msg = error_of("");
  BOOST_TEST(contains(msg, "empty"));
  msg = error_of("- 1\n- 2\n");
  BOOST_TEST(contains(msg, "mapping"));
  try {
    apply_arch_file(cpu_hardware(), "/nonexistent/dir/gpu.yaml");
    BOOST_FAIL("no error for a missing file");
  } catch (const Error& e) {
    BOOST_TEST(int(e.status()) == int(Status::ArchFileError));
    BOOST_TEST(contains(e.what(), "/nonexistent/dir/gpu.yaml"));
  }
  try {
    apply_arch_file(cpu_hardware(), "b200");
    BOOST_FAIL("no error for an unknown name");
  } catch (const Error& e) {
    BOOST_TEST(contains(e.what(), "h200"));  // lists the known names
  }
}

BOOST_AUTO_TEST_CASE(descriptions_round_trip_through_yaml) {
  std::vector<HardwareDesc> all = {cpu_hardware()};
  for (const std::string& name : builtin_arch_names()) all.push_back(apply_arch_file(cpu_hardware(), name));
  all.push_back(apply_arch_text(all.back(), "name: \"odd \\\"name\\\"\"\nclock_mhz: 1234.5678901\n", "x.yaml"));
  for (const HardwareDesc& hw : all) {
    BOOST_TEST_CONTEXT(hw.name) {
      const std::string yaml = arch_to_yaml(hw);
      HardwareDesc back = apply_arch_text(h200(), yaml, "roundtrip.yaml");
      BOOST_TEST(hardware_key(back) == hardware_key(hw), yaml);
    }
  }
}

// Hostile files: each must end quickly, in bounded memory, with an ArchFileError that says why.
namespace {

std::string arch_error(const std::string& path) {
  try {
    apply_arch_file(cpu_hardware(), path);
  } catch (const Error& e) {
    return std::string(int(e.status()) == int(Status::ArchFileError) ? "ArchFileError: " : "other error: ") + e.what();
  }
  return "no error";
}

void expect_bounded_error(const std::string& path, const std::string& fragment) {
  const test::BoundedResult r = test::run_bounded([&] { return arch_error(path); }, 10.0);
  BOOST_TEST_CONTEXT(path << ": " << r.text) {
    BOOST_TEST(r.finished, "hung (killed after 10 s)");
    BOOST_TEST(contains(r.text, "ArchFileError: "));
    BOOST_TEST(contains(r.text, fragment));
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(special_files_are_not_read) {
  TempYaml dir_holder("sm_count: 1\n");
  const std::filesystem::path dir = std::filesystem::path(dir_holder.path).parent_path();
  const std::string fifo = (dir / "pipe.yaml").string();
  BOOST_REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  expect_bounded_error(fifo, "not a regular file");          // opening it blocked plan creation
  expect_bounded_error("/dev/zero", "not a regular file");   // read until memory ran out
  expect_bounded_error(dir.string(), "not a regular file");  // was reported as "the file is empty"
}

BOOST_AUTO_TEST_CASE(oversized_files_are_refused_before_they_are_read) {
  TempYaml big(std::string(2 << 20, '#'));  // 2 MiB of comment
  expect_bounded_error(big.path, "larger than");
}

BOOST_AUTO_TEST_CASE(alias_bombs_and_deep_nesting_are_stopped_while_parsing) {
  // 722 bytes that expand to 9^9 scalars through aliases (took > 3 GB in 29 s).
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) bomb += std::string(i ? ", *" : "*") + char(c - 1);
    bomb += "]\n";
  }
  TempYaml bomb_file(bomb);
  expect_bounded_error(bomb_file.path, "alias");
  // 100k nested lists (200 KB; the depth limit used to be checked after loading, > 60 s).
  TempYaml deep("x: " + std::string(100000, '[') + std::string(100000, ']') + "\n");
  expect_bounded_error(deep.path, "nesting too deep");
  // Anchors alone are harmless and still accepted.
  HardwareDesc hw = apply_arch_text(cpu_hardware(), "sm_count: &n 12\n", "anchor.yaml");
  BOOST_TEST(hw.sm_count == 12);
}
