// SPDX-License-Identifier: Apache-2.0
// Quantities as a person reads them: a unit scaled so the number has a few digits (512 kJ,
// 1.37 MJ, 4.2 min), for tables and progress lines. Files and --json keep SI base units.
#pragma once

#include <string>

#include "kareus/core/units.hpp"

namespace kareus {

// Three significant digits in J, kJ, MJ or GJ.
std::string readable_energy(Joules e);
// "850 ms", "12.3 s", "4.2 min", "1.5 h".
std::string readable_duration(double seconds);

}  // namespace kareus
