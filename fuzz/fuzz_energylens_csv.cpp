// SPDX-License-Identifier: Apache-2.0
#include "fuzz_main.hpp"
#include "kareus/energylens/dataset.hpp"

void read_input(std::string_view text) {
  kareus::energylens::parse_dataset(text, "fuzz.csv", kareus::energylens::EnergyColumn::kOptional);
}
