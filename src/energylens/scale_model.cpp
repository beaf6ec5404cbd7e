// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/scale_model.hpp"

#include <algorithm>
#include <cmath>

namespace kareus::energylens {

namespace {

// 1 in the column of `workload` among `workloads`, 0 elsewhere (everywhere for one not among them).
std::vector<double> indicators(const std::vector<std::string>& workloads,
                               const std::string& workload) {
  std::vector<double> out(workloads.size(), 0.0);
  const auto it = std::find(workloads.begin(), workloads.end(), workload);
  if (it != workloads.end()) out[static_cast<std::size_t>(it - workloads.begin())] = 1.0;
  return out;
}

}  // namespace

double ScaleFit::predict(const std::vector<double>& x, const std::string& family,
                         const std::string& workload, double* log_variance_out) const {
  std::vector<double> terms = x;
  const std::vector<double> in = indicators(workloads, workload);
  terms.insert(terms.end(), in.begin(), in.end());
  std::vector<double> coefficients = slopes;
  coefficients.insert(coefficients.end(), workload_effects.begin(), workload_effects.end());
  Eigen::VectorXd z(static_cast<Eigen::Index>(terms.size() + 1));
  z(0) = 1.0;
  double y = intercept;
  for (std::size_t j = 0; j < terms.size(); ++j) {
    z(static_cast<Eigen::Index>(j + 1)) = terms[j];
    y += coefficients[j] * terms[j];
  }
  // A new group: its own effect plus the regression's uncertainty at its descriptors (leverage
  // times the per-group residual variance); a seen family replaces its share of the effect by
  // the family's estimate. A workload never seen gets no factor, so it may be off by as much as
  // the seen workloads differ.
  double own = group_variance;
  if (const auto it = families.find(family); !family.empty() && it != families.end()) {
    y += it->second.log_effect;
    own = group_variance - family_variance + it->second.variance;
  }
  if (std::find(workloads.begin(), workloads.end(), workload) == workloads.end())
    own += workload_variance;
  if (log_variance_out)
    *log_variance_out = own + z.dot(inverse * z) * (group_variance + row_variance);
  return y;
}

namespace {

// The family share of the group effect: tau_f^2 from the mean product of residuals of two
// groups of one family (independent effects would average zero), then each family's best
// linear unbiased predictor from its groups' residuals.
void fit_families(const std::vector<GroupEvidence>& groups, const Eigen::VectorXd& r,
                  ScaleFit& fit) {
  std::map<std::string, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < groups.size(); ++i)
    if (!groups[i].family.empty()) members[groups[i].family].push_back(i);
  double products = 0.0, pairs = 0.0;
  for (const auto& [family, m] : members)
    for (std::size_t a = 0; a < m.size(); ++a)
      for (std::size_t b = a + 1; b < m.size(); ++b) {
        products += r(static_cast<Eigen::Index>(m[a])) * r(static_cast<Eigen::Index>(m[b]));
        pairs += 1.0;
      }
  // With no family seen twice (one GPU in training, say) the split cannot be measured; the
  // descriptors carry what differs between GPUs, so the effect is taken to be the model's.
  fit.family_variance =
      pairs > 0.0 ? std::clamp(products / pairs, 0.0, fit.group_variance) : fit.group_variance;
  const double tau_f = fit.family_variance;
  if (tau_f <= 0.0) return;
  const double rest = fit.group_variance - tau_f;
  for (const auto& [family, m] : members) {
    double weighted = 0.0, precision = 0.0;
    for (std::size_t i : m) {
      const double v = std::max(rest + fit.row_variance / groups[i].rows, 1e-12);
      weighted += r(static_cast<Eigen::Index>(i)) / v;
      precision += 1.0 / v;
    }
    fit.families[family] = {tau_f * weighted / (1.0 + tau_f * precision),
                            tau_f / (1.0 + tau_f * precision)};
  }
}

// The training groups' workloads, sorted, without the empty name.
std::vector<std::string> workload_names(const std::vector<GroupEvidence>& groups) {
  std::vector<std::string> out;
  for (const GroupEvidence& e : groups)
    if (!e.workload.empty()) out.push_back(e.workload);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The regression's design over the groups: column 0 the intercept, then the descriptor
// logarithms, then one indicator per workload (every workload has one, so none is the
// reference: the ridge spreads the level between the intercept and the factors); `unit` scales
// each column to unit standard deviation (1 for the intercept, 0 for a column constant over the
// groups and for those the groups are too few to judge by), the units in which the ridge acts.
struct ScaleDesign {
  Eigen::MatrixXd X;
  Eigen::VectorXd unit;
  std::vector<std::string> workloads;  // the indicators' workloads, in column order
};

ScaleDesign scale_design(const std::vector<GroupEvidence>& groups) {
  const std::vector<std::string> workloads = workload_names(groups);
  const auto g = static_cast<Eigen::Index>(groups.size());
  const auto descriptors = static_cast<Eigen::Index>(groups.empty() ? 0 : groups.front().x.size());
  const Eigen::Index p = 1 + descriptors + static_cast<Eigen::Index>(workloads.size());
  ScaleDesign d{Eigen::MatrixXd(g, p), Eigen::VectorXd::Ones(p), workloads};
  Eigen::MatrixXd& X = d.X;
  for (Eigen::Index i = 0; i < g; ++i) {
    const GroupEvidence& e = groups[static_cast<std::size_t>(i)];
    X(i, 0) = 1.0;
    for (Eigen::Index j = 1; j <= descriptors; ++j) X(i, j) = e.x[static_cast<std::size_t>(j - 1)];
    const std::vector<double> in = indicators(workloads, e.workload);
    for (std::size_t w = 0; w < in.size(); ++w)
      X(i, 1 + descriptors + static_cast<Eigen::Index>(w)) = in[w];
  }
  // The ridge acts on standardised descriptors, so that it shrinks every exponent alike however
  // widely its descriptor spreads; a descriptor constant over the groups gets exponent 0.
  for (Eigen::Index j = 1; j < p; ++j) {
    const double mean = X.col(j).mean();
    const double sd = std::sqrt((X.col(j).array() - mean).square().mean());
    d.unit(j) = sd > 1e-9 ? 1.0 / sd : 0.0;
  }
  // Exponents need more groups than coefficients: otherwise the regression passes through every
  // group, leaves nothing to judge it by, and extrapolates from two or three noisy multipliers.
  // The workload factors go first: the descriptors carry the physics (what a model and GPU are)
  // and keep it with fewer groups.
  const auto varying = [&d](Eigen::Index from, Eigen::Index count) {
    return (d.unit.segment(from, count).array() > 0.0).count();
  };
  const Eigen::Index factors = p - 1 - descriptors;
  if (g < varying(1, p - 1) + 2) d.unit.tail(factors).setZero();
  if (g < varying(1, descriptors) + 2) d.unit.tail(p - 1).setZero();
  return d;
}

}  // namespace

ScaleFit fit_scale(const std::vector<GroupEvidence>& groups, double row_variance, double ridge,
                   std::vector<GroupScale>& per_group, double group_variance) {
  const auto g = static_cast<Eigen::Index>(groups.size());
  const auto [X, unit, workloads] = scale_design(groups);
  const Eigen::Index p = X.cols();
  Eigen::VectorXd y(g);
  for (Eigen::Index i = 0; i < g; ++i) y(i) = groups[static_cast<std::size_t>(i)].log_scale;
  const Eigen::MatrixXd Xs = X * unit.asDiagonal();
  Eigen::MatrixXd A = Xs.transpose() * Xs;
  for (Eigen::Index j = 1; j < p; ++j) A(j, j) += ridge;
  ScaleFit fit;
  fit.inverse =
      unit.asDiagonal() * A.completeOrthogonalDecomposition().pseudoInverse() * unit.asDiagonal();
  const Eigen::VectorXd beta = fit.inverse * (X.transpose() * y);
  fit.intercept = beta(0);
  fit.workloads = workloads;
  const auto descriptors = p - 1 - static_cast<Eigen::Index>(fit.workloads.size());
  for (Eigen::Index j = 1; j < p; ++j)
    (j <= descriptors ? fit.slopes : fit.workload_effects).push_back(beta(j));
  // A workload never seen is one more draw of the factors the seen ones took around the level
  // the intercept keeps for none (about their mean, weighted by the ridge).
  for (double f : fit.workload_effects)
    fit.workload_variance += f * f / static_cast<double>(fit.workload_effects.size());
  fit.row_variance = row_variance;

  // Method of moments: E[r^2] = tau^2 + sigma^2 / n_g, with the residual degrees of freedom of a
  // ridge fit (trace of the hat matrix).
  const Eigen::VectorXd r = y - X * beta;
  const double dof = static_cast<double>(g) - (X * fit.inverse * X.transpose()).trace();
  double noise = 0.0;
  for (const GroupEvidence& e : groups) noise += row_variance / e.rows;
  if (group_variance >= 0.0) {
    fit.group_variance = group_variance;
  } else if (dof > 0.5) {
    fit.group_variance =
        std::max(0.0, (r.squaredNorm() - noise * dof / static_cast<double>(g)) / dof);
  }
  fit_families(groups, r, fit);
  for (Eigen::Index i = 0; i < g; ++i) {
    const double own = row_variance / groups[static_cast<std::size_t>(i)].rows;
    const double tau2 = fit.group_variance;
    const double weight = tau2 + own > 0.0 ? tau2 / (tau2 + own) : 1.0;
    per_group.push_back({y(i) - (1.0 - weight) * r(i), weight * own});
  }
  return fit;
}

}  // namespace kareus::energylens
