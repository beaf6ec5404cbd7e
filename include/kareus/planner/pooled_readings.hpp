// SPDX-License-Identifier: Apache-2.0
// Readings pooled across clocks before composition. Under measurement noise the composition keeps,
// at every clock, the configurations whose readings were lucky. A shape's (launch slot, SM count)
// time and energy move with the clock much like every other shape's, so its readings at other
// clocks say what it reads at this one: in log space, reading = shape effect + clock effect +
// interaction + noise. Each reading is pulled toward the additive fit by the share of its
// residual that noise explains (empirical Bayes: interaction variance tau^2 from the residuals
// less the noise variance, weight on the reading tau^2 / (tau^2 + sigma^2 / samples)). A shape
// read at one clock only has nothing to pool. Without estimated noise the readings are left
// exactly as they are.
#pragma once

#include <cstddef>
#include <vector>

#include "kareus/planner/composition.hpp"

namespace kareus::planner {

// One objective's mean reading of one configuration, in log space.
struct LogReading {
  std::size_t shape = 0;
  std::size_t clock = 0;
  double value = 0.0;       // log of the mean reading
  std::size_t samples = 1;  // readings averaged into it
};

// Pooled estimates of `readings` (same order) for a relative noise `sigma` of one reading.
std::vector<double> pooled_log_estimates(const std::vector<LogReading>& readings, double sigma);

// Every key's time and energies pooled, with the noise its searches estimated (summary.noise_time,
// summary.noise_energy, averaged over the keys by their repeats); returned as they are when no
// search estimated any noise.
KeyFrontiers pooled_readings(KeyFrontiers keys);

}  // namespace kareus::planner
