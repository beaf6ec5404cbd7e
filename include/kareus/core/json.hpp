// SPDX-License-Identifier: Apache-2.0
// JSON loading with precise errors. A JsonValue remembers the file it came from and its JSON
// pointer, so a missing or wrongly typed field is reported as "file: /path/to/field ...".
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kareus {

using Json = nlohmann::json;

class JsonValue {
 public:
  JsonValue(const Json& value, std::shared_ptr<const std::string> source, std::string pointer);

  // Required child of an object; throws naming the file and pointer when it is missing.
  JsonValue at(std::string_view key) const;
  std::optional<JsonValue> find(std::string_view key) const;
  bool contains(std::string_view key) const;
  // Element of an array.
  JsonValue at(std::size_t index) const;
  std::size_t size() const;
  std::vector<std::string> keys() const;

  double as_number() const;
  double as_positive_number() const;
  double as_non_negative_number() const;
  std::int64_t as_integer() const;
  std::int64_t as_positive_integer() const;
  // A positive integer that fits the int the field is stored in (refuses 4294971392, which an int
  // would silently read as 4096).
  int as_positive_int() const;
  std::string as_string() const;
  bool as_bool() const;

  // Shorthands for object fields.
  double number(std::string_view key) const { return at(key).as_number(); }
  double positive_number(std::string_view key) const { return at(key).as_positive_number(); }
  std::int64_t integer(std::string_view key) const { return at(key).as_integer(); }
  std::int64_t positive_integer(std::string_view key) const {
    return at(key).as_positive_integer();
  }
  int positive_int(std::string_view key) const { return at(key).as_positive_int(); }
  std::string string(std::string_view key) const { return at(key).as_string(); }
  double number_or(std::string_view key, double fallback) const;
  std::int64_t integer_or(std::string_view key, std::int64_t fallback) const;
  std::string string_or(std::string_view key, std::string fallback) const;
  bool bool_or(std::string_view key, bool fallback) const;

  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool is_null() const { return value_->is_null(); }
  const Json& raw() const { return *value_; }
  const std::string& source() const { return *source_; }
  const std::string& pointer() const { return pointer_; }

  // Refuses an object field not in `known`: a misspelt optional field would otherwise be ignored.
  // With `notes_allowed`, keys starting with '_' ("_source") are notes for the reader.
  void reject_unknown_keys(std::initializer_list<std::string_view> known,
                           bool notes_allowed = false) const;

  // An Error "source: pointer = value: allowed" for this value.
  [[noreturn]] void fail(std::string_view allowed) const;

 private:
  const Json* value_;
  std::shared_ptr<const std::string> source_;
  std::string pointer_;
};

// Owns a parsed document; root() views it, and every view keeps the document alive.
class JsonDocument {
 public:
  static JsonDocument load_file(const std::filesystem::path& path);
  static JsonDocument parse(std::string_view text, std::string source_name);
  JsonValue root() const;
  const Json& raw() const { return *json_; }

 private:
  std::shared_ptr<const Json> json_;
  std::shared_ptr<const std::string> source_;
};

// Writes `text` to `path` atomically (temporary file + rename), so an interrupted run never
// leaves a partial output behind.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace kareus
