// SPDX-License-Identifier: Apache-2.0
// tests/data/runtime/two_stages.json: the two-stage schedule that the schedule and runtime tests
// read.
#pragma once

#include <string>

namespace kareus::testing {

inline const std::string kTwoStagesSchedule =
    std::string(KAREUS_TEST_DATA_DIR) + "/runtime/two_stages.json";

}  // namespace kareus::testing
