// SPDX-License-Identifier: Apache-2.0
#include "fit_problem.hpp"

#include <LBFGSB.h>
#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "kareus/core/error.hpp"

namespace kareus::energylens::detail {

Problem::Problem(const std::vector<Sample>& rows, const std::vector<std::string>& by,
                 bool descriptors)
    : groups(rows, by), scale_by(by) {
  for (std::size_t k = 0; k < kParams; ++k)
    if (parameter_info()[k].linear) linear.push_back(k);
  DescriptorCache cache;
  for (const Sample& s : rows) {
    if (!s.energy) throw Error(fmt::format("line {}: energy_j is required for fitting", s.line));
    x.push_back(features_of(s, descriptors ? cache.idle_power_share(s, "training data") : 1.0));
    energy.push_back(s.energy->value());
    runs = runs || has_run_start(x.back());
  }
  moved = free_parameters(runs);
}

double Problem::evaluate(const Params& p, Gradient* grad, std::vector<double>* scales_out,
                         bool objective) const {
  const std::size_t n = x.size();
  std::vector<double> f(n), df(grad ? n * kParams : 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (grad) {
      Gradient g;
      f[i] = closed_form(p, x[i], g);
      std::copy(g.begin(), g.end(), df.begin() + static_cast<long>(i * kParams));
    } else {
      f[i] = closed_form(p, x[i]);
    }
  }
  std::vector<double> g;
  const double v = scaled_loss(f, energy, groups, grad ? &df : nullptr, kParams,
                               grad ? &g : nullptr, scales_out);
  if (grad) {
    if (g.size() != kParams) g.assign(kParams, 0.0);
    std::copy(g.begin(), g.end(), grad->begin());
  }
  return objective && prior_weight > 0.0 ? v + shape_prior_penalty(p, prior_weight, grad) : v;
}

void Problem::init_linear(Params& p) const {
  const std::size_t m = linear.size();
  Params unit = p;
  std::vector<bool> active(m, true);
  for (std::size_t pass = 0; pass <= m; ++pass) {
    Eigen::MatrixXd A(x.size(), m);
    for (std::size_t i = 0; i < x.size(); ++i) {
      for (std::size_t j = 0; j < m; ++j) {
        Params q = unit;
        for (std::size_t k : linear) q[k] = 0.0;
        q[linear[j]] = active[j] ? 1.0 : 0.0;
        A(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) =
            closed_form(q, x[i]) / energy[i];
      }
    }
    const Eigen::VectorXd ones = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(x.size()));
    const Eigen::VectorXd theta = A.colPivHouseholderQr().solve(ones);
    bool changed = false;
    for (std::size_t j = 0; j < m; ++j) {
      const double t = active[j] ? theta(static_cast<Eigen::Index>(j)) : 0.0;
      if (!(t >= 0.0) && active[j]) {
        active[j] = false;
        changed = true;
      }
      p[linear[j]] = std::isfinite(t) ? std::max(t, 0.0) : 0.0;
    }
    if (!changed) break;
  }
  // An all-zero start has a zero gradient in the exponents; keep the decode scale alive.
  if (p[a_d] <= 0.0 && p[a_p] <= 0.0) p[a_d] = 1.0;
}

namespace {

// LBFGSpp objective over scaled variables z = p / scale of the moved parameters, so the linear
// parameters (J, possibly large) and the exponents (order 1) are equally well conditioned.
struct Objective {
  const Problem& problem;
  Params scale;
  Params fixed;  // the values of the parameters not moved
  Params params(const Eigen::VectorXd& z) const {
    Params p = fixed;
    for (std::size_t j = 0; j < problem.moved.size(); ++j)
      p[problem.moved[j]] = z(static_cast<Eigen::Index>(j)) * scale[problem.moved[j]];
    return p;
  }
  double operator()(const Eigen::VectorXd& z, Eigen::VectorXd& grad) const {
    Gradient g;
    const double v = problem.evaluate(params(z), &g, nullptr);
    for (std::size_t j = 0; j < problem.moved.size(); ++j)
      grad(static_cast<Eigen::Index>(j)) = g[problem.moved[j]] * scale[problem.moved[j]];
    return std::isfinite(v) ? v : std::numeric_limits<double>::max();
  }
};

}  // namespace

Start run_lbfgsb(const Problem& problem, Params p, int max_iterations) {
  const auto& info = parameter_info();
  Params scale;
  for (std::size_t k = 0; k < kParams; ++k)
    scale[k] = info[k].linear ? std::max(std::fabs(p[k]), 1e-6) : 1.0;
  const auto m = static_cast<Eigen::Index>(problem.moved.size());
  Eigen::VectorXd z(m), lb(m), ub(m);
  for (std::size_t j = 0; j < problem.moved.size(); ++j) {
    const std::size_t k = problem.moved[j];
    const auto i = static_cast<Eigen::Index>(j);
    lb(i) = info[k].lower / scale[k];
    ub(i) = info[k].upper / scale[k];
    z(i) = std::clamp(p[k] / scale[k], lb(i), ub(i));
  }
  LBFGSpp::LBFGSBParam<double> param;
  param.max_iterations = max_iterations;
  param.epsilon = 1e-9;
  param.epsilon_rel = 1e-9;
  param.past = 3;
  param.delta = 1e-12;
  param.max_linesearch = 60;
  LBFGSpp::LBFGSBSolver<double> solver(param);
  Objective objective{problem, scale, p};
  double fx = 0.0;
  bool converged = true;
  const Eigen::VectorXd start = z;
  Eigen::VectorXd best = z;
  try {
    solver.minimize(objective, z, fx, lb, ub);
    best = z;
  } catch (const std::exception&) {
    // LBFGSpp throws when the line search cannot make progress (typically at a flat optimum or
    // on a bound); the last iterate it reached is still a valid, bounded point.
    converged = false;
    best = z.cwiseMax(lb).cwiseMin(ub);
  }
  p = objective.params(best);
  const double loss = problem.evaluate(p, nullptr, nullptr);
  // Where a row's inputs make the gradient overflow (a batch of 1e300 raised to its exponent),
  // the iterates can leave every finite value behind; the start is then the better point.
  if (!std::isfinite(loss)) {
    const Params from = objective.params(start);
    const double start_loss = problem.evaluate(from, nullptr, nullptr);
    if (std::isfinite(start_loss)) return {from, start_loss, false};
  }
  return {p, loss, converged};
}

Params start_from(const Problem& problem, Params p) {
  if (problem.runs) p[tau_r] = kRunStartTauStart;
  problem.init_linear(p);
  return p;
}

Params fixed_start(const Problem& problem) {
  Params p{};
  p[b_p] = p[b_d] = 0.5;
  p[e_p] = p[e_d] = 1.0;
  return start_from(problem, p);
}

Params prior_start(const Problem& problem) {
  Params p{};
  for (const ShapePrior& s : shape_priors())
    p[s.param] = s.log_scale ? std::exp(s.centre) : s.centre;
  return start_from(problem, p);
}

Params random_start(Rng& rng) {
  Params p{};
  p[b_p] = rng.uniform(-1.0, 1.2);
  p[b_d] = rng.uniform(0.1, 1.2);
  p[e_p] = std::exp(rng.uniform(std::log(0.1), std::log(30.0)));
  p[e_d] = std::exp(rng.uniform(std::log(0.1), std::log(30.0)));
  for (std::size_t k : {g1_p, g2_p, g1_d, g2_d}) p[k] = rng.uniform(-1.0, 1.0);
  return p;
}

}  // namespace kareus::energylens::detail
