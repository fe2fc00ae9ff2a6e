// The kernel cache's disk entries ($DEEPGEMM_CACHE_DIR/<key>.cubin): their format, and reading
// and writing them so that a damaged, planted or hostile entry is never loaded and never stops
// the cache from working. No CUDA dependency, so the format is tested and fuzzed on any machine.
//
// Format: a 64-byte header (magic "DGEMMJIT", format 1, the 32-hex-digit key, payload size and
// FNV-1a checksum), then the payload: u64 cubin size, the cubin, the compile log.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dgemm {
namespace jit {

struct CacheEntry {
  std::vector<char> cubin;
  std::string log;
};

// No entry is larger: kernels are kilobytes to a few megabytes.
constexpr std::size_t kMaxCacheEntryBytes = std::size_t(256) << 20;

std::string encode_cache_entry(const std::string& key, const std::vector<char>& cubin, const std::string& log);
// False for anything encode_cache_entry did not write for `key` (wrong magic, format, key, size,
// checksum, or inner sizes); *out is then untouched.
bool decode_cache_entry(const char* data, std::size_t size, const std::string& key, CacheEntry* out);

// Reads the entry for `key` at `path`: a regular file, opened without following symlinks and
// without waiting on a FIFO, read up to its real size. An entry that cannot be used (damaged,
// a symlink, a FIFO, a directory...) is removed, or a directory moved aside, so that the next
// write_cache_entry can put a good one there. False when there is no usable entry.
bool read_cache_entry(const std::string& path, const std::string& key, CacheEntry* out);

// Writes the entry atomically (see write_file_atomically); false when it could not.
bool write_cache_entry(const std::string& path, const std::string& key, const std::vector<char>& cubin,
                       const std::string& log);

}  // namespace jit
}  // namespace dgemm
