// SPDX-License-Identifier: Apache-2.0
#include "fuzz_main.hpp"
#include "kareus/core/json.hpp"
#include "kareus/workload/model.hpp"

void read_input(std::string_view text) {
  const auto doc = kareus::JsonDocument::parse(text, "config.json");
  const auto model = kareus::workload::model_from_json(doc.root(), "fuzz");
  // Every accepted size goes into these products; UBSan reports an int overflow among them.
  static_cast<void>(model.total_parameters() + model.active_parameters());
}
