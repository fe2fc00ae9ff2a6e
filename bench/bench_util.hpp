// Host-only helpers of deepgemm-bench that need no GPU (and are checked by `deepgemm-bench
// --self-test` here): a minimal JSON reader for dgemm_plan_describe's output, the shape-set file
// format, and the statistics (median, Spearman rank correlation).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bench {

// ---- JSON (just enough to read a plan description) -------------------------------------------
struct Json {
  enum class Type { Null, Bool, Number, String, Array, Object } type = Type::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  // Member `key` of an object, or nullptr (also when this is not an object).
  const Json* get(const std::string& key) const;
  // Follows a dotted path of object keys ("chosen.config.name"), or nullptr.
  const Json* path(const std::string& dotted) const;
};

// Parses text into *out; on error returns false and sets *error to what and where.
bool parse_json(const std::string& text, Json* out, std::string* error);

// ---- shape sets --------------------------------------------------------------------------------
enum class EpilogueKind { Plain, BiasGelu };

struct Shape {
  int64_t m = 0, n = 0, k = 0;
  EpilogueKind epilogue = EpilogueKind::Plain;
  std::string set;  // which set it came from
};

// Lines "M N K [plain|bias_gelu]"; '#' starts a comment; blank lines ignored.
bool parse_shapes(const std::string& text, const std::string& set, std::vector<Shape>* out, std::string* error);

// The shape files of bench/shapes, embedded at build time: set name -> file text.
const std::map<std::string, std::string>& embedded_shape_sets();

// ---- statistics --------------------------------------------------------------------------------
double median(std::vector<double> v);
double percentile(std::vector<double> v, double q);  // q in [0, 1], linear interpolation
// Spearman's rank correlation (Pearson correlation of average ranks; ties share a rank).
// NaN when there are fewer than 3 pairs or one side is constant.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

// ---- output formatting -------------------------------------------------------------------------
std::string fmt(const char* format, double v);  // printf of one number; "-" for NaN
std::string jstr(const std::string& s);         // a JSON string literal, escaped
std::string jnum(double v);                     // a JSON number; null when not finite

// Runs the checks of the functions above; prints failures; returns the number of failures.
int self_test();

}  // namespace bench
