// A path lookup over JSON text: walks the objects named by the path and skips everything else.
#include "tools/json_lookup.hpp"

#include <cctype>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace dgemm::tools {
namespace {

class Scanner {
 public:
  explicit Scanner(const std::string& s) : s_(s) {}

  void spaces() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool take(char c) {
    spaces();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  char peek() {
    spaces();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  // A string at the cursor, unescaped (\uXXXX below 0x80 only: the library writes nothing else).
  std::optional<std::string> string() {
    if (!take('"')) return std::nullopt;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) return std::nullopt;
      char e = s_[i_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u':
          if (i_ + 4 > s_.size()) return std::nullopt;
          out += static_cast<char>(std::strtol(s_.substr(i_, 4).c_str(), nullptr, 16));
          i_ += 4;
          break;
        default: out += e;
      }
    }
    if (i_ >= s_.size()) return std::nullopt;
    ++i_;
    return out;
  }
  // Skips one value of any kind; false on malformed text.
  bool skip() {
    char c = peek();
    if (c == '"') return string().has_value();
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      ++i_;
      if (take(close)) return true;
      do {
        if (c == '{' && (!string() || !take(':'))) return false;
        if (!skip()) return false;
      } while (take(','));
      return take(close);
    }
    std::size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' || s_[i_] == '+' ||
                              s_[i_] == '.'))
      ++i_;
    return i_ > start;
  }
  // The scalar at the cursor as text.
  std::optional<std::string> scalar() {
    if (peek() == '"') return string();
    if (peek() == '{' || peek() == '[') return std::nullopt;
    std::size_t start = i_;
    if (!skip()) return std::nullopt;
    return s_.substr(start, i_ - start);
  }

 private:
  const std::string& s_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<std::string> json_lookup(const std::string& json, const std::string& dotted_path) {
  std::vector<std::string> keys;
  std::stringstream ss(dotted_path);
  for (std::string key; std::getline(ss, key, '.');) keys.push_back(key);
  Scanner sc(json);
  for (const std::string& want : keys) {
    if (!sc.take('{')) return std::nullopt;
    bool found = false;
    if (!sc.take('}')) {
      do {
        std::optional<std::string> key = sc.string();
        if (!key || !sc.take(':')) return std::nullopt;
        if (*key == want) {
          found = true;
          break;
        }
        if (!sc.skip()) return std::nullopt;
      } while (sc.take(','));
    }
    if (!found) return std::nullopt;
  }
  return sc.scalar();
}

}  // namespace dgemm::tools
