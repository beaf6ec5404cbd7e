#include "kareus/core/error.hpp"

#include <fmt/format.h>

namespace kareus {

Error Error::invalid(std::string_view where, std::string_view field, std::string_view value,
                     std::string_view allowed) {
  std::string message;
  if (!where.empty()) message += fmt::format("{}: ", where);
  message += fmt::format("{} = {}: {}", field, value.empty() ? "(empty)" : value, allowed);
  return Error(std::move(message));
}

void require(bool condition, std::string_view where, std::string_view field,
             std::string_view value, std::string_view allowed) {
  if (!condition) throw Error::invalid(where, field, value, allowed);
}

std::string format_number(double value) { return fmt::format("{}", value); }

}  // namespace kareus
