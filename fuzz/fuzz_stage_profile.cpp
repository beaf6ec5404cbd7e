// SPDX-License-Identifier: Apache-2.0
#include "fuzz_main.hpp"
#include "kareus/frontier/stage_profile.hpp"

void read_input(std::string_view text) {
  kareus::frontier::parse_stage_profile(text, "fuzz.csv");
}
