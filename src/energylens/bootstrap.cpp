// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/bootstrap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/energylens/calibration.hpp"

namespace kareus::energylens {

std::vector<EnergyModel> bootstrap_fits(const std::vector<Sample>& rows, const FitOptions& fit,
                                        int count, std::uint64_t seed,
                                        std::vector<std::vector<int>>* in_bag) {
  Rng rng(seed);
  std::vector<Sample> resample(rows.size());
  std::vector<EnergyModel> out;
  if (in_bag) in_bag->assign(static_cast<std::size_t>(std::max(count, 0)), {});
  for (int b = 0; b < count; ++b) {
    std::vector<int> drawn(rows.size(), 0);
    for (Sample& s : resample) {
      const auto i = static_cast<std::size_t>(rng.integer(0, static_cast<int>(rows.size()) - 1));
      s = rows[i];
      ++drawn[i];
    }
    if (in_bag) (*in_bag)[static_cast<std::size_t>(b)] = std::move(drawn);
    FitOptions o = fit;
    o.seed = rng.fork_seed();
    out.push_back(fit_single_model(resample, o));
  }
  return out;
}

EnergyModel fit_with_bootstrap(const std::vector<Sample>& rows, const FitOptions& fit,
                               const BootstrapOptions& bootstrap) {
  if (bootstrap.replicates < 2)
    throw Error::invalid("", field_ref("replicates"), std::to_string(bootstrap.replicates),
                         "needs at least 2 replicates (0 turns it off)");
  EnergyModel model = fit_single_model(rows, fit);
  add_replicates(model, rows, fit, std::max(bootstrap.replicates, fit.bags - 1), bootstrap.seed);
  return model;
}

void add_replicates(EnergyModel& model, const std::vector<Sample>& rows, const FitOptions& fit,
                    int count, std::uint64_t seed) {
  std::vector<std::vector<int>> in_bag;
  model.replicates = bootstrap_fits(rows, fit, count, seed, &in_bag);
  model.bags = fit.bags;
  calibrate_out_of_bag(model, rows, in_bag);
}

std::vector<ParamInterval> parameter_intervals(const EnergyModel& model) {
  std::vector<ParamInterval> out;
  if (model.replicates.empty()) return out;
  const double tail = (1.0 - kIntervalCoverage) / 2.0;
  for (std::size_t k = 0; k < kParams; ++k) {
    std::vector<double> v;
    for (const EnergyModel& r : model.replicates) v.push_back(r.params[k]);
    std::sort(v.begin(), v.end());
    // Linear interpolation between order statistics (type 7 of Hyndman and Fan 1996).
    auto quantile = [&](double q) {
      const double h = q * static_cast<double>(v.size() - 1);
      const auto lo = static_cast<std::size_t>(std::floor(h));
      const std::size_t hi = std::min(lo + 1, v.size() - 1);
      return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
    };
    out.push_back({quantile(tail), quantile(1.0 - tail)});
  }
  return out;
}

}  // namespace kareus::energylens
