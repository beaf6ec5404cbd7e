// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/surrogate.hpp"

#include <algorithm>
#include <cmath>

#include "kareus/core/rng.hpp"

namespace kareus::search {
namespace {

std::vector<double> pick(const std::vector<double>& values, const std::vector<std::size_t>& rows) {
  std::vector<double> out;
  out.reserve(rows.size());
  for (std::size_t r : rows) out.push_back(values[r]);
  return out;
}

std::vector<double> spread(const std::vector<std::vector<double>>& members) {
  const std::size_t n = members.front().size();
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    double mean = 0.0;
    for (const auto& m : members) mean += m[i];
    mean /= static_cast<double>(members.size());
    double variance = 0.0;
    for (const auto& m : members) variance += (m[i] - mean) * (m[i] - mean);
    out[i] = std::sqrt(variance / static_cast<double>(members.size()));
  }
  return out;
}

}  // namespace

ObjectiveModel::ObjectiveModel(const FeatureMatrix& x, const ObjectiveValues& y,
                               const BoosterParams& params)
    : time_(x, y.time_s, params), dynamic_(x, y.dynamic_j, params) {}

ObjectiveValues ObjectiveModel::predict(const FeatureMatrix& x) const {
  return {time_.predict(x), dynamic_.predict(x)};
}

ObjectiveValues ensemble_spread(const FeatureMatrix& x, const ObjectiveValues& y,
                                const FeatureMatrix& candidates, const BoosterParams& params,
                                const EnsembleOptions& options) {
  if (options.members == 0) {
    return {std::vector<double>(candidates.rows, 0.0), std::vector<double>(candidates.rows, 0.0)};
  }
  const auto sample_size = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::lround(options.fraction * static_cast<double>(x.rows))));
  std::vector<std::vector<double>> times;
  std::vector<std::vector<double>> dynamics;
  for (std::size_t member = 0; member < options.members; ++member) {
    Rng rng(options.seed + member);
    std::vector<std::size_t> rows(sample_size);
    for (auto& r : rows)
      r = static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(x.rows) - 1));
    BoosterParams member_params = params;
    member_params.seed = options.seed + member;
    const ObjectiveModel model(x.select(rows), {pick(y.time_s, rows), pick(y.dynamic_j, rows)},
                               member_params);
    ObjectiveValues p = model.predict(candidates);
    times.push_back(std::move(p.time_s));
    dynamics.push_back(std::move(p.dynamic_j));
  }
  return {spread(times), spread(dynamics)};
}

}  // namespace kareus::search
