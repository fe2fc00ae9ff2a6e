// dgemm_create_plan_many / dgemm_execute_many: many independent GEMMs of arbitrary shapes, as
// cublasGemmGroupedBatchedEx with the sizes on the host. A plan per problem (identical problems
// share one kernel through the context's plan cache), run one after another on one stream.
#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

#include "api/convert.hpp"
#include "api/entry_points.hpp"
#include "api/grouped.hpp"
#include "api/handles.hpp"
#include "core/error.hpp"

namespace dgemm::api {
namespace {

// Stands in for the outer plan's executable so that dgemm_plan_workspace_size and describe work
// on it unchanged; the problems run through their own plans.
class ManyExecutable final : public Executable {
 public:
  explicit ManyExecutable(std::size_t workspace) : workspace_(workspace) {}
  std::size_t workspace_size() const override { return workspace_; }
  void run(const ExecArgs&) const override {
    fail(Status::InternalError, "a dgemm_create_plan_many plan was run as a single plan");
  }

 private:
  std::size_t workspace_;
};

// Runs `body`, prefixing any error's message with the problem it is about.
template <class Body>
void for_problem(int64_t i, Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    throw Error(e.status(), "problems[" + std::to_string(i) + "]: " + e.what());
  }
}

}  // namespace

void create_plan_many(dgemm_context_t ctx, int64_t count, const dgemm_problem_t* problems,
                      const dgemm_epilogue_t* epilogues, const dgemm_plan_options_t* options, dgemm_plan_t* plan) {
  require_non_null(ctx, "ctx");
  require_non_null(problems, "problems");
  require_non_null(plan, "plan");
  if (count < 1) fail(Status::InvalidArgument, "count = ", count, ": must be >= 1");
  auto h = std::make_unique<dgemm_plan>();
  h->ctx = ctx;
  h->parts.reserve(std::size_t(count));  // so that adding a part cannot throw and leak it
  for (int64_t i = 0; i < count; ++i) {
    dgemm_plan_t part = nullptr;
    for_problem(i, [&] { create_plan(ctx, &problems[i], epilogues ? &epilogues[i] : nullptr, options, nullptr, &part); });
    h->parts.push_back(part);
  }
  // The distinct kernels, in order of first use, and which one each problem runs.
  std::map<const PlanEntry*, std::size_t> index;
  std::vector<const dgemm_plan*> distinct;
  std::ostringstream uses;
  std::size_t workspace = 0;
  for (const dgemm_plan* part : h->parts) {
    auto it = index.emplace(part->entry.get(), distinct.size()).first;
    if (it->second == distinct.size()) distinct.push_back(part);
    uses << (uses.tellp() > 0 ? "," : "") << it->second;
    workspace = std::max(workspace, part->entry->executable->workspace_size());
  }
  std::ostringstream json;
  json << "{\"many\":" << count << ",\"distinct\":" << distinct.size() << ",\"workspace\":" << workspace
       << ",\"problem_plan\":[" << uses.str() << "],\"plans\":[";
  for (std::size_t i = 0; i < distinct.size(); ++i) json << (i ? "," : "") << distinct[i]->entry->description;
  json << "]}";
  auto entry = std::make_shared<PlanEntry>();
  entry->executable = std::make_unique<ManyExecutable>(workspace);
  entry->description = json.str();
  h->entry = std::move(entry);
  ctx->live_plans.fetch_add(1);
  *plan = h.release();
}

void execute_many(dgemm_plan_t plan, const void* const* A, const void* const* B, const void* const* C,
                  void* const* D, const dgemm_args_t* args, void* workspace, size_t workspace_size, void* stream) {
  require_non_null(plan, "plan");
  if (plan->parts.empty())
    fail(Status::InvalidArgument, "plan was not made by dgemm_create_plan_many: run it with dgemm_execute");
  require_non_null(A, "A");
  require_non_null(B, "B");
  require_non_null(D, "D");
  // Every problem is checked before any runs, so a bad argument anywhere writes nothing; the
  // second pass converts again rather than keep `count` ExecArgs (execute allocates nothing).
  const int64_t count = int64_t(plan->parts.size());
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t i = 0; i < count; ++i) {
      dgemm_plan* part = plan->parts[std::size_t(i)];
      ExecArgs x;
      bool work = false;
      for_problem(i, [&] {
        work = prepare_execute(part, A[i], B[i], C ? C[i] : nullptr, D[i], args ? &args[i] : nullptr, nullptr,
                               workspace, workspace_size, stream, &x);
      });
      if (pass == 1 && work) part->entry->executable->run(x);
    }
  }
}

}  // namespace dgemm::api
