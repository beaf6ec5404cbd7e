#include "kareus/energylens/bootstrap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"
#include "kareus/core/rng.hpp"

namespace kareus::energylens {

EnergyModel fit_with_bootstrap(const std::vector<Sample>& rows, const FitOptions& fit,
                               const BootstrapOptions& bootstrap) {
  if (bootstrap.replicates < 2)
    throw Error::invalid("", "--bootstrap", std::to_string(bootstrap.replicates),
                         "needs at least 2 replicates (0 turns it off)");
  EnergyModel model = fit_energy_model(rows, fit);
  Rng rng(bootstrap.seed);
  std::vector<Sample> resample(rows.size());
  for (int b = 0; b < bootstrap.replicates; ++b) {
    for (Sample& s : resample)
      s = rows[static_cast<std::size_t>(rng.integer(0, static_cast<int>(rows.size()) - 1))];
    FitOptions o = fit;
    o.seed = rng.fork_seed();
    model.replicates.push_back(fit_energy_model(resample, o));
  }
  return model;
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
