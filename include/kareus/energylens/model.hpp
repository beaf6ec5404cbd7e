// SPDX-License-Identifier: Apache-2.0
// A fitted EnergyLens model and what it predicts: the closed form's parameters (closed_form.hpp),
// each training scale group's multiplier and the scale term that explains them (scale_model.hpp),
// the bag of fits whose median is the prediction, and the interval around it. fit.hpp fits one;
// `energylens fit --out` saves it as JSON and predict/select load it.
#pragma once

#include <cmath>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/energylens/calibration.hpp"
#include "kareus/energylens/closed_form.hpp"
#include "kareus/energylens/dataset.hpp"
#include "kareus/energylens/descriptors.hpp"
#include "kareus/energylens/ranges.hpp"
#include "kareus/energylens/scale_model.hpp"

namespace kareus::energylens {

// Two-sided coverage of the intervals predict() reports.
inline constexpr double kIntervalCoverage = 0.90;

// The two-sided standard normal quantile for kIntervalCoverage.
double interval_z();

struct Interval {
  Joules low{0.0};
  Joules high{0.0};
};

// The scale group of a row: its values of the `scale_by` columns, and its workload.
std::string scale_group_key(const Sample& s, const std::vector<std::string>& scale_by);
// The family of a row's group: its model, where the groups are finer than the model (model and
// GPU, say), so that groups of one model on other GPUs share an effect; else none ("").
std::string family_of(const Sample& s, const std::vector<std::string>& scale_by);

struct EnergyModel {
  Params params{};
  std::vector<std::string> scale_by;
  bool descriptors = false;
  // Exponents of the scale term, one per ScaleTerm (empty without descriptors); the scale
  // term's level is folded into a_p, a_d, d1, d2.
  std::vector<double> scale_exponents;
  ScaleFit scale_fit;                    // variances and leverage of the scale term
  std::map<std::string, double> scales;  // training group -> multiplier
  std::map<std::string, double> scale_log_variances;
  double train_loss = 0.0;
  std::size_t train_rows = 0;
  // The training rows gave the run's drain (max_output_tokens and requests): a row without them
  // is then predicted in steady state, which none of the training rows was measured in.
  bool drained = false;
  // Each input's span over the training rows; empty for a model file saved before they were kept,
  // whose candidates are then not checked for extrapolation.
  std::vector<TrainedRange> ranges;
  int restarts_converged = 0;
  // The shape prior's weight (row noise / rows) the fit minimised with.
  double shape_prior_weight = 0.0;
  // Fits to bootstrap resamples of the training rows (bootstrap.hpp); empty unless asked for.
  std::vector<EnergyModel> replicates;
  // The point prediction is the median of this fit's and the first bags - 1 replicates'.
  int bags = 1;
  // The bag's interval multipliers from its out-of-bag residuals (calibration.hpp).
  IntervalCalibration calibration;

  // A training group's multiplier, else the scale term's (1 without descriptors); the variance
  // of its logarithm goes to `log_variance` when given.
  double scale_of(const Sample& s, double* log_variance = nullptr) const;
  // The median of the bag's members' predictions (the single fit's when bags is 1).
  Joules predict(const Sample& s) const;
  // The log predictions of the bag's members: this fit's, then the first bags - 1 replicates'.
  std::vector<double> member_log_predictions(const Sample& s) const;
  // Some member of the bag predicts `b` at most as much energy as `a` although the bag predicts
  // more: the order the bag gives them is not one its fits agree on.
  bool members_disagree(const Sample& a, const Sample& b) const;
  // The inputs of `s` outside the training rows' ranges (none when the model has no ranges).
  std::vector<OutOfRange> outside_training_range(const Sample& s) const {
    return outside_ranges(ranges, s);
  }
  // This fit's own prediction, whatever the bag.
  Joules predict_single(const Sample& s) const;
  // Where the measurement should fall with probability kIntervalCoverage: the row noise, the
  // scale's uncertainty and, with replicates, the parameters' (the variance of the replicates'
  // log predictions), log-normal around the (bagged) prediction. A bag's multiplier of that
  // deviation is its out-of-bag calibration's, the single fit's interval_z().
  Interval interval(const Sample& s) const;
  // Sample variance of the log prediction for `s` over the replicates (0 with fewer than two).
  double replicate_log_variance(const Sample& s) const;
  // Standard deviation of log energy between two rows of one scenario (same scale): how much two
  // predictions must differ before their order is more than noise.
  double within_scenario_log_sd() const { return std::sqrt(2.0 * scale_fit.row_variance); }
  // The closed form's inputs, with the GPU's static power share when the model was fitted with
  // descriptors.
  Features features(const Sample& s) const;
  Json to_json() const;
  static EnergyModel from_json(const JsonValue& v);

 private:
  std::shared_ptr<DescriptorCache> descriptor_cache_ = std::make_shared<DescriptorCache>();
};

}  // namespace kareus::energylens
