// SPDX-License-Identifier: Apache-2.0
// Reads the Python literals of the Kareus artifact's plan files: lists, tuples, quoted strings,
// integers and None, with `#` comments. Hand-written because the only alternative is embedding
// a Python interpreter in a C++ test; this is the subset ast.literal_eval would accept there.
#pragma once

#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kareus::planner::testing {

struct PyValue {
  enum class Kind { kNone, kInt, kString, kList, kTuple };
  Kind kind = Kind::kNone;
  std::int64_t integer = 0;
  std::string text;
  std::vector<PyValue> items;
};

class PyLiteralParser {
 public:
  explicit PyLiteralParser(std::string_view text) : s_(text) {}

  // One literal followed only by whitespace and comments; throws std::runtime_error otherwise.
  PyValue parse_document() {
    PyValue v = value();
    skip();
    if (i_ != s_.size()) fail("trailing text");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(what + " at offset " + std::to_string(i_));
  }
  void skip() {
    while (i_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[i_]))) {
        ++i_;
      } else if (s_[i_] == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }
  PyValue value() {
    skip();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '[') return sequence(']', PyValue::Kind::kList);
    if (c == '(') return sequence(')', PyValue::Kind::kTuple);
    if (c == '\'' || c == '"') {
      PyValue v{PyValue::Kind::kString, 0, {}, {}};
      const std::size_t end = s_.find(c, i_ + 1);
      if (end == std::string_view::npos) fail("unterminated string");
      v.text = std::string(s_.substr(i_ + 1, end - i_ - 1));
      i_ = end + 1;
      return v;
    }
    if (s_.substr(i_, 4) == "None") {
      i_ += 4;
      return {};
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') {
      std::size_t used = 0;
      PyValue v{PyValue::Kind::kInt, std::stoll(std::string(s_.substr(i_, 24)), &used), {}, {}};
      i_ += used;
      return v;
    }
    fail(std::string("unexpected character '") + c + "'");
  }
  PyValue sequence(char close, PyValue::Kind kind) {
    PyValue v{kind, 0, {}, {}};
    ++i_;
    for (;;) {
      skip();
      if (i_ < s_.size() && s_[i_] == close) {
        ++i_;
        return v;
      }
      v.items.push_back(value());
      skip();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
      } else if (i_ >= s_.size() || s_[i_] != close) {
        fail("expected ',' or the closing bracket");
      }
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace kareus::planner::testing
