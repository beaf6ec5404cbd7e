// SPDX-License-Identifier: Apache-2.0
// The scale term as a random-effects regression. Each training group's log multiplier
// (from the closed-form fit) is regressed on the group's descriptor logarithms (ridge on the
// slopes, free intercept); what the descriptors leave unexplained is a group effect, shrunk
// toward zero by the share of it that row noise could explain (empirical Bayes, method of
// moments). Groups of one family (the same model on different GPUs) share part of that effect:
// a group never seen in training gets the regression plus its family's shrunk mean effect when
// the family was seen (with no family seen twice, all of the effect is taken to be the
// family's), the regression alone otherwise, with the remaining variance added to its
// uncertainty. A group's workload enters the regression as an indicator: one log factor per
// workload seen in training (ridge-shrunk like the slopes), none for a workload never seen.
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace kareus::energylens {

struct GroupEvidence {
  double log_scale = 0.0;  // log of the multiplier fitted on the group's rows
  double rows = 0.0;
  std::vector<double> x;  // descriptor logarithms (may be empty: intercept only)
  std::string family;     // groups sharing part of their effect; empty: none
  std::string workload;   // empty: none named
};

struct FamilyEffect {
  double log_effect = 0.0;
  double variance = 0.0;  // posterior variance of log_effect
};

struct ScaleFit {
  double intercept = 0.0;
  std::vector<double> slopes;
  double row_variance = 0.0;     // sigma^2: one row's log residual around its group's multiplier
  double group_variance = 0.0;   // tau^2: group effects the descriptors do not explain
  double family_variance = 0.0;  // the part of tau^2 shared within a family
  std::map<std::string, FamilyEffect> families;
  // The training groups' workloads, sorted, and each one's log factor. A workload not among them
  // gets none (the level of the regression's intercept) and the factors' variance instead.
  std::vector<std::string> workloads;
  std::vector<double> workload_effects;
  double workload_variance = 0.0;
  // (X'X + ridge)^-1 over [1, x, workload indicators] in the descriptors' own units: the
  // leverage of a new group.
  Eigen::MatrixXd inverse;

  // Log scale and its variance for a group not seen in training.
  double predict(const std::vector<double>& x, const std::string& family,
                 const std::string& workload, double* log_variance_out) const;
};

struct GroupScale {
  double log_scale = 0.0;     // regression + shrunk group effect
  double log_variance = 0.0;  // posterior variance of that log scale
};

// `ridge` penalises the slopes of the standardised descriptors, in groups' worth of evidence
// that an exponent is 0. group_variance >= 0 is taken as tau^2 instead of estimating it.
ScaleFit fit_scale(const std::vector<GroupEvidence>& groups, double row_variance, double ridge,
                   std::vector<GroupScale>& per_group, double group_variance = -1.0);

}  // namespace kareus::energylens
