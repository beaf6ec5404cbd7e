// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/byte_size.hpp"

#include <charconv>
#include <cmath>
#include <string>
#include <utility>

#include "kareus/core/error.hpp"

namespace kareus {

double parse_byte_size(std::string_view text, std::string_view where, std::string_view field) {
  const auto fail = [&] {
    return Error::invalid(where, field, text,
                          "expected a positive size such as 67108864, 64MiB, 64MB or 1.5GiB "
                          "(units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)");
  };
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) throw fail();
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  static const std::pair<std::string_view, double> kUnits[] = {{"", 1},
                                                               {"B", 1},
                                                               {"kB", 1e3},
                                                               {"KB", 1e3},
                                                               {"MB", 1e6},
                                                               {"GB", 1e9},
                                                               {"TB", 1e12},
                                                               {"KiB", 1024.0},
                                                               {"MiB", 1 << 20},
                                                               {"GiB", 1 << 30},
                                                               {"TiB", 1099511627776.0}};
  for (const auto& [name, factor] : kUnits) {
    if (unit != name) continue;
    const double bytes = value * factor;
    if (!std::isfinite(bytes) || !(bytes > 0)) throw fail();
    return bytes;
  }
  throw fail();
}

}  // namespace kareus
