// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/error.hpp"

#include <fmt/format.h>

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

Error Error::invalid(std::string_view where, std::string_view field, std::string_view value,
                     std::string_view allowed) {
  std::string message;
  if (!where.empty()) message += fmt::format("{}: ", where);
  message += fmt::format("{} = {}: {}", field, value.empty() ? "(empty)" : value, allowed);
  return Error(std::move(message));
}

void require(bool condition, std::string_view where, std::string_view field, std::string_view value,
             std::string_view allowed) {
  if (!condition) throw Error::invalid(where, field, value, allowed);
}

std::string format_number(double value) {
  return fmt::format("{}", value);
}

}  // namespace kareus
