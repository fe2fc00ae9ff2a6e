// Handle records, descriptor shadows, contexts and workspace pools (see handles.hpp).
#include "compat/cublas/handles.hpp"

#include <map>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "compat/cublas/driver.hpp"
#include "compat/cublas/observe.hpp"

namespace dgemm_cublas {
namespace {

// One registry per kind of object: a reader lock on the hot path, a writer lock at create/destroy.
// Records are shared: a caller keeps the one it found alive while it plans (seconds, when NVRTC
// compiles) even if the handle is destroyed meanwhile, and several live handles at one address
// share one record until the last of them is destroyed. (On the H200, eight threads each calling
// cublasLtCreate while planning for a cold kernel cache ended in a hang on a freed record's mutex,
// once in glibc's tpp.c assertion: a create at an address with a live record replaced that record
// under the threads using it, as a cuBLASLt that hands out one handle address for several creates
// would; run 8, bench/RESULTS.md.)
template <class T>
struct Registry {
  struct Entry {
    std::shared_ptr<T> state;
    int live = 0;  // creates at this address not yet destroyed
  };
  std::shared_mutex mu;
  std::unordered_map<const void*, Entry> map;

  void add(const void* key) {
    auto fresh = std::make_shared<T>();
    std::unique_lock<std::shared_mutex> lock(mu);
    Entry& e = map[key];
    if (!e.state) e.state = std::move(fresh);
    ++e.live;
  }
  // One destroy: the record leaves the registry with the last live handle at its address.
  std::shared_ptr<T> take(const void* key) {
    std::unique_lock<std::shared_mutex> lock(mu);
    auto it = map.find(key);
    if (it == map.end()) return nullptr;
    std::shared_ptr<T> out = it->second.state;
    if (--it->second.live <= 0) map.erase(it);
    return out;
  }
  // A destroy that failed: the handle is live again.
  void restore(const void* key, std::shared_ptr<T> value) {
    if (!value) return;
    std::unique_lock<std::shared_mutex> lock(mu);
    Entry& e = map[key];
    if (!e.state) e.state = std::move(value);  // a record made meanwhile at this address wins
    ++e.live;
  }
  std::shared_ptr<T> find(const void* key) {
    std::shared_lock<std::shared_mutex> lock(mu);
    auto it = map.find(key);
    return it == map.end() ? nullptr : it->second.state;
  }
};

Registry<HandleState>& handles() {
  static Registry<HandleState> r;
  return r;
}
Registry<LtHandleState>& lt_handles() {
  static Registry<LtHandleState> r;
  return r;
}

// Descriptor shadows are small values: one map each, one lock for both.
struct Shadows {
  std::shared_mutex mu;
  std::unordered_map<const void*, LtDesc> descs;
  std::unordered_map<const void*, LtLayout> layouts;
};
Shadows& shadows() {
  static Shadows s;
  return s;
}

}  // namespace

HandleState::HandleState() : cache(settings().plan_cache) {}

HandleState::~HandleState() {
  // The real cublasDestroy has synchronized the device (cuBLAS documents that it does): no queued
  // kernel still reads these.
  for (const std::vector<Pool>* list : {&pools, &retired}) {
    for (const Pool& p : *list) {
      pool_free(p.ptr);
      counters().pool_bytes.fetch_sub(p.size);
    }
  }
}

void* HandleState::pool(void* s, std::size_t bytes) const {
  for (const Pool& p : pools)
    if (p.stream == s) return p.size >= bytes ? p.ptr : nullptr;
  return nullptr;
}

LtHandleState::LtHandleState() : cache(settings().plan_cache) {}

void register_handle(const void* h) { handles().add(h); }
std::shared_ptr<HandleState> take_handle(const void* h) { return handles().take(h); }
void restore_handle(const void* h, std::shared_ptr<HandleState> state) { handles().restore(h, std::move(state)); }
std::shared_ptr<HandleState> find_handle(const void* h) { return h ? handles().find(h) : nullptr; }

void register_lt_handle(const void* h) { lt_handles().add(h); }
std::shared_ptr<LtHandleState> take_lt_handle(const void* h) { return lt_handles().take(h); }
void restore_lt_handle(const void* h, std::shared_ptr<LtHandleState> state) { lt_handles().restore(h, std::move(state)); }
std::shared_ptr<LtHandleState> find_lt_handle(const void* h) { return h ? lt_handles().find(h) : nullptr; }

void shadow_desc(const void* desc, const LtDesc& value) {
  std::unique_lock<std::shared_mutex> lock(shadows().mu);
  shadows().descs[desc] = value;
}
void forget_desc(const void* desc) {
  std::unique_lock<std::shared_mutex> lock(shadows().mu);
  shadows().descs.erase(desc);
}
void shadow_desc_set(const void* desc, int attribute, const void* buf, std::size_t size) {
  std::unique_lock<std::shared_mutex> lock(shadows().mu);
  auto it = shadows().descs.find(desc);
  if (it != shadows().descs.end()) lt_desc_set(it->second, attribute, buf, size);
}
void shadow_layout(const void* layout, const LtLayout& value) {
  std::unique_lock<std::shared_mutex> lock(shadows().mu);
  shadows().layouts[layout] = value;
}
void forget_layout(const void* layout) {
  std::unique_lock<std::shared_mutex> lock(shadows().mu);
  shadows().layouts.erase(layout);
}
void shadow_layout_set(const void* layout, int attribute, const void* buf, std::size_t size) {
  std::unique_lock<std::shared_mutex> lock(shadows().mu);
  auto it = shadows().layouts.find(layout);
  if (it != shadows().layouts.end()) lt_layout_set(it->second, attribute, buf, size);
}

bool find_lt_shadows(const void* desc, const void* a, const void* b, const void* c, const void* d, LtDesc* out_desc,
                     LtLayout* out_a, LtLayout* out_b, LtLayout* out_c, LtLayout* out_d) {
  Shadows& s = shadows();
  std::shared_lock<std::shared_mutex> lock(s.mu);
  auto dsc = s.descs.find(desc);
  if (dsc == s.descs.end()) return false;
  *out_desc = dsc->second;
  const void* keys[4] = {a, b, c, d};
  LtLayout* outs[4] = {out_a, out_b, out_c, out_d};
  for (int i = 0; i < 4; ++i) {
    auto it = s.layouts.find(keys[i]);
    if (it == s.layouts.end()) return false;
    *outs[i] = it->second;
  }
  return true;
}

dgemm_context_t context_for(int device, const char** why) {
  static std::mutex mu;
  static std::map<int, std::pair<dgemm_context_t, std::string>> contexts;  // a failure is remembered too
  std::lock_guard<std::mutex> lock(mu);
  auto it = contexts.find(device);
  if (it == contexts.end()) {
    dgemm_context_t ctx = nullptr;
    const dgemm_status_t st = device < 0 ? dgemm_context_create(DGEMM_DEVICE_CPU, 0, &ctx)
                                         : dgemm_context_create(DGEMM_DEVICE_CUDA, device, &ctx);
    std::string message = st == DGEMM_STATUS_SUCCESS ? "" : std::string("dgemm_context_create: ") + dgemm_last_error();
    // Kept for the life of the process (plans of live handles refer to it; at exit the driver may
    // already be gone, so it is not destroyed then either).
    it = contexts.emplace(device, std::make_pair(ctx, std::move(message))).first;
  }
  *why = it->second.second.c_str();
  return it->second.first;
}

void* grow_pool(HandleState& state, void* stream, std::size_t bytes) {
  std::size_t old_size = 0;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    if (void* p = state.pool(stream, bytes)) return p;  // another thread grew it meanwhile
    for (const HandleState::Pool& p : state.pools)
      if (p.stream == stream) old_size = p.size;
  }
  // Double on growth (fewer cold calls), in 1 MiB steps.
  std::size_t size = bytes > 2 * old_size ? bytes : 2 * old_size;
  size = (size + (1u << 20) - 1) & ~std::size_t((1u << 20) - 1);
  void* ptr = pool_alloc(size);
  if (!ptr) return nullptr;
  counters().pool_bytes.fetch_add(size);
  std::lock_guard<std::mutex> lock(state.mu);
  for (HandleState::Pool& p : state.pools) {
    if (p.stream != stream) continue;
    if (p.size >= size) {  // lost a race to a larger pool: ours was never used
      state.retired.push_back({stream, ptr, size});
      return p.ptr;
    }
    state.retired.push_back(p);
    p.ptr = ptr;
    p.size = size;
    return ptr;
  }
  state.pools.push_back({stream, ptr, size});
  return ptr;
}

}  // namespace dgemm_cublas
