// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/json.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <unordered_set>

#include "kareus/core/error.hpp"
#include "kareus/core/text_file.hpp"

namespace kareus {
namespace {

std::string escape_pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// nlohmann's parser is iterative, but dump() (every error message quotes a value) and the readers
// walking a document recurse, so `[` x 100000 overflows the stack. Real inputs nest a few levels.
constexpr int kMaxNesting = 256;

// The byte offset where `text` first nests deeper than kMaxNesting, outside strings.
std::optional<std::size_t> too_deep_at(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

// nlohmann's message without its "[json.exception.<kind>.<id>] " prefix.
std::string message_of(const Json::exception& e) {
  const std::string what = e.what();
  const auto end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

// Where a document repeats a key in one object. nlohmann keeps the last value silently, so a
// workload that says "tp" twice would run with whichever came second. A SAX pass of its own, not
// a parser callback: nlohmann's callback parser searches the enclosing container for discarded
// values after every object, which made an array of n objects cost n^2.
class DuplicateKeyCheck {
 public:
  bool null() { return true; }
  bool boolean(bool /*value*/) { return true; }
  bool number_integer(Json::number_integer_t /*value*/) { return true; }
  bool number_unsigned(Json::number_unsigned_t /*value*/) { return true; }
  bool number_float(Json::number_float_t /*value*/, const std::string& /*text*/) { return true; }
  bool string(std::string& /*value*/) { return true; }
  bool binary(Json::binary_t& /*value*/) { return true; }
  bool start_array(std::size_t /*size*/) { return true; }
  bool end_array() { return true; }
  bool start_object(std::size_t /*size*/) {
    keys_.emplace_back();
    return true;
  }
  bool end_object() {
    keys_.pop_back();
    return true;
  }
  // A key belongs to the innermost open object: arrays hold no keys.
  bool key(std::string& key) {
    if (keys_.back().insert(key).second) return true;
    duplicate_ = key;
    return false;
  }
  template <class Exception>
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const Exception& /*error*/) {
    return false;
  }
  const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  std::vector<std::unordered_set<std::string>> keys_;
  std::optional<std::string> duplicate_;
};

std::string short_dump(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

}  // namespace

JsonValue::JsonValue(const Json& value, std::shared_ptr<const std::string> source,
                     std::string pointer)
    : value_(&value), source_(std::move(source)), pointer_(std::move(pointer)) {}

void JsonValue::fail(std::string_view allowed) const {
  throw Error::invalid(*source_, pointer_.empty() ? "/" : pointer_, short_dump(*value_), allowed);
}

void JsonValue::reject_unknown_keys(std::initializer_list<std::string_view> known,
                                    bool notes_allowed) const {
  for (const std::string& key : keys()) {
    if (notes_allowed && key.starts_with('_')) continue;
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      // Not at(key): that treats a null value as missing.
      JsonValue(value_->at(key), source_, pointer_ + "/" + escape_pointer_token(key))
          .fail(fmt::format("unknown field \"{}\"; allowed: {}{}", key, fmt::join(known, ", "),
                            notes_allowed ? " and _notes" : ""));
    }
  }
}

bool JsonValue::contains(std::string_view key) const {
  return value_->is_object() && value_->contains(std::string(key));
}

std::optional<JsonValue> JsonValue::find(std::string_view key) const {
  if (!contains(key)) return std::nullopt;
  const Json& child = (*value_)[std::string(key)];
  if (child.is_null()) return std::nullopt;
  return JsonValue(child, source_, pointer_ + "/" + escape_pointer_token(key));
}

JsonValue JsonValue::at(std::string_view key) const {
  if (!value_->is_object()) fail("expected a JSON object");
  auto child = find(key);
  if (!child) {
    throw Error(fmt::format("{}: {}/{}: required field is missing", *source_, pointer_,
                            escape_pointer_token(key)));
  }
  return *child;
}

JsonValue JsonValue::at(std::size_t index) const {
  if (!value_->is_array()) fail("expected a JSON array");
  if (index >= value_->size()) {
    throw Error(fmt::format("{}: {}/{}: index out of range (array has {} elements)", *source_,
                            pointer_, index, value_->size()));
  }
  return JsonValue((*value_)[index], source_, fmt::format("{}/{}", pointer_, index));
}

std::size_t JsonValue::size() const {
  if (!value_->is_array() && !value_->is_object()) fail("expected a JSON array or object");
  return value_->size();
}

std::vector<std::string> JsonValue::keys() const {
  if (!value_->is_object()) fail("expected a JSON object");
  std::vector<std::string> out;
  for (const auto& item : value_->items()) out.push_back(item.key());
  return out;
}

double JsonValue::as_number() const {
  if (!value_->is_number()) fail("expected a number");
  const double v = value_->get<double>();
  if (!std::isfinite(v)) fail("expected a finite number");
  return v;
}

double JsonValue::as_positive_number() const {
  const double v = as_number();
  if (!(v > 0.0)) fail("expected a positive number");
  return v;
}

double JsonValue::as_non_negative_number() const {
  const double v = as_number();
  if (v < 0.0) fail("expected a number >= 0");
  return v;
}

constexpr auto kMaxInt64 = std::numeric_limits<std::int64_t>::max();

std::int64_t JsonValue::as_integer() const {
  // An unsigned value above INT64_MAX would wrap to a negative one.
  if (value_->is_number_unsigned() &&
      value_->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxInt64))
    fail(fmt::format("expected an integer <= {}", kMaxInt64));
  if (value_->is_number_integer()) return value_->get<std::int64_t>();
  if (value_->is_number_float()) {
    const double v = value_->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15)
      return static_cast<std::int64_t>(v);
  }
  fail("expected an integer");
}

std::int64_t JsonValue::as_positive_integer() const {
  const auto v = as_integer();
  if (v <= 0) fail("expected a positive integer");
  return v;
}

int JsonValue::as_positive_int() const {
  const auto v = as_integer();
  if (v <= 0 || v > std::numeric_limits<int>::max())
    fail(fmt::format("expected a positive integer <= {}", std::numeric_limits<int>::max()));
  return static_cast<int>(v);
}

std::string JsonValue::as_string() const {
  if (!value_->is_string()) fail("expected a string");
  return value_->get<std::string>();
}

bool JsonValue::as_bool() const {
  if (!value_->is_boolean()) fail("expected true or false");
  return value_->get<bool>();
}

double JsonValue::number_or(std::string_view key, double fallback) const {
  auto child = find(key);
  return child ? child->as_number() : fallback;
}

std::int64_t JsonValue::integer_or(std::string_view key, std::int64_t fallback) const {
  auto child = find(key);
  return child ? child->as_integer() : fallback;
}

std::string JsonValue::string_or(std::string_view key, std::string fallback) const {
  auto child = find(key);
  return child ? child->as_string() : fallback;
}

bool JsonValue::bool_or(std::string_view key, bool fallback) const {
  auto child = find(key);
  return child ? child->as_bool() : fallback;
}

JsonDocument JsonDocument::load_file(const std::filesystem::path& path) {
  return parse(read_text_file(path), path.string());
}

JsonDocument JsonDocument::parse(std::string_view text, std::string source_name) {
  // nlohmann ends its input at a NUL byte, so `{"tp": 8}\0...` would parse as its first part.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    throw Error(
        fmt::format("{}: malformed JSON at byte {}: a NUL byte, which JSON text never holds",
                    source_name, nul + 1));
  }
  if (const auto at = too_deep_at(text)) {
    throw Error(fmt::format("{}: malformed JSON at byte {}: nested deeper than {} levels",
                            source_name, *at + 1, kMaxNesting));
  }
  // The tree and its source name share one owner; every JsonValue holds it through the source
  // pointer, so a value outlives its document (`JsonDocument::load_file(p).root()` is safe).
  struct Parsed {
    Json json;
    std::string source;
  };
  auto parsed = std::make_shared<Parsed>();
  parsed->source = std::move(source_name);
  try {
    parsed->json = Json::parse(text);
    // Only a document that parsed reaches here, so the check stops only at a repeated key.
    DuplicateKeyCheck check;
    Json::sax_parse(text, &check);
    if (check.duplicate()) {
      throw Error(fmt::format("{}: key \"{}\" appears twice in one object: give each key once",
                              parsed->source, *check.duplicate()));
    }
  } catch (const Json::parse_error& e) {
    throw Error(fmt::format("{}: malformed JSON at byte {}: {}", parsed->source, e.byte,
                            std::string(e.what()).substr(std::string(e.what()).find(':') + 2)));
  } catch (const Json::exception& e) {
    // A number beyond double range (1e400) is an out_of_range error, not a parse_error.
    throw Error(fmt::format("{}: malformed JSON: {} (numbers must fit in a double)", parsed->source,
                            message_of(e)));
  }
  JsonDocument doc;
  doc.json_ = std::shared_ptr<const Json>(parsed, &parsed->json);
  doc.source_ = std::shared_ptr<const std::string>(parsed, &parsed->source);
  return doc;
}

JsonValue JsonDocument::root() const {
  return JsonValue(*json_, source_, "");
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) {
    throw Error::io(fmt::format("{}: cannot create folder {}: {}", path.string(),
                                path.parent_path().string(), ec.message()));
  }
  const fs::path tmp = path.string() + ".tmp";
  // Whatever fails below, the temporary file does not outlive the call.
  struct RemoveTmp {
    const fs::path& tmp;
    bool keep = false;
    ~RemoveTmp() {
      std::error_code ignored;
      if (!keep) fs::remove(tmp, ignored);
    }
  } cleanup{tmp};
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error::io(fmt::format("{}: cannot open file for writing", tmp.string()));
    out << text;
    out.flush();
    if (!out) throw Error::io(fmt::format("{}: write failed", tmp.string()));
  }
  fs::rename(tmp, path, ec);
  if (ec) throw Error::io(fmt::format("{}: cannot write: {}", path.string(), ec.message()));
  cleanup.keep = true;
}

}  // namespace kareus
