// SPDX-License-Identifier: Apache-2.0
// Configuration selection: rank a scenario's candidate configurations by predicted energy and
// set the energy-optimal choice beside the latency-optimal one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kareus/energylens/dataset.hpp"
#include "kareus/energylens/fit.hpp"
#include "kareus/energylens/memory_fit.hpp"

namespace kareus::energylens {

struct Ranked {
  std::size_t row;  // index into the candidates' samples
  Joules predicted;
  Interval interval;
  // Predicted within the row noise of the best candidate: their order is not evidence (the
  // log ratio is below z x EnergyModel::within_scenario_log_sd()).
  bool close_to_best = false;
  // The inputs outside the training rows' ranges (EnergyModel::outside_training_range).
  std::vector<OutOfRange> outside;
  // This candidate or the best is extrapolated and some fit of the bag orders the two the other
  // way: beyond the data the bag's spread, not the row noise, bounds what the order means.
  bool bag_disagrees = false;
  // Its weights and KV cache against the GPU's usable memory; absent when the catalogues cannot
  // tell.
  std::optional<MemoryFit> memory;
  bool fits() const { return !memory || memory->fits(); }
};

struct Selection {
  std::string scenario;
  // Lowest predicted energy first, every candidate that fits before every one that does not;
  // the front is the energy-optimal choice unless none_fits.
  std::vector<Ranked> ranking;
  bool none_fits = false;          // no candidate can be served (weights or KV cache)
  bool too_close_to_call = false;  // some candidate is close_to_best or bag_disagrees
  // Row with the lowest time_s among the candidates that fit, when all of them have one.
  std::optional<std::size_t> latency_optimal;
  // Extra energy of the latency-optimal choice over the energy-optimal one, in percent:
  // predicted always, measured when both rows carry energy_j.
  std::optional<double> latency_penalty_predicted_percent;
  std::optional<double> latency_penalty_measured_percent;
};

std::vector<Selection> select_configurations(const EnergyModel& model, const Dataset& candidates);

}  // namespace kareus::energylens
