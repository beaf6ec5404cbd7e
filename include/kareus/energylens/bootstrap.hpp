// SPDX-License-Identifier: Apache-2.0
// Bootstrap over the fitting rows: the fit repeated on B resamples (with replacement, seeded)
// gives the parameters' own uncertainty, which the log-normal intervals of fit.hpp leave out.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kareus/energylens/fit.hpp"

namespace kareus::energylens {

struct BootstrapOptions {
  int replicates = 50;
  std::uint64_t seed = 1;
};

struct ParamInterval {
  double low = 0.0;
  double high = 0.0;
};

// Fits `rows` once (the point model) and once per resample, stores the replicates in the
// returned model (EnergyModel::replicates), so that its interval() widens by their spread. With
// fit.bags > 1 the first bags - 1 replicates are also the bag (at least that many are drawn), so
// that the model equals fit_energy_model's with the same seed.
EnergyModel fit_with_bootstrap(const std::vector<Sample>& rows, const FitOptions& fit,
                               const BootstrapOptions& bootstrap);

// Single fits (fit_single_model) to `count` resamples of `rows` drawn with replacement, each
// with its own seeded restarts; the same `seed` draws the same resamples. With `in_bag`,
// (*in_bag)[b][i] is how often resample b drew row i.
std::vector<EnergyModel> bootstrap_fits(const std::vector<Sample>& rows, const FitOptions& fit,
                                        int count, std::uint64_t seed,
                                        std::vector<std::vector<int>>* in_bag = nullptr);

// Gives `model` (the fit to `rows`) `count` replicates and fit.bags as its bag, and calibrates
// the bag's intervals on the rows each replicate left out (calibration.hpp).
void add_replicates(EnergyModel& model, const std::vector<Sample>& rows, const FitOptions& fit,
                    int count, std::uint64_t seed);

// Percentile intervals (kIntervalCoverage, two-sided) of each closed-form parameter over the
// replicates; empty without replicates. The linear parameters carry the scale term's level, so
// theirs include how that level moves between resamples.
std::vector<ParamInterval> parameter_intervals(const EnergyModel& model);

}  // namespace kareus::energylens
