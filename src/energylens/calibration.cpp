// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "kareus/energylens/fit.hpp"

namespace kareus::energylens {
namespace {

// The posterior variance fit_scale gives the log multiplier of a group fitted on `rows` rows.
double group_log_variance(const ScaleFit& fit, double rows) {
  const double own = fit.row_variance / rows, tau2 = fit.group_variance;
  return tau2 + own > 0.0 ? tau2 * own / (tau2 + own) : 0.0;
}

// |mean log residual| over the replicates that left row `i` out but drew its group, divided by
// the standard deviation of that mean: interval()'s for the row, with the group's variance as
// known from the distinct rows of it each replicate drew (its own counts a row drawn twice as
// two, but the copies share their noise), and the replicates' spread over the few fits
// averaged rather than the whole bag. None without such a replicate or when the deviation is 0
// (noise-free rows leave nothing to calibrate). `drawn[b][g]`: distinct rows of group g in
// replicate b's resample.
void add_score(const EnergyModel& model, const std::vector<Sample>& rows,
               const std::vector<std::size_t>& group, std::size_t i,
               const std::vector<std::vector<int>>& in_bag,
               const std::vector<std::vector<double>>& drawn, std::vector<double>& scores) {
  const Sample& s = rows[i];
  double residuals = 0.0, scale_variances = 0.0;
  int fits = 0;
  for (std::size_t b = 0; b < in_bag.size() && b + 1 < static_cast<std::size_t>(model.bags); ++b) {
    if (in_bag[b][i] > 0 || drawn[b][group[i]] == 0.0) continue;
    residuals += std::log(s.energy->value() / model.replicates[b].predict_single(s).value());
    scale_variances += group_log_variance(model.scale_fit, drawn[b][group[i]]);
    ++fits;
  }
  if (fits == 0) return;
  const double spread = model.replicate_log_variance(s);
  const double excess = spread * (1.0 / fits - 1.0 / model.bags);
  const double sd =
      std::sqrt(model.scale_fit.row_variance + scale_variances / fits + spread + excess);
  if (sd > 0.0) scores.push_back(std::fabs(residuals / fits) / sd);
}

}  // namespace

double IntervalCalibration::of(bool seen_group) const {
  return seen_group && calibrated() ? multiplier : interval_z();
}

Json IntervalCalibration::to_json() const {
  if (!calibrated()) return Json();
  return Json{{"multiplier", multiplier}, {"scores", scores}};
}

IntervalCalibration IntervalCalibration::from_json(const JsonValue& v) {
  v.reject_unknown_keys({"multiplier", "scores"});
  IntervalCalibration c;
  c.multiplier = v.positive_number("multiplier");
  c.scores = static_cast<std::size_t>(v.positive_integer("scores"));
  return c;
}

double conformal_quantile(std::vector<double> scores, double coverage) {
  const double n = static_cast<double>(scores.size());
  const auto rank = static_cast<std::size_t>(std::ceil(coverage * (n + 1.0)));
  const std::size_t k = std::clamp<std::size_t>(rank, 1, scores.size()) - 1;
  std::nth_element(scores.begin(), scores.begin() + static_cast<long>(k), scores.end());
  return scores[k];
}

void calibrate_out_of_bag(EnergyModel& model, const std::vector<Sample>& rows,
                          const std::vector<std::vector<int>>& in_bag) {
  model.calibration = {};
  std::map<std::string, std::size_t> index;
  std::vector<std::size_t> group;
  for (const Sample& s : rows)
    group.push_back(index.emplace(scale_group_key(s, model.scale_by), index.size()).first->second);
  // Counted once per replicate, not once per row: O(bags x rows), not O(bags x rows^2).
  std::vector<std::vector<double>> drawn(in_bag.size(), std::vector<double>(index.size(), 0.0));
  for (std::size_t b = 0; b < in_bag.size(); ++b)
    for (std::size_t j = 0; j < rows.size(); ++j) drawn[b][group[j]] += in_bag[b][j] > 0;
  std::vector<double> scores;
  for (std::size_t i = 0; i < rows.size(); ++i)
    add_score(model, rows, group, i, in_bag, drawn, scores);
  if (scores.size() < kMinCalibrationScores) return;
  // A zero quantile (a tenth of the rows fitted exactly) leaves the model uncalibrated.
  model.calibration = {conformal_quantile(scores, kIntervalCoverage), scores.size()};
}

}  // namespace kareus::energylens
