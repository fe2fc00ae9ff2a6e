// Run-time compilation of kernel sources with NVRTC, and the kernel cache (in memory per process,
// and on disk in $DEEPGEMM_CACHE_DIR, default ~/.cache/deepgemm). Every kernel family uses it:
// the family's launcher generates a small prelude that #includes the embedded kernel headers
// (src/kernels/**/*.cuh, by their path below src/kernels) and instantiates the templates with the
// plan's compile-time choices; compile() turns it into a cubin.
//
// NVRTC is loaded with dlopen on first use (libnvrtc.so.13, then other sonames; $CUDA_HOME/lib64
// first; $DEEPGEMM_NVRTC_LIBRARY, when set, is the only one tried), so the library needs no CUDA
// toolkit to load, and this layer needs no GPU: it runs on a build machine to fill a cache that a
// GPU machine then uses.
//
// The cache key hashes the generated source, the embedded headers it includes (directly or
// through each other), the options, the NVRTC version and the architecture. A disk entry is
// written to a fresh O_EXCL file and renamed (atomic); it carries a magic, its key, its payload size and a checksum, and an entry that fails
// any check, or is not a regular file (a symlink is never followed), is removed and rebuilt,
// never loaded (kernel_cache_file.hpp). The disk cache is used only in a folder owned by this user
// and not writable by group or others: the checksum detects damage, it does not authenticate, and
// anyone who can write the folder could make this process run their GPU code. The memory cache
// keeps the 128 most recently used kernels.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace dgemm {
namespace jit {

// The kernel headers compiled into the library (src/kernels/**/*.cuh), by include name, e.g.
// "sm80/sm80_gemm.cuh" or "epilogue/epilogue.cuh".
struct EmbeddedFile {
  const char* name;
  const char* text;
  std::size_t size;
};
const std::vector<EmbeddedFile>& embedded_kernel_files();

// NVRTC architecture for a compute capability: "sm_80", "sm_86", "sm_89", "sm_90a" (the "a"
// variant for 9.0 so that the Hopper family may use wgmma / setmaxnreg), "sm_100a", ...
std::string arch_for_cc(int cc_major, int cc_minor);

struct CompileRequest {
  std::string name;                        // program name, for messages and the log ("sm80_128x128x32_s4 ...")
  std::string source;                      // generated translation unit
  std::string arch;                        // "sm_80", "sm_90a", ...
  std::vector<std::string> extra_options;  // added after default_options(arch)
};

enum class Origin { Compiled, MemoryCache, DiskCache };

struct CompiledCode {
  std::vector<char> cubin;
  std::string log;  // NVRTC + ptxas -v output of the compile that produced it (kept in the cache)
  std::string key;  // 32 hex digits
  Origin origin = Origin::Compiled;
};

// The options every program gets: -std=c++17, --gpu-architecture=<arch>, -default-device,
// --ptxas-options=-v (so the log reports registers and spills). No --use_fast_math: the epilogue
// needs IEEE erff/tanhf/expf and division (see epilogue/epilogue.cuh).
std::vector<std::string> default_options(const std::string& arch);

// Compiles the request, or finds it in the memory or disk cache. Thread-safe.
// Throws Error(NotSupported) when NVRTC cannot be loaded and Error(CompileError) (with the log)
// when compilation fails.
std::shared_ptr<const CompiledCode> compile(const CompileRequest& request);

// The cache key compile() would use (depends on the NVRTC version: throws like compile()).
std::string cache_key(const CompileRequest& request);

// The embedded headers a source includes, directly or through each other (#include "name" lines
// naming an embedded file), in first-seen order: what a kernel's cache key depends on, so that
// editing one family's headers leaves the other families' cached kernels valid.
std::vector<std::string> included_kernel_files(const std::string& source);

// True when NVRTC can be loaded; otherwise *why says what was tried.
bool nvrtc_available(std::string* why);
// "13.0" (major.minor of the loaded NVRTC); throws NotSupported when it cannot be loaded.
std::string nvrtc_version();

// The resolved disk cache folder ("" when disabled: DEEPGEMM_CACHE_DIR=off, or no HOME).
std::string cache_dir();
// Where the disk entry for a key lives (cache_dir()/<key>.cubin).
std::string cache_entry_path(const std::string& key);
// Why the disk cache folder cannot be used, creating it (mode 0700) when missing: not a folder,
// owned by another user, or writable by group or others (compile() then works without the disk
// cache). "" when it is usable, or when the disk cache is off.
std::string cache_dir_problem();
// Forgets the in-memory cache (tests use it to exercise the disk cache).
void clear_memory_cache();

}  // namespace jit
}  // namespace dgemm
