// NVRTC loading (dlopen), compilation and the two-level kernel cache. See jit.hpp.
#include "backend/cuda/jit.hpp"

#include <dlfcn.h>

#include <nvrtc.h>  // types and prototypes only: every function is reached through dlsym

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include "backend/cuda/kernel_cache_file.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/lru_cache.hpp"

namespace dgemm {
namespace jit {
namespace {

// ---- NVRTC through dlopen ------------------------------------------------------------------
struct Nvrtc {
  void* handle = nullptr;
  std::string error;  // why loading failed
  std::string path;
  int major = 0, minor = 0;
  decltype(&nvrtcVersion) version = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
};

const Nvrtc& nvrtc() {
  static const Nvrtc lib = [] {
    Nvrtc n;
    std::vector<std::string> candidates;
    // An explicit library (unusual installs, and the tests of the "no NVRTC" path): only it.
    const char* forced = std::getenv("DEEPGEMM_NVRTC_LIBRARY");
    if (forced && *forced) candidates.push_back(forced);
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      if (forced && *forced) break;
      if (const char* home = std::getenv(var); home && *home) {
        candidates.push_back(std::string(home) + "/lib64/libnvrtc.so.13");
        candidates.push_back(std::string(home) + "/lib64/libnvrtc.so.12");
        candidates.push_back(std::string(home) + "/lib64/libnvrtc.so");
      }
    }
    if (!(forced && *forced)) {
      for (const char* soname : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) candidates.push_back(soname);
      candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so.13");
      candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so.12");
    }
    std::string tried;
    for (const std::string& c : candidates) {
      n.handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (n.handle) {
        n.path = c;
        break;
      }
      const char* e = dlerror();
      tried += "\n  " + c + ": " + (e ? e : "not found");
    }
    if (!n.handle) {
      n.error = "NVRTC (libnvrtc.so.13) could not be loaded; install the CUDA toolkit's NVRTC or set "
                "CUDA_HOME. Tried:" + tried;
      return n;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(n.handle, name));
      if (!fn && n.error.empty()) n.error = std::string("NVRTC at ") + n.path + " lacks " + name;
    };
    sym(n.version, "nvrtcVersion");
    sym(n.error_string, "nvrtcGetErrorString");
    sym(n.create, "nvrtcCreateProgram");
    sym(n.compile, "nvrtcCompileProgram");
    sym(n.destroy, "nvrtcDestroyProgram");
    sym(n.log_size, "nvrtcGetProgramLogSize");
    sym(n.log, "nvrtcGetProgramLog");
    sym(n.cubin_size, "nvrtcGetCUBINSize");
    sym(n.cubin, "nvrtcGetCUBIN");
    if (n.error.empty() && n.version(&n.major, &n.minor) != NVRTC_SUCCESS) n.error = "nvrtcVersion failed";
    return n;
  }();
  return lib;
}

const Nvrtc& require_nvrtc() {
  const Nvrtc& n = nvrtc();
  if (!n.error.empty()) fail(Status::NotSupported, n.error);
  return n;
}

// ---- hashing -------------------------------------------------------------------------------
struct Hasher {
  std::uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  void add(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      a = (a ^ p[i]) * 0x100000001b3ull;
      b = (b ^ p[i]) * 0x00000100000001b3ull + 0x9e3779b97f4a7c15ull;
    }
  }
  void add(const std::string& s) {
    std::uint64_t n = s.size();
    add(&n, sizeof n);  // length-prefixed so that concatenations cannot collide
    add(s.data(), s.size());
  }
  std::string hex() const {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
    return buf;
  }
};

// ---- memory cache ------------------------------------------------------------------------------
// Bounded: a long-running process that meets many problem classes keeps the most recently used
// kernels (each tens of kilobytes to a few megabytes), not all of them.
constexpr std::size_t kMemoryCacheCapacity = 128;

std::mutex& memory_mutex() {
  static std::mutex m;
  return m;
}
LruCache<std::string, std::shared_ptr<const CompiledCode>>& memory_cache() {
  static LruCache<std::string, std::shared_ptr<const CompiledCode>> cache(kMemoryCacheCapacity);
  return cache;
}

std::string program_log(const Nvrtc& n, nvrtcProgram prog) {
  std::size_t size = 0;
  if (n.log_size(prog, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (n.log(prog, log.data()) != NVRTC_SUCCESS) return "";
  log.resize(size - 1);
  return log;
}

CompiledCode run_nvrtc(const CompileRequest& r) {
  const Nvrtc& n = require_nvrtc();
  const auto& files = embedded_kernel_files();
  std::vector<const char*> header_texts, header_names;
  for (const EmbeddedFile& f : files) {
    header_texts.push_back(f.text);
    header_names.push_back(f.name);
  }
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = n.create(&prog, r.source.c_str(), (r.name + ".cu").c_str(), int(files.size()),
                            header_texts.data(), header_names.data());
  if (rc != NVRTC_SUCCESS)
    fail(Status::CompileError, "nvrtcCreateProgram(", r.name, "): ", n.error_string(rc));
  struct Guard {
    const Nvrtc& n;
    nvrtcProgram* p;
    ~Guard() { n.destroy(p); }
  } guard{n, &prog};

  std::vector<std::string> options = default_options(r.arch);
  options.insert(options.end(), r.extra_options.begin(), r.extra_options.end());
  std::vector<const char*> opts;
  for (const std::string& o : options) opts.push_back(o.c_str());
  rc = n.compile(prog, int(opts.size()), opts.data());
  CompiledCode code;
  code.log = program_log(n, prog);
  if (rc != NVRTC_SUCCESS) {
    std::ostringstream os;
    for (const std::string& o : options) os << " " << o;
    fail(Status::CompileError, "NVRTC ", n.major, ".", n.minor, " failed to compile ", r.name, " for ", r.arch,
         " (", n.error_string(rc), "), options:", os.str(), "\n", code.log);
  }
  std::size_t size = 0;
  if (n.cubin_size(prog, &size) != NVRTC_SUCCESS || size == 0)
    fail(Status::CompileError, "NVRTC produced no cubin for ", r.name, " (", r.arch, ")");
  code.cubin.resize(size);
  if (n.cubin(prog, code.cubin.data()) != NVRTC_SUCCESS)
    fail(Status::CompileError, "nvrtcGetCUBIN failed for ", r.name);
  return code;
}

}  // namespace

std::string arch_for_cc(int cc_major, int cc_minor) {
  std::ostringstream os;
  os << "sm_" << cc_major << cc_minor;
  // Architecture-specific features (wgmma, setmaxnreg, tcgen05) need the "a" target.
  if (cc_major == 9 && cc_minor == 0) os << "a";
  if (cc_major >= 10 && cc_minor == 0) os << "a";
  return os.str();
}

std::vector<std::string> default_options(const std::string& arch) {
  return {"--gpu-architecture=" + arch, "-std=c++17", "-default-device", "--ptxas-options=-v",
          "-DDGEMM_JIT=1"};
}

namespace {
std::vector<const EmbeddedFile*> included_files(const std::string& source) {
  std::vector<const EmbeddedFile*> out;
  std::vector<std::string> pending{source};
  while (!pending.empty()) {
    const std::string text = std::move(pending.back());
    pending.pop_back();
    std::size_t pos = 0;
    while ((pos = text.find("#include", pos)) != std::string::npos) {
      const std::size_t q1 = text.find('"', pos), eol = text.find('\n', pos);
      pos += 8;
      if (q1 == std::string::npos || (eol != std::string::npos && q1 > eol)) continue;
      const std::size_t q2 = text.find('"', q1 + 1);
      if (q2 == std::string::npos) break;
      const std::string name = text.substr(q1 + 1, q2 - q1 - 1);
      for (const EmbeddedFile& f : embedded_kernel_files()) {
        if (name != f.name) continue;
        bool seen = false;
        for (const EmbeddedFile* e : out) seen |= e == &f;
        if (!seen) {
          out.push_back(&f);
          pending.emplace_back(f.text, f.size);
        }
      }
    }
  }
  return out;
}
}  // namespace

std::vector<std::string> included_kernel_files(const std::string& source) {
  std::vector<std::string> names;
  for (const EmbeddedFile* f : included_files(source)) names.emplace_back(f->name);
  return names;
}

std::string cache_key(const CompileRequest& r) {
  const Nvrtc& n = require_nvrtc();
  Hasher h;
  h.add(std::string("deepgemm-jit-v2"));
  h.add(r.source);
  h.add(r.arch);
  for (const std::string& o : default_options(r.arch)) h.add(o);
  for (const std::string& o : r.extra_options) h.add(o);
  h.add(&n.major, sizeof n.major);
  h.add(&n.minor, sizeof n.minor);
  for (const EmbeddedFile* f : included_files(r.source)) {
    h.add(std::string(f->name));
    h.add(std::string(f->text, f->size));
  }
  return h.hex();
}

std::string cache_dir() {
  if (const char* env = std::getenv("DEEPGEMM_CACHE_DIR"); env && *env) {
    if (std::strcmp(env, "off") == 0) return "";
    return env;
  }
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/deepgemm";
  return "";
}

std::string cache_entry_path(const std::string& key) {
  const std::string dir = cache_dir();
  return dir.empty() ? "" : dir + "/" + key + ".cubin";
}

std::string cache_dir_problem() {
  const std::string dir = cache_dir();
  return dir.empty() ? "" : prepare_private_dir(dir);
}

void clear_memory_cache() {
  std::lock_guard<std::mutex> lock(memory_mutex());
  memory_cache().clear();
}

std::shared_ptr<const CompiledCode> compile(const CompileRequest& request) {
  const std::string key = cache_key(request);
  {
    std::lock_guard<std::mutex> lock(memory_mutex());
    if (auto* hit = memory_cache().find(key)) {
      auto copy = std::make_shared<CompiledCode>(**hit);
      copy->origin = Origin::MemoryCache;
      return copy;
    }
  }
  auto code = std::make_shared<CompiledCode>();
  // The disk cache only in a folder that no one else can write (see cache_dir_problem).
  const std::string path = cache_dir_problem().empty() ? cache_entry_path(key) : "";
  CacheEntry entry;
  if (!path.empty() && read_cache_entry(path, key, &entry)) {
    code->cubin = std::move(entry.cubin);
    code->log = std::move(entry.log);
    code->origin = Origin::DiskCache;
  } else {
    *code = run_nvrtc(request);
    code->origin = Origin::Compiled;
    if (!path.empty()) write_cache_entry(path, key, code->cubin, code->log);  // best effort
  }
  code->key = key;
  std::lock_guard<std::mutex> lock(memory_mutex());
  memory_cache().insert(key, code);
  return code;
}

bool nvrtc_available(std::string* why) {
  const Nvrtc& n = nvrtc();
  if (why) *why = n.error;
  return n.error.empty();
}

std::string nvrtc_version() {
  const Nvrtc& n = require_nvrtc();
  return std::to_string(n.major) + "." + std::to_string(n.minor);
}

}  // namespace jit
}  // namespace dgemm
