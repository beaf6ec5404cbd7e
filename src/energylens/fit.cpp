#include "kareus/energylens/fit.hpp"

#include <LBFGSB.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "kareus/core/error.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/core/statistics.hpp"
#include "kareus/energylens/bootstrap.hpp"
#include "scaled_loss.hpp"

namespace kareus::energylens {
namespace {

// Where a fitted prompt starts in the fixed start: one token per request, the form without it
// (input_tokens = 1), so that a fit with the prompt starts where one without it would.
constexpr double kPromptFixedStart = 1.0;
// The random starts draw the prompt log-uniformly up to this many tokens: from one token to long
// documents, inside the bounds.
constexpr double kPromptRandomStartMax = 4096.0;

// Whether a fit with these terms moves the linear parameter `k` (else it stays 0).
bool linear_fitted(std::size_t k, bool parallel_terms, bool kv_term, bool step_term) {
  const bool parallel =
      std::find(kParallelParams.begin(), kParallelParams.end(), k) != kParallelParams.end();
  return (parallel_terms || !parallel) && (kv_term || k != c_kv) && (step_term || k != c_step);
}

// Rows reduced to what the loss needs.
struct Problem {
  std::vector<Features> x;
  std::vector<double> energy;
  detail::ScaleGroups groups;
  std::vector<std::string> scale_by;
  Loss loss = Loss::kRelative;
  double huber_threshold = 0.0;  // log units, for Loss::kHuber

  // The linear parameters the fit may move (the parallelism terms' stay at 0 when left out).
  std::vector<std::size_t> linear;
  // Some row was measured over a whole run, so tau_r is fitted (else it stays 0, unused).
  bool runs = false;
  // k_sat is fitted (FitOptions::batch_saturation; else it stays 0).
  bool saturation = false;
  // The parameters the optimiser moves: all but tau_r without runs and k_sat without saturation.
  std::vector<std::size_t> moved;
  // FitOptions::workload_prompt: the mean prompt of workloads[w] (tokens) is prompts[w], moved by
  // the optimiser too (as its logarithm) and read as input_tokens by the rows prompt_of_row
  // points to it; empty when not fitted.
  std::vector<std::string> workloads;
  std::vector<std::size_t> prompt_of_row;
  std::vector<double> prompts;
  detail::Pooling pooling;    // weight 0 (the default): every group's multiplier free
  double prior_weight = 0.0;  // the shape prior's (0: none)

  Problem(const std::vector<Sample>& rows, Loss l, const std::vector<std::string>& by,
          bool descriptors = false, bool parallel_terms = true, bool kv_term = true,
          bool step_term = true, bool run_start_term = true, bool batch_saturation = false,
          bool workload_prompt = false)
      : groups(rows, by), scale_by(by), loss(l), saturation(batch_saturation) {
    for (std::size_t k = 0; k < kParams; ++k)
      if (parameter_info()[k].linear && linear_fitted(k, parallel_terms, kv_term, step_term))
        linear.push_back(k);
    DescriptorCache cache;
    for (const Sample& s : rows) {
      if (!s.energy) throw Error(fmt::format("line {}: energy_j is required for fitting", s.line));
      x.push_back(
          features_of(s, descriptors ? cache.ratios(s, "training data") : ParallelRatios{}));
      energy.push_back(s.energy->value());
      runs = runs || (run_start_term && has_run_start(x.back()));
    }
    for (std::size_t k = 0; k < kParams; ++k)
      if ((runs || k != tau_r) && (saturation || k != k_sat)) moved.push_back(k);
    if (workload_prompt) {
      for (const Sample& s : rows) {
        const auto at = std::find(workloads.begin(), workloads.end(), s.workload);
        prompt_of_row.push_back(static_cast<std::size_t>(at - workloads.begin()));
        if (at == workloads.end()) workloads.push_back(s.workload);
      }
      set_prompts(std::vector<double>(workloads.size(), kPromptFixedStart));
    }
  }

  void set_prompts(std::vector<double> values) {
    prompts = std::move(values);
    for (std::size_t i = 0; i < x.size(); ++i) x[i].input_tokens = prompts[prompt_of_row[i]];
  }

  // `objective` false: the rows' loss alone, each group with its own multiplier, whatever the
  // pooling and the shape prior. `log_prompt_grad` (with `grad`) receives the gradient in the
  // logarithms of the fitted prompts.
  double evaluate(const Params& p, Gradient* grad, std::vector<double>* scales_out,
                  bool objective = true, std::vector<double>* log_prompt_grad = nullptr) const {
    const std::size_t n = x.size();
    const std::size_t w = grad && log_prompt_grad ? prompts.size() : 0;
    const std::size_t k = kParams + w;
    std::vector<double> f(n), df(grad ? n * k : 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (grad) {
        Gradient g;
        f[i] = closed_form(p, x[i], g);
        const auto row = df.begin() + static_cast<long>(i * k);
        std::copy(g.begin(), g.end(), row);
        if (w > 0)
          row[static_cast<long>(kParams + prompt_of_row[i])] =
              input_slope(p, x[i]) * x[i].input_tokens;
      } else {
        f[i] = closed_form(p, x[i]);
      }
    }
    std::vector<double> g;
    const double v =
        detail::scaled_loss(loss, f, energy, groups, grad ? &df : nullptr, k, grad ? &g : nullptr,
                            scales_out, huber_threshold, objective ? &pooling : nullptr);
    if (grad) {
      if (g.size() != k) g.assign(k, 0.0);
      std::copy(g.begin(), g.begin() + kParams, grad->begin());
      if (w > 0) log_prompt_grad->assign(g.begin() + kParams, g.end());
    }
    return objective && prior_weight > 0.0 ? v + shape_prior_penalty(p, prior_weight, grad) : v;
  }

  // With the non-linear parameters fixed the closed form is linear in a_p, a_d and the
  // overhead and parallelism coefficients: solve for them by non-negative least squares on
  // relative residuals (active-set: drop negatives).
  void init_linear(Params& p) const {
    const std::size_t m = linear.size();
    Params unit = p;
    for (std::size_t k : kParallelParams) p[k] = 0.0;
    std::vector<bool> active(m, true);
    for (std::size_t pass = 0; pass <= m; ++pass) {
      Eigen::MatrixXd A(x.size(), m);
      for (std::size_t i = 0; i < x.size(); ++i) {
        for (std::size_t j = 0; j < m; ++j) {
          Params q = unit;
          for (std::size_t k : linear) q[k] = 0.0;
          for (std::size_t k : kParallelParams) q[k] = 0.0;
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
};

// LBFGSpp objective over scaled variables z = p / scale of the moved parameters, so the linear
// parameters (J, possibly large) and the exponents (order 1) are equally well conditioned, then
// the logarithms of the fitted prompts (tokens from 1 to thousands, which a log makes order 1 too).
struct Objective {
  Problem& problem;  // its prompts follow z
  Params scale;
  Params fixed;  // the values of the parameters not moved
  Params params(const Eigen::VectorXd& z) const {
    Params p = fixed;
    for (std::size_t j = 0; j < problem.moved.size(); ++j)
      p[problem.moved[j]] = z(static_cast<Eigen::Index>(j)) * scale[problem.moved[j]];
    return p;
  }
  std::vector<double> prompts(const Eigen::VectorXd& z) const {
    std::vector<double> out;
    for (std::size_t w = 0; w < problem.prompts.size(); ++w)
      out.push_back(std::exp(z(static_cast<Eigen::Index>(problem.moved.size() + w))));
    return out;
  }
  double operator()(const Eigen::VectorXd& z, Eigen::VectorXd& grad) const {
    Gradient g;
    std::vector<double> prompt_grad;
    if (!problem.prompts.empty()) problem.set_prompts(prompts(z));
    const double v = problem.evaluate(params(z), &g, nullptr, true, &prompt_grad);
    for (std::size_t j = 0; j < problem.moved.size(); ++j)
      grad(static_cast<Eigen::Index>(j)) = g[problem.moved[j]] * scale[problem.moved[j]];
    for (std::size_t w = 0; w < prompt_grad.size(); ++w)
      grad(static_cast<Eigen::Index>(problem.moved.size() + w)) = prompt_grad[w];
    return std::isfinite(v) ? v : std::numeric_limits<double>::max();
  }
};

struct Start {
  Params params;
  std::vector<double> prompts;  // the fitted prompts (empty when not fitted)
  double loss;
  bool converged;
};

// Leaves the problem's prompts at the returned start's.
Start run_lbfgsb(Problem& problem, Params p, int max_iterations) {
  const auto& info = parameter_info();
  Params scale;
  for (std::size_t k = 0; k < kParams; ++k)
    scale[k] = info[k].linear ? std::max(std::fabs(p[k]), 1e-6) : 1.0;
  const auto m = static_cast<Eigen::Index>(problem.moved.size() + problem.prompts.size());
  Eigen::VectorXd z(m), lb(m), ub(m);
  for (std::size_t j = 0; j < problem.moved.size(); ++j) {
    const std::size_t k = problem.moved[j];
    const auto i = static_cast<Eigen::Index>(j);
    const bool fixed_zero =
        info[k].linear &&
        std::find(problem.linear.begin(), problem.linear.end(), k) == problem.linear.end();
    lb(i) = info[k].lower / scale[k];
    ub(i) = fixed_zero ? lb(i) : info[k].upper / scale[k];
    z(i) = std::clamp(p[k] / scale[k], lb(i), ub(i));
  }
  for (std::size_t w = 0; w < problem.prompts.size(); ++w) {
    const auto i = static_cast<Eigen::Index>(problem.moved.size() + w);
    lb(i) = std::log(kMinPromptTokens);
    ub(i) = std::log(kMaxPromptTokens);
    z(i) = std::clamp(std::log(problem.prompts[w]), lb(i), ub(i));
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
  const auto at = [&](const Eigen::VectorXd& point) {
    p = objective.params(point);
    if (!problem.prompts.empty()) problem.set_prompts(objective.prompts(point));
    return problem.evaluate(p, nullptr, nullptr);
  };
  double loss = at(best);
  // Where a row's inputs make the gradient overflow (a batch of 1e300 raised to its exponent),
  // the iterates can leave every finite value behind; the start is then the better point.
  if (!std::isfinite(loss)) {
    const double start_loss = at(start);
    if (std::isfinite(start_loss)) return {p, problem.prompts, start_loss, false};
    loss = at(best);
  }
  return {p, problem.prompts, loss, converged};
}

// Ridge on the standardised scale exponents: one group's worth of evidence that an exponent is
// 0. Against dozens of groups it barely moves a well-determined exponent; with two or three it
// keeps an exponent drawn through two noisy multipliers from extrapolating wildly, and it
// splits an exponent between collinear descriptors (parameters = active parameters in every
// dense model) [E].
constexpr double kScaleRidge = 1.0;

// The scale term from the groups' multipliers. Its level is folded into the linear parameters,
// so that they carry the energy of the descriptors' reference point (or, without descriptors,
// of the geometric-mean group, which unseen groups then get).
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
  // The fitted prompts off their bounds move too.
  std::vector<std::size_t> free_prompts;
  for (std::size_t w = 0; w < problem.prompts.size(); ++w)
    if (problem.prompts[w] > kMinPromptTokens * (1.0 + 1e-9) &&
        problem.prompts[w] < kMaxPromptTokens * (1.0 - 1e-9))
      free_prompts.push_back(w);
  const auto n = static_cast<Eigen::Index>(problem.x.size());
  const auto groups = static_cast<Eigen::Index>(problem.groups.names.size());
  const auto shape = static_cast<Eigen::Index>(free.size() + free_prompts.size());
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, shape + groups);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Features& x = problem.x[static_cast<std::size_t>(i)];
    Gradient g;
    const double f = closed_form(p, x, g);
    for (std::size_t j = 0; j < free.size(); ++j)
      J(i, static_cast<Eigen::Index>(j)) = g[free[j]] / f;
    for (std::size_t j = 0; j < free_prompts.size(); ++j)
      if (problem.prompt_of_row[static_cast<std::size_t>(i)] == free_prompts[j])
        J(i, static_cast<Eigen::Index>(free.size() + j)) = input_slope(p, x) * x.input_tokens / f;
    J(i, shape + static_cast<Eigen::Index>(problem.groups.of_row[static_cast<std::size_t>(i)])) =
        1.0;
  }
  for (Eigen::Index c = 0; c < J.cols(); ++c)
    if (J.col(c).norm() > 0.0) J.col(c).normalize();
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(J);
  qr.setThreshold(1e-8);
  return static_cast<std::size_t>(qr.rank());
}

// Scale groups finer than the model (model and GPU, say) share a family effect per model.
std::string family_of(const Sample& s, const std::vector<std::string>& scale_by) {
  const bool by_model = std::find(scale_by.begin(), scale_by.end(), "model") != scale_by.end();
  return by_model && scale_by.size() > 1 ? s.model : std::string();
}

// Each group's row count and descriptors (looked up before any fitting, so that a row the
// catalogues do not know fails at once).
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

// The scale term at `p`: the groups' own multipliers (free, whatever the problem's pooling)
// regressed on their descriptors, with the row noise from the residuals around them, or with
// the row noise and group variance of `variances` when given.
// Row noise at `p`: the variance of the log residuals around each group's own multiplier
// (`scales`), over the degrees of freedom the fit leaves. Counting only the multipliers would
// leave the shape parameters' fit to these same rows in the residuals and make it too small.
double row_noise(const Params& p, const Problem& problem, const std::vector<double>& scales) {
  double squares = 0.0;
  for (std::size_t i = 0; i < problem.x.size(); ++i) {
    const double fitted = scales[problem.groups.of_row[i]] * closed_form(p, problem.x[i]);
    squares += std::pow(std::log(problem.energy[i] / fitted), 2);
  }
  // With fewer rows than fitted directions (a handful of rows) fall back to the multipliers'
  // count, the old, optimistic estimate, rather than to no noise at all.
  const double n = static_cast<double>(problem.x.size());
  double dof = n - static_cast<double>(fitted_directions(p, problem));
  if (dof < 1.0) dof = n - static_cast<double>(scales.size());
  return dof >= 1.0 ? squares / dof : 0.0;
}

ScaleFit scale_term_at(const Params& p, const Problem& problem,
                       std::vector<GroupEvidence>& evidence, std::vector<GroupScale>& per_group,
                       const ScaleFit* variances = nullptr) {
  std::vector<double> scales;
  problem.evaluate(p, nullptr, &scales, false);
  for (std::size_t g = 0; g < scales.size(); ++g) evidence[g].log_scale = std::log(scales[g]);
  if (variances)
    return fit_scale(evidence, variances->row_variance, kScaleRidge, per_group,
                     variances->group_variance);
  return fit_scale(evidence, row_noise(p, problem, scales), kScaleRidge, per_group);
}

void fit_scale_term(EnergyModel& model, const Problem& problem, std::vector<GroupEvidence> evidence,
                    const ScaleFit* variances) {
  std::vector<GroupScale> per_group;
  model.scale_fit = scale_term_at(model.params, problem, evidence, per_group, variances);
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

// A start's remaining parameters: tau_r where it is fitted, k_sat = `saturation` where it is,
// the linear ones by least squares.
Params start_from(const Problem& problem, Params p, double saturation = kSaturationStart) {
  if (problem.runs) p[tau_r] = kRunStartTauStart;
  if (problem.saturation) p[k_sat] = saturation;
  problem.init_linear(p);
  return p;
}

Params fixed_start(const Problem& problem) {
  Params p{};
  p[b_p] = p[b_d] = 0.5;
  p[e_p] = p[e_d] = 1.0;
  return start_from(problem, p, 0.0);
}

// kHuberK robust standard deviations (1.4826 x the median absolute deviation, which the tail the
// loss is meant to down-weight does not inflate) of the rows' log residuals around their groups'
// multipliers at `p`.
double residual_threshold(const Problem& problem, const Params& p) {
  std::vector<double> scales;
  if (!std::isfinite(problem.evaluate(p, nullptr, &scales))) return kHuberMinThreshold;
  std::vector<double> residual;
  for (std::size_t i = 0; i < problem.x.size(); ++i)
    residual.push_back(std::log(problem.energy[i] /
                                (scales[problem.groups.of_row[i]] * closed_form(p, problem.x[i]))));
  const double centre = median(residual);
  for (double& r : residual) r = std::fabs(r - centre);
  return std::max(kHuberMinThreshold, kHuberK * 1.4826 * median(residual));
}

// Rounds of refitting the Huber loss from the fixed start and re-measuring its threshold.
constexpr int kHuberRounds = 3;

// The Huber threshold from the scale of the residuals. A squared-loss fit bends towards the
// outliers, which widens the bulk's residuals, so the scale is re-measured on Huber fits (from
// the fixed start, each from the last) until it settles to 5 % or kHuberRounds have passed.
double huber_threshold(const Problem& problem, int max_iterations) {
  Problem squared = problem;
  squared.loss = Loss::kLog;
  Params p = run_lbfgsb(squared, fixed_start(squared), max_iterations).params;
  Problem huber = problem;
  // The Huber rounds go on from the squared fit's prompts as well as its shape: restarted from
  // their fixed start, they would measure the first threshold at a point no fit reached.
  if (!squared.prompts.empty()) huber.set_prompts(squared.prompts);
  huber.huber_threshold = residual_threshold(squared, p);
  for (int round = 0; round < kHuberRounds; ++round) {
    p = run_lbfgsb(huber, p, max_iterations).params;
    const double next = residual_threshold(huber, p);
    const bool settled = std::fabs(next / huber.huber_threshold - 1.0) < 0.05;
    huber.huber_threshold = next;
    if (settled) break;
  }
  return huber.huber_threshold;
}

// sigma^2 / tau^2 never exceeds this: with no group effect left (tau^2 = 0) every multiplier
// would be pinned to the regression.
constexpr double kMaxPoolingWeight = 1e6;

double pooling_weight(const ScaleFit& s) {
  if (!(s.row_variance > 0.0)) return 0.0;
  return s.group_variance * kMaxPoolingWeight > s.row_variance ? s.row_variance / s.group_variance
                                                               : kMaxPoolingWeight;
}

// Empirical Bayes in one step: sigma^2 and tau^2 from the scale term of the unpooled fit `p`
// (method of moments, scale_model.hpp), then the shape refitted from `p` with the multipliers
// pooled by their ratio. Returns that scale term: the pooled model keeps its variances. Not
// re-estimated at the pooled fit, where tau^2 is biased low (the shape has bent to pull the
// groups towards the regression, which shrinks their spread) and sigma^2 high: iterated, the
// weight grew round after round until every group was pinned to the regression
// (docs/benchmarks/energylens.md, tenth step). The random starts are not rerun: pooling moves
// the optimum, it does not add basins.
ScaleFit fit_pooled(Problem& problem, std::vector<GroupEvidence> evidence, Params& p,
                    int max_iterations) {
  std::vector<GroupScale> per_group;
  const ScaleFit unpooled = scale_term_at(p, problem, evidence, per_group);
  problem.pooling = {pooling_weight(unpooled), standardised_design(evidence), kScaleRidge};
  if (problem.pooling.weight > 0.0) p = run_lbfgsb(problem, p, max_iterations).params;
  return unpooled;
}

// Every shape parameter at its prior's centre, the others as any start.
Params prior_start(const Problem& problem) {
  Params p{};
  for (const ShapePrior& s : shape_priors())
    p[s.param] = s.log_scale ? std::exp(s.centre) : s.centre;
  return start_from(problem, p);
}

// MAP in one step, as the pooling's empirical Bayes: the row noise sigma^2 of the unpenalised fit
// `p`, then the loss (a mean over n rows of about the squared log error, so n / (2 sigma^2) times
// it is the rows' negative log likelihood) plus sigma^2 / n times the prior's sum of squared
// standardised deviations (twice its negative log density) minimised from `p` and from the prior's
// centre; the lower objective wins. A runaway exponent sits in its own basin, which a descent from
// `p` alone need not leave.
void fit_with_prior(Problem& problem, Params& p, int max_iterations) {
  std::vector<double> scales;
  problem.evaluate(p, nullptr, &scales, false);
  // Huber's loss is squared only within its threshold, kHuberK robust standard deviations: the
  // squared residuals of the rows beyond it (the outliers it is there for) would inflate sigma^2.
  const double sigma2 = problem.loss == Loss::kHuber
                            ? std::pow(problem.huber_threshold / kHuberK, 2)
                            : row_noise(p, problem, scales);
  problem.prior_weight = sigma2 / static_cast<double>(problem.x.size());
  if (!(problem.prior_weight > 0.0)) return;
  Start best = run_lbfgsb(problem, p, max_iterations);
  const Start centred = run_lbfgsb(problem, prior_start(problem), max_iterations);
  if (centred.loss < best.loss) best = centred;
  p = best.params;
  if (!best.prompts.empty()) problem.set_prompts(best.prompts);
}

// Every start left the loss infinite: some row's closed form, or its ratio to the row's energy,
// overflows for every parameter vector tried (inputs beyond what the CSV reader accepts). Named by
// the first such row at the fixed start.
Error not_finite(const Problem& problem, const std::vector<Sample>& rows) {
  const Params p = fixed_start(problem);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double ratio = closed_form(p, problem.x[i]) / problem.energy[i];
    if (!std::isfinite(ratio) || !(ratio > 0.0))
      return Error(fmt::format(
          "line {}: the closed form of this row (batch {:g}, output_tokens {:g}, energy_j {:g}) is "
          "not a finite multiple of its energy, so no fit is possible",
          rows[i].line, rows[i].batch, rows[i].output_tokens, problem.energy[i]));
  }
  return Error(fmt::format("no start gave a finite loss on the {} rows", rows.size()));
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

std::vector<double> random_prompts(Rng& rng, std::size_t count) {
  std::vector<double> out;
  for (std::size_t w = 0; w < count; ++w)
    out.push_back(std::exp(rng.uniform(0.0, std::log(kPromptRandomStartMax))));
  return out;
}

}  // namespace

std::vector<std::size_t> free_parameters(const FitOptions& options, bool runs) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < kParams; ++k) {
    const bool moved = (runs && options.run_start_term) || k != tau_r;
    if (!moved || (!options.batch_saturation && k == k_sat)) continue;
    if (parameter_info()[k].linear &&
        !linear_fitted(k, options.parallel_terms, options.kv_term, options.step_term))
      continue;
    out.push_back(k);
  }
  return out;
}

Loss parse_loss(std::string_view text) {
  if (text == "relative") return Loss::kRelative;
  if (text == "log") return Loss::kLog;
  if (text == "huber") return Loss::kHuber;
  throw Error::invalid("", "--loss", text, "allowed: relative, log, huber");
}

std::string_view loss_name(Loss loss) {
  switch (loss) {
    case Loss::kRelative:
      return "relative";
    case Loss::kLog:
      return "log";
    case Loss::kHuber:
      return "huber";
  }
  return "relative";
}

const std::array<ShapePrior, 8>& shape_priors() {
  // Exponents: the physical value +- 0.5, so that the opposite physical extreme lies 2 sd away.
  // Offsets: e = 1 (the batch-1 scale) +- one decade; they have no physical value of their own.
  // Reasons and units: docs/energylens.md, "Shape prior".
  static const double decade = std::log(10.0);
  static const std::array<ShapePrior, 8> priors = {{
      {b_p, 0.0, 0.5, false},  // prefill is compute-bound: no amortisation over the batch
      {e_p, 0.0, decade, true},
      {g1_p, 0.0, 0.5, false},  // the same work split over TP GPUs: energy unchanged
      {g2_p, 0.0, 0.5, false},
      {b_d, 1.0, 0.5, false},  // decode streams the weights once per step for the whole batch
      {e_d, 0.0, decade, true},
      {g1_d, 0.0, 0.5, false},
      {g2_d, 0.0, 0.5, false},
  }};
  return priors;
}

double shape_prior_penalty(const Params& p, double weight, Gradient* grad) {
  double sum = 0.0;
  for (const ShapePrior& s : shape_priors()) {
    const double value = s.log_scale ? std::log(p[s.param]) : p[s.param];
    const double z = (value - s.centre) / s.sd;
    sum += z * z;
    if (grad) (*grad)[s.param] += weight * 2.0 * z / s.sd / (s.log_scale ? p[s.param] : 1.0);
  }
  return weight * sum;
}

bool parse_pooling(std::string_view text) {
  if (text == "on") return true;
  if (text == "off") return false;
  throw Error::invalid("", "--pooling", text, "allowed: on, off");
}

std::vector<std::string> parse_scale_by(std::string_view text) {
  std::vector<std::string> out;
  if (text == "none" || text.empty()) return out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item(text.substr(pos, comma - pos));
    if (item != "model" && item != "gpu" && item != "scenario")
      throw Error::invalid("", "--scale-by", text,
                           "a comma-separated list of model, gpu, scenario, or none");
    out.push_back(item);
    pos = comma + 1;
  }
  return out;
}

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
  Features x =
      features_of(s, descriptors ? descriptor_cache_->ratios(s, "data") : ParallelRatios{});
  if (!workload_prompts.empty() && !s.input_tokens) x.input_tokens = prompt_of(s.workload);
  return x;
}

double EnergyModel::prompt_of(const std::string& workload) const {
  if (const auto it = workload_prompts.find(workload); it != workload_prompts.end())
    return it->second;
  return unseen_prompt();
}

double EnergyModel::unseen_prompt() const {
  double logs = 0.0;
  for (const auto& [name, tokens] : workload_prompts) logs += std::log(tokens);
  return std::exp(logs / static_cast<double>(workload_prompts.size()));
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

Json EnergyModel::to_json() const {
  Json p = Json::object();
  for (std::size_t k = 0; k < kParams; ++k) p[std::string(parameter_info()[k].name)] = params[k];
  Json groups = Json::array();
  for (const auto& [key, value] : scales)
    groups.push_back(
        {{"group", key}, {"scale", value}, {"log_variance", scale_log_variances.at(key)}});
  Json exponents = Json::object();
  for (std::size_t j = 0; j < scale_exponents.size(); ++j)
    exponents[std::string(scale_term_name(j))] = scale_exponents[j];
  Json workloads = Json::object();
  for (std::size_t w = 0; w < scale_fit.workloads.size(); ++w)
    workloads[scale_fit.workloads[w]] = scale_fit.workload_effects[w];
  Json families = Json::object();
  for (const auto& [name, f] : scale_fit.families)
    families[name] = {{"log_effect", f.log_effect}, {"variance", f.variance}};
  Json inverse = Json::array();
  for (Eigen::Index i = 0; i < scale_fit.inverse.rows(); ++i) {
    Json row = Json::array();
    for (Eigen::Index j = 0; j < scale_fit.inverse.cols(); ++j)
      row.push_back(scale_fit.inverse(i, j));
    inverse.push_back(row);
  }
  Json replicate_json = Json::array();
  for (const EnergyModel& r : replicates) replicate_json.push_back(r.to_json());
  Json prompts = Json::object();
  for (const auto& [name, tokens] : workload_prompts) prompts[name] = tokens;
  return Json{{"params", p},
              {"workload_prompts", prompts},
              {"loss", loss_name(loss)},
              {"huber_threshold", huber_threshold},
              {"scale_by", scale_by},
              {"descriptors", descriptors},
              {"scale_exponents", exponents},
              {"scale_intercept", scale_fit.intercept},
              {"row_log_variance", scale_fit.row_variance},
              {"group_log_variance", scale_fit.group_variance},
              {"family_log_variance", scale_fit.family_variance},
              {"families", families},
              {"workload_log_factors", workloads},
              {"workload_log_variance", scale_fit.workload_variance},
              {"scale_inverse", inverse},
              {"scales", groups},
              {"train_loss", train_loss},
              {"train_rows", train_rows},
              {"drained", drained},
              {"training_ranges", ranges_to_json(ranges)},
              {"bootstrap", replicate_json},
              {"bags", bags},
              {"interval_calibration", calibration.to_json()},
              {"pooling_weight", pooling_weight},
              {"shape_prior_weight", shape_prior_weight}};
}

namespace {

// The flag parsers' messages name the flag ("--loss = cubic: allowed: ..."); read from a model
// file, the same refusal names the file and key instead.
template <class Parse>
auto parse_as_key(const JsonValue& value, std::string_view flag, std::string_view text,
                  Parse parse) {
  try {
    return parse(text);
  } catch (const Error& e) {
    const std::string prefix = fmt::format("{} = {}: ", flag, text);
    const std::string_view message = e.what();
    if (!message.starts_with(prefix)) throw;
    value.fail(message.substr(prefix.size()));
  }
}

}  // namespace

EnergyModel EnergyModel::from_json(const JsonValue& v) {
  EnergyModel m;
  const JsonValue p = v.at("params");
  for (std::size_t k = 0; k < kParams; ++k) {
    // Models saved before the parallelism, KV, step and run-start terms and the batch saturation
    // existed predict as if they were 0.
    const bool added_later =
        k == c_kv || k == c_step || k == tau_r || k == k_sat ||
        std::find(kParallelParams.begin(), kParallelParams.end(), k) != kParallelParams.end();
    const ParamInfo& info = parameter_info()[k];
    if (added_later && !p.contains(info.name)) {
      m.params[k] = 0.0;
      continue;
    }
    // A hand-edited parameter outside its fitting bounds can predict negative energy.
    const JsonValue value = p.at(info.name);
    m.params[k] = value.as_number();
    if (m.params[k] < info.lower || m.params[k] > info.upper)
      value.fail(fmt::format("{} must lie in [{:g}, {:g}]", info.name, info.lower, info.upper));
  }
  m.loss = parse_as_key(v.at("loss"), "--loss", v.string("loss"), parse_loss);
  m.huber_threshold = v.number_or("huber_threshold", 0.0);
  if (m.loss == Loss::kHuber && !(m.huber_threshold > 0.0))
    v.at("huber_threshold").fail("must be > 0 with the huber loss");
  const JsonValue sb = v.at("scale_by");
  for (std::size_t i = 0; i < sb.size(); ++i) m.scale_by.push_back(sb.at(i).as_string());
  std::string joined;
  for (const auto& s : m.scale_by) joined += (joined.empty() ? "" : ",") + s;
  parse_as_key(sb, "--scale-by", joined, parse_scale_by);
  m.descriptors = v.bool_or("descriptors", false);
  if (m.descriptors) {
    const JsonValue e = v.at("scale_exponents");
    for (std::size_t j = 0; j < kScaleTerms; ++j)
      m.scale_exponents.push_back(e.number(scale_term_name(j)));
  }
  m.scale_fit.slopes = m.scale_exponents;
  m.scale_fit.intercept = v.number("scale_intercept");
  m.scale_fit.row_variance = v.at("row_log_variance").as_non_negative_number();
  m.scale_fit.group_variance = v.at("group_log_variance").as_non_negative_number();
  m.scale_fit.family_variance = v.at("family_log_variance").as_non_negative_number();
  const JsonValue families = v.at("families");
  for (const std::string& name : families.keys())
    m.scale_fit.families[name] = {families.at(name).number("log_effect"),
                                  families.at(name).at("variance").as_non_negative_number()};
  // Models saved before the workload factors have none.
  if (const auto w = v.find("workload_log_factors"); w && !w->is_null())
    for (const std::string& name : w->keys()) {
      m.scale_fit.workloads.push_back(name);
      m.scale_fit.workload_effects.push_back(w->number(name));
    }
  // Models saved before the fitted prompts, and those fitted without them, have none.
  if (const auto w = v.find("workload_prompts"); w && !w->is_null())
    for (const std::string& name : w->keys()) {
      const JsonValue tokens = w->at(name);
      const double value = tokens.as_number();
      if (!(value >= kMinPromptTokens && value <= kMaxPromptTokens))
        tokens.fail(fmt::format("a prompt must lie in [{:g}, {:g}] tokens", kMinPromptTokens,
                                kMaxPromptTokens));
      m.workload_prompts[name] = value;
    }
  if (v.contains("workload_log_variance"))
    m.scale_fit.workload_variance = v.at("workload_log_variance").as_non_negative_number();
  const JsonValue inv = v.at("scale_inverse");
  const auto p_dim =
      static_cast<Eigen::Index>(m.scale_exponents.size() + m.scale_fit.workloads.size() + 1);
  if (inv.size() != static_cast<std::size_t>(p_dim))
    inv.fail(fmt::format("a {0} x {0} matrix (1 + scale exponents + workload factors)", p_dim));
  m.scale_fit.inverse.resize(p_dim, p_dim);
  for (Eigen::Index i = 0; i < p_dim; ++i) {
    const JsonValue row = inv.at(static_cast<std::size_t>(i));
    if (row.size() != static_cast<std::size_t>(p_dim)) row.fail(fmt::format("{} numbers", p_dim));
    for (Eigen::Index j = 0; j < p_dim; ++j)
      m.scale_fit.inverse(i, j) = row.at(static_cast<std::size_t>(j)).as_number();
  }
  const JsonValue groups = v.at("scales");
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string key = groups.at(i).string("group");
    m.scales[key] = groups.at(i).positive_number("scale");
    m.scale_log_variances[key] = groups.at(i).at("log_variance").as_non_negative_number();
  }
  m.train_loss = v.number_or("train_loss", 0.0);
  if (v.contains("pooling_weight"))
    m.pooling_weight = v.at("pooling_weight").as_non_negative_number();
  if (v.contains("shape_prior_weight"))
    m.shape_prior_weight = v.at("shape_prior_weight").as_non_negative_number();
  m.train_rows = static_cast<std::size_t>(v.integer_or("train_rows", 0));
  m.drained = v.bool_or("drained", false);  // models saved before the drain columns had none
  // Models saved before the ranges were kept have none: their candidates are not checked.
  if (const auto r = v.find("training_ranges"); r && !r->is_null()) m.ranges = ranges_from_json(*r);
  if (v.contains("bootstrap")) {
    const JsonValue reps = v.at("bootstrap");
    for (std::size_t i = 0; i < reps.size(); ++i) m.replicates.push_back(from_json(reps.at(i)));
  }
  if (v.contains("bags")) {
    const JsonValue bags = v.at("bags");
    m.bags = static_cast<int>(v.integer_or("bags", 1));
    if (m.bags < 1 || static_cast<std::size_t>(m.bags) > m.replicates.size() + 1)
      bags.fail(fmt::format("must lie in [1, {}] (1 + the bootstrap replicates)",
                            m.replicates.size() + 1));
  }
  // Models saved before the calibration, and uncalibrated ones (null), keep the normal multiplier.
  if (const auto c = v.find("interval_calibration"); c && !c->is_null())
    m.calibration = IntervalCalibration::from_json(*c);
  return m;
}

double fit_loss(const Params& p, const std::vector<Sample>& rows, Loss loss,
                const std::vector<std::string>& scale_by, Gradient* grad, double huber_threshold,
                double pooling_weight, bool descriptors) {
  Problem problem(rows, loss, scale_by, descriptors);
  problem.huber_threshold = huber_threshold;
  if (pooling_weight > 0.0)
    problem.pooling = {pooling_weight,
                       standardised_design(group_evidence(problem, rows, descriptors)),
                       kScaleRidge};
  return problem.evaluate(p, grad, nullptr);
}

EnergyModel fit_single_model(const std::vector<Sample>& rows, const FitOptions& options) {
  if (rows.size() < 2)
    throw Error(fmt::format("fitting needs at least 2 rows, got {}", rows.size()));
  if (options.restarts < 1)
    throw Error::invalid("", "restarts", std::to_string(options.restarts), "must be >= 1");
  if (options.bags < 1)
    throw Error::invalid("", "--bags", std::to_string(options.bags),
                         "must be >= 1 (1: the single fit)");
  if (options.workload_prompt &&
      std::any_of(rows.begin(), rows.end(), [](const Sample& s) { return s.input_tokens; }))
    throw Error::invalid("", "--workload-prompt", "on",
                         "the rows report input_tokens, which the fit then reads (or "
                         "--workload-prompt off)");
  const bool by_model_and_gpu =
      std::find(options.scale_by.begin(), options.scale_by.end(), "model") !=
          options.scale_by.end() &&
      std::find(options.scale_by.begin(), options.scale_by.end(), "gpu") != options.scale_by.end();
  if (options.descriptors && !by_model_and_gpu)
    throw Error::invalid(
        "", "--scale-by", fmt::format("{}", fmt::join(options.scale_by, ",")),
        "the descriptor scale needs groups by model and gpu (or --descriptors off)");
  Problem problem(rows, options.loss, options.scale_by, options.descriptors, options.parallel_terms,
                  options.kv_term, options.step_term, options.run_start_term,
                  options.batch_saturation, options.workload_prompt);
  if (options.loss == Loss::kHuber)
    problem.huber_threshold = huber_threshold(problem, options.max_iterations);
  std::vector<GroupEvidence> evidence = group_evidence(problem, rows, options.descriptors);
  Rng rng(options.seed);
  EnergyModel model;
  model.loss = options.loss;
  model.huber_threshold = problem.huber_threshold;
  model.scale_by = options.scale_by;
  model.descriptors = options.descriptors;
  model.train_rows = rows.size();
  model.drained =
      std::any_of(rows.begin(), rows.end(), [](const Sample& s) { return s.requests.has_value(); });
  model.ranges = training_ranges(rows);
  double best = std::numeric_limits<double>::infinity();
  std::vector<double> best_prompts;
  for (int r = 0; r < options.restarts; ++r) {
    const Params drawn = r == 0 ? Params{} : random_start(rng);
    if (!problem.prompts.empty())
      problem.set_prompts(r == 0 ? std::vector<double>(problem.prompts.size(), kPromptFixedStart)
                                 : random_prompts(rng, problem.prompts.size()));
    const Params p = r == 0 ? fixed_start(problem) : start_from(problem, drawn);
    const Start s = run_lbfgsb(problem, p, options.max_iterations);
    model.restarts_converged += s.converged ? 1 : 0;
    if (s.loss < best) {
      best = s.loss;
      model.params = s.params;
      best_prompts = s.prompts;
    }
  }
  if (!std::isfinite(best)) throw not_finite(problem, rows);
  if (!best_prompts.empty()) problem.set_prompts(best_prompts);
  if (options.shape_prior) {
    fit_with_prior(problem, model.params, options.max_iterations);
    model.shape_prior_weight = problem.prior_weight;
  }
  std::optional<ScaleFit> unpooled;
  if (options.pooling) {
    unpooled = fit_pooled(problem, evidence, model.params, options.max_iterations);
    model.pooling_weight = problem.pooling.weight;
  }
  for (std::size_t w = 0; w < problem.prompts.size(); ++w)
    model.workload_prompts[problem.workloads[w]] = problem.prompts[w];
  model.train_loss = problem.evaluate(model.params, nullptr, nullptr, false);
  fit_scale_term(model, problem, std::move(evidence), unpooled ? &*unpooled : nullptr);
  return model;
}

EnergyModel fit_energy_model(const std::vector<Sample>& rows, const FitOptions& options) {
  EnergyModel model = fit_single_model(rows, options);
  if (options.bags > 1) add_replicates(model, rows, options, options.bags - 1, options.seed);
  return model;
}

}  // namespace kareus::energylens
