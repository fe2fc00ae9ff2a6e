// `deepgemm plan`: the planner's decision for one problem on any machine (the detected GPU, a
// built-in description such as h200, or a YAML file), and why: the roofline floors, the chosen
// kernel with the model's terms, the runners-up and the rejected candidates with their reasons.
// Needs no GPU: the planner never launches anything.
#include <cstdio>
#include <stdexcept>
#include <string>

#include "api/convert.hpp"
#include "api/grouped.hpp"
#include "api/scaling.hpp"
#include "core/error.hpp"
#include "plan/arch_file.hpp"
#include "plan/families.hpp"
#include "plan/planner.hpp"
#include "tools/arch_option.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"

namespace dgemm::tools {
namespace {

void print_help() {
  std::string names;
  for (const std::string& n : builtin_arch_names()) names += (names.empty() ? "" : ", ") + n;
  std::printf(
      "usage: deepgemm plan [--arch auto|cpu|NAME|FILE[,FILE...]] [--json] [--all] [--force FAMILY] [problem flags]\n"
      "  --arch    machine to plan for (default auto: the first GPU, else the CPU); built-in: %s;\n"
      "            a YAML file describes a whole machine or overrides fields (e.g. h200,cap.yaml)\n"
      "  --json    print the plan's JSON description (as dgemm_plan_describe gives it)\n"
      "  --all     list every candidate, not only the best few\n"
      "  --force   only this family may be chosen (cpu, sm80, sm90, small_m)\n"
      "  --show-arch  print the machine's description as YAML (a start for a file) and stop\n"
      "%s%s%s",
      names.c_str(), gemm_options_help(), scaling_options_help(), grouping_options_help());
}

const char* bound_of(const Candidate& c) { return c.has_cost ? c.cost.bound : "-"; }

void print_row(int rank, const Candidate& c) {
  if (c.has_cost) {
    std::printf("  %3d  %-34s %11.2f  %-8s %6.2f %4d%%  %6d %5d %8ld  %5.2f\n", rank, c.config.name().c_str(),
                c.predicted_us, bound_of(c), c.cost.waves, int(c.cost.wave_efficiency * 100 + 0.5), c.cost.blocks_per_sm,
                c.cost.regs_per_thread, c.cost.smem_bytes, c.cost.conflict_degree);
  } else {
    std::printf("  %3d  %-34s %11.2f  %s\n", rank, c.config.name().c_str(), c.predicted_us, c.notes.c_str());
  }
}

void print_header() {
  std::printf("  %3s  %-34s %11s  %-8s %6s %5s  %6s %5s %8s  %5s\n", "#", "candidate", "predict_us", "bound", "waves",
              "used", "blk/SM", "regs", "smem_B", "confl");
}

void print_rejected(const std::vector<Candidate>& rejected) {
  if (rejected.empty()) return;
  std::printf("rejected:\n");
  for (const Candidate& c : rejected) std::printf("  %-34s %s\n", c.config.name().c_str(), c.reject_reason.c_str());
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  Flags f(argc, argv);
  if (f.get_bool("help")) {
    print_help();
    return 0;
  }
  const std::string arch = f.get("arch", "auto");
  const bool json = f.get_bool("json");
  const bool all = f.get_bool("all");
  const bool show_arch = f.get_bool("show-arch");
  PlanRequest request;
  request.use_cache = false;
  if (f.has("force")) {
    Family fam;
    const std::string name = f.get("force", "");
    if (!family_from_name(name, &fam)) throw std::invalid_argument("--force = '" + name + "': expected cpu, sm80, sm90 or small_m");
    request.force = fam;
  }
  GemmOptions opt = parse_gemm_options(f);
  // The planner weighs the scale modes, not their values.
  const ScalingOptions scaling = parse_scaling_options(f);
  const GroupingOptions grouping = parse_grouping_options(f);
  grouping.apply(&opt.problem);
  const dgemm_grouped_t grouped = grouping.extension();
  f.check_all_used();
  GemmProblem p = api::convert_problem(&opt.problem, grouping.groups ? api::convert_grouped(&grouped.header) : Grouping());
  Epilogue e = api::convert_epilogue(&opt.epilogue, p);
  const dgemm_scaling_t s = scaling.for_problem(opt.problem, grouping.groups > 0);
  api::apply_scaling(scaling.active ? &s.header : nullptr, p, e);

  std::string note;
  HardwareDesc hw = resolve_arch(arch, &note);
  if (!note.empty()) std::fprintf(stderr, "deepgemm plan: %s\n", note.c_str());
  if (show_arch) {
    std::printf("# %s (deepgemm plan --arch %s --show-arch)\n%s", hw.name.c_str(), arch.c_str(), arch_to_yaml(hw).c_str());
    return 0;
  }

  CandidateSet set = evaluate_candidates(p, e, hw, request, family_models());
  const Roofline roof = problem_roofline(p, e, hw);
  PlanDecision d;
  bool runnable = !set.feasible.empty();
  if (runnable) d = choose_kernel_from(p, e, hw, request, family_models());

  if (json) {
    if (runnable) {
      std::printf("%s\n", d.to_json(p, e, hw).c_str());
    } else {
      std::printf("{\"problem\":\"%s\",\"epilogue\":\"%s\",\"hardware\":\"%s\",\"roofline\":{\"flops\":%g,\"min_bytes\":%g,"
                  "\"compute_floor_us\":%g,\"memory_floor_us\":%g},\"chosen\":null,\"why\":\"%s\",\"rejected\":[",
                  json_escape(p.to_string()).c_str(), json_escape(e.to_string()).c_str(), json_escape(hw.name).c_str(),
                  roof.flops, roof.min_bytes, roof.compute_floor_us, roof.memory_floor_us, json_escape(set.why_none).c_str());
      for (std::size_t i = 0; i < set.rejected.size(); ++i)
        std::printf("%s%s", i ? "," : "", candidate_to_json(set.rejected[i]).c_str());
      std::printf("]}\n");
    }
    return runnable ? 0 : 1;
  }

  std::printf("problem   %s\n", p.to_string().c_str());
  std::printf("epilogue  %s\n", e.to_string().c_str());
  std::printf("hardware  %s\n", describe_hardware(hw).c_str());
  std::printf("roofline  %.3g GFLOP, %.3g MB at least: compute floor %.2f us, memory floor %.2f us\n", roof.flops / 1e9,
              roof.min_bytes / 1e6, roof.compute_floor_us, roof.memory_floor_us);
  if (!runnable) {
    std::printf("\nno runnable plan: %s\n\n", set.why_none.c_str());
    print_rejected(all ? set.rejected : std::vector<Candidate>(set.rejected.begin(),
                                                                set.rejected.begin() + std::min<std::size_t>(8, set.rejected.size())));
    return 1;
  }
  const double floor = std::max(roof.compute_floor_us, roof.memory_floor_us);
  std::printf("\nchosen    %s (%s family), predicted %.2f us", d.chosen.config.name().c_str(),
              family_name(d.chosen.config.family), d.chosen.predicted_us);
  if (floor > 0 && d.chosen.predicted_us > 0) std::printf(" = %.0f%% of the roofline", 100.0 * floor / d.chosen.predicted_us);
  std::printf("\n          %s\n", d.chosen.notes.c_str());
  if (!d.chosen.rule.empty()) std::printf("          chosen by a measured rule: %s\n", d.chosen.rule.c_str());
  std::printf("          %d candidates considered, %zu feasible, planned in %.1f us\n\n", d.considered, set.feasible.size(),
              d.plan_us);
  print_header();
  const std::size_t shown = all ? set.feasible.size() : std::min<std::size_t>(5, set.feasible.size());
  for (std::size_t i = 0; i < shown; ++i) print_row(int(i + 1), set.feasible[i]);
  if (shown < set.feasible.size()) std::printf("  ... %zu more (--all)\n", set.feasible.size() - shown);
  std::printf("\n");
  print_rejected(all ? set.rejected : d.rejected);
  return 0;
}

}  // namespace dgemm::tools
