// Host-only helpers of deepgemm-bench: JSON reader, shape files, statistics (see bench_util.hpp).
#include "bench_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace bench {

// ---- JSON --------------------------------------------------------------------------------------
const Json* Json::get(const std::string& key) const {
  if (type != Type::Object) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &it->second;
}

const Json* Json::path(const std::string& dotted) const {
  const Json* node = this;
  size_t start = 0;
  while (node && start <= dotted.size()) {
    size_t dot = dotted.find('.', start);
    if (dot == std::string::npos) dot = dotted.size();
    node = node->get(dotted.substr(start, dot - start));
    start = dot + 1;
  }
  return node;
}

namespace {

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}

  bool parse(Json* out, std::string* error) {
    bool ok = value(out, 0) && (skip_space(), pos_ == s_.size() || (fail("trailing characters"), false));
    if (!ok && error) *error = error_ + " at offset " + std::to_string(pos_);
    return ok;
  }

 private:
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool fail(const char* what) {
    if (error_.empty()) error_ = what;
    return false;
  }
  bool literal(const char* word) {
    size_t len = std::char_traits<char>::length(word);
    if (s_.compare(pos_, len, word) != 0) return fail("bad literal");
    pos_ += len;
    return true;
  }
  bool value(Json* out, int depth) {
    if (depth > 64) return fail("nesting too deep");
    skip_space();
    if (pos_ >= s_.size()) return fail("unexpected end");
    char c = s_[pos_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out->type = Json::Type::String;
      return string(&out->string);
    }
    if (c == 't') {
      out->type = Json::Type::Bool;
      out->boolean = true;
      return literal("true");
    }
    if (c == 'f') {
      out->type = Json::Type::Bool;
      out->boolean = false;
      return literal("false");
    }
    if (c == 'n') {
      out->type = Json::Type::Null;
      return literal("null");
    }
    return number(out);
  }
  bool number(Json* out) {
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    double v = std::strtod(begin, &end);
    if (end == begin) return fail("expected a value");
    pos_ += static_cast<size_t>(end - begin);
    out->type = Json::Type::Number;
    out->number = v;
    return true;
  }
  bool string(std::string* out) {
    ++pos_;  // opening quote
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
        case 'n': *out += '\n'; break;
        case 't': *out += '\t'; break;
        case 'r': *out += '\r'; break;
        case 'b': *out += '\b'; break;
        case 'f': *out += '\f'; break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return fail("bad \\u escape");
          unsigned code = static_cast<unsigned>(std::strtoul(s_.substr(pos_, 4).c_str(), nullptr, 16));
          pos_ += 4;
          // Descriptions are ASCII; anything else is kept as a '?' rather than decoded.
          *out += code < 0x80 ? static_cast<char>(code) : '?';
          break;
        }
        default: *out += e; break;  // \" \\ \/
      }
    }
    return fail("unterminated string");
  }
  bool array(Json* out, int depth) {
    out->type = Json::Type::Array;
    ++pos_;
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      out->array.emplace_back();
      if (!value(&out->array.back(), depth + 1)) return false;
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }
  bool object(Json* out, int depth) {
    out->type = Json::Type::Object;
    ++pos_;
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '"') return fail("expected a key");
      std::string key;
      if (!string(&key)) return false;
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != ':') return fail("expected ':'");
      ++pos_;
      Json v;
      if (!value(&v, depth + 1)) return false;
      out->object[key] = std::move(v);
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

bool parse_json(const std::string& text, Json* out, std::string* error) {
  *out = Json();
  return JsonParser(text).parse(out, error);
}

// ---- shapes ------------------------------------------------------------------------------------
bool parse_shapes(const std::string& text, const std::string& set, std::vector<Shape>* out, std::string* error) {
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string first;
    if (!(fields >> first)) continue;  // blank or comment
    Shape s;
    s.set = set;
    std::istringstream first_field(first);
    std::string epilogue, extra;
    if (!(first_field >> s.m) || !first_field.eof() || !(fields >> s.n >> s.k) || s.m <= 0 || s.n <= 0 || s.k <= 0) {
      *error = set + ":" + std::to_string(number) + ": expected 'M N K [plain|bias_gelu]' with positive sizes";
      return false;
    }
    if (fields >> epilogue) {
      if (epilogue == "bias_gelu") {
        s.epilogue = EpilogueKind::BiasGelu;
      } else if (epilogue != "plain") {
        *error = set + ":" + std::to_string(number) + ": unknown epilogue '" + epilogue + "' (plain or bias_gelu)";
        return false;
      }
    }
    if (fields >> extra) {
      *error = set + ":" + std::to_string(number) + ": unexpected '" + extra + "'";
      return false;
    }
    out->push_back(s);
  }
  return true;
}

// ---- statistics --------------------------------------------------------------------------------
double percentile(std::vector<double> v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

double median(std::vector<double> v) { return percentile(std::move(v), 0.5); }

namespace {
std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    double r = 0.5 * double(i + j) + 1.0;  // ties share the mean of their positions
    for (size_t t = i; t <= j; ++t) rank[order[t]] = r;
    i = j + 1;
  }
  return rank;
}
}  // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (x.size() != y.size() || x.size() < 3) return nan;
  std::vector<double> rx = average_ranks(x), ry = average_ranks(y);
  double n = double(x.size()), mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    mx += rx[i];
    my += ry[i];
  }
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx == 0 || syy == 0) return nan;
  return sxy / std::sqrt(sxx * syy);
}

// ---- output formatting -------------------------------------------------------------------------
std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string jstr(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string jnum(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// ---- self test ---------------------------------------------------------------------------------
int self_test() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      std::printf("self-test FAILED: %s\n", what);
      ++failures;
    }
  };
  auto near = [](double a, double b) { return std::fabs(a - b) < 1e-12; };

  // JSON shaped like dgemm_plan_describe's output.
  const std::string desc =
      "{\"problem\":\"m=1 \\\"q\\\"\",\"chosen\":{\"config\":{\"name\":\"sm90_128x128x64_s4_t384\","
      "\"family\":\"sm90\",\"persistent\":true},\"predicted_us\":1.5e2},"
      "\"runners_up\":[{\"config\":{\"family\":\"sm80\"},\"predicted_us\":210.25},"
      "{\"config\":{\"family\":\"sm90\"},\"predicted_us\":-3}],\"rejected\":[],\"x\":null}";
  Json j;
  std::string err;
  check(parse_json(desc, &j, &err), "parse a plan description");
  const Json* name = j.path("chosen.config.name");
  check(name && name->string == "sm90_128x128x64_s4_t384", "chosen.config.name");
  const Json* pred = j.path("chosen.predicted_us");
  check(pred && near(pred->number, 150.0), "chosen.predicted_us");
  const Json* ru = j.get("runners_up");
  check(ru && ru->array.size() == 2 && near(ru->array[0].get("predicted_us")->number, 210.25) &&
            near(ru->array[1].get("predicted_us")->number, -3.0),
        "runners_up[].predicted_us");
  check(j.get("problem") && j.get("problem")->string == "m=1 \"q\"", "string escapes");
  check(j.path("chosen.config.persistent") && j.path("chosen.config.persistent")->boolean, "booleans");
  check(j.path("chosen.nothing") == nullptr && j.path("problem.x") == nullptr, "missing paths");
  check(!parse_json("{\"a\":1", &j, &err), "truncated object is an error");
  check(!parse_json("{\"a\":1} x", &j, &err), "trailing text is an error");
  check(!parse_json("{\"a\" 1}", &j, &err), "missing colon is an error");

  // Shapes.
  std::vector<Shape> shapes;
  check(parse_shapes("# c\n1 2 3\n\n 4 5 6 bias_gelu # tail\n7 8 9 plain\n", "t", &shapes, &err) &&
            shapes.size() == 3 && shapes[1].m == 4 && shapes[1].k == 6 &&
            shapes[1].epilogue == EpilogueKind::BiasGelu && shapes[2].epilogue == EpilogueKind::Plain,
        "parse shapes");
  shapes.clear();
  check(!parse_shapes("1 2\n", "t", &shapes, &err), "a short line is an error");
  check(!parse_shapes("1 2 0\n", "t", &shapes, &err), "a zero size is an error");
  check(!parse_shapes("1 2 3 relu\n", "t", &shapes, &err), "an unknown epilogue is an error");
  check(!parse_shapes("1x 2 3\n", "t", &shapes, &err), "a malformed number is an error");
  for (const auto& kv : embedded_shape_sets()) {
    shapes.clear();
    bool ok = parse_shapes(kv.second, kv.first, &shapes, &err) && !shapes.empty();
    if (!ok) std::printf("embedded set %s: %s\n", kv.first.c_str(), err.c_str());
    check(ok, "every embedded shape set parses and is non-empty");
  }

  // Statistics.
  check(near(median({3, 1, 2}), 2) && near(median({4, 1, 3, 2}), 2.5), "median");
  check(near(percentile({0, 10}, 0.25), 2.5), "percentile interpolates");
  check(near(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1), "spearman +1");
  check(near(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1), "spearman -1");
  check(near(spearman({1, 2, 3, 4, 5}, {1, 4, 9, 16, 1000}), 1), "spearman is rank-based");
  // Ties: ranks of {1, 2, 2, 3} are {1, 2.5, 2.5, 4}; against {1, 2, 3, 4} rho = 0.9486832980505138.
  check(std::fabs(spearman({1, 2, 2, 3}, {1, 2, 3, 4}) - 0.9486832980505138) < 1e-12, "spearman with ties");
  check(std::isnan(spearman({1, 2}, {1, 2})), "spearman needs 3 pairs");
  check(std::isnan(spearman({1, 1, 1}, {1, 2, 3})), "spearman of a constant is NaN");
  if (failures == 0) std::printf("self-test passed\n");
  return failures;
}

}  // namespace bench
