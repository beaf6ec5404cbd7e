// SPDX-License-Identifier: Apache-2.0
#include "fuzz_main.hpp"
#include "kareus/kernel_dvfs/torch_trace.hpp"

void read_input(std::string_view text) {
  kareus::kernel_dvfs::parse_torch_trace(text, "fuzz.json");
}
