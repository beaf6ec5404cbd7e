// SPDX-License-Identifier: Apache-2.0
// The abstract problem a search works on: a finite configuration space with stable ids 0..N-1,
// each with a key, surrogate features and a (batch) measurement. Partitions implement it on top
// of an Executor; tests implement it with closed forms. Kept small so both stay easy to write.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kareus/core/units.hpp"

namespace kareus::search {

// One measured configuration, per GPU.
struct Measurement {
  Seconds time;
  Joules total_energy;
  // total_energy - static power x time.
  Joules dynamic_energy;
  // GPU-seconds the measurement protocol took (settle, cooldown, warm-up and window, times the
  // GPUs involved); the search sums it into gpu_hours.
  Seconds gpu_cost;
  // Answered from a measurement store: its cost was paid by an earlier run.
  bool reused = false;
};

// Partition size class by number of compute ops: 1 small, 2-3 medium, more large (paper App. C).
enum class SizeClass { kSmall, kMedium, kLarge };
SizeClass size_class_of(std::size_t compute_ops);
const char* to_string(SizeClass size_class);
// Most measurements the artifact's MBO (`paper`) takes on a partition of this size class: its
// initial sample plus all its batches (Appendix C: 84, 112, 224).
std::size_t paper_measurements(SizeClass size_class);

class Problem {
 public:
  virtual ~Problem() = default;

  // Number of configurations N; ids are 0..N-1 and never change meaning.
  virtual std::size_t size() const = 0;
  // Stable text key of a configuration, e.g. "norm_0/12sm@1230MHz"; the store is keyed by it.
  virtual std::string key(std::size_t id) const = 0;
  // The artifact's surrogate encoding: clock in MHz, SM index, one-hot launch slot.
  virtual std::vector<double> raw_features(std::size_t id) const = 0;
  // Optional features with physical meaning the problem knows without measuring (predicted compute
  // time at the clock, communication bytes per SM, ...). Empty when the problem has none; the
  // `kareus` strategy then falls back to raw_features.
  virtual std::vector<double> physical_features(std::size_t id) const;
  // Power drawn regardless of the configuration; total = dynamic + static power x time.
  virtual Watts static_power() const = 0;
  // Number of compute ops in the partition, which sets the size class.
  virtual std::size_t compute_ops() const = 0;
  // Measures a batch; one result per id, in the order of `ids`. A real executor may reorder the
  // work internally (e.g. by clock) but must answer in this order.
  virtual std::vector<Measurement> measure(const std::vector<std::size_t>& ids) = 0;
  // Measures them again as their `repeat`-th sample (repeat 0 is measure()'s reading). A problem
  // whose readings have no noise reads the same again, which is this default.
  virtual std::vector<Measurement> measure_repeat(const std::vector<std::size_t>& ids,
                                                  std::size_t repeat);
};

}  // namespace kareus::search
