#include "kareus/energylens/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "kareus/energylens/fit.hpp"

namespace kareus::energylens {
namespace {

// |mean log residual| over the replicates that left row `i` out but drew its group, divided by
// the standard deviation interval() uses for the row (with those replicates' mean variance of
// its log scale); none without such a replicate or when the deviation is 0 (noise-free rows
// leave nothing to calibrate).
void add_score(const EnergyModel& model, const std::vector<Sample>& rows, std::size_t i,
               const std::vector<std::vector<int>>& in_bag,
               const std::vector<std::set<std::string>>& drawn_groups,
               std::vector<double>& scores) {
  const Sample& s = rows[i];
  const std::string key = scale_group_key(s, model.scale_by);
  double residuals = 0.0, scale_variances = 0.0;
  int fits = 0;
  for (std::size_t b = 0; b < drawn_groups.size(); ++b) {
    if (in_bag[b][i] > 0 || !drawn_groups[b].contains(key)) continue;
    const EnergyModel& r = model.replicates[b];
    double variance = 0.0;
    r.scale_of(s, &variance);
    residuals += std::log(s.energy->value() / r.predict_single(s).value());
    scale_variances += variance;
    ++fits;
  }
  if (fits == 0) return;
  const double sd = std::sqrt(model.scale_fit.row_variance + scale_variances / fits +
                              model.replicate_log_variance(s));
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
  const std::size_t bag = static_cast<std::size_t>(std::max(model.bags, 1) - 1);
  std::vector<std::set<std::string>> drawn_groups(bag);
  for (std::size_t b = 0; b < bag; ++b)
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (in_bag[b][i] > 0) drawn_groups[b].insert(scale_group_key(rows[i], model.scale_by));
  std::vector<double> scores;
  for (std::size_t i = 0; i < rows.size(); ++i)
    add_score(model, rows, i, in_bag, drawn_groups, scores);
  if (scores.size() < kMinCalibrationScores) return;
  // A zero quantile (a tenth of the rows fitted exactly) leaves the model uncalibrated.
  model.calibration = {conformal_quantile(scores, kIntervalCoverage), scores.size()};
}

}  // namespace kareus::energylens
