// The DGEMM_1.1 extension chains (dgemm_create_plan_ext / dgemm_execute_ext): walks a chain of
// structs that begin with dgemm_ext_header_t, checks each header, and sorts the entries by type
// so that the entry points can hand each one to its converter. Nothing here knows what an
// extension means; its converter (next to the feature's own code in src/api) does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "api/convert.hpp"
#include "core/error.hpp"
#include "deepgemm/deepgemm.h"

namespace dgemm::api {

// One slot per extension type; null when the chain does not hold it.
struct ExtensionChain {
  const dgemm_ext_header_t* scaling = nullptr;     // DGEMM_EXT_SCALING
  const dgemm_ext_header_t* grouped = nullptr;     // DGEMM_EXT_GROUPED
  const dgemm_ext_header_t* scale_args = nullptr;  // DGEMM_EXT_SCALE_ARGS
  const dgemm_ext_header_t* group_args = nullptr;  // DGEMM_EXT_GROUP_ARGS
};

// Which entry point a chain was given to: a plan-time extension at execute (or the reverse) is
// an error, not something to ignore.
enum class ExtensionStage { Plan, Execute };

// A chain longer than this is taken to be a cycle (each type may appear once; there are few).
constexpr int kMaxExtensionChain = 64;

inline ExtensionChain collect_extensions(const void* first, ExtensionStage stage) {
  ExtensionChain chain;
  int position = 0;
  for (const auto* h = static_cast<const dgemm_ext_header_t*>(first); h != nullptr;
       h = static_cast<const dgemm_ext_header_t*>(h->next), ++position) {
    if (position >= kMaxExtensionChain)
      fail(Status::InvalidArgument, "ext: the chain is longer than ", kMaxExtensionChain, " entries (a cycle?)");
    if (h->struct_size < sizeof(dgemm_ext_header_t))
      fail(Status::InvalidArgument, "ext[", position, "]->struct_size = ", h->struct_size,
           ": smaller than dgemm_ext_header_t (initialize it with its *_init function)");
    const dgemm_ext_header_t** slot = nullptr;
    bool plan_time = true;
    const char* name = "";
    switch (h->type) {
      case DGEMM_EXT_SCALING: slot = &chain.scaling; name = "DGEMM_EXT_SCALING"; break;
      case DGEMM_EXT_GROUPED: slot = &chain.grouped; name = "DGEMM_EXT_GROUPED"; break;
      case DGEMM_EXT_SCALE_ARGS: slot = &chain.scale_args; name = "DGEMM_EXT_SCALE_ARGS"; plan_time = false; break;
      case DGEMM_EXT_GROUP_ARGS: slot = &chain.group_args; name = "DGEMM_EXT_GROUP_ARGS"; plan_time = false; break;
      default:
        fail(Status::NotSupported, "ext[", position, "]->type = ", h->type, ": not an extension this library knows");
    }
    if (plan_time != (stage == ExtensionStage::Plan))
      fail(Status::InvalidArgument, "ext[", position, "]->type = ", name, ": a ", plan_time ? "plan" : "execute",
           "-time extension given to ", stage == ExtensionStage::Plan ? "dgemm_create_plan_ext" : "dgemm_execute_ext");
    if (*slot != nullptr) fail(Status::InvalidArgument, "ext[", position, "]->type = ", name, ": given twice in the chain");
    *slot = h;
  }
  return chain;
}

// The start of every extension's *_init function, like init_struct: refuses NULL, zeroes the
// struct, and fills in its header (`type`, this library's size, no next).
template <class Ext>
inline void init_extension(Ext* s, const char* name, dgemm_ext_type_t type) {
  require_non_null(s, name);
  std::memset(s, 0, sizeof *s);
  s->header.type = type;
  s->header.struct_size = sizeof *s;
}

// An extension struct as this library reads it, like the 1.0 structs (read_struct): any
// header.struct_size from the struct's first one up, only the bytes that size covers (a field
// added later reads as zero), non-zero bytes beyond what this library knows refused, reserved
// words zero. `name` is how messages call it ("grouped"). A copy: the caller's struct may be
// smaller than ours.
template <class Ext>
inline Ext read_extension(const dgemm_ext_header_t* h, const char* name) {
  return read_struct<Ext>(h, h->struct_size, name, "->header.struct_size");
}

}  // namespace dgemm::api
