// NVRTC compile tests (label cpu: they need NVRTC, not a GPU). Every sm80 kernel variant the
// planner can choose by default compiles for sm_80 and sm_90a without register spills (ptxas -v in
// the NVRTC log, and `cuobjdump -res-usage` on the cubin when cuobjdump is installed); the
// on-disk kernel cache detects truncated and corrupted entries and rebuilds them; without a GPU
// the CUDA backend declines with a reason instead of failing.
#include <boost/test/unit_test.hpp>

#if DGEMM_WITH_CUDA

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/cuda/jit.hpp"
#include "backend/cuda/sm80_gemm.hpp"
#include "common/nvrtc_checks.hpp"
#include "core/error.hpp"
#include "plan/families.hpp"

namespace {

using namespace dgemm;
using dgemm_test::find_cuobjdump;

using dgemm_test::CacheDirFixture;
using dgemm_test::RequireNvrtc;
BOOST_TEST_GLOBAL_FIXTURE(RequireNvrtc);
BOOST_TEST_GLOBAL_FIXTURE(CacheDirFixture);

// A planning description of a GPU of the given compute capability (enough for enumerate()).
HardwareDesc gpu(int major, int minor) {
  HardwareDesc hw;
  hw.name = "test-gpu";
  hw.vendor = Vendor::Nvidia;
  hw.cc_major = major;
  hw.cc_minor = minor;
  hw.sm_count = 132;
  hw.smem_per_sm = 233472;
  hw.smem_per_block_optin = 232448;
  hw.l2_bytes = 50 << 20;
  hw.mem_bandwidth_gbs = 3350;
  hw.clock_mhz = 1755;
  hw.peak_tflops_bf16 = hw.peak_tflops_f16 = 989;
  hw.peak_tops_i8 = 1979;
  hw.can_run_kernels = true;
  return hw;
}

// Fails the test on any spill the ptxas log or cuobjdump reports; returns the registers used.
// `kernels`: 2 (vector and element loads), 3 for split-K modules (+ the reduction).
std::string check_no_spills(const std::string& what, const jit::CompiledCode& code, int kernels = 2) {
  std::regex regs(R"(Used (\d+) registers)");
  const int found = dgemm_test::check_spill_lines(what, code.log);
  std::string reg_list;
  for (std::sregex_iterator it(code.log.begin(), code.log.end(), regs), end; it != end; ++it)
    reg_list += (reg_list.empty() ? "" : "/") + (*it)[1].str();
  BOOST_CHECK_MESSAGE(found == kernels, what << ": expected ptxas statistics for " << kernels << " kernels in the log, found " << found
                                       << "\n" << code.log);
  static const std::string cuobjdump = find_cuobjdump();
  if (!cuobjdump.empty()) {
    const std::string out = dgemm_test::cuobjdump_cubin(cuobjdump, "-res-usage", code, "/tmp/dgemm_cubin_XXXXXX");
    BOOST_CHECK_MESSAGE(out.find("REG:") != std::string::npos, what << ": cuobjdump gave no resource usage: " << out);
    std::regex stack(R"(STACK:(\d+))"), local(R"(LOCAL:(\d+))");
    for (const std::regex* r : {&stack, &local})
      for (std::sregex_iterator it(out.begin(), out.end(), *r), end; it != end; ++it)
        BOOST_CHECK_MESSAGE((*it)[1] == "0", what << ": cuobjdump reports " << it->str());
  }
  return reg_list;
}

GemmProblem layout_problem(DType t, Op op_a, Op op_b) {
  GemmProblem p;
  p.m = p.n = p.k = 4096;
  p.a_type = p.b_type = t;
  p.c_type = p.d_type = t;
  p.op_a = op_a;
  p.op_b = op_b;
  p.resolve_and_validate();
  return p;
}

}  // namespace

// First test of the file, so that this process has not loaded NVRTC yet: a child process (fork)
// that can only try a missing library reports NotSupported with a message naming what it tried.
BOOST_AUTO_TEST_CASE(missing_nvrtc_is_not_supported_with_a_clear_message) {
  pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    setenv("DEEPGEMM_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so.13", 1);
    int code = 0;
    std::string why;
    if (jit::nvrtc_available(&why)) code |= 1;
    if (why.find("/nonexistent/libnvrtc.so.13") == std::string::npos) code |= 2;
    jit::CompileRequest r;
    r.name = "probe";
    r.source = "extern \"C\" __global__ void probe() {}";
    r.arch = "sm_80";
    try {
      jit::compile(r);
      code |= 4;
    } catch (const Error& e) {
      if (e.status() != Status::NotSupported || std::string(e.what()).find("NVRTC") == std::string::npos) code |= 8;
    }
    _exit(code);
  }
  int status = 0;
  BOOST_REQUIRE(waitpid(pid, &status, 0) == pid);
  BOOST_REQUIRE(WIFEXITED(status));
  BOOST_CHECK_MESSAGE(WEXITSTATUS(status) == 0, "child failed checks, bits " << WEXITSTATUS(status)
                                                    << " (1 available, 2 message, 4 compiled, 8 status/message)");
}

BOOST_AUTO_TEST_CASE(cuda_backend_declines_without_gpu_or_gives_hardware) {
  std::string why;
  std::unique_ptr<Backend> b = make_cuda_backend(0, &why);
  if (!b) {
    BOOST_TEST_MESSAGE("no CUDA device here: " << why);
    BOOST_CHECK(!why.empty());
  } else {
    BOOST_CHECK(b->hardware().sm_count > 0);
    BOOST_CHECK(b->hardware().cc() >= 70);
  }
  BOOST_CHECK(!make_cuda_backend(100000, &why));
}

BOOST_AUTO_TEST_CASE(sm80_default_menu_compiles_without_spills_for_sm80_and_sm90a) {
  BOOST_TEST_MESSAGE("NVRTC " << jit::nvrtc_version() << ", cuobjdump: "
                              << (find_cuobjdump().empty() ? "not found (ptxas log only)" : find_cuobjdump()));
  int compiled = 0;
  for (auto [major, minor] : {std::pair{8, 0}, std::pair{9, 0}}) {
    const HardwareDesc hw = gpu(major, minor);
    const std::string arch = jit::arch_for_cc(major, minor);
    for (DType t : {DType::BF16, DType::F16}) {
      // Row-major NN, NT, TN, TT give the four (A, B) storage layouts of the kernel; column-major
      // problems map onto the same four.
      for (Op op_a : {Op::N, Op::T}) {
        for (Op op_b : {Op::N, Op::T}) {
          GemmProblem p = layout_problem(t, op_a, op_b);
          Epilogue e;
          std::vector<Candidate> cands = sm80_family_model().enumerate(p, e, hw);
          BOOST_REQUIRE(!cands.empty());
          for (const Candidate& c : cands) {
            if (c.measuring_only) continue;  // compiled by the GPU test's every-tile case
            jit::CompileRequest r = cuda::sm80_compile_request(p, e, c.config, arch);
            auto code = jit::compile(r);
            std::string regs = check_no_spills(r.name + " " + arch, *code, c.config.split_k > 1 ? 3 : 2);
            BOOST_TEST_MESSAGE(arch << " " << r.name << " regs " << regs << " (" << code->cubin.size() << " B cubin)");
            ++compiled;
          }
        }
      }
    }
  }
  BOOST_CHECK(compiled >= 2 * 2 * 4 * 4);
}

BOOST_AUTO_TEST_CASE(sm80_epilogue_variants_compile_without_spills) {
  struct Variant {
    DType c, d, bias_type;
    VectorMode bias, scale;
    Activation act;
    bool zero_point;
    Order order;
  };
  const Variant variants[] = {
      {DType::F32, DType::F32, DType::F32, VectorMode::PerColumn, VectorMode::None, Activation::GeluErf, false, Order::RowMajor},
      {DType::BF16, DType::BF16, DType::BF16, VectorMode::PerRow, VectorMode::PerTensor, Activation::GeluTanh, false, Order::ColMajor},
      {DType::F16, DType::F16, DType::F16, VectorMode::PerColumn, VectorMode::PerRow, Activation::Silu, false, Order::RowMajor},
      {DType::I8, DType::I8, DType::F32, VectorMode::PerRow, VectorMode::PerColumn, Activation::Relu, true, Order::RowMajor},
      {DType::F32, DType::F8E4M3, DType::F32, VectorMode::None, VectorMode::PerTensor, Activation::None, false, Order::RowMajor},
      {DType::F8E5M2, DType::F8E5M2, DType::BF16, VectorMode::PerColumn, VectorMode::PerColumn, Activation::GeluErf, false, Order::ColMajor},
  };
  for (const Variant& v : variants) {
    GemmProblem p = layout_problem(DType::BF16, Op::N, Op::T);
    p.c_type = v.c;
    p.d_type = v.d;
    p.order = v.order;
    p.lda = p.ldb = p.ldc = p.ldd = 0;
    p.resolve_and_validate();
    Epilogue e;
    e.alpha = 1.5f;
    e.beta = 0.5f;
    e.bias_mode = v.bias;
    e.bias_type = v.bias_type;
    e.scale_mode = v.scale;
    e.activation = v.act;
    e.zero_point = v.zero_point;
    e.validate(p);
    for (auto [major, minor] : {std::pair{8, 0}, std::pair{9, 0}}) {
      std::vector<Candidate> cands = sm80_family_model().enumerate(p, e, gpu(major, minor));
      jit::CompileRequest r = cuda::sm80_compile_request(p, e, cands.at(0).config, jit::arch_for_cc(major, minor));
      auto code = jit::compile(r);
      check_no_spills(r.name + " " + e.to_string(), *code);
    }
  }
}

// The sm80 i8 configurations (family_sm80.cpp kI8Menu; planned since their GPU cases passed, 2026-12-05)
// compile for sm_80 and sm_90a without spills: the exact i32 D in both orders and an i8 D
// requantized with C, a bias and GELU; with input scales; an f16 D with a per-row scale; every
// kernel of a split-K module (the s32 reduction) included. An MN-contiguous i8 operand is refused (ldmatrix moves 16-bit
// elements), never compiled.
BOOST_AUTO_TEST_CASE(sm80_i8_menu_compiles_without_spills) {
  int compiled = 0;
  for (auto [major, minor] : {std::pair{8, 0}, std::pair{9, 0}}) {
    const HardwareDesc hw = gpu(major, minor);
    const std::string arch = jit::arch_for_cc(major, minor);
    for (int variant = 0; variant < 3; ++variant) {
      GemmProblem p;
      p.m = p.n = p.k = 4096;
      p.a_type = p.b_type = DType::I8;
      p.compute_type = DType::I32;
      p.c_type = p.d_type = variant == 1 ? DType::I8 : DType::I32;
      p.order = variant == 2 ? Order::ColMajor : Order::RowMajor;
      p.op_a = variant == 2 ? Op::T : Op::N;
      p.op_b = variant == 2 ? Op::N : Op::T;
      p.resolve_and_validate();
      Epilogue e;
      if (variant == 1) {
        e.beta = 0.5f;
        e.bias_mode = VectorMode::PerColumn;
        e.activation = Activation::GeluErf;
        e.scale_mode = VectorMode::PerRow;
        e.zero_point = true;
        e.validate(p);
      }
      const std::vector<Candidate> cands = sm80_family_model().enumerate(p, e, hw);
      BOOST_REQUIRE(cands.size() == 7u);
      for (const Candidate& c : cands) {
        BOOST_TEST((c.feasible && !c.measuring_only), c.config.name() << ": " << c.reject_reason);
        jit::CompileRequest r = cuda::sm80_compile_request(p, e, c.config, arch);
        auto code = jit::compile(r);
        const std::string regs = check_no_spills(r.name + " " + arch + " " + e.to_string(), *code, c.config.split_k > 1 ? 3 : 2);
        BOOST_TEST_MESSAGE(arch << " " << r.name << " " << dtype_name(p.d_type) << " regs " << regs);
        ++compiled;
      }
    }
    // An f16 D scaled per row: the s32 reduction's shape that spilled when its loop was unrolled.
    {
      GemmProblem p;
      p.m = p.n = p.k = 4096;
      p.a_type = p.b_type = DType::I8;
      p.compute_type = DType::I32;
      p.c_type = p.d_type = DType::F16;
      p.op_b = Op::T;
      p.resolve_and_validate();
      Epilogue e;
      e.alpha = 1.0f / 64;
      e.scale_mode = VectorMode::PerRow;
      for (const Candidate& c : sm80_family_model().enumerate(p, e, hw)) {
        if (c.config.split_k == 1) continue;
        jit::CompileRequest r = cuda::sm80_compile_request(p, e, c.config, arch);
        check_no_spills(r.name + " " + arch + " f16 D", *jit::compile(r), 3);
        ++compiled;
      }
    }
    // Per-tensor A and per-column B scales, bf16 D: row-major (A's scale per row of the kernel's
    // X), and column-major on every tile (X is D^T: the scales swap, D is stored transposed).
    GemmProblem p;
    p.m = p.n = p.k = 4096;
    p.a_type = p.b_type = DType::I8;
    p.compute_type = DType::I32;
    p.c_type = p.d_type = DType::BF16;
    p.op_b = Op::T;
    p.resolve_and_validate();
    p.a_scale.mode = ScaleMode::PerTensor;
    p.b_scale.mode = ScaleMode::OuterVec;
    Epilogue e;
    resolve_and_validate_scaling(p, e);
    const Candidate c = sm80_family_model().enumerate(p, e, hw).front();
    jit::CompileRequest r = cuda::sm80_compile_request(p, e, c.config, arch);
    BOOST_TEST(r.source.find("kRowInScale = 1") != std::string::npos);
    BOOST_TEST(r.source.find("kColInScale = 2") != std::string::npos);
    check_no_spills(r.name + " " + arch + " input scales", *jit::compile(r));
    ++compiled;
    GemmProblem col = p;
    col.order = Order::ColMajor;
    col.op_a = Op::T;
    col.op_b = Op::N;
    col.lda = col.ldb = col.ldc = col.ldd = 0;
    col.resolve_and_validate();
    for (const Candidate& cc : sm80_family_model().enumerate(col, e, hw)) {
      jit::CompileRequest rc = cuda::sm80_compile_request(col, e, cc.config, arch);
      BOOST_TEST(rc.source.find("kRowInScale = 2") != std::string::npos);
      BOOST_TEST(rc.source.find("kColInScale = 1") != std::string::npos);
      check_no_spills(rc.name + " " + arch + " input scales, column-major", *jit::compile(rc), cc.config.split_k > 1 ? 3 : 2);
      ++compiled;
    }
    // MN-contiguous B: refused with the reason.
    p.op_b = Op::N;
    p.ldb = 0;
    p.resolve_and_validate();
    try {
      cuda::sm80_compile_request(p, Epilogue{}, c.config, arch);
      BOOST_FAIL("an MN-contiguous i8 operand was compiled");
    } catch (const Error& ex) {
      BOOST_TEST(int(ex.status()) == int(Status::NotSupported));
      BOOST_TEST(std::string(ex.what()).find("8-bit mma.sync reads K-major operands only") != std::string::npos, ex.what());
    }
  }
  BOOST_TEST(compiled == 2 * (3 * 7 + 2 + 1 + 7));
}

BOOST_AUTO_TEST_CASE(disk_cache_rebuilds_truncated_and_corrupted_entries) {
  GemmProblem p = layout_problem(DType::BF16, Op::N, Op::N);
  Epilogue e;
  KernelConfig c = sm80_family_model().enumerate(p, e, gpu(8, 0)).back().config;
  jit::CompileRequest r = cuda::sm80_compile_request(p, e, c, "sm_80");
  auto first = jit::compile(r);
  const std::string path = jit::cache_entry_path(first->key);
  BOOST_REQUIRE(!path.empty());
  struct stat st{};
  BOOST_REQUIRE_MESSAGE(stat(path.c_str(), &st) == 0, "cache entry " << path << " was not written");
  const off_t full_size = st.st_size;

  // A fresh process (memory cache empty) loads the valid entry from disk.
  jit::clear_memory_cache();
  auto from_disk = jit::compile(r);
  BOOST_CHECK(from_disk->origin == jit::Origin::DiskCache);
  BOOST_CHECK(from_disk->cubin == first->cubin);

  // Truncated: detected, removed, rebuilt (never loaded).
  BOOST_REQUIRE(truncate(path.c_str(), full_size / 2) == 0);
  jit::clear_memory_cache();
  auto rebuilt = jit::compile(r);
  BOOST_CHECK(rebuilt->origin == jit::Origin::Compiled);
  BOOST_CHECK(rebuilt->cubin == first->cubin);
  // (The entry is rewritten; its size may differ by a byte: the stored ptxas log has timings.)
  BOOST_REQUIRE(stat(path.c_str(), &st) == 0);
  BOOST_CHECK(st.st_size > 1000);

  // One flipped byte in the payload: the checksum catches it.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(full_size - 100);
    char ch = 0;
    f.read(&ch, 1);
    ch = char(ch ^ 0x5a);
    f.seekp(full_size - 100);
    f.write(&ch, 1);
  }
  jit::clear_memory_cache();
  auto rebuilt2 = jit::compile(r);
  BOOST_CHECK(rebuilt2->origin == jit::Origin::Compiled);
  BOOST_CHECK(rebuilt2->cubin == first->cubin);

  // Garbage header: same.
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << "not a cache entry"; }
  jit::clear_memory_cache();
  BOOST_CHECK(jit::compile(r)->origin == jit::Origin::Compiled);
  jit::clear_memory_cache();
  BOOST_CHECK(jit::compile(r)->origin == jit::Origin::DiskCache);
  BOOST_CHECK(jit::compile(r)->origin == jit::Origin::MemoryCache);
}

BOOST_AUTO_TEST_CASE(cache_key_depends_on_source_and_arch_not_on_m) {
  GemmProblem p = layout_problem(DType::BF16, Op::N, Op::N);
  Epilogue e;
  KernelConfig c = sm80_family_model().enumerate(p, e, gpu(8, 0)).front().config;
  GemmProblem p2 = p;
  p2.m = 17;  // a new M reuses the kernel
  p2.lda = p2.ldd = p2.ldc = p2.ldb = 0;
  p2.resolve_and_validate();
  BOOST_CHECK_EQUAL(jit::cache_key(cuda::sm80_compile_request(p, e, c, "sm_80")),
                    jit::cache_key(cuda::sm80_compile_request(p2, e, c, "sm_80")));
  BOOST_CHECK_NE(jit::cache_key(cuda::sm80_compile_request(p, e, c, "sm_80")),
                 jit::cache_key(cuda::sm80_compile_request(p, e, c, "sm_90a")));
  // The key covers the headers the source includes, not every embedded header: an sm80 kernel
  // does not depend on the sm90 family's files.
  const std::vector<std::string> files = jit::included_kernel_files(cuda::sm80_compile_request(p, e, c, "sm_80").source);
  auto has = [&](const char* name) { return std::find(files.begin(), files.end(), name) != files.end(); };
  BOOST_TEST(has("sm80/sm80_gemm.cuh"));
  BOOST_TEST(has("epilogue/epilogue.cuh"));
  BOOST_TEST(has("common/types.cuh"));  // through the epilogue
  BOOST_TEST(!has("sm90/sm90_gemm.cuh"));
  BOOST_TEST(!has("sm90/wgmma_atoms.cuh"));
  Epilogue e2 = e;
  e2.activation = Activation::Relu;
  BOOST_CHECK_NE(jit::cache_key(cuda::sm80_compile_request(p, e, c, "sm_80")),
                 jit::cache_key(cuda::sm80_compile_request(p, e2, c, "sm_80")));
}

#else
#include "common/skip.hpp"
DGEMM_SKIP_WITHOUT_CUDA()
#endif
