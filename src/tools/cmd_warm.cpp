// `deepgemm warm`: compiles, ahead of time and without a GPU, the kernels that plans for a machine
// would use, into the kernel cache ($DEEPGEMM_CACHE_DIR, default ~/.cache/deepgemm). A service can
// warm its cache before it takes traffic, and a device run can carry a filled cache instead of
// compiling on the device. Plans are made exactly as dgemm_create_plan makes them. Progress
// (kernels compiled / total, elapsed) goes to stderr; stdout gets the summary, or with --json one
// JSON object.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "api/convert.hpp"
#include "api/grouped.hpp"
#include "api/scaling.hpp"
#include "core/files.hpp"
#include "plan/planner.hpp"
#include "tools/arch_option.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"

#ifdef DGEMM_WITH_CUDA
#include "backend/cuda/jit.hpp"
#include "backend/cuda/launcher.hpp"
#endif

namespace dgemm::tools {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Problems of a shapes file ("M N K [plain|bias_gelu]" per line, # comments), as deepgemm-bench
// runs them: row-major, B op T ("tn", "tt") or N ("nn", "nt"), A op N or T ("tt", "nt"), tight leading dimensions, for bias_gelu
// a per-column bias of D's type and GELU (tanh).
std::vector<GemmOptions> problems_from_file(const std::string& path, const std::vector<std::string>& dtypes,
                                            const std::vector<std::string>& layouts) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("--shapes = '" + path + "': cannot open");
  std::vector<GemmOptions> out;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    line = line.substr(0, line.find('#'));
    std::istringstream ls(line);
    long long m, n, k;
    if (!(ls >> m >> n >> k)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      throw std::invalid_argument(path + ":" + std::to_string(lineno) + ": expected 'M N K [plain|bias_gelu]'");
    }
    std::string epilogue = "plain";
    ls >> epilogue;
    for (const std::string& t : dtypes) {
      for (const std::string& lay : layouts) {
        if (lay != "tn" && lay != "nn" && lay != "tt" && lay != "nt")
          throw std::invalid_argument("--layouts: '" + lay + "' is not tn, nn, tt or nt");
        GemmOptions o;
        dgemm_problem_init(&o.problem);
        dgemm_epilogue_init(&o.epilogue);
        o.problem.m = m;
        o.problem.n = n;
        o.problem.k = k;
        o.problem.a_type = o.problem.b_type = o.problem.c_type = o.problem.d_type = parse_dtype("dtypes", t);
        // As deepgemm-bench names them: the first letter is op(B), the second op(A) (A^T: A stored k x m).
        o.problem.op_b = lay[0] == 't' ? DGEMM_OP_T : DGEMM_OP_N;
        o.problem.op_a = lay[1] == 't' ? DGEMM_OP_T : DGEMM_OP_N;
        if (epilogue == "bias_gelu") {
          o.epilogue.bias_mode = DGEMM_VECTOR_PER_COLUMN;
          o.epilogue.bias_type = o.problem.d_type;
          o.epilogue.activation = DGEMM_ACT_GELU_TANH;
        } else if (epilogue != "plain") {
          throw std::invalid_argument(path + ":" + std::to_string(lineno) + ": epilogue '" + epilogue +
                                      "' is not plain or bias_gelu");
        }
        out.push_back(o);
      }
    }
  }
  return out;
}

void print_help() {
  std::printf(
      "usage: deepgemm warm [--arch auto|NAME|FILE] [--shapes FILE [--dtypes bf16,f16] [--layouts tn,nn]]\n"
      "                     [--runners-up N] [--force NAME] [--threads T] [problem flags]\n"
      "Compiles the kernels that plans for the machine would use into the kernel cache\n"
      "($DEEPGEMM_CACHE_DIR, default ~/.cache/deepgemm), with NVRTC and without a GPU.\n"
      "  --shapes FILE   'M N K [plain|bias_gelu]' per line (bench/shapes/*.txt), crossed with\n"
      "                  --dtypes (default bf16) and --layouts (tn nn tt nt; default tn,nn); without it, the one\n"
      "                  problem the flags below describe; bias_gelu = a per-column bias and GELU in\n"
      "                  its tanh form, as deepgemm-bench and cuBLASLt's GELU_BIAS run it\n"
      "  --runners-up N  also compile the best N other candidates (default 1), e.g. for autotuning\n"
      "  --force NAME    plan with only this family (sm80, sm90, small_m) or configuration (as\n"
      "                  `deepgemm plan --all` names it, measuring-only ones included): what a\n"
      "                  benchmark's --force-kernel NAME will run\n"
      "  --threads T     parallel compiles (default: the machine's cores)\n"
      "  --json          print one JSON object (counts, seconds, the cache folder, each kernel) instead\n"
      "                  of the summary line\n"
      "  --quiet         no progress on stderr\n"
      "%s%s%s"
      "  (the scale and group flags apply to every problem, those of --shapes too)\n"
      "%s",
      gemm_options_help(), scaling_options_help(), grouping_options_help(), exit_codes_help());
}

}  // namespace

int cmd_warm(int argc, char** argv) {
  Flags f(argc, argv);
  if (f.get_bool("help")) {
    print_help();
    return 0;
  }
  const std::string arch_spec = f.get("arch", "auto");
  const std::string shapes = f.get("shapes", "");
  const std::vector<std::string> dtypes = split(f.get("dtypes", "bf16"), ',');
  const std::vector<std::string> layouts = split(f.get("layouts", "tn,nn"), ',');
  const int runners_up = int(f.get_int("runners-up", 1, 0, 64));
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int threads = int(f.get_int("threads", cores, 1, 1024));
  const bool as_json = f.get_bool("json");
  const bool quiet = f.get_bool("quiet");
  PlanRequest request;
  if (f.has("force")) apply_force_option(f.get("force", ""), &request);
  std::vector<GemmOptions> problems;
  if (shapes.empty()) {
    problems.push_back(parse_gemm_options(f));
  } else {
    problems = problems_from_file(shapes, dtypes, layouts);
  }
  const ScalingOptions scaling = parse_scaling_options(f);
  const GroupingOptions grouping = parse_grouping_options(f);
  for (GemmOptions& o : problems) grouping.apply(&o.problem);
  const dgemm_grouped_t grouped = grouping.extension();
  f.check_all_used();

#ifndef DGEMM_WITH_CUDA
  (void)arch_spec;
  (void)as_json;
  (void)quiet;
  (void)scaling;
  std::fprintf(stderr, "deepgemm warm: this build has no CUDA support: there are no kernels to compile\n");
  return kExitUnsupported;
#else
  std::string note;
  const HardwareDesc hw = resolve_arch(arch_spec, &note);
  if (!note.empty()) std::fprintf(as_json ? stderr : stdout, "%s\n", note.c_str());
  if (hw.vendor != Vendor::Nvidia || !hw.can_run_kernels) {
    std::fprintf(stderr, "deepgemm warm: %s has no kernels to compile\n", hw.name.c_str());
    return kExitUnsupported;
  }
  std::string why;
  if (!jit::nvrtc_available(&why)) {
    std::fprintf(stderr, "deepgemm warm: NVRTC cannot be loaded: %s\n", why.c_str());
    return kExitUnsupported;
  }
  const std::string arch = jit::arch_for_cc(hw.cc_major, hw.cc_minor);
  // Warming is only worth anything when the kernels land on disk.
  if (jit::cache_dir().empty()) {
    std::fprintf(stderr, "deepgemm warm: the disk cache is off (DEEPGEMM_CACHE_DIR=off, or no HOME): nothing to fill\n");
    return kExitError;
  }
  if (const std::string why = jit::cache_dir_problem(); !why.empty()) {
    std::fprintf(stderr, "deepgemm warm: the kernel cache folder cannot be used: %s\n", why.c_str());
    return kExitError;
  }
  // Before minutes of compiling: can anything be written there at all?
  const std::string probe = jit::cache_dir() + "/.warm-probe";
  if (!write_file_atomically(probe, "")) {
    std::fprintf(stderr, "deepgemm warm: cannot write to the kernel cache folder %s\n", jit::cache_dir().c_str());
    return kExitError;
  }
  unlink(probe.c_str());

  // Every distinct kernel of the chosen plans (and runners-up), each once.
  std::vector<jit::CompileRequest> requests;
  std::set<std::string> keys;
  int plans = 0, unplannable = 0;
  for (const GemmOptions& o : problems) {
    try {
      GemmProblem p = api::convert_problem(&o.problem, grouping.groups ? api::convert_grouped(&grouped.header) : Grouping());
      Epilogue e = api::convert_epilogue(&o.epilogue, p);
      const dgemm_scaling_t s = scaling.for_problem(o.problem, grouping.groups > 0);
      api::apply_scaling(scaling.active ? &s.header : nullptr, p, e);
      const PlanDecision d = choose_kernel(p, e, hw, request);
      std::vector<KernelConfig> configs{d.chosen.config};
      for (int i = 0; i < runners_up && i < int(d.runners_up.size()); ++i) configs.push_back(d.runners_up[i].config);
      for (std::size_t i = 0; i < configs.size(); ++i) {
        // The chosen plan also prepares its fallback (pointers TMA cannot take).
        const KernelConfig* fallback = i == 0 && d.fallback ? &d.fallback->config : nullptr;
        for (jit::CompileRequest& r : cuda::plan_compile_requests(p, e, configs[i], fallback, arch)) {
          if (keys.insert(jit::cache_key(r)).second) requests.push_back(std::move(r));
        }
      }
      ++plans;
    } catch (const std::exception& ex) {
      ++unplannable;
      std::fprintf(as_json ? stderr : stdout, "skipped: %s\n", ex.what());
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::atomic<std::size_t> next{0};
  std::vector<double> seconds(requests.size(), 0.0);
  std::vector<std::string> errors(requests.size());
  std::mutex progress_mutex;
  std::size_t done = 0;
  // On a terminal one line that updates in place; in a log one line per kernel.
  const bool tty = isatty(fileno(stderr));
  auto progress = [&](std::size_t i) {
    std::lock_guard<std::mutex> lock(progress_mutex);
    ++done;
    if (quiet) return;
    if (tty) {
      std::fprintf(stderr, "\rwarm: %zu / %zu kernels compiled, %.1f s elapsed%s", done, requests.size(), elapsed(),
                   done == requests.size() ? "\n" : "");
    } else {
      std::fprintf(stderr, "warm: [%zu/%zu] %.1f s elapsed: %s (%.2f s)%s\n", done, requests.size(), elapsed(),
                   requests[i].name.c_str(), seconds[i], errors[i].empty() ? "" : " FAILED");
    }
    std::fflush(stderr);
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads && t < int(requests.size()); ++t) {
    pool.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < requests.size();) {
        const auto start = std::chrono::steady_clock::now();
        try {
          jit::compile(requests[i]);
        } catch (const std::exception& ex) {
          errors[i] = ex.what();
        }
        seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        progress(i);
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const double total_s = elapsed();
  int failed = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (errors[i].empty()) continue;
    ++failed;
    std::fprintf(stderr, "compile failed: %s: %s\n", requests[i].name.c_str(), errors[i].c_str());
  }
  if (as_json) {
    std::printf("{\"hardware\": \"%s\", \"arch\": \"%s\", \"plans\": %d, \"unplannable\": %d, \"kernels\": %zu, "
                "\"failed\": %d, \"seconds\": %.3f, \"cache_dir\": \"%s\",\n \"compiled\": [",
                json_escape(hw.name).c_str(), arch.c_str(), plans, unplannable, requests.size(), failed, total_s,
                json_escape(jit::cache_dir()).c_str());
    for (std::size_t i = 0; i < requests.size(); ++i) {
      std::printf("%s\n  {\"name\": \"%s\", \"seconds\": %.3f, \"error\": \"%s\"}", i ? "," : "",
                  json_escape(requests[i].name).c_str(), seconds[i], json_escape(errors[i]).c_str());
    }
    std::printf("]}\n");
  } else {
    std::printf("warm: %zu kernels for %s (%s) from %d plans in %.1f s into %s%s\n", requests.size(), hw.name.c_str(),
                arch.c_str(), plans, total_s, jit::cache_dir().c_str(),
                unplannable ? (" (" + std::to_string(unplannable) + " problems not plannable)").c_str() : "");
  }
  // Success means every kernel is now in the disk cache (compile() writes it best effort).
  int missing = 0;
  for (const jit::CompileRequest& r : requests) {
    struct stat st;
    const std::string path = jit::cache_entry_path(jit::cache_key(r));
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) ++missing;
  }
  if (missing > 0 && failed == 0) {
    std::fprintf(stderr, "deepgemm warm: %d of %zu kernels could not be written to %s (is it writable?)\n", missing,
                 requests.size(), jit::cache_dir().c_str());
  }
  if (plans == 0) {
    std::fprintf(stderr, "deepgemm warm: none of the %zu problems could be planned\n", problems.size());
    return kExitUnsupported;
  }
  return failed || missing ? kExitError : kExitOk;
#endif
}

}  // namespace dgemm::tools
