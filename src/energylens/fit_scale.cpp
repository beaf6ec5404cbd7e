// SPDX-License-Identifier: Apache-2.0
// The row noise and the scale term at a fitted shape (fit_problem.hpp).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "fit_problem.hpp"

namespace kareus::energylens::detail {
namespace {

// How many independent directions the fit moved in: the rank of the Jacobian of the log
// predictions with respect to the free shape parameters (those not held at a bound) and the group
// multipliers. The residuals keep the other n - rank degrees of freedom.
std::size_t fitted_directions(const Params& p, const Problem& problem) {
  const auto& info = parameter_info();
  std::vector<std::size_t> free;
  for (std::size_t k = 0; k < kParams; ++k) {
    const double tol = 1e-9 * std::max(1.0, std::fabs(p[k]));
    if (p[k] - info[k].lower > tol && info[k].upper - p[k] > tol) free.push_back(k);
  }
  const auto n = static_cast<Eigen::Index>(problem.x.size());
  const auto groups = static_cast<Eigen::Index>(problem.groups.names.size());
  const auto shape = static_cast<Eigen::Index>(free.size());
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, shape + groups);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Features& x = problem.x[static_cast<std::size_t>(i)];
    Gradient g;
    const double f = closed_form(p, x, g);
    for (std::size_t j = 0; j < free.size(); ++j)
      J(i, static_cast<Eigen::Index>(j)) = g[free[j]] / f;
    J(i, shape + static_cast<Eigen::Index>(problem.groups.of_row[static_cast<std::size_t>(i)])) =
        1.0;
  }
  for (Eigen::Index c = 0; c < J.cols(); ++c)
    if (J.col(c).norm() > 0.0) J.col(c).normalize();
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(J);
  qr.setThreshold(1e-8);
  return static_cast<std::size_t>(qr.rank());
}

}  // namespace

double row_noise(const Params& p, const Problem& problem, const std::vector<double>& scales) {
  double squares = 0.0;
  for (std::size_t i = 0; i < problem.x.size(); ++i) {
    const double fitted = scales[problem.groups.of_row[i]] * closed_form(p, problem.x[i]);
    squares += std::pow(std::log(problem.energy[i] / fitted), 2);
  }
  // Counting only the multipliers would leave the shape parameters' fit to these same rows in the
  // residuals and make the noise too small. With fewer rows than fitted directions (a handful of
  // rows) fall back to the multipliers' count, an optimistic estimate, rather than to no noise.
  const double n = static_cast<double>(problem.x.size());
  double dof = n - static_cast<double>(fitted_directions(p, problem));
  if (dof < 1.0) dof = n - static_cast<double>(scales.size());
  return dof >= 1.0 ? squares / dof : 0.0;
}

std::vector<GroupEvidence> group_evidence(const Problem& problem, const std::vector<Sample>& rows,
                                          bool descriptors) {
  std::vector<GroupEvidence> evidence(problem.groups.names.size());
  DescriptorCache cache;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    GroupEvidence& e = evidence[problem.groups.of_row[i]];
    e.rows += 1.0;
    e.family = family_of(rows[i], problem.scale_by);
    e.workload = rows[i].workload;
    if (descriptors && e.x.empty()) {
      const ScaleVector& v = cache.of(rows[i], "training data");
      e.x.assign(v.begin(), v.end());
    }
  }
  return evidence;
}

// The scale term's level is folded into the linear parameters, so that they carry the energy of
// the descriptors' reference point (or, without descriptors, of the geometric-mean group, which
// unseen groups then get).
void fit_scale_term(EnergyModel& model, const Problem& problem,
                    std::vector<GroupEvidence> evidence) {
  std::vector<double> scales;
  problem.evaluate(model.params, nullptr, &scales, false);
  for (std::size_t g = 0; g < scales.size(); ++g) evidence[g].log_scale = std::log(scales[g]);
  std::vector<GroupScale> per_group;
  model.scale_fit =
      fit_scale(evidence, row_noise(model.params, problem, scales), kScaleRidge, per_group);
  model.scale_exponents = model.scale_fit.slopes;
  const double level = std::exp(model.scale_fit.intercept);
  for (std::size_t k = 0; k < kParams; ++k)
    if (parameter_info()[k].linear) model.params[k] *= level;
  for (std::size_t g = 0; g < problem.groups.names.size(); ++g) {
    model.scales[problem.groups.names[g]] =
        std::exp(per_group[g].log_scale - model.scale_fit.intercept);
    model.scale_log_variances[problem.groups.names[g]] = per_group[g].log_variance;
  }
}

}  // namespace kareus::energylens::detail
