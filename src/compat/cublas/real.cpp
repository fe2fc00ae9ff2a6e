// Loading the real cuBLAS / cuBLASLt (see real.hpp).
#include "compat/cublas/real.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "compat/cublas/observe.hpp"

namespace dgemm_cublas {
namespace {

thread_local int t_forward_depth = 0;

struct Loaded {
  void* handle = nullptr;
  std::string path;
  int major = 0;  // 13 or 12 when loaded by soname
};

const char* const kCublasNames[] = {"libcublas.so.13", "libcublas.so.12"};
const char* const kCublasLtNames[] = {"libcublasLt.so.13", "libcublasLt.so.12"};
const int kMajors[] = {13, 12};

std::string path_of(void* handle) {
  struct link_map* map = nullptr;
  if (handle && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) return map->l_name;
  return "";
}

// True if `handle` is this library itself (a variable pointing here would forward to ourselves).
bool is_self(void* handle) {
  Dl_info self{};
  if (!handle || !dladdr(reinterpret_cast<void*>(&path_of), &self) || !self.dli_fname) return false;
  void* mine = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (mine) dlclose(mine);
  return mine == handle;
}

Loaded load(const char* env_var, const char* const* names, int preferred_major) {
  Loaded out;
  if (const char* forced = std::getenv(env_var); forced && *forced) {
    out.handle = dlopen(forced, RTLD_NOW | RTLD_LOCAL);
    if (!out.handle) {
      std::fprintf(stderr, "deepgemm_cublas: %s=%s cannot be loaded: %s\n", env_var, forced, dlerror());
    } else if (is_self(out.handle)) {
      std::fprintf(stderr, "deepgemm_cublas: %s=%s is this library, not the real cuBLAS\n", env_var, forced);
      out.handle = nullptr;
    }
    out.path = path_of(out.handle);
    return out;
  }
  // The order to try: the preferred major first (cuBLASLt follows the cuBLAS in use), then 13, 12.
  int order[2] = {0, 1};
  if (preferred_major == 12) {
    order[0] = 1;
    order[1] = 0;
  }
  for (int mode : {RTLD_NOW | RTLD_NOLOAD, RTLD_NOW | RTLD_LOCAL}) {
    for (int i : order) {
      if ((out.handle = dlopen(names[i], mode)) != nullptr) {
        out.major = kMajors[i];
        out.path = path_of(out.handle);
        return out;
      }
    }
  }
  std::fprintf(stderr, "deepgemm_cublas: cannot load %s or %s (%s): calls that fall back to cuBLAS fail with "
               "CUBLAS_STATUS_NOT_INITIALIZED\n", names[0], names[1], dlerror());
  return out;
}

std::once_flag g_cublas_once, g_cublaslt_once;
Loaded g_cublas, g_cublaslt;

void say_loaded(const Loaded& l) {
  if (settings().log && l.handle) log_line("calls that fall back go to " + l.path);
}

const Loaded& cublas() {
  std::call_once(g_cublas_once, [] {
    g_cublas = load("DEEPGEMM_CUBLAS_LIBRARY", kCublasNames, 0);
    say_loaded(g_cublas);
  });
  return g_cublas;
}
const Loaded& cublaslt() {
  std::call_once(g_cublaslt_once, [] {
    // A cuBLAS already in the process decides the major; do not load one just to find out.
    int major = 0;
    for (int i = 0; i < 2; ++i) {
      if (void* h = dlopen(kCublasNames[i], RTLD_NOW | RTLD_NOLOAD)) {
        major = kMajors[i];
        dlclose(h);
        break;
      }
    }
    g_cublaslt = load("DEEPGEMM_CUBLASLT_LIBRARY", kCublasLtNames, major);
    say_loaded(g_cublaslt);
  });
  return g_cublaslt;
}

}  // namespace

void* real_symbol(Lib lib, const char* name) {
  const Loaded& l = lib == Lib::Cublas ? cublas() : cublaslt();
  if (!l.handle) return nullptr;
  void* sym = dlsym(l.handle, name);
  if (!sym) std::fprintf(stderr, "deepgemm_cublas: %s has no %s\n", l.path.c_str(), name);
  return sym;
}

namespace {

struct Range {
  uintptr_t lo = 0, hi = 0;
};

int find_cublas(struct dl_phdr_info* info, size_t, void* data) {
  const char* name = info->dlpi_name ? std::strrchr(info->dlpi_name, '/') : nullptr;
  name = name ? name + 1 : info->dlpi_name;
  if (!name || std::strncmp(name, "libcublas.so", 12) != 0) return 0;
  Range* r = static_cast<Range*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    if (r->lo == 0 || lo < r->lo) r->lo = lo;
    if (hi > r->hi) r->hi = hi;
  }
  return 1;
}

}  // namespace

bool inside_real_cublas(const void* code) {
  // Found once (libcublas is never unloaded in practice); searched again while not yet loaded.
  static std::atomic<uintptr_t> lo{0}, hi{0};
  if (hi.load(std::memory_order_acquire) == 0) {
    Range r;
    dl_iterate_phdr(find_cublas, &r);
    if (r.hi == 0) return false;
    lo.store(r.lo, std::memory_order_relaxed);
    hi.store(r.hi, std::memory_order_release);
  }
  const uintptr_t a = reinterpret_cast<uintptr_t>(code);
  return a >= lo.load(std::memory_order_relaxed) && a < hi.load(std::memory_order_relaxed);
}

ForwardScope::ForwardScope() { ++t_forward_depth; }
ForwardScope::~ForwardScope() { --t_forward_depth; }
bool forwarding() { return t_forward_depth > 0; }

}  // namespace dgemm_cublas
