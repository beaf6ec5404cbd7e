// SPDX-License-Identifier: Apache-2.0
// The two model-free strategies: exhaustive (id order) and uniform random without replacement.
#include <algorithm>

#include "kareus/core/rng.hpp"
#include "strategies.hpp"

namespace kareus::search {
namespace {

// Batch size of the model-free strategies: large enough to amortise a clock change and a store
// transaction, small enough that a kill loses little work.
constexpr std::size_t kSweepBatch = 16;

StopReason measure_in_order(SearchState& state, const std::vector<std::size_t>& order,
                            const std::string& label) {
  for (std::size_t begin = 0; begin < order.size() && state.remaining() > 0; begin += kSweepBatch) {
    const std::size_t end = std::min(order.size(), begin + kSweepBatch);
    state.measure({order.begin() + static_cast<std::ptrdiff_t>(begin),
                   order.begin() + static_cast<std::ptrdiff_t>(end)},
                  label);
  }
  return state.stop_reason(StopReason::kSpaceExhausted);
}

}  // namespace

StopReason run_exhaustive(SearchState& state) {
  return measure_in_order(state, state.unmeasured(), "exhaustive");
}

StopReason run_random(SearchState& state) {
  Rng rng(state.options().seed);
  return measure_in_order(state, rng.sample_without_replacement(state.size(), state.remaining()),
                          "random");
}

}  // namespace kareus::search
