// Autotuning's selection rule and its on-disk memory (see autotune.hpp).
#include "plan/autotune.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "core/files.hpp"

namespace dgemm {
namespace {

int64_t pow2_ceil(int64_t v) {
  int64_t r = 1;
  while (r < v && r < (int64_t(1) << 62)) r <<= 1;
  return r;
}

// Largest power of two (up to 16 bytes) dividing ld x element size: what vector widths allow.
int alignment_bytes(int64_t ld, DType t) {
  const int64_t bytes = ld * int64_t(dtype_size(t));
  int a = 1;
  while (a < 16 && bytes % (2 * a) == 0) a *= 2;
  return a;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string memory_path(const std::string& dir, const std::string& key) {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.txt", static_cast<unsigned long long>(fnv1a(key)));
  return (std::filesystem::path(dir) / name).string();
}

// The remembered winner's config name for `key`, or "" (a file for another key with the same
// hash, a damaged one, or one in a folder others can write, is ignored). The memory is read like
// the kernel cache: a small regular file, never through a symlink.
std::string recall(const std::string& dir, const std::string& key) {
  if (dir.empty() || !prepare_private_dir(dir).empty()) return "";
  std::string text;
  if (read_regular_file(memory_path(dir, key), 1 << 16, /*follow_symlinks=*/false, &text).status != ReadStatus::Ok)
    return "";
  std::istringstream in(text);
  std::string stored_key, name;
  if (!std::getline(in, stored_key) || !std::getline(in, name) || stored_key != key) return "";
  return name;
}

// Written to a fresh file and renamed: a reader sees the old entry or the new one, never half.
// The memory is an optimization: failing to write it is not an error.
void remember(const std::string& dir, const std::string& key, const std::string& name, double us) {
  if (dir.empty() || !prepare_private_dir(dir).empty()) return;
  std::ostringstream out;
  out << key << "\n" << name << "\n" << us << "\n";
  write_file_atomically(memory_path(dir, key), out.str());
}

}  // namespace

std::string default_autotune_dir() {
  const char* env = std::getenv("DEEPGEMM_CACHE_DIR");
  if (env && *env) {
    if (std::string(env) == "off") return "";
    return (std::filesystem::path(env) / "autotune").string();
  }
  const char* home = std::getenv("HOME");
  if (!home || !*home) return "";
  return (std::filesystem::path(home) / ".cache" / "deepgemm" / "autotune").string();
}

std::string problem_class_key(const GemmProblem& p, const Epilogue& e) {
  std::ostringstream os;
  os << dtype_name(p.a_type) << "*" << dtype_name(p.b_type) << "+" << dtype_name(p.c_type) << "->"
     << dtype_name(p.d_type) << "(" << dtype_name(p.compute_type) << ") " << op_name(p.op_a) << op_name(p.op_b) << " "
     << order_name(p.order) << " m<=" << pow2_ceil(p.m) << " n<=" << pow2_ceil(p.n) << " k<=" << pow2_ceil(p.k)
     << " batch" << (p.batch_count > 1 ? ">1" : "=1") << " align=" << alignment_bytes(p.lda, p.a_type) << ","
     << alignment_bytes(p.ldb, p.b_type) << "," << alignment_bytes(p.ldd, p.d_type);
  // DGEMM_1.1 input scaling changes the kernel: its modes, types and layouts belong to the class.
  for (const ScaleDesc* s : {&p.a_scale, &p.b_scale}) {
    if (s->active())
      os << " " << scale_mode_name(s->mode) << "/" << scale_type_name(s->type) << "/" << scale_layout_name(s->layout);
  }
  // So does a grouping: a grouped problem never reuses a strided batch's winner, or the reverse.
  os << p.grouping.to_string();
  os << " | " << e.key();
  return os.str();
}

AutotuneResult autotune(const PlanDecision& planned, const GemmProblem& p, const Epilogue& e, CandidateTimer& timer,
                        const AutotuneOptions& options) {
  AutotuneResult r;
  r.decision = planned;
  std::vector<Candidate> pool;
  pool.push_back(planned.chosen);
  for (const Candidate& c : planned.runners_up) pool.push_back(c);
  if (pool.size() > std::size_t(std::max(1, options.top_k))) pool.resize(std::size_t(std::max(1, options.top_k)));

  auto make_winner = [&](std::size_t index) {
    if (index == 0) return;
    r.changed = true;
    PlanDecision d = planned;
    std::vector<Candidate> others;
    others.push_back(planned.chosen);
    for (const Candidate& c : planned.runners_up)
      if (c.config.name() != pool[index].config.name()) others.push_back(c);
    d.chosen = pool[index];
    d.runners_up = others;
    r.decision = d;
  };

  const std::string key = timer.device_key() + " | " + problem_class_key(p, e);
  const std::string name = recall(options.memory_dir, key);
  if (!name.empty()) {
    for (std::size_t i = 0; i < pool.size(); ++i) {
      if (pool[i].config.name() == name) {
        r.remembered = true;
        make_winner(i);
        r.decision.chosen.notes = "autotuned (remembered); " + r.decision.chosen.notes;
        return r;
      }
    }
    // The remembered winner is not among today's candidates (new menu, other limits): tune again.
  }

  std::vector<double> times(pool.size(), -1.0);
  for (std::size_t i = 0; i < pool.size(); ++i) times[i] = timer.time_us(p, e, pool[i].config);
  r.default_us = times[0];
  // The fastest challenger that ran; it must beat a default that ran by more than the noise.
  std::size_t challenger = 0;
  for (std::size_t i = 1; i < pool.size(); ++i)
    if (times[i] > 0 && (challenger == 0 || times[i] < times[challenger])) challenger = i;
  std::size_t best = 0;
  if (times[0] > 0) {
    if (challenger != 0 && times[challenger] < times[0] * (1.0 - options.noise)) best = challenger;
  } else if (challenger != 0) {
    best = challenger;
  } else {
    return r;  // nothing ran: keep the planner's choice, remember nothing
  }
  make_winner(best);
  r.winner_us = times[best];
  std::ostringstream note;
  note << "autotuned: " << times[best] << " us measured";
  if (best != 0 && times[0] > 0) note << " vs " << times[0] << " us for the model's choice " << planned.chosen.config.name();
  r.decision.chosen.notes = note.str() + "; " + r.decision.chosen.notes;
  remember(options.memory_dir, key, pool[best].config.name(), times[best]);
  return r;
}

}  // namespace dgemm
