// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/model.hpp"

#include <algorithm>
#include <cmath>

namespace kareus::energylens {

std::string scale_group_key(const Sample& s, const std::vector<std::string>& scale_by) {
  std::string key;
  for (const auto& column : scale_by) {
    if (!key.empty()) key += " | ";
    key += column == "model" ? s.model : column == "gpu" ? s.gpu : s.scenario;
  }
  // The prefill scale absorbs the mean prompt, which is the workload's: a group spanning two
  // workloads would ask one multiplier to fit two prompt lengths.
  if (!key.empty() && !s.workload.empty()) key += " | " + s.workload;
  return key;
}

std::string family_of(const Sample& s, const std::vector<std::string>& scale_by) {
  const bool by_model = std::find(scale_by.begin(), scale_by.end(), "model") != scale_by.end();
  return by_model && scale_by.size() > 1 ? s.model : std::string();
}

double interval_z() {
  // Standard normal quantile at 1 - (1 - kIntervalCoverage) / 2 = 0.95 (any normal table).
  static_assert(kIntervalCoverage == 0.90);
  return 1.6448536269514722;
}

double EnergyModel::scale_of(const Sample& s, double* log_variance) const {
  const std::string key = scale_group_key(s, scale_by);
  if (const auto it = scales.find(key); it != scales.end()) {
    if (log_variance) *log_variance = scale_log_variances.at(key);
    return it->second;
  }
  std::vector<double> x;
  if (descriptors) {
    const ScaleVector& v = descriptor_cache_->of(s, "data");
    x.assign(v.begin(), v.end());
  }
  // The scale term's level lives in the linear parameters: only its shape is applied here.
  return std::exp(scale_fit.predict(x, family_of(s, scale_by), s.workload, log_variance) -
                  scale_fit.intercept);
}

Features EnergyModel::features(const Sample& s) const {
  return features_of(s, descriptors ? descriptor_cache_->idle_power_share(s, "data") : 1.0);
}

Joules EnergyModel::predict_single(const Sample& s) const {
  return Joules(scale_of(s) * closed_form(params, features(s)));
}

std::vector<double> EnergyModel::member_log_predictions(const Sample& s) const {
  std::vector<double> logs = {std::log(predict_single(s).value())};
  for (std::size_t b = 0; b + 1 < static_cast<std::size_t>(bags); ++b)
    logs.push_back(std::log(replicates[b].predict_single(s).value()));
  return logs;
}

namespace {

// The median of log predictions (for an even count the mean of the middle two).
double median_of(std::vector<double> logs) {
  const auto mid = logs.begin() + static_cast<long>(logs.size() / 2);
  std::nth_element(logs.begin(), mid, logs.end());
  const double upper = *mid;
  return logs.size() % 2 ? upper : 0.5 * (upper + *std::max_element(logs.begin(), mid));
}

}  // namespace

Joules EnergyModel::predict(const Sample& s) const {
  if (bags <= 1) return predict_single(s);
  // The median, not the mean: a resample with few rows where a term matters leaves its exponent
  // free, and the fits that run away there must not carry the bag with them (docs/energylens.md).
  return Joules(std::exp(median_of(member_log_predictions(s))));
}

bool EnergyModel::members_disagree(const Sample& a, const Sample& b) const {
  const std::vector<double> la = member_log_predictions(a), lb = member_log_predictions(b);
  const bool bag_says_a = median_of(la) < median_of(lb);
  for (std::size_t i = 0; i < la.size(); ++i)
    if ((la[i] < lb[i]) != bag_says_a) return true;
  return false;
}

Interval EnergyModel::interval(const Sample& s) const {
  double scale_variance = 0.0;
  scale_of(s, &scale_variance);
  const double point = predict(s).value();
  // The bag's multiplier for a training group is calibrated on its out-of-bag residuals; the
  // single fit's, and an unseen group's, is normal.
  const double z =
      bags > 1 ? calibration.of(scales.contains(scale_group_key(s, scale_by))) : interval_z();
  const double half =
      z * std::sqrt(scale_fit.row_variance + scale_variance + replicate_log_variance(s));
  return {Joules(point * std::exp(-half)), Joules(point * std::exp(half))};
}

double EnergyModel::replicate_log_variance(const Sample& s) const {
  if (replicates.size() < 2) return 0.0;
  double sum = 0.0, squares = 0.0;
  for (const EnergyModel& r : replicates) {
    const double x = std::log(r.predict_single(s).value());
    sum += x;
    squares += x * x;
  }
  const double n = static_cast<double>(replicates.size());
  return std::max(0.0, (squares - sum * sum / n) / (n - 1.0));
}

}  // namespace kareus::energylens
