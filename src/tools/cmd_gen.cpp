// `deepgemm gen`: writes the specialised kernel source a plan would JIT-compile, as one
// self-contained .cuh (the embedded kernel headers inlined), for people who compile ahead of time
// with nvcc. The kernel is chosen by the planner for the problem on --arch, exactly as
// dgemm_create_plan would, among the GPU families that have a source generator.
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "api/convert.hpp"
#include "api/grouped.hpp"
#include "api/scaling.hpp"
#include "core/error.hpp"
#include "plan/families.hpp"
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

void print_help() {
  std::printf(
      "usage: deepgemm gen --output FILE.cuh [--arch auto|NAME|FILE] [--target sm_XX] [--force FAMILY] [problem flags]\n"
      "  --output  where to write the source ('-' = standard output)\n"
      "  --arch    machine to plan for (default auto: the first GPU, else a100)\n"
      "  --target  nvcc/NVRTC architecture of the source (default: the machine's, e.g. sm_80, sm_90a)\n"
      "  --force   only this family (sm80, sm90, small_m) or configuration (as `deepgemm plan` names it)\n"
      "The file compiles with: nvcc -std=c++17 -c -x cu -gencode=arch=compute_80,code=sm_80 FILE.cuh\n"
      "%s%s%s",
      gemm_options_help(), scaling_options_help(), grouping_options_help());
}

#ifdef DGEMM_WITH_CUDA
// Replaces every #include "x" of an embedded kernel header with its text (once per header, as
// their #pragma once would), so that the output needs nothing but nvcc.
void inline_includes(const std::string& text, const std::map<std::string, std::string>& files,
                     std::set<std::string>& done, std::ostringstream& out, int depth) {
  if (depth > 32) throw std::runtime_error("kernel headers include each other too deeply");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::string trimmed = line.substr(std::min(line.size(), line.find_first_not_of(" \t")));
    if (trimmed.rfind("#pragma once", 0) == 0) continue;
    if (trimmed.rfind("#include", 0) == 0) {
      auto q1 = trimmed.find('"'), q2 = trimmed.rfind('"');
      if (q1 != std::string::npos && q2 > q1) {
        const std::string name = trimmed.substr(q1 + 1, q2 - q1 - 1);
        auto it = files.find(name);
        if (it != files.end()) {
          if (done.insert(name).second) {
            out << "// ---- begin " << name << "\n";
            inline_includes(it->second, files, done, out, depth + 1);
            out << "// ---- end " << name << "\n";
          }
          continue;
        }
      }
    }
    out << line << "\n";
  }
}

std::string self_contained(const std::string& source) {
  std::map<std::string, std::string> files;
  for (const jit::EmbeddedFile& f : jit::embedded_kernel_files()) files.emplace(f.name, std::string(f.text, f.size));
  std::set<std::string> done;
  std::ostringstream out;
  inline_includes(source, files, done, out, 0);
  return out.str();
}
#endif

// The source of `c` for `target`, or "" (and *why) when its family has no generator in this build.
std::string generate(const GemmProblem& p, const Epilogue& e, const KernelConfig& c, const std::string& target,
                     std::string* kernels, std::string* why) {
#ifdef DGEMM_WITH_CUDA
  const cuda::Launcher* launcher = cuda::launcher_for(c.family);
  if (!launcher) {
    *why = std::string("the ") + family_name(c.family) + " family has no kernel source";
    return "";
  }
  *why = launcher->target_problem(target);
  if (!why->empty()) return "";
  *kernels = launcher->describe(p, c);
  // The main module (a fallback, if the plan has one, is a plan of its own: `--force` it).
  return self_contained(launcher->compile_requests(p, e, c, target).front().source);
#else
  (void)p, (void)e, (void)c, (void)target, (void)kernels;
  *why = "this deepgemm was built without CUDA support (DGEMM_WITH_CUDA)";
  return "";
#endif
}

std::string target_for(const HardwareDesc& hw) {
#ifdef DGEMM_WITH_CUDA
  return jit::arch_for_cc(hw.cc_major, hw.cc_minor);
#else
  return "sm_" + std::to_string(hw.cc());
#endif
}

}  // namespace

int cmd_gen(int argc, char** argv) {
  Flags f(argc, argv);
  if (f.get_bool("help")) {
    print_help();
    return 0;
  }
  const std::string output = f.get("output", "");
  const std::string arch = f.get("arch", "auto");
  std::string target = f.get("target", "");
  PlanRequest request;
  request.use_cache = false;
  if (f.has("force")) apply_force_option(f.get("force", ""), &request);
  GemmOptions opt = parse_gemm_options(f);
  // Input / output scaling and grouping as `deepgemm plan` takes them: the kernel's template
  // arguments depend on their modes (e.g. the promoted block-scaled main loop, kGrouped).
  const ScalingOptions scaling = parse_scaling_options(f);
  const GroupingOptions grouping = parse_grouping_options(f);
  grouping.apply(&opt.problem);
  const dgemm_grouped_t grouped = grouping.extension();
  f.check_all_used();
  if (output.empty()) throw std::invalid_argument("--output FILE.cuh is required ('-' for standard output)");
  GemmProblem p = api::convert_problem(&opt.problem, grouping.groups ? api::convert_grouped(&grouped.header) : Grouping());
  Epilogue e = api::convert_epilogue(&opt.epilogue, p);
  const dgemm_scaling_t s = scaling.for_problem(opt.problem, grouping.groups > 0);
  api::apply_scaling(scaling.active ? &s.header : nullptr, p, e);

  std::string note;
  HardwareDesc hw = resolve_arch(arch, &note);
  if (hw.vendor == Vendor::Cpu) {
    std::fprintf(stderr, "deepgemm gen: %s; generating for a100 (sm_80) instead\n",
                 note.empty() ? "the CPU has no kernel source" : note.c_str());
    hw = resolve_arch("a100", nullptr);
  }
  if (target.empty()) target = target_for(hw);

  // The planner's ranking, without the CPU reference: the first candidate with a generator wins.
  CandidateSet set = evaluate_candidates(p, e, hw, request, family_models());
  std::string why = set.feasible.empty() ? set.why_none : std::string();
  std::set<std::string> said;
  for (const Candidate& c : set.feasible) {
    if (c.config.family == Family::Cpu) continue;
    std::string kernels, no_gen;
    std::string source = generate(p, e, c.config, target, &kernels, &no_gen);
    if (source.empty()) {
      // The next-ranked candidate may have a generator or suit --target: say what was skipped.
      if (said.insert(no_gen).second)
        std::fprintf(stderr, "deepgemm gen: skipping %s%s: %s\n", c.config.name().c_str(),
                     &c == &set.feasible.front() ? " (the planner's choice)" : "", no_gen.c_str());
      if (why.empty()) why = no_gen;
      continue;
    }
    std::ostringstream head;
    head << "// Generated by deepgemm gen (" << "DeepGEMM): do not edit; regenerate instead.\n"
         << "// problem:  " << p.to_string() << "\n"
         << "// epilogue: " << e.to_string() << "\n"
         << "// machine:  " << hw.name << ", target " << target << "\n"
         << "// kernel:   " << c.config.name() << ", predicted " << c.predicted_us << " us\n"
         << "// entry points: " << kernels << "\n"
         << "// compile:  nvcc -std=c++17 -c -x cu -gencode=arch=compute_" << target.substr(3) << ",code=" << target
         << " THIS_FILE\n\n";
    const std::string text = head.str() + source;
    if (output == "-") {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      std::ofstream out(output, std::ios::binary | std::ios::trunc);
      out << text;
      out.close();
      if (!out) throw std::runtime_error("cannot write '" + output + "'");
      std::fprintf(stderr, "deepgemm gen: wrote %s (%s, %zu bytes)\n", output.c_str(), c.config.name().c_str(), text.size());
    }
    return 0;
  }
  std::fprintf(stderr, "deepgemm gen: no kernel source for %s on %s: %s\n", p.to_string().c_str(), hw.name.c_str(),
               why.empty() ? "only the CPU reference can run it" : why.c_str());
  return 1;
}

}  // namespace dgemm::tools
