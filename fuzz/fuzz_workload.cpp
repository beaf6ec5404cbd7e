// SPDX-License-Identifier: Apache-2.0
#include "fuzz_main.hpp"
#include "kareus/core/json.hpp"
#include "kareus/workload/workload.hpp"

void read_input(std::string_view text) {
  const auto doc = kareus::JsonDocument::parse(text, "fuzz.json");
  kareus::workload::make_workload(kareus::workload::workload_request_from_json(doc.root(), "fuzz"));
}
