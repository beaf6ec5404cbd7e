// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "kareus/core/error.hpp"

namespace kareus::energylens {

double mape_percent(const std::vector<double>& measured, const std::vector<double>& predicted) {
  if (measured.size() != predicted.size() || measured.empty())
    throw Error("mape_percent: measured and predicted must be non-empty and of equal length");
  double sum = 0.0;
  for (std::size_t i = 0; i < measured.size(); ++i)
    sum += std::fabs(predicted[i] - measured[i]) / measured[i];
  return 100.0 * sum / static_cast<double>(measured.size());
}

SelectionScore selection_score(const std::vector<Sample>& samples,
                               const std::vector<std::size_t>& rows,
                               const std::vector<double>& score) {
  if (rows.size() != score.size()) throw Error("selection_score: one score per row is required");
  std::map<std::size_t, double> score_of;
  for (std::size_t i = 0; i < rows.size(); ++i) score_of[rows[i]] = score[i];
  SelectionScore out;
  double top1_sum = 0.0, regret_sum = 0.0, pair_sum = 0.0, parallel_sum = 0.0;
  double separated_sum = 0.0;
  for (const auto& group : scenario_groups(samples, rows)) {
    if (group.size() < 2) continue;
    double best_measured = std::numeric_limits<double>::infinity();
    double best_score = std::numeric_limits<double>::infinity();
    for (std::size_t r : group) {
      best_measured = std::min(best_measured, samples[r].energy->value());
      best_score = std::min(best_score, score_of[r]);
    }
    double hits = 0.0, chosen = 0.0, chosen_energy = 0.0;
    for (std::size_t r : group) {
      if (score_of[r] != best_score) continue;
      chosen += 1.0;
      chosen_energy += samples[r].energy->value();
      if (samples[r].energy->value() == best_measured) hits += 1.0;
    }
    top1_sum += hits / chosen;
    regret_sum += chosen_energy / chosen / best_measured - 1.0;
    ++out.scenarios;
    for (std::size_t i = 0; i < group.size(); ++i) {
      for (std::size_t j = i + 1; j < group.size(); ++j) {
        const double dm = samples[group[i]].energy->value() - samples[group[j]].energy->value();
        if (dm == 0.0) continue;
        const double ds = score_of[group[i]] - score_of[group[j]];
        const double credit = ds == 0.0 ? 0.5 : ((ds > 0.0) == (dm > 0.0) ? 1.0 : 0.0);
        pair_sum += credit;
        ++out.pairs;
        const Sample &a = samples[group[i]], &b = samples[group[j]];
        const bool parallel = a.tp != b.tp || a.pp != b.pp || a.dp != b.dp;
        if (parallel) {
          parallel_sum += credit;
          ++out.parallelism_pairs;
        }
        const double ea = a.energy->value(), eb = b.energy->value();
        if ((parallel || a.batch != b.batch) &&
            std::max(ea, eb) > (1.0 + kSeparation) * std::min(ea, eb)) {
          separated_sum += credit;
          ++out.separated_pairs;
        }
      }
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out.top1 = out.scenarios ? top1_sum / static_cast<double>(out.scenarios) : nan;
  out.regret = out.scenarios ? regret_sum / static_cast<double>(out.scenarios) : nan;
  out.pairwise = out.pairs ? pair_sum / static_cast<double>(out.pairs) : nan;
  out.pairwise_parallelism =
      out.parallelism_pairs ? parallel_sum / static_cast<double>(out.parallelism_pairs) : nan;
  out.pairwise_separated =
      out.separated_pairs ? separated_sum / static_cast<double>(out.separated_pairs) : nan;
  return out;
}

}  // namespace kareus::energylens
