// Autotuning's selection rule and memory with a scripted timer: a challenger wins only when it is
// faster than the planner's choice by more than the noise, failures never win, and a winner is
// remembered on disk per device and problem class, so that the next plan times nothing.
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "plan/arch_file.hpp"
#include "plan/autotune.hpp"

using namespace dgemm;

namespace {

// Times from a table by config name; counts calls.
class ScriptedTimer final : public CandidateTimer {
 public:
  std::map<std::string, double> table;
  std::string device = "fake-gpu sm_90 132 SMs";
  int calls = 0;
  double time_us(const GemmProblem&, const Epilogue&, const KernelConfig& c) override {
    ++calls;
    auto it = table.find(c.name());
    return it == table.end() ? -1.0 : it->second;
  }
  std::string device_key() const override { return device; }
};

Candidate cand(int bm, int bn, double predicted) {
  Candidate c;
  c.config.family = Family::Sm80;
  c.config.block_m = bm;
  c.config.block_n = bn;
  c.config.block_k = 32;
  c.config.stages = 4;
  c.config.threads = 256;
  c.predicted_us = predicted;
  return c;
}

PlanDecision planned() {
  PlanDecision d;
  d.chosen = cand(128, 256, 100);
  d.runners_up = {cand(128, 128, 110), cand(64, 128, 120), cand(64, 64, 130)};
  return d;
}

GemmProblem problem(int64_t m, int64_t n, int64_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.resolve_and_validate();
  return p;
}

struct TempDir {
  std::string path;
  TempDir() {
    path = (std::filesystem::temp_directory_path() / ("dgemm_tune_" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(challenger_within_noise_does_not_replace_the_default) {
  ScriptedTimer t;
  PlanDecision d = planned();
  t.table = {{d.chosen.config.name(), 100.0}, {d.runners_up[0].config.name(), 98.5}, {d.runners_up[1].config.name(), 140.0}};
  AutotuneResult r = autotune(d, problem(4096, 4096, 4096), Epilogue{}, t, AutotuneOptions{});
  BOOST_TEST(!r.changed);
  BOOST_TEST(r.decision.chosen.config.name() == d.chosen.config.name());
  BOOST_TEST(t.calls == 4);  // top_k = 4: the choice and three runners-up
}

BOOST_AUTO_TEST_CASE(clearly_faster_challenger_wins_and_failures_never_do) {
  ScriptedTimer t;
  PlanDecision d = planned();
  // runners_up[2] "fails" (no entry): never chosen even though the others are slow.
  t.table = {{d.chosen.config.name(), 100.0}, {d.runners_up[0].config.name(), 90.0}, {d.runners_up[1].config.name(), 80.0}};
  AutotuneResult r = autotune(d, problem(4096, 4096, 4096), Epilogue{}, t, AutotuneOptions{});
  BOOST_TEST(r.changed);
  BOOST_TEST(r.decision.chosen.config.name() == d.runners_up[1].config.name());
  BOOST_TEST(r.winner_us == 80.0);
  BOOST_TEST(r.default_us == 100.0);
  BOOST_TEST(r.decision.chosen.notes.find("autotuned") != std::string::npos);
  // The old choice is now a runner-up; nothing was lost.
  BOOST_TEST(r.decision.runners_up.size() == d.runners_up.size());
  BOOST_TEST(r.decision.runners_up.front().config.name() == d.chosen.config.name());

  // A default that fails is replaced by the fastest one that runs; if none runs, nothing changes.
  ScriptedTimer u;
  u.table = {{d.runners_up[2].config.name(), 500.0}};
  r = autotune(d, problem(4096, 4096, 4096), Epilogue{}, u, AutotuneOptions{});
  BOOST_TEST(r.decision.chosen.config.name() == d.runners_up[2].config.name());
  ScriptedTimer none;
  r = autotune(d, problem(4096, 4096, 4096), Epilogue{}, none, AutotuneOptions{});
  BOOST_TEST(!r.changed);
  BOOST_TEST(r.winner_us == -1.0);
}

BOOST_AUTO_TEST_CASE(winner_is_remembered_per_device_and_problem_class) {
  TempDir dir;
  AutotuneOptions o;
  o.memory_dir = dir.path;
  PlanDecision d = planned();
  ScriptedTimer t;
  t.table = {{d.chosen.config.name(), 100.0}, {d.runners_up[0].config.name(), 60.0}};
  AutotuneResult first = autotune(d, problem(4000, 4000, 4000), Epilogue{}, t, o);
  BOOST_TEST(first.changed);
  BOOST_TEST(!first.remembered);

  // Same class (m, n, k round up to 4096): no timing at all.
  ScriptedTimer again = t;
  again.calls = 0;
  AutotuneResult second = autotune(d, problem(4096, 3000, 4096), Epilogue{}, again, o);
  BOOST_TEST(second.remembered);
  BOOST_TEST(again.calls == 0);
  BOOST_TEST(second.decision.chosen.config.name() == d.runners_up[0].config.name());

  // Another class, another device, or another epilogue: tuned afresh.
  ScriptedTimer other = t;
  other.calls = 0;
  autotune(d, problem(8192, 4096, 4096), Epilogue{}, other, o);
  BOOST_TEST(other.calls == 4);
  other.device = "another-gpu";
  other.calls = 0;
  autotune(d, problem(4000, 4000, 4000), Epilogue{}, other, o);
  BOOST_TEST(other.calls == 4);
  Epilogue relu;
  relu.activation = Activation::Relu;
  BOOST_TEST(problem_class_key(problem(4000, 4000, 4000), relu) != problem_class_key(problem(4000, 4000, 4000), Epilogue{}));

  // A remembered name that is no longer a candidate is ignored: tuned again.
  PlanDecision shrunk = d;
  shrunk.runners_up.erase(shrunk.runners_up.begin());
  ScriptedTimer fresh = t;
  fresh.calls = 0;
  AutotuneResult third = autotune(shrunk, problem(4000, 4000, 4000), Epilogue{}, fresh, o);
  BOOST_TEST(!third.remembered);
  BOOST_TEST(fresh.calls == 3);
}

BOOST_AUTO_TEST_CASE(memory_dir_follows_the_cache_setting) {
  const char* old = std::getenv("DEEPGEMM_CACHE_DIR");
  const std::string saved = old ? old : "";
  ::setenv("DEEPGEMM_CACHE_DIR", "/tmp/xyz", 1);
  BOOST_TEST(default_autotune_dir() == "/tmp/xyz/autotune");
  ::setenv("DEEPGEMM_CACHE_DIR", "off", 1);
  BOOST_TEST(default_autotune_dir().empty());
  if (old) ::setenv("DEEPGEMM_CACHE_DIR", saved.c_str(), 1);
  else ::unsetenv("DEEPGEMM_CACHE_DIR");
}
