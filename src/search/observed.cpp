// SPDX-License-Identifier: Apache-2.0
#include "observed.hpp"

#include <limits>

#include "kareus/search/acquisition.hpp"

namespace kareus::search {

Observed observed(const SearchState& state, const FeatureMatrix& features) {
  Observed o;
  std::vector<std::size_t> ids;
  for (const MeasuredPoint& p : state.points()) {
    ids.push_back(p.id);
    const Measurement& m = p.measurement;
    o.y.time_s.push_back(m.time.value());
    o.y.dynamic_j.push_back(m.dynamic_energy.value());
    o.total.push_back({m.time.value(), m.total_energy.value()});
    o.dynamic.push_back({m.time.value(), m.dynamic_energy.value()});
  }
  o.x = features.select(ids);
  return o;
}

PredictedPoints predicted_points(const ObjectiveValues& prediction, Watts static_power) {
  PredictedPoints out;
  for (std::size_t i = 0; i < prediction.time_s.size(); ++i) {
    const double t = prediction.time_s[i];
    const double dynamic = prediction.dynamic_j[i];
    out.total.push_back({t, dynamic + static_power.value() * t});
    out.dynamic.push_back({t, dynamic});
  }
  return out;
}

double relative_improvement(const std::vector<Point2>& before, const std::vector<Point2>& after) {
  const Normaliser2 normalise(after);
  const double hv_before = hypervolume_2d(normalise(before), normalise.reference());
  const double hv_after = hypervolume_2d(normalise(after), normalise.reference());
  if (hv_before <= 0.0) {
    return hv_after > 0.0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return (hv_after - hv_before) / hv_before;
}

}  // namespace kareus::search
