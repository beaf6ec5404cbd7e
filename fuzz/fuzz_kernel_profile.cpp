// SPDX-License-Identifier: Apache-2.0
#include "fuzz_main.hpp"
#include "kareus/kernel_dvfs/profile_csv.hpp"

void read_input(std::string_view text) {
  kareus::kernel_dvfs::parse_profile_csv(text, "fuzz.csv", std::nullopt);
}
