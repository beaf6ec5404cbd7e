// SPDX-License-Identifier: Apache-2.0
// Numbers as users and spreadsheets write them. strtod also reads hexadecimal floats (0x1p-3),
// inf, nan and leading blanks, and follows the C locale's decimal separator; a CSV cell or a flag
// that is one of those is a mistake to refuse, not a number to use.
#pragma once

#include <optional>
#include <string_view>

namespace kareus {

// The finite value of a decimal number such as 42, -1.5, .5, +3 or 6.02e23, or nothing for any
// other text: hexadecimal, inf, nan, blanks, a value beyond a double or too small for one.
std::optional<double> parse_decimal(std::string_view text);

}  // namespace kareus
