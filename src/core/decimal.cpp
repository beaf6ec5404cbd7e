// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/decimal.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

namespace kareus {

std::optional<double> parse_decimal(std::string_view text) {
  // from_chars reads no '+' and no hexadecimal in its general format, and no locale.
  if (text.starts_with('+')) {
    text.remove_prefix(1);
    if (text.starts_with('-')) return std::nullopt;
  }
  double value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

}  // namespace kareus
