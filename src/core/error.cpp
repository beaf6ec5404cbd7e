// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kareus {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidInput:
      return "invalid input";
    case ErrorKind::kIo:
      return "I/O error";
    case ErrorKind::kDevice:
      return "device error";
    case ErrorKind::kInternal:
      return "internal error";
  }
  return "unknown error";
}

// One rule for every CLI (docs/cli.md): 2 when the command or a file it names must be fixed,
// 4 when the machine must (a file system, the store, a socket, the GPU or its driver), 3 for a bug.
int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidInput:
      return 2;
    case ErrorKind::kInternal:
      return 3;
    case ErrorKind::kIo:
    case ErrorKind::kDevice:
      break;
  }
  return 4;
}

namespace {

// Control characters no message text contains: a field's name lies between them.
constexpr char kFieldStart = '\x1e';
constexpr char kFieldEnd = '\x1f';

std::string library_name(std::string_view field) {
  return std::string(field);
}

}  // namespace

std::string field_ref(std::string_view field) {
  return fmt::format("{}{}{}", kFieldStart, field, kFieldEnd);
}

std::string spell_fields(std::string_view text, const FieldSpeller& spell) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t start = text.find(kFieldStart, at);
    const std::size_t end = text.find(kFieldEnd, start);
    if (start == std::string_view::npos || end == std::string_view::npos) break;
    out += text.substr(at, start - at);
    out += spell(text.substr(start + 1, end - start - 1));
    at = end + 1;
  }
  out += text.substr(std::min(at, text.size()));
  return out;
}

Error::Error(const std::string& message, ErrorKind kind)
    : std::runtime_error(spell_fields(message, library_name)), kind_(kind), text_(message) {}

Error Error::invalid(std::string_view where, std::string_view field, std::string_view value,
                     std::string_view allowed) {
  std::string message;
  if (!where.empty()) message += fmt::format("{}: ", where);
  message += fmt::format("{} = {}: {}", field, value.empty() ? "(empty)" : value, allowed);
  Error e(message);
  e.where_ = spell_fields(where, library_name);
  e.field_ = spell_fields(field, library_name);
  e.value_ = value;
  e.allowed_ = spell_fields(allowed, library_name);
  return e;
}

void require(bool condition, std::string_view where, std::string_view field, std::string_view value,
             std::string_view allowed) {
  if (!condition) throw Error::invalid(where, field, value, allowed);
}

std::string format_number(double value) {
  return fmt::format("{}", value);
}

}  // namespace kareus
