// SPDX-License-Identifier: Apache-2.0
// One function per strategy; each decides what to measure and returns why it stopped.
#pragma once

#include "search_state.hpp"

namespace kareus::search {

StopReason run_exhaustive(SearchState& state);
StopReason run_random(SearchState& state);
StopReason run_paper(SearchState& state);
StopReason run_kareus(SearchState& state);

}  // namespace kareus::search
