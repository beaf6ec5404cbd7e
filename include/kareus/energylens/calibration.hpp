// SPDX-License-Identifier: Apache-2.0
// Out-of-bag calibration of a bagged model's intervals.
//
// A bag's replicates are fits to bootstrap resamples; each training row is left out of about a
// third of them. The geometric mean of those fits' predictions for the row is a prediction made
// without it, and its log residual, divided by that mean's standard deviation, is the row's
// conformity score: the deviation the model's log-normal interval uses for the row, with the
// group's variance as the distinct rows each of those fits drew know it (a resample that draws a
// row twice does not know its group better) and the replicates' spread over the few fits
// averaged in place of the whole bag. The interval of a new row is the
// model's own log-normal interval with interval_z() replaced by the conformal quantile of those
// scores (split-conformal on out-of-bag residuals, normalised as in Lei et al. 2018): it holds
// the measurement with probability kIntervalCoverage when the new row and the training rows are
// exchangeable and the out-of-bag predictions err like the bag (docs/energylens.md).
//
// Only replicates that drew some row of the row's scale group count, and only rows of groups
// seen in training get the calibrated multiplier: a replicate without the group predicts it
// from the scale term alone, as it would a group never measured, but the groups a resample
// misses are the training set's smallest, not a model or GPU never measured, and calibrated on
// them the intervals of new groups fall below their nominal coverage (docs/energylens.md).
#pragma once

#include <cstddef>
#include <vector>

#include "kareus/core/json.hpp"

namespace kareus::energylens {

struct Sample;
struct EnergyModel;

// The conformal multiplier of the interval's standard deviation for a new row of a scale group
// seen in training; 0: not calibrated, interval_z() applies (as it does to unseen groups).
struct IntervalCalibration {
  double multiplier = 0.0;
  std::size_t scores = 0;  // training rows that gave a score

  bool calibrated() const { return multiplier > 0.0; }
  // The multiplier for a row (`seen_group`): this one, or interval_z().
  double of(bool seen_group) const;
  Json to_json() const;  // null when not calibrated
  static IntervalCalibration from_json(const JsonValue& v);
};

// Fewest scores a calibration needs: the conformal quantile at kIntervalCoverage is the
// ceil(0.9 (n + 1))-th smallest score, which exists from n = 9.
inline constexpr std::size_t kMinCalibrationScores = 9;

// The ceil(coverage (n + 1))-th smallest of `scores` (n of them; at least
// kMinCalibrationScores): the split-conformal quantile.
double conformal_quantile(std::vector<double> scores, double coverage);

// Calibrates `model`'s bag (model.bags - 1 first replicates, fitted to resamples in which row i
// of `rows` was drawn in_bag[b][i] times). Leaves the model uncalibrated when it has no bag or
// too few rows fall out of bag.
void calibrate_out_of_bag(EnergyModel& model, const std::vector<Sample>& rows,
                          const std::vector<std::vector<int>>& in_bag);

}  // namespace kareus::energylens
