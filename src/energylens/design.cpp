// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/design.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kareus/core/error.hpp"
#include "kareus/energylens/descriptors.hpp"
#include "scaled_loss.hpp"

namespace kareus::energylens {
namespace {

// Parameters the fit can only scale (the linear coefficients, the offsets e, tau_r): the design
// differentiates in their logarithm, so that a column does not depend on the point's units.
bool by_logarithm(std::size_t k) {
  return parameter_info()[k].linear || k == e_p || k == e_d || k == tau_r;
}

}  // namespace

Design parse_design(std::string_view text) {
  if (text == "random") return Design::kRandom;
  if (text == "d-optimal") return Design::kDOptimal;
  throw Error::invalid("", field_ref("design"), text, "allowed: random, d-optimal");
}

std::string_view design_name(Design design) {
  return design == Design::kDOptimal ? "d-optimal" : "random";
}

std::vector<DesignPick> greedy_d_optimal(const Eigen::MatrixXd& jacobian, std::size_t budget,
                                         double ridge, const PickCallback& on_pick) {
  return greedy_d_optimal(jacobian, budget,
                          Eigen::VectorXd::Constant(jacobian.cols(), ridge).eval(), on_pick);
}

std::vector<DesignPick> greedy_d_optimal(const Eigen::MatrixXd& jacobian, std::size_t budget,
                                         const Eigen::VectorXd& precision,
                                         const PickCallback& on_pick) {
  const auto n = static_cast<std::size_t>(jacobian.rows());
  if (budget > n)
    throw Error::invalid("", "budget", std::to_string(budget),
                         fmt::format("must be at most the {} candidates", n));
  Eigen::MatrixXd inverse = precision.cwiseInverse().asDiagonal();
  std::vector<bool> taken(n, false);
  std::vector<DesignPick> picks;
  while (picks.size() < budget) {
    // Every row's j^T M^-1 j at once.
    const Eigen::MatrixXd projected = jacobian * inverse;
    std::size_t best = n;
    double best_q = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < n; ++j) {
      if (taken[j]) continue;
      const auto r = static_cast<Eigen::Index>(j);
      const double q = projected.row(r).dot(jacobian.row(r));
      if (q > best_q) {
        best_q = q;
        best = j;
      }
    }
    taken[best] = true;
    picks.push_back({best, std::log1p(best_q)});
    const Eigen::VectorXd v = projected.row(static_cast<Eigen::Index>(best)).transpose();
    inverse -= v * v.transpose() / (1.0 + best_q);
    // Rounding would otherwise let the two triangles drift apart over many downdates.
    inverse = 0.5 * (inverse + inverse.transpose()).eval();
    if (on_pick) on_pick(picks.size());
  }
  return picks;
}

Params design_point(const std::vector<Features>& x, const std::vector<std::size_t>& free) {
  Params p{};
  for (const ShapePrior& s : shape_priors())
    p[s.param] = s.log_scale ? std::exp(s.centre) : s.centre;
  p[tau_r] = kRunStartTauStart;
  Params unit_point = p;
  for (std::size_t k = 0; k < kParams; ++k)
    if (parameter_info()[k].linear) unit_point[k] = 0.0;
  for (std::size_t k : free) {
    if (!parameter_info()[k].linear) continue;
    Params unit = unit_point;
    unit[k] = 1.0;
    double log_sum = 0.0;
    std::size_t count = 0;
    for (const Features& row : x) {
      const double u = closed_form(unit, row);
      if (u > 0.0 && std::isfinite(u)) {
        log_sum += std::log(u);
        ++count;
      }
    }
    // A term no candidate has keeps 1: its column is 0 anyway.
    p[k] = count ? std::exp(-log_sum / static_cast<double>(count)) : 1.0;
  }
  return p;
}

Eigen::MatrixXd design_jacobian(const std::vector<Sample>& candidates, const FitOptions& fit) {
  // Only what a configuration is: the measured energy, time and power are dropped before anything
  // is computed, so that no measurement can reach the design.
  std::vector<Sample> rows = candidates;
  for (Sample& s : rows) {
    s.energy.reset();
    s.time.reset();
    s.power.reset();
  }
  DescriptorCache cache;
  std::vector<Features> x;
  bool runs = false;
  for (const Sample& s : rows) {
    x.push_back(features_of(s, fit.descriptors ? cache.idle_power_share(s, "candidates") : 1.0));
    runs = runs || has_run_start(x.back());
  }
  const std::vector<std::size_t> free = free_parameters(runs);
  const Params p = design_point(x, free);
  const detail::ScaleGroups groups(rows, fit.scale_by);
  const auto shape = static_cast<Eigen::Index>(free.size());
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows.size()),
                                            shape + static_cast<Eigen::Index>(groups.names.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    Gradient g;
    const double f = closed_form(p, x[i], g);
    for (std::size_t c = 0; c < free.size(); ++c) {
      const std::size_t k = free[c];
      J(r, static_cast<Eigen::Index>(c)) = g[k] * (by_logarithm(k) ? p[k] : 1.0) / f;
    }
    J(r, shape + static_cast<Eigen::Index>(groups.of_row[i])) = 1.0;
  }
  return J;
}

std::vector<DesignPick> design_measurements(const std::vector<Sample>& candidates,
                                            std::size_t budget, const FitOptions& fit,
                                            const PickCallback& on_pick, double group_precision) {
  if (budget == 0 || budget > candidates.size())
    throw Error::invalid("", field_ref("budget"), std::to_string(budget),
                         fmt::format("must be between 1 and the {} candidates", candidates.size()));
  const Eigen::MatrixXd J = design_jacobian(candidates, fit);
  Eigen::VectorXd precision = Eigen::VectorXd::Constant(J.cols(), kDesignRidge);
  const auto groups =
      static_cast<Eigen::Index>(detail::ScaleGroups(candidates, fit.scale_by).names.size());
  precision.tail(groups).setConstant(group_precision);
  return greedy_d_optimal(J, budget, precision, on_pick);
}

}  // namespace kareus::energylens
