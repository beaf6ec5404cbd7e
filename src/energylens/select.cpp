// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/select.hpp"

#include <algorithm>
#include <cmath>

namespace kareus::energylens {

std::vector<Selection> select_configurations(const EnergyModel& model, const Dataset& candidates) {
  std::vector<std::size_t> all(candidates.samples.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<Selection> out;
  for (const auto& group : scenario_groups(candidates.samples, all)) {
    Selection sel;
    sel.scenario = candidates.samples[group.front()].scenario;
    for (std::size_t r : group) {
      const Sample& s = candidates.samples[r];
      sel.ranking.push_back({r, model.predict(s), model.interval(s), false,
                             model.outside_training_range(s), false, memory_fit(s)});
    }
    // However little energy it is predicted to take, a candidate that cannot load its weights,
    // or start with a KV cache for the model's maximum context, is no choice.
    std::stable_sort(sel.ranking.begin(), sel.ranking.end(), [](const Ranked& a, const Ranked& b) {
      if (a.fits() != b.fits()) return a.fits();
      return a.predicted < b.predicted;
    });
    sel.none_fits = !sel.ranking.front().fits();
    if (sel.none_fits) {
      out.push_back(std::move(sel));
      continue;
    }
    // Candidates of one scenario share the scale term, so only the row noise separates them.
    const double resolution = interval_z() * model.within_scenario_log_sd();
    const Ranked& best = sel.ranking.front();
    for (Ranked& r : sel.ranking) {
      if (!r.fits()) continue;
      r.close_to_best = std::log(r.predicted / best.predicted) < resolution;
      r.bag_disagrees =
          r.row != best.row && (!r.outside.empty() || !best.outside.empty()) &&
          model.members_disagree(candidates.samples[best.row], candidates.samples[r.row]);
    }
    sel.too_close_to_call =
        std::any_of(sel.ranking.begin() + 1, sel.ranking.end(),
                    [](const Ranked& r) { return r.close_to_best || r.bag_disagrees; });
    // The ranking's memory checks, back in the candidates' order, as the fastest's ties go.
    std::vector<std::size_t> fitting;
    for (const Ranked& r : sel.ranking)
      if (r.fits()) fitting.push_back(r.row);
    std::sort(fitting.begin(), fitting.end());
    const bool timed = std::all_of(fitting.begin(), fitting.end(), [&](std::size_t r) {
      return candidates.samples[r].time.has_value();
    });
    if (timed) {
      const std::size_t fastest =
          *std::min_element(fitting.begin(), fitting.end(), [&](auto a, auto b) {
            return *candidates.samples[a].time < *candidates.samples[b].time;
          });
      sel.latency_optimal = fastest;
      const auto fast = std::find_if(sel.ranking.begin(), sel.ranking.end(),
                                     [&](const Ranked& x) { return x.row == fastest; });
      sel.latency_penalty_predicted_percent = 100.0 * (fast->predicted / best.predicted - 1.0);
      const auto& eb = candidates.samples[best.row].energy;
      const auto& ef = candidates.samples[fastest].energy;
      if (eb && ef) sel.latency_penalty_measured_percent = 100.0 * (*ef / *eb - 1.0);
    }
    out.push_back(std::move(sel));
  }
  return out;
}

}  // namespace kareus::energylens
