// The `deepgemm plan` and `deepgemm gen` subcommands, run as a user would: plan prints a decision
// (or a clear refusal) for any machine, and gen's output compiles with nvcc for sm_80 (skipped
// when nvcc is absent) and holds the kernels it names.
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/tool_run.hpp"

namespace {

using dgemm_test::Result;
using dgemm_test::sh;
using dgemm_test::tool;

std::string nvcc() {
  for (std::string c : {std::string(std::getenv("CUDA_HOME") ? std::getenv("CUDA_HOME") : "") + "/bin/nvcc",
                        std::string("/usr/local/cuda/bin/nvcc")})
    if (std::filesystem::exists(c)) return c;
  Result r = sh("command -v nvcc");
  return r.rc == 0 ? r.out.substr(0, r.out.find('\n')) : std::string();
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() / ("dgemm_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

using dgemm_test::RequireTool;
BOOST_TEST_GLOBAL_FIXTURE(RequireTool);

BOOST_AUTO_TEST_CASE(plan_prints_the_decision_for_a_described_machine) {
  Result r = sh(tool() + " plan --arch h200 --m 4096 --n 4096 --k 4096 --dtype bf16");
  BOOST_TEST(r.rc == 0, r.out);
  BOOST_TEST(has(r.out, "NVIDIA H200"));
  BOOST_TEST(has(r.out, "chosen"));
  BOOST_TEST(has(r.out, "roofline"));
  BOOST_TEST(has(r.out, "predict_us"));

  r = sh(tool() + " plan --arch a100 --json --m 1 --n 4096 --k 4096 --bias col --act gelu_tanh --trans-b");
  BOOST_TEST(r.rc == 0, r.out);
  BOOST_TEST(has(r.out, "\"chosen\":{"));
  BOOST_TEST(has(r.out, "\"runners_up\""));
  BOOST_TEST(has(r.out, "\"compute_floor_us\""));

  TempDir dir;
  std::ofstream(dir.path / "cap.yaml") << "shared_mem_per_block: 82KB\n";
  r = sh(tool() + " plan --arch h200," + (dir.path / "cap.yaml").string() + " --m 4096 --n 4096 --k 4096");
  BOOST_TEST(r.rc == 0, r.out);
  BOOST_TEST(has(r.out, "82 KB smem/block"), r.out);
}

// The scale flags describe deepgemm-bench's quantized rows to the planner (bench/offline_regret.py
// maps them so): fp8t, fp8b and fp8q (a block-scaled e4m3 D) are planned for the H200, m = 1 too
// (its 1 x 128 scales' ld padded to 4, as the sm90 kernels read them); --help lists the flags.
BOOST_AUTO_TEST_CASE(plan_takes_the_scale_flags) {
  const std::string base = tool() + " plan --arch h200 --trans-b --dtype e4m3 ";
  struct Case {
    const char* flags;
    const char* printed;
  };
  const Case cases[] = {
      {"--m 4096 --n 4096 --k 4096 --out-dtype bf16 --a-scale tensor --b-scale tensor",
       "a_scale=per_tensor(f32,mn,ld=1,stride=0) b_scale=per_tensor(f32,mn,ld=1,stride=0)"},
      {"--m 1 --n 4096 --k 4096 --out-dtype bf16 --a-scale vec128 --b-scale blk128",
       "a_scale=vec128(f32,mn,ld=4,stride=0) b_scale=blk128x128(f32,k,ld=32,stride=0)"},
      {"--m 64 --n 2112 --k 7168 --out-dtype e4m3 --c-dtype bf16 --a-scale vec128 --b-scale blk128 --d-scale vec128",
       "d_scale=vec128(f32,mn,ld=64,stride=0)"},
  };
  for (const Case& c : cases) {
    const Result r = sh(base + c.flags);
    BOOST_TEST_CONTEXT(c.flags << "\n" << r.out) {
      BOOST_TEST(r.rc == 0);
      BOOST_TEST(has(r.out, c.printed));
      BOOST_TEST(has(r.out, "chosen    sm90_"));
    }
  }
  const std::string help = sh(tool() + " plan --help").out + sh(tool() + " warm --help").out;
  BOOST_TEST(has(help, "--a-scale/--b-scale none|tensor|outer|vec128|blk128"), help);
  BOOST_TEST(has(help, "--d-scale none|vec128"), help);
}

// Grouped (mixture-of-experts) problems: --groups with either layout; the plan says the grouping
// and offers the grouped stream-K kernels by name (their split happens on the device).
BOOST_AUTO_TEST_CASE(plan_takes_the_group_flags) {
  Result r = sh(tool() + " plan --arch h200 --all --m 1152 --n 4096 --k 7168 --trans-b --groups 8 --group-align 128");
  BOOST_TEST(r.rc == 0, r.out);
  BOOST_TEST(has(r.out, "batch=8 strides=0,29360128,0,0 grouped=contiguous(align=128)"), r.out);
  BOOST_TEST(has(r.out, "sm90_128x256x64_s4_t384_p_streamk"), r.out);
  BOOST_TEST(has(r.out, "chosen    sm90_"), r.out);
  r = sh(tool() + " plan --arch h200 --m 256 --n 7168 --k 2048 --trans-b --groups 32 --group-layout masked");
  BOOST_TEST(r.rc == 0, r.out);
  BOOST_TEST(has(r.out, "batch=32 strides=524288,14680064,1835008,1835008 grouped=masked"), r.out);
  const std::string help = sh(tool() + " plan --help").out + sh(tool() + " warm --help").out;
  BOOST_TEST(has(help, "--groups G"), help);
}

// Scales of a grouped problem follow their operand: B's per expert, a masked A's per slot, a
// contiguous A's shared; gen takes the same flags, so the block-scaled grouped kernel can be
// written out for nvcc.
BOOST_AUTO_TEST_CASE(grouped_scales_follow_their_operand) {
  const std::string fp8 = " --arch h200 --dtype e4m3 --out-dtype bf16 --trans-b --m 768 --n 320 --k 400"
                          " --a-scale vec128 --b-scale blk128 --groups 4";
  Result r = sh(tool() + " plan --all" + fp8 + " --group-align 128");
  BOOST_TEST(has(r.out, "a_scale=vec128(f32,mn,ld=768,stride=0) b_scale=blk128x128(f32,k,ld=4,stride=12)"), r.out);
  BOOST_TEST(has(r.out, "chosen    sm90_128x128x128_s6_t384_p "), r.out);
  r = sh(tool() + " plan" + fp8 + " --group-layout masked --scale-type ue8m0");
  BOOST_TEST(has(r.out, "a_scale=vec128(ue8m0,mn,ld=768,stride=3072) b_scale=blk128x128(ue8m0,k,ld=4,stride=12)"), r.out);
  // A strided batch's scales stay shared.
  r = sh(tool() + " plan --arch h200 --dtype e4m3 --out-dtype bf16 --trans-b --m 768 --n 320 --k 400 --batch 4"
                  " --a-scale tensor --b-scale tensor");
  BOOST_TEST(has(r.out, "a_scale=per_tensor(f32,mn,ld=1,stride=0)"), r.out);
#ifdef DGEMM_WITH_CUDA  // (without CUDA the tool has no kernel sources to generate)
  TempDir dir;
  const std::string cuh = (dir.path / "grouped_fp8b.cuh").string();
  r = sh(tool() + " gen" + fp8 + " --group-align 128 --force sm90_128x128x128_s6_t384_p --output " + cuh);
  BOOST_TEST_REQUIRE(r.rc == 0, r.out);
  std::ifstream in(cuh);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // kAScale = VEC128, kBScale = BLK128x128, kGrouped = contiguous.
  BOOST_TEST(has(text, "Gemm<128, 128, 6, 2, true, true, 1, 1, DgEpilogue, 1, 1, 2, 1, 0>"));
#endif
}

BOOST_AUTO_TEST_CASE(plan_refuses_clearly) {
  Result r = sh(tool() + " plan --arch mi300x --m 4096 --n 4096 --k 4096");
  BOOST_TEST(r.rc == 1, r.out);
  BOOST_TEST(has(r.out, "no runnable plan"));
  BOOST_TEST(has(r.out, "planning-only"));
  BOOST_TEST(has(r.out, "compute floor"));  // the machine is still described

  r = sh(tool() + " plan --arch mi300x --json --m 64 --n 64 --k 64");
  BOOST_TEST(r.rc == 1);
  BOOST_TEST(has(r.out, "\"chosen\":null"));

  TempDir dir;
  std::ofstream(dir.path / "bad.yaml") << "sm_count: 132\nshared_mem_per_blok: 82KB\n";
  r = sh(tool() + " plan --arch " + (dir.path / "bad.yaml").string() + " --m 64 --n 64 --k 64");
  BOOST_TEST(r.rc != 0);
  BOOST_TEST(has(r.out, "bad.yaml:2:"), r.out);
  BOOST_TEST(has(r.out, "shared_mem_per_blok"));

  r = sh(tool() + " plan --arch h200 --m 64 --n 64 --k 64 --frobnicate");
  BOOST_TEST(r.rc != 0);
  BOOST_TEST(has(r.out, "frobnicate"));
}

#ifdef DGEMM_WITH_CUDA  // (without CUDA the tool has no kernel sources to generate or compile)
BOOST_AUTO_TEST_CASE(gen_output_compiles_with_nvcc_for_sm80) {
  const std::string compiler = nvcc();
  TempDir dir;
  struct Case {
    const char* flags;
    const char* file;
  };
  const Case cases[] = {
      {"--arch a100 --m 1000 --n 1000 --k 1000", "plain.cuh"},
      {"--arch h200 --target sm_80 --m 4093 --n 127 --k 65 --order col --trans-b --beta 1 --bias col --act gelu_tanh",
       "epilogue.cuh"},
      {"--arch l40s --force sm80 --m 7 --n 4096 --k 4096 --dtype f16", "f16.cuh"},
      {"--arch h200 --m 4096 --n 4096 --k 4096 --bias row --act silu", "sm90.cuh"},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.flags) {
      if (std::string(c.file) == "sm90.cuh") {
        // Hopper: the planner's choice is the sm90 family, compiled for sm_90a.
        const std::string cuh = (dir.path / c.file).string();
        Result r = sh(tool() + " gen " + c.flags + " --output " + cuh);
        BOOST_TEST_REQUIRE(r.rc == 0, r.out);
        std::ifstream in(cuh);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        BOOST_TEST(has(text, "dgemm_sm90_gemm"));
        if (compiler.empty()) continue;
        r = sh(compiler + " -std=c++17 -c -x cu -gencode=arch=compute_90a,code=sm_90a " + cuh + " -o " + cuh + ".o");
        BOOST_TEST(r.rc == 0, r.out);
        r = sh("nm " + cuh + ".o");
        BOOST_TEST(has(r.out, "dgemm_sm90_gemm"));
        continue;
      }
      const std::string cuh = (dir.path / c.file).string();
      Result r = sh(tool() + " gen " + c.flags + " --output " + cuh);
      BOOST_TEST_REQUIRE(r.rc == 0, r.out);
      std::ifstream in(cuh);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      BOOST_TEST(has(text, "dgemm_sm80_vec"));
      BOOST_TEST(!has(text, "#include \"sm80/"));  // self-contained: the headers are inlined
      if (compiler.empty()) {
        BOOST_TEST_MESSAGE("nvcc not found: compile step skipped");
        continue;
      }
      const std::string obj = cuh + ".o";
      r = sh(compiler + " -std=c++17 -c -x cu -gencode=arch=compute_80,code=sm_80 " + cuh + " -o " + obj);
      BOOST_TEST(r.rc == 0, r.out);
      r = sh("nm " + obj);
      BOOST_TEST(has(r.out, "dgemm_sm80_vec"));
      BOOST_TEST(has(r.out, "dgemm_sm80_scalar"));
    }
  }
  Result r = sh(tool() + " gen --arch mi300x --m 64 --n 64 --k 64 --output " + (dir.path / "x.cuh").string());
  BOOST_TEST(r.rc == 1);
  BOOST_TEST(has(r.out, "planning-only"), r.out);
  r = sh(tool() + " gen --arch a100 --m 64 --n 64 --k 64");
  BOOST_TEST(r.rc != 0);
  BOOST_TEST(has(r.out, "--output"));
}

// Every GPU family the planner can choose has a generator: the small-M family's source too.
BOOST_AUTO_TEST_CASE(gen_writes_every_gpu_family) {
  TempDir dir;
  for (const char* family : {"sm80", "sm90", "small_m"}) {
    const std::string cuh = (dir.path / (std::string(family) + ".cuh")).string();
    Result r = sh(tool() + " gen --arch h200 --force " + family + " --m 8 --n 4096 --k 4096 --trans-b --output " + cuh);
    BOOST_TEST_REQUIRE(r.rc == 0, family << ": " << r.out);
    std::ifstream in(cuh);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    BOOST_TEST(has(text, std::string("dgemm_") + family), family);
    BOOST_TEST(has(text, "// entry points:"), family);
  }
}

// `deepgemm warm` compiles, without a GPU, the kernels of the plans for a machine into the cache
// folder it is given, each once; a second run finds them all cached and writes nothing.
BOOST_AUTO_TEST_CASE(warm_fills_the_kernel_cache_without_a_gpu) {
  TempDir dir;
  const std::string cache = (dir.path / "cache").string();
  const std::string shapes = (dir.path / "shapes.txt").string();
  {
    std::ofstream out(shapes);
    out << "# two decode and one prefill problem\n1 4096 4096\n16 1000 4093 bias_gelu\n256 512 1024\n";
  }
  const std::string cmd = "DEEPGEMM_CACHE_DIR=" + cache + " " + tool() + " warm --arch h200 --runners-up 0 --shapes " + shapes;
  Result r = sh(cmd);
  BOOST_TEST_REQUIRE(r.rc == 0, r.out);
  BOOST_TEST(has(r.out, "from 6 plans"), r.out);  // 3 shapes x tn, nn
  std::size_t files = 0;
  std::filesystem::file_time_type newest{};
  for (const auto& entry : std::filesystem::directory_iterator(cache)) {
    ++files;
    newest = std::max(newest, entry.last_write_time());
  }
  BOOST_TEST(files >= 3u, r.out);
  r = sh(cmd);
  BOOST_TEST(r.rc == 0, r.out);
  std::size_t again = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache)) {
    ++again;
    BOOST_TEST((entry.last_write_time() <= newest), entry.path().string() << " was rewritten by the second run");
  }
  BOOST_TEST(again == files);
  // The scale flags apply to every problem of a shapes file: deepgemm-bench's fp8q rows.
  const std::string fp8 = (dir.path / "fp8.txt").string();
  std::ofstream(fp8) << "1 4096 4096\n64 2112 7168\n";
  r = sh("DEEPGEMM_CACHE_DIR=" + cache + " " + tool() + " warm --arch h200 --runners-up 0 --shapes " + fp8 +
         " --layouts tn --dtypes e4m3 --a-scale vec128 --b-scale blk128 --d-scale vec128");
  BOOST_TEST(r.rc == 0, r.out);
  BOOST_TEST(has(r.out, "from 2 plans"), r.out);
  BOOST_TEST(!has(r.out, "not plannable"), r.out);
  r = sh(tool() + " warm --arch h200 --shapes " + shapes + " --layouts tx");
  BOOST_TEST(r.rc != 0);
  BOOST_TEST(has(r.out, "'tx' is not tn, nn, tt or nt"), r.out);

  // Warming that cannot write anything is a failure, said before compiling: a folder this
  // process owns where nothing can be created (even by root), a disk cache switched off, a
  // folder others may write (whoever writes it chooses the GPU code this process runs).
  const std::string warm = " warm --arch h200 --runners-up 0 --shapes " + shapes;
  r = sh("DEEPGEMM_CACHE_DIR=/proc/self/fdinfo " + tool() + warm);
  BOOST_TEST(r.rc == 4, r.out);
  BOOST_TEST(has(r.out, "cannot write to the kernel cache folder /proc/self/fdinfo"), r.out);
  r = sh("DEEPGEMM_CACHE_DIR=off " + tool() + warm);
  BOOST_TEST(r.rc == 4, r.out);
  BOOST_TEST(has(r.out, "the disk cache is off"), r.out);
  std::filesystem::permissions(cache, std::filesystem::perms::group_write, std::filesystem::perm_options::add);
  r = sh("DEEPGEMM_CACHE_DIR=" + cache + " " + tool() + warm);
  BOOST_TEST(r.rc == 4, r.out);
  BOOST_TEST(has(r.out, "writable by group or others"), r.out);
  // Nothing plannable (the GPU kernels take no i8) is a failure too, not "0 kernels".
  r = sh("DEEPGEMM_CACHE_DIR=" + (dir.path / "other").string() + " " + tool() + warm + " --dtypes i8 --layouts tn");
  BOOST_TEST(r.rc == 3, r.out);  // unsupported
  BOOST_TEST(has(r.out, "none of the 3 problems could be planned"), r.out);
}
#endif  // DGEMM_WITH_CUDA

// Every bad value on the command line: a message naming the flag and the value, and the
// documented exit status (2 = usage error; 4 = other failure, here out of host memory), never a
// clamp, a default, a wrap-around or a bare exception name.
BOOST_AUTO_TEST_CASE(bad_values_name_the_flag_and_the_value) {
  struct BadCase {
    const char* args;
    int rc;
    std::vector<std::string> fragments;
  };
  const BadCase cases[] = {
      {"run --m 99999999999999999999", 2, {"--m", "99999999999999999999", "out of range"}},  // was clamped
      {"run --m=", 2, {"--m needs a value"}},                                                 // was 1024
      {"run --m", 2, {"--m needs a value"}},
      {"run --m -5", 2, {"--m", "-5", "out of range"}},
      {"run --m 12abc", 2, {"--m", "12abc", "not an integer"}},
      {"run --m ' 12'", 2, {"--m", "not an integer"}},
      {"run --m 7 --m 8", 2, {"--m is given twice"}},
      {"run --batch 0", 2, {"--batch", "'0'"}},
      {"run --reps 4294967297", 2, {"--reps", "4294967297"}},                                 // was 1
      {"run --warmup -1", 2, {"--warmup", "-1"}},
      {"run --alpha 1e999", 2, {"--alpha", "1e999", "not a finite number"}},                   // was inf
      // (--alpha nan / inf are accepted: the library takes any float, and GPU test repro lines print them.)
      {"run --beta 1e39", 2, {"--beta", "1e39", "float"}},
      {"run --check bogus", 2, {"--check", "bogus", "auto, full, sample, none"}},             // was accepted
      {"run --device cuda:abc", 2, {"--device", "cuda:abc"}},                                 // said only "stoi"
      {"run --device cuda:99999999999", 2, {"--device", "cuda:99999999999"}},
      {"run --order diagonal", 2, {"--order", "diagonal"}},
      {"run --dtype bf17", 2, {"--dtype", "bf17"}},
      {"run --act gelu_fast", 2, {"--act", "gelu_fast"}},
      {"run --trans-a maybe", 2, {"--trans-a", "maybe"}},
      {"run --frobnicate 1", 2, {"unknown flag --frobnicate"}},
      {"warm --threads 0", 2, {"--threads", "'0'"}},
      // The DGEMM_1.1 scale flags, the same in plan, run and warm.
      {"plan --a-scale blk64", 2, {"--a-scale", "'blk64'", "none, tensor, outer, vec128, blk128"}},
      {"run --b-scale per_tensor", 2, {"--b-scale", "'per_tensor'", "none, tensor, outer, vec128, blk128"}},
      {"warm --a-scale vec", 2, {"--a-scale", "'vec'"}},
      {"plan --d-scale tensor", 2, {"--d-scale", "'tensor'", "none, vec128"}},
      {"run --d-scale ue8m0", 2, {"--d-scale", "'ue8m0'", "none, vec128"}},
      {"warm --d-scale blk128", 2, {"--d-scale", "'blk128'", "none, vec128"}},
      {"warm --runners-up -1", 2, {"--runners-up", "-1"}},
      // The grouped flags of plan and warm.
      {"plan --group-layout masked", 2, {"--group-layout needs --groups G"}},
      {"plan --groups 0", 2, {"--groups", "0", "out of range"}},
      {"plan --groups 4 --group-layout ragged", 2, {"--group-layout", "'ragged'", "contiguous, masked"}},
      {"warm --groups 4 --group-layout masked --group-align 8", 2, {"--group-align", "only for --group-layout contiguous"}},
      {"plan --groups 4 --batch 2", 2, {"--batch", "--groups"}},
      // 2e6 x 2e6 outputs: 8 TB of D, a plan the library accepts and a machine cannot hold.
      {"run --device cpu --m 2000000 --n 2000000 --k 1 --check none", 4, {"out of host memory"}},  // was "std::bad_alloc"
  };
  for (const BadCase& c : cases) {
#ifdef DGEMM_SANITIZED
    if (c.rc == 4) continue;  // AddressSanitizer's operator new aborts instead of throwing bad_alloc
#endif
    const Result r = sh(tool() + " " + c.args);
    BOOST_TEST_CONTEXT("deepgemm " << c.args << " -> exit " << r.rc << ": " << r.out) {
      BOOST_TEST(r.rc == c.rc);
      for (const std::string& f : c.fragments) BOOST_TEST(has(r.out, f), "lacks \"" << f << "\"");
    }
  }
}
