// SPDX-License-Identifier: Apache-2.0
#include "fuzz_main.hpp"
#include "kareus/schedule/schedule.hpp"

void read_input(std::string_view text) {
  const auto schedule = kareus::parse_schedule(text, "fuzz.json");
  kareus::validate_schedule(schedule, "fuzz.json");
}
