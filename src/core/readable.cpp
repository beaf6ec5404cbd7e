// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/readable.hpp"

#include <fmt/format.h>

#include <cmath>

namespace kareus {
namespace {

// Three significant digits: 1.23, 12.3, 123.
std::string three_digits(double v) {
  const double a = std::fabs(v);
  if (a >= 99.95) return fmt::format("{:.0f}", v);
  if (a >= 9.995) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

}  // namespace

std::string readable_energy(Joules e) {
  constexpr const char* kUnits[] = {"J", "kJ", "MJ", "GJ"};
  double v = e.value();
  std::size_t u = 0;
  // Switch unit where rounding to three digits would print 1000.
  while (std::fabs(v) >= 999.5 && u + 1 < std::size(kUnits)) {
    v /= 1e3;
    ++u;
  }
  return three_digits(v) + " " + kUnits[u];
}

std::string readable_duration(double seconds) {
  if (seconds < 0.9995) return fmt::format("{:.0f} ms", seconds * 1e3);
  if (seconds < 99.5) return three_digits(seconds) + " s";
  if (seconds < 3600) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace kareus
