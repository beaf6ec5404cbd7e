// SPDX-License-Identifier: Apache-2.0
#include "fuzz_main.hpp"
#include "kareus/core/json.hpp"
#include "kareus/energylens/fit.hpp"

void read_input(std::string_view text) {
  kareus::energylens::EnergyModel::from_json(kareus::JsonDocument::parse(text, "fuzz.json").root());
}
