// YAML hardware descriptions (format in arch_file.hpp). libyaml parses the text into a small tree
// that keeps each node's line, so that every error names the file, the line and the field.
#include "plan/arch_file.hpp"

#include <yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <utility>

#include "core/error.hpp"
#include "core/files.hpp"

namespace dgemm {
namespace {

struct Node {
  enum Kind { Scalar, Sequence, Mapping } kind = Scalar;
  std::string value;  // Scalar
  int line = 0;       // 1-based
  std::vector<Node> items;                     // Sequence
  std::vector<std::pair<Node, Node>> entries;  // Mapping
};

// Everything the field handlers need to report an error.
struct Source {
  std::string name;
  [[noreturn]] void bad(int line, const std::string& field, const std::string& what) const {
    if (field.empty()) fail(Status::ArchFileError, name, ":", line, ": ", what);
    fail(Status::ArchFileError, name, ":", line, ": field '", field, "': ", what);
  }
};

// Limits that no real description comes near (the shipped ones are ~2 KB, ~100 nodes, depth 3),
// enforced while reading and parsing, so that no file can make planning hang or take memory.
constexpr std::size_t kMaxFileBytes = 1 << 20;
constexpr std::size_t kMaxNodes = 10000;
constexpr std::size_t kMaxDepth = 16;

// Builds the tree from libyaml's events (not its document loader, which expands aliases and
// recurses without bound), refusing aliases, too many nodes and too deep nesting as they come.
// Only the first document of the stream is read.
Node parse_yaml(const std::string& text, const Source& src) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) fail(Status::OutOfMemory, src.name, ": cannot initialize the YAML parser");
  std::unique_ptr<yaml_parser_t, void (*)(yaml_parser_t*)> parser_guard(&parser, yaml_parser_delete);
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());

  struct Open {  // a sequence or mapping being read, and a mapping's pending key
    Node node;
    bool have_key = false;
    Node key;
  };
  std::vector<Open> open;
  std::unique_ptr<Node> root;
  std::size_t nodes = 0;
  auto attach = [&](Node n) {
    if (open.empty()) {
      root = std::make_unique<Node>(std::move(n));
      return;
    }
    Open& o = open.back();
    if (o.node.kind == Node::Sequence) {
      o.node.items.push_back(std::move(n));
    } else if (!o.have_key) {
      o.key = std::move(n);
      o.have_key = true;
    } else {
      o.node.entries.emplace_back(std::move(o.key), std::move(n));
      o.have_key = false;
    }
  };
  for (bool done = false; !done;) {
    yaml_event_t event;
    if (!yaml_parser_parse(&parser, &event)) {
      const int line = int(parser.problem_mark.line) + 1;
      src.bad(line, "", std::string("not valid YAML: ") + (parser.problem ? parser.problem : "parse error") +
                            (parser.context ? std::string(" ") + parser.context : std::string()));
    }
    std::unique_ptr<yaml_event_t, void (*)(yaml_event_t*)> event_guard(&event, yaml_event_delete);
    const int line = int(event.start_mark.line) + 1;
    if (event.type == YAML_SCALAR_EVENT || event.type == YAML_SEQUENCE_START_EVENT ||
        event.type == YAML_MAPPING_START_EVENT) {
      if (++nodes > kMaxNodes) src.bad(line, "", "more than " + std::to_string(kMaxNodes) + " values");
    }
    switch (event.type) {
      case YAML_ALIAS_EVENT:
        src.bad(line, "", "aliases (*name) are not supported in hardware descriptions");
      case YAML_SCALAR_EVENT: {
        Node n;
        n.line = line;
        n.value.assign(reinterpret_cast<const char*>(event.data.scalar.value), event.data.scalar.length);
        attach(std::move(n));
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT:
        if (open.size() >= kMaxDepth) src.bad(line, "", "nesting too deep");
        open.emplace_back();
        open.back().node.kind = event.type == YAML_SEQUENCE_START_EVENT ? Node::Sequence : Node::Mapping;
        open.back().node.line = line;
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        Node n = std::move(open.back().node);
        open.pop_back();
        attach(std::move(n));
        break;
      }
      case YAML_DOCUMENT_END_EVENT:
      case YAML_STREAM_END_EVENT:
        done = true;
        break;
      default:  // stream and document starts
        break;
    }
  }
  if (!root) src.bad(1, "", "the file is empty");
  return std::move(*root);
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// ---- typed readers: each names the field and the line of the bad value

const std::string& scalar(const Source& src, const Node& n, const std::string& field) {
  if (n.kind != Node::Scalar) src.bad(n.line, field, "expected a single value, got a " +
                                                      std::string(n.kind == Node::Mapping ? "mapping" : "list"));
  return n.value;
}

long long read_int(const Source& src, const Node& n, const std::string& field, long long lo, long long hi) {
  const std::string s = trim(scalar(src, n, field));
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0) src.bad(n.line, field, "expected an integer, got \"" + s + "\"");
  if (v < lo || v > hi) {
    std::ostringstream os;
    os << "value " << v << " is out of range [" << lo << ", " << hi << "]";
    src.bad(n.line, field, os.str());
  }
  return v;
}

double read_number(const Source& src, const Node& n, const std::string& field, double lo, double hi) {
  const std::string s = trim(scalar(src, n, field));
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v)) src.bad(n.line, field, "expected a number, got \"" + s + "\"");
  if (v < lo || v > hi) {
    std::ostringstream os;
    os << "value " << s << " is out of range [" << lo << ", " << hi << "]";
    src.bad(n.line, field, os.str());
  }
  return v;
}

// Bytes with an optional binary suffix: 232448, 227KB, 227 KiB, 50MB, 1.5GB.
long read_size(const Source& src, const Node& n, const std::string& field, long lo, long hi) {
  const std::string s = trim(scalar(src, n, field));
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str() || !std::isfinite(v))
    src.bad(n.line, field, "expected a size such as 232448 or 227KB, got \"" + s + "\"");
  const std::string unit = lower(trim(end));
  double mult = 0;
  if (unit.empty() || unit == "b") mult = 1;
  else if (unit == "kb" || unit == "kib" || unit == "k") mult = 1024.0;
  else if (unit == "mb" || unit == "mib" || unit == "m") mult = 1024.0 * 1024.0;
  else if (unit == "gb" || unit == "gib" || unit == "g") mult = 1024.0 * 1024.0 * 1024.0;
  else src.bad(n.line, field, "unknown size unit \"" + unit + "\" in \"" + s + "\" (use B, KB, MB or GB)");
  const double bytes = v * mult;
  if (bytes != std::floor(bytes)) src.bad(n.line, field, "\"" + s + "\" is not a whole number of bytes");
  if (bytes < double(lo) || bytes > double(hi)) {
    std::ostringstream os;
    os << "\"" << s << "\" = " << bytes << " bytes is out of range [" << lo << ", " << hi << "]";
    src.bad(n.line, field, os.str());
  }
  return long(bytes);
}

bool read_bool(const Source& src, const Node& n, const std::string& field) {
  const std::string s = lower(trim(scalar(src, n, field)));
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  src.bad(n.line, field, "expected true or false, got \"" + s + "\"");
}

DType read_dtype(const Source& src, const Node& n, const std::string& field) {
  const std::string s = trim(scalar(src, n, field));
  DType t;
  if (!dtype_from_name(s.c_str(), &t)) src.bad(n.line, field, "unknown type \"" + s + "\" (f32, f16, bf16, e4m3, e5m2, i8, i32)");
  return t;
}

// The fields a file sets (with their lines), for the checks after all fields are read.
using Seen = std::map<std::string, int>;

void read_peaks(const Source& src, const Node& n, HardwareDesc& hw) {
  if (n.kind != Node::Mapping) src.bad(n.line, "peak_tflops", "expected a mapping such as {bf16: 989.4, fp8: 1978.9}");
  std::set<std::string> dup;
  for (const auto& [k, v] : n.entries) {
    const std::string key = scalar(src, k, "peak_tflops");
    const std::string field = "peak_tflops." + key;
    if (!dup.insert(key).second) src.bad(k.line, field, "appears twice");
    double* slot = key == "f32" ? &hw.peak_tflops_f32 : key == "f16" ? &hw.peak_tflops_f16
                 : key == "bf16" ? &hw.peak_tflops_bf16 : key == "fp8" ? &hw.peak_tflops_fp8
                 : key == "i8" ? &hw.peak_tops_i8 : nullptr;
    if (!slot) src.bad(k.line, field, "unknown field (known: f32, f16, bf16, fp8, i8)");
    *slot = read_number(src, v, field, 0.0, 1e6);
  }
}

void read_mma_shapes(const Source& src, const Node& n, HardwareDesc& hw) {
  if (n.kind != Node::Sequence) src.bad(n.line, "mma_shapes", "expected a list of {a_type, acc_type, m, n, k, instruction}");
  hw.mma_shapes.clear();
  for (std::size_t i = 0; i < n.items.size(); ++i) {
    const Node& item = n.items[i];
    const std::string where = "mma_shapes[" + std::to_string(i) + "]";
    if (item.kind != Node::Mapping) src.bad(item.line, where, "expected a mapping {a_type, acc_type, m, n, k, instruction}");
    MmaShape s;
    std::set<std::string> got;
    for (const auto& [k, v] : item.entries) {
      const std::string key = scalar(src, k, where);
      const std::string field = where + "." + key;
      if (!got.insert(key).second) src.bad(k.line, field, "appears twice");
      if (key == "a_type") s.a_type = read_dtype(src, v, field);
      else if (key == "acc_type") s.acc_type = read_dtype(src, v, field);
      else if (key == "m") s.m = int(read_int(src, v, field, 1, 1024));
      else if (key == "n") s.n = int(read_int(src, v, field, 1, 1024));
      else if (key == "k") s.k = int(read_int(src, v, field, 1, 1024));
      else if (key == "instruction") {
        s.instruction = trim(scalar(src, v, field));
        if (s.instruction != "mma.sync" && s.instruction != "wgmma" && s.instruction != "mfma")
          src.bad(v.line, field, "unknown instruction \"" + s.instruction + "\" (mma.sync, wgmma, mfma)");
      } else {
        src.bad(k.line, field, "unknown field (known: a_type, acc_type, m, n, k, instruction)");
      }
    }
    for (const char* need : {"a_type", "acc_type", "m", "n", "k", "instruction"})
      if (!got.count(need)) src.bad(item.line, where + "." + need, "missing");
    hw.mma_shapes.push_back(s);
  }
}

HardwareDesc apply(const HardwareDesc& base, const Node& root, const Source& src, int depth);

HardwareDesc builtin(const std::string& name, const Source& src, int line, int depth) {
  const char* text = builtin_arch_text(name);
  if (!text) {
    std::string known;
    for (const std::string& n : builtin_arch_names()) known += (known.empty() ? "" : ", ") + n;
    src.bad(line, "extends", "no built-in description \"" + name + "\" (known: " + known + ")");
  }
  Source inner{"<built-in>/" + lower(name) + ".yaml"};
  if (depth > 4) src.bad(line, "extends", "descriptions extend each other too deeply");
  return apply(HardwareDesc{}, parse_yaml(text, inner), inner, depth + 1);
}

HardwareDesc apply(const HardwareDesc& base, const Node& root, const Source& src, int depth) {
  if (root.kind != Node::Mapping) src.bad(root.line, "", "expected a mapping of field: value at the top level");
  Seen seen;
  for (const auto& [k, v] : root.entries) {
    const std::string key = scalar(src, k, "");
    if (!seen.emplace(key, k.line).second) src.bad(k.line, key, "appears twice");
  }
  const bool whole = seen.count("vendor") > 0;
  HardwareDesc hw = base;
  if (seen.count("extends")) {
    for (const auto& [k, v] : root.entries)
      if (k.value == "extends") hw = builtin(trim(scalar(src, v, "extends")), src, v.line, depth);
  } else if (whole) {
    hw = HardwareDesc{};
  }

  using Handler = std::function<void(const Node&, const std::string&)>;
  const long kMaxBytes = 1L << 40;
  const std::map<std::string, Handler> handlers = {
      {"extends", [&](const Node&, const std::string&) {}},
      {"name", [&](const Node& v, const std::string& f) {
         hw.name = trim(scalar(src, v, f));
         if (hw.name.empty()) src.bad(v.line, f, "must not be empty");
       }},
      {"vendor", [&](const Node& v, const std::string& f) {
         const std::string s = lower(trim(scalar(src, v, f)));
         if (s == "nvidia") hw.vendor = Vendor::Nvidia;
         else if (s == "amd") hw.vendor = Vendor::Amd;
         else if (s == "cpu") hw.vendor = Vendor::Cpu;
         else src.bad(v.line, f, "unknown vendor \"" + s + "\" (nvidia, amd, cpu)");
       }},
      {"compute_capability", [&](const Node& v, const std::string& f) {
         const std::string s = trim(scalar(src, v, f));
         int major = 0, minor = 0;
         char dot = 0, extra = 0;
         if (std::sscanf(s.c_str(), "%d%c%d%c", &major, &dot, &minor, &extra) != 3 || dot != '.' || major < 0 ||
             major > 99 || minor < 0 || minor > 9)
           src.bad(v.line, f, "expected major.minor such as \"9.0\", got \"" + s + "\"");
         hw.cc_major = major;
         hw.cc_minor = minor;
       }},
      {"sm_count", [&](const Node& v, const std::string& f) { hw.sm_count = int(read_int(src, v, f, 1, 100000)); }},
      {"warp_size", [&](const Node& v, const std::string& f) {
         hw.warp_size = int(read_int(src, v, f, 1, 64));
         if (hw.warp_size != 32 && hw.warp_size != 64) src.bad(v.line, f, "must be 32 or 64");
       }},
      {"max_warps_per_sm", [&](const Node& v, const std::string& f) { hw.max_warps_per_sm = int(read_int(src, v, f, 1, 1024)); }},
      {"max_blocks_per_sm", [&](const Node& v, const std::string& f) { hw.max_blocks_per_sm = int(read_int(src, v, f, 1, 1024)); }},
      {"max_threads_per_block", [&](const Node& v, const std::string& f) { hw.max_threads_per_block = int(read_int(src, v, f, 32, 4096)); }},
      {"registers_per_sm", [&](const Node& v, const std::string& f) { hw.regs_per_sm = int(read_int(src, v, f, 1024, 1 << 24)); }},
      {"max_registers_per_thread", [&](const Node& v, const std::string& f) { hw.max_regs_per_thread = int(read_int(src, v, f, 16, 4096)); }},
      {"shared_mem_per_sm", [&](const Node& v, const std::string& f) { hw.smem_per_sm = read_size(src, v, f, 0, kMaxBytes); }},
      {"shared_mem_per_block", [&](const Node& v, const std::string& f) { hw.smem_per_block_optin = read_size(src, v, f, 0, kMaxBytes); }},
      {"shared_mem_banks", [&](const Node& v, const std::string& f) { hw.smem_banks = int(read_int(src, v, f, 1, 1024)); }},
      {"shared_mem_bank_bytes", [&](const Node& v, const std::string& f) {
         hw.smem_bank_bytes = int(read_int(src, v, f, 1, 16));
         if (hw.smem_bank_bytes != 4 && hw.smem_bank_bytes != 8) src.bad(v.line, f, "must be 4 or 8");
       }},
      {"l1_size", [&](const Node& v, const std::string& f) { hw.l1_bytes = read_size(src, v, f, 0, kMaxBytes); }},
      {"l2_size", [&](const Node& v, const std::string& f) { hw.l2_bytes = read_size(src, v, f, 0, kMaxBytes); }},
      {"memory_bandwidth_gbs", [&](const Node& v, const std::string& f) { hw.mem_bandwidth_gbs = read_number(src, v, f, 0.0, 1e6); }},
      {"l2_bandwidth_gbs", [&](const Node& v, const std::string& f) { hw.l2_bandwidth_gbs = read_number(src, v, f, 0.0, 1e7); }},
      {"clock_mhz", [&](const Node& v, const std::string& f) { hw.clock_mhz = read_number(src, v, f, 0.0, 1e5); }},
      {"peak_tflops", [&](const Node& v, const std::string&) { read_peaks(src, v, hw); }},
      {"mma_shapes", [&](const Node& v, const std::string&) { read_mma_shapes(src, v, hw); }},
      {"has_tma", [&](const Node& v, const std::string& f) { hw.has_tma = read_bool(src, v, f); }},
      {"has_wgmma", [&](const Node& v, const std::string& f) { hw.has_wgmma = read_bool(src, v, f); }},
      {"can_run_kernels", [&](const Node& v, const std::string& f) { hw.can_run_kernels = read_bool(src, v, f); }},
  };
  for (const auto& [k, v] : root.entries) {
    auto h = handlers.find(k.value);
    if (h == handlers.end()) {
      std::string known;
      for (const auto& [name, fn] : handlers) known += (known.empty() ? "" : ", ") + name;
      src.bad(k.line, k.value, "unknown field (known: " + known + ")");
    }
    h->second(v, k.value);
  }

  if (whole) {
    for (const char* need : {"name", "compute_capability", "sm_count", "shared_mem_per_sm", "shared_mem_per_block",
                             "memory_bandwidth_gbs", "peak_tflops"})
      if (!seen.count(need))
        src.bad(seen["vendor"], need, "missing: a file that sets 'vendor' describes a whole machine and must give it");
  } else if (!seen.count("name") && !seen.count("extends")) {
    // An override keeps the machine's name and says that it was overridden.
    hw.name = base.name + " + " + src.name;
  }
  if (hw.smem_per_block_optin > hw.smem_per_sm) {
    const bool blame_block = seen.count("shared_mem_per_block") > 0;
    std::ostringstream os;
    os << "shared_mem_per_block " << hw.smem_per_block_optin << " B exceeds shared_mem_per_sm " << hw.smem_per_sm << " B";
    src.bad(blame_block ? seen["shared_mem_per_block"] : (seen.count("shared_mem_per_sm") ? seen["shared_mem_per_sm"] : 1),
            blame_block ? "shared_mem_per_block" : "shared_mem_per_sm", os.str());
  }
  if (hw.max_threads_per_block % hw.warp_size != 0)
    src.bad(seen.count("max_threads_per_block") ? seen["max_threads_per_block"] : 1, "max_threads_per_block",
            "must be a multiple of warp_size");
  return hw;
}

std::string strip_yaml_suffix(const std::string& name) {
  std::string n = lower(name);
  if (n.size() > 5 && n.compare(n.size() - 5, 5, ".yaml") == 0) n.resize(n.size() - 5);
  return n;
}

// `v` as a YAML double-quoted scalar that reads back byte for byte: quotes and backslashes
// escaped, and so is every character YAML would fold (line breaks, tabs) or does not allow
// unescaped (controls, DEL, C1, surrogates, U+FFFE/FFFF). `v` comes from a parse, so it is UTF-8.
std::string yaml_quoted(const std::string& v) {
  std::string out = "\"";
  char buf[16];
  for (std::size_t i = 0; i < v.size();) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    if (c < 0x80) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += char(c);
      } else if (c < 0x20 || c == 0x7f) {
        std::snprintf(buf, sizeof buf, "\\x%02X", unsigned(c));
        out += buf;
      } else {
        out += char(c);
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, its code point from the whole.
    const std::size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    uint32_t cp = c & (len == 4 ? 0x07 : len == 3 ? 0x0f : 0x1f);
    for (std::size_t k = 1; k < len && i + k < v.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(v[i + k]) & 0x3f);
    const bool printable = (cp >= 0xa0 && cp <= 0xd7ff && cp != 0x2028 && cp != 0x2029) ||
                           (cp >= 0xe000 && cp <= 0xfffd && cp != 0xfeff) || cp >= 0x10000;
    if (printable) {
      out.append(v, i, len);
    } else {
      std::snprintf(buf, sizeof buf, "\\u%04X", unsigned(cp & 0xffff));
      out += buf;
    }
    i += len;
  }
  return out + "\"";
}

}  // namespace

std::string arch_to_yaml(const HardwareDesc& hw) {
  std::ostringstream os;
  os.precision(17);
  const char* vendor = hw.vendor == Vendor::Nvidia ? "nvidia" : hw.vendor == Vendor::Amd ? "amd" : "cpu";
  os << "name: " << yaml_quoted(hw.name) << "\nvendor: " << vendor << "\ncompute_capability: \"" << hw.cc_major << "."
     << hw.cc_minor << "\"\nsm_count: " << hw.sm_count << "\nwarp_size: " << hw.warp_size
     << "\nmax_warps_per_sm: " << hw.max_warps_per_sm << "\nmax_blocks_per_sm: " << hw.max_blocks_per_sm
     << "\nmax_threads_per_block: " << hw.max_threads_per_block << "\nregisters_per_sm: " << hw.regs_per_sm
     << "\nmax_registers_per_thread: " << hw.max_regs_per_thread << "\nshared_mem_per_sm: " << hw.smem_per_sm
     << "\nshared_mem_per_block: " << hw.smem_per_block_optin << "\nshared_mem_banks: " << hw.smem_banks
     << "\nshared_mem_bank_bytes: " << hw.smem_bank_bytes << "\nl1_size: " << hw.l1_bytes << "\nl2_size: " << hw.l2_bytes
     << "\nmemory_bandwidth_gbs: " << hw.mem_bandwidth_gbs << "\nl2_bandwidth_gbs: " << hw.l2_bandwidth_gbs
     << "\nclock_mhz: " << hw.clock_mhz << "\npeak_tflops:\n  f32: " << hw.peak_tflops_f32 << "\n  f16: " << hw.peak_tflops_f16
     << "\n  bf16: " << hw.peak_tflops_bf16 << "\n  fp8: " << hw.peak_tflops_fp8 << "\n  i8: " << hw.peak_tops_i8
     << "\nmma_shapes:" << (hw.mma_shapes.empty() ? " []" : "") << "\n";
  for (const MmaShape& m : hw.mma_shapes)
    os << "  - {a_type: " << dtype_name(m.a_type) << ", acc_type: " << dtype_name(m.acc_type) << ", m: " << m.m
       << ", n: " << m.n << ", k: " << m.k << ", instruction: " << m.instruction << "}\n";
  os << "has_tma: " << (hw.has_tma ? "true" : "false") << "\nhas_wgmma: " << (hw.has_wgmma ? "true" : "false")
     << "\ncan_run_kernels: " << (hw.can_run_kernels ? "true" : "false") << "\n";
  return os.str();
}

std::vector<std::string> builtin_arch_names() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kNumBuiltinArchs; ++i) names.emplace_back(kBuiltinArchs[i].name);
  return names;
}

const char* builtin_arch_text(const std::string& name) {
  const std::string want = strip_yaml_suffix(name);
  for (std::size_t i = 0; i < kNumBuiltinArchs; ++i)
    if (want == kBuiltinArchs[i].name) return kBuiltinArchs[i].text;
  return nullptr;
}

HardwareDesc apply_arch_text(const HardwareDesc& base, const std::string& text, const std::string& source) {
  Source src{source};
  return apply(base, parse_yaml(text, src), src, 0);
}

HardwareDesc apply_arch_file(const HardwareDesc& base, const std::string& path) {
  std::string text;
  const ReadResult r = read_regular_file(path, kMaxFileBytes, /*follow_symlinks=*/true, &text);
  switch (r.status) {
    case ReadStatus::Ok: return apply_arch_text(base, text, path);
    case ReadStatus::NotRegular: fail(Status::ArchFileError, path, ": not a regular file (", r.why, ")");
    case ReadStatus::TooLarge:
      fail(Status::ArchFileError, path, ": ", r.why, ", larger than the ", kMaxFileBytes,
           " bytes a hardware description may have");
    case ReadStatus::Failed: fail(Status::ArchFileError, path, ": cannot read the file (", r.why, ")");
    case ReadStatus::Missing: break;
  }
  // Not a file: a built-in name ("h200") when there is no path separator in it.
  if (path.find('/') == std::string::npos) {
    if (const char* text = builtin_arch_text(path))
      return apply_arch_text(base, text, "<built-in>/" + strip_yaml_suffix(path) + ".yaml");
  }
  std::string known;
  for (const std::string& n : builtin_arch_names()) known += (known.empty() ? "" : ", ") + n;
  fail(Status::ArchFileError, path, ": no such file, and not a built-in description (", known, ")");
}

}  // namespace dgemm
