// SPDX-License-Identifier: Apache-2.0
// A synthetic partition-like problem for search and store tests; closed forms only, no GPU.
// It has the structure of a real partition's space: A100 clocks 900..1410 MHz step 30 x comm SM
// counts 3..30 step 3 x launch slots, with time = max(compute, slot offset + comm) and
// energy = static power x time + dynamic energy (clock^3-like compute power plus per-SM comm
// power). The constants are made up to give frontiers of realistic shape, not to match any GPU.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "kareus/search/search.hpp"

namespace kareus::testing {

struct SyntheticShape {
  std::size_t slots = 4;        // launch slots (1..4)
  std::size_t compute_ops = 4;  // sets the size class
  double compute_s = 2.0e-3;    // compute time at 1410 MHz with no comm SMs taken
  double comm_bytes = 48e6;     // bytes the comm kernel moves
  double noise = 0.005;         // relative measurement noise, deterministic per config
  std::uint64_t seed = 1;       // varies the noise and the workload constants
};

class SyntheticProblem : public search::Problem {
 public:
  explicit SyntheticProblem(SyntheticShape shape);

  std::size_t size() const override;
  std::string key(std::size_t id) const override;
  std::vector<double> raw_features(std::size_t id) const override;
  std::vector<double> physical_features(std::size_t id) const override;
  Watts static_power() const override { return Watts(85.0); }
  std::size_t compute_ops() const override { return shape_.compute_ops; }
  std::vector<search::Measurement> measure(const std::vector<std::size_t>& ids) override;
  // Its noise is fixed per configuration: a repeat reads the same. Logged as "key#repeat".
  std::vector<search::Measurement> measure_repeat(const std::vector<std::size_t>& ids,
                                                  std::size_t repeat) override;

  // Every config measure() read, in order, for "measured at most once" checks.
  const std::vector<std::size_t>& measured_ids() const { return measured_ids_; }
  // Each measure() call sleeps this long per config, to give a kill test time to strike.
  void set_delay(std::chrono::milliseconds delay) { delay_ = delay; }
  // Appends each reading's key (a repeat's with "#repeat"), one per line and flushed, to `path`.
  void set_log(std::filesystem::path path) { log_ = std::move(path); }

  search::Measurement truth(std::size_t id) const;

 private:
  struct Coordinates {
    double clock_mhz;
    double sms;
    std::size_t sm_index;
    std::size_t slot;
  };
  Coordinates coordinates(std::size_t id) const;

  SyntheticShape shape_;
  double memory_fraction_;
  std::vector<double> slot_fraction_;
  std::vector<std::size_t> measured_ids_;
  std::chrono::milliseconds delay_{0};
  std::filesystem::path log_;
};

// Hypervolume of a result's measured (time, total energy) points over that of all configurations,
// both with the reference point 1.1 x the maxima over all configurations.
double hv_fraction(const search::SearchResult& result, const SyntheticProblem& problem);

}  // namespace kareus::testing
