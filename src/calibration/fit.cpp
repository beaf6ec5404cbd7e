// SPDX-License-Identifier: Apache-2.0
#include "kareus/calibration/fit.hpp"

#include <ceres/ceres.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <glog/logging.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#include "kareus/core/error.hpp"

namespace kareus::calibration {
namespace {

// Below this share of its range, a constant moves no prediction measurably: a tenth of its range
// changes none by 0.05 %.
constexpr double kMinSensitivity = 5e-3;
// A constant whose sensitivities lie within this distance (the sine of the angle) of what the
// constants already kept explain is confounded with them: numerically the same direction. Nearly
// confounded constants are kept here and judged by their uncertainty after the fit.
constexpr double kMinIndependence = 0.01;
// Closer than this share of its range to a bound, a fitted constant was stopped by the bound.
constexpr double kAtBound = 1e-3;

// Fitted coordinates: u = 1 + (value - lower) / (upper - lower) in [1, 2], so that Ceres's
// relative finite-difference step is a share of the range wherever the value lies.
struct Coordinates {
  std::vector<FreeConstant> constants;

  double value(std::size_t i, double u) const {
    const Bounds& b = *constants[i].bounds;
    return b.lower + (u - 1) * (b.upper - b.lower);
  }
  double coordinate(std::size_t i, double value) const {
    const Bounds& b = *constants[i].bounds;
    return 1 + std::clamp((value - b.lower) / (b.upper - b.lower), 0.0, 1.0);
  }
  double range(std::size_t i) const {
    return constants[i].bounds->upper - constants[i].bounds->lower;
  }
};

class Evaluator {
 public:
  Evaluator(const GpuFile& base, const Measurements& m, const Coordinates& coords,
            std::vector<std::size_t> groups)
      : base_(base), m_(m), coords_(coords), groups_(std::move(groups)) {}

  Residuals operator()(const std::vector<double>& u) const { return m_.residuals(gpu(u), groups_); }

  GpuSpec gpu(const std::vector<double>& u) const {
    std::map<std::string, double> values;
    for (std::size_t i = 0; i < u.size(); ++i)
      values[coords_.constants[i].key] = coords_.value(i, u[i]);
    return base_.with_values(values).spec();
  }

 private:
  const GpuFile& base_;
  const Measurements& m_;
  const Coordinates& coords_;
  std::vector<std::size_t> groups_;
};

// Central differences, one-sided at a bound; columns per coordinate.
Eigen::MatrixXd jacobian(const Evaluator& f, const std::vector<double>& u, double step) {
  const std::size_t n = f(u).log_ratio.size();
  Eigen::MatrixXd j(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(u.size()));
  for (std::size_t i = 0; i < u.size(); ++i) {
    std::vector<double> lo = u, hi = u;
    lo[i] = std::max(1.0, u[i] - step);
    hi[i] = std::min(2.0, u[i] + step);
    const auto rl = f(lo).log_ratio, rh = f(hi).log_ratio;
    for (std::size_t k = 0; k < n; ++k)
      j(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(i)) =
          (rh[k] - rl[k]) / (hi[i] - lo[i]);
  }
  return j;
}

struct Cost {
  const Evaluator* f;
  std::size_t parameters;
  bool operator()(double const* const* p, double* residuals) const {
    // Ceres's finite differences step across the bounds it keeps the parameters in: a constant
    // at its bound is read at the bound.
    std::vector<double> u(p[0], p[0] + parameters);
    for (double& x : u) x = std::clamp(x, 1.0, 2.0);
    try {
      const auto r = (*f)(u).log_ratio;
      for (std::size_t k = 0; k < r.size(); ++k) {
        if (!std::isfinite(r[k])) return false;
        residuals[k] = r[k];
      }
      return true;
    } catch (const Error&) {
      return false;  // a step the GPU file refuses; the solver steps back
    }
  }
};

// Least squares over `fitted` (indices into the coordinates), the others at `start`.
struct Solved {
  std::vector<double> u;
  std::string report;
};

// The constants `fitted` as coordinates of their own, every other one held at `start` in the file.
struct Subproblem {
  Coordinates coords;
  GpuFile base;
};

Subproblem subproblem(const GpuFile& base, const Coordinates& coords,
                      const std::vector<std::size_t>& fitted, const std::vector<double>& start) {
  Subproblem out;
  for (std::size_t i : fitted) out.coords.constants.push_back(coords.constants[i]);
  std::map<std::string, double> held;
  for (std::size_t i = 0; i < coords.constants.size(); ++i)
    if (std::find(fitted.begin(), fitted.end(), i) == fitted.end())
      held[coords.constants[i].key] = coords.value(i, start[i]);
  out.base = base.with_values(held);
  return out;
}

Solved solve(const GpuFile& base, const Measurements& m, const Coordinates& coords,
             const std::vector<std::size_t>& groups, const std::vector<std::size_t>& fitted,
             const std::vector<double>& start, const FitOptions& options) {
  const Subproblem sub = subproblem(base, coords, fitted, start);
  const Evaluator f(sub.base, m, sub.coords, groups);
  std::vector<double> x;
  for (std::size_t i : fitted) x.push_back(start[i]);
  Solved out{start, "nothing to fit"};
  if (x.empty()) return out;

  ceres::NumericDiffOptions diff;
  diff.relative_step_size = options.step;
  auto* cost = new ceres::DynamicNumericDiffCostFunction<Cost, ceres::CENTRAL>(
      new Cost{&f, x.size()}, ceres::TAKE_OWNERSHIP, diff);
  cost->AddParameterBlock(static_cast<int>(x.size()));
  cost->SetNumResiduals(static_cast<int>(f(x).log_ratio.size()));
  ceres::Problem problem;
  problem.AddResidualBlock(cost, nullptr, x.data());
  for (int i = 0; i < static_cast<int>(x.size()); ++i) {
    problem.SetParameterLowerBound(x.data(), i, 1.0);
    problem.SetParameterUpperBound(x.data(), i, 2.0);
  }
  ceres::Solver::Options so;
  so.linear_solver_type = ceres::DENSE_QR;
  so.max_num_iterations = options.max_iterations;
  so.logging_type = ceres::SILENT;
  so.minimizer_progress_to_stdout = false;
  so.num_threads = 1;
  ceres::Solver::Summary summary;
  ceres::Solve(so, &problem, &summary);
  for (std::size_t k = 0; k < fitted.size(); ++k) out.u[fitted[k]] = x[k];
  out.report = summary.BriefReport();
  return out;
}

// Each fitted constant's value and standard deviation at `u` into `fits`; the position in
// `fitted` of the least certain constant when one is uncertain or stopped by a bound.
std::optional<std::size_t> judge(const GpuFile& base, const Measurements& m,
                                 const Coordinates& coords, const std::vector<std::size_t>& groups,
                                 const std::vector<std::size_t>& fitted,
                                 const std::vector<double>& u_all, const FitOptions& options,
                                 std::vector<ConstantFit>& fits) {
  std::vector<double> u;
  for (std::size_t i : fitted) u.push_back(u_all[i]);
  const Subproblem sub = subproblem(base, coords, fitted, u_all);
  const Evaluator f(sub.base, m, sub.coords, groups);
  const Eigen::MatrixXd j = jacobian(f, u, options.step);
  const auto r = f(u).log_ratio;
  const double dof = std::max<double>(1, static_cast<double>(r.size() - fitted.size()));
  double ss = 0;
  for (double x : r) ss += x * x;
  const Eigen::MatrixXd info = j.transpose() * j;
  const Eigen::MatrixXd cov = (ss / dof) * info.completeOrthogonalDecomposition().pseudoInverse();
  std::optional<std::size_t> worst;
  double worst_ratio = 1;
  for (std::size_t k = 0; k < fitted.size(); ++k) {
    const std::size_t i = fitted[k];
    ConstantFit& fit = fits[i];
    fit.value = coords.value(i, u[k]);
    fit.sd =
        std::sqrt(std::max(0.0, cov(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(k)))) *
        coords.range(i);
    const double scale = std::max(std::fabs(fit.value), 0.05 * coords.range(i));
    double ratio = fit.sd / (options.max_relative_sd * scale);
    const bool at_bound = u[k] - 1 < kAtBound || 2 - u[k] < kAtBound;
    if (at_bound) ratio = std::max(ratio, 1e6);  // a bound stops it: drop it first
    fit.reason = at_bound ? fmt::format("the fit ends at its {} bound ({:g})",
                                        u[k] - 1 < kAtBound ? "lower" : "upper", fit.value)
                          : fmt::format("uncertain: +- {:.3g} after the fit", fit.sd);
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = k;
    }
  }
  return worst;
}

// The largest change of a fitted constant, as a share of its range.
double largest_move(const std::vector<std::size_t>& fitted, const std::vector<double>& from,
                    const std::vector<double>& to) {
  double moved = 0;
  for (std::size_t i : fitted) moved = std::max(moved, std::fabs(to[i] - from[i]));
  return moved;
}

// Fits and values predictions, searching again where the measurements' predictions come from a
// search (Measurements::search_on), and only where the last search of a group was elsewhere.
class Fitter {
 public:
  Fitter(const GpuFile& base, Measurements& m, const Coordinates& coords, const FitOptions& options)
      : base_(base), m_(m), coords_(coords), options_(options) {}

  // The residuals of `groups` at `u`, each from a search at `u`.
  Residuals exact(const std::vector<double>& u, const std::vector<std::size_t>& groups) {
    search(u, groups);
    return Evaluator(base_, m_, coords_, groups)(u);
  }

  // Least squares over `fitted` from `start`. Where a search makes the predictions, alternately
  // searching at the constants and fitting with its choices fixed, until a fit moves no constant
  // by more than FitOptions::settled of its range, or after FitOptions::max_rounds searches.
  Solved fit(const std::vector<std::size_t>& groups, const std::vector<std::size_t>& fitted,
             const std::vector<double>& start, const std::string& what) {
    Solved out{start, "nothing to fit"};
    if (fitted.empty()) return out;
    for (int round = 1;; ++round) {
      const std::vector<double> from = out.u;
      const bool searched = search(from, groups);
      out = solve(base_, m_, coords_, groups, fitted, from, options_);
      if (!searched) return out;
      const double moved = largest_move(fitted, from, out.u);
      const bool settled = moved <= options_.settled;
      report(what, round, fitted.size(), moved, settled);
      if (settled || round >= options_.max_rounds) return out;
    }
  }

  // Searches `groups` at `u` unless their last search was there; whether the measurements'
  // predictions come from a search at all.
  bool search(const std::vector<double>& u, const std::vector<std::size_t>& groups) {
    std::vector<std::size_t> stale;
    for (std::size_t g : groups) {
      const auto at = searched_at_.find(g);
      if (at == searched_at_.end() || at->second != u) stale.push_back(g);
    }
    if (stale.empty()) return searches_;
    searches_ = m_.search_on(Evaluator(base_, m_, coords_, stale).gpu(u), stale);
    for (std::size_t g : stale) searched_at_[g] = u;
    return searches_;
  }
  bool searches() const { return searches_; }

  void report(const std::string& what, int round, std::size_t constants, double moved,
              bool settled) const {
    if (!options_.on_progress) return;
    options_.on_progress(fmt::format(
        "{}: {} constant(s) fitted to the plans of search {} of at most {}: they moved {:.2g} % "
        "of their range at most{}",
        what, constants, round, options_.max_rounds, 100 * moved,
        settled                        ? "; settled"
        : round >= options_.max_rounds ? "; stopped unsettled"
                                       : ""));
  }

 private:
  const GpuFile& base_;
  Measurements& m_;
  const Coordinates& coords_;
  const FitOptions& options_;
  std::map<std::size_t, std::vector<double>> searched_at_;  // per group: where it last searched
  bool searches_ = false;
};

double rms(const std::vector<double>& r) {
  double s = 0;
  for (double x : r) s += x * x;
  return r.empty() ? 0 : std::sqrt(s / static_cast<double>(r.size()));
}

// Mean |exp(r) - 1| of times and energies, accumulated.
struct ErrorSum {
  double time = 0, energy = 0;
  std::size_t times = 0, energies = 0;
  void add(const Residuals& r) {
    for (std::size_t k = 0; k < r.log_ratio.size(); ++k) {
      const double e = std::fabs(std::expm1(r.log_ratio[k]));
      if (r.energy[k]) {
        energy += e;
        ++energies;
      } else {
        time += e;
        ++times;
      }
    }
  }
  HeldOutError mean() const {
    return {times ? time / static_cast<double>(times) : 0,
            energies ? energy / static_cast<double>(energies) : 0};
  }
};

std::vector<std::size_t> all_groups(const Measurements& m) {
  std::vector<std::size_t> g(m.groups());
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = i;
  return g;
}

// Columns that move the measurements and are not explained by the columns kept before them;
// the reasons of the others go into `fits`.
std::vector<std::size_t> identifiable(const Eigen::MatrixXd& j, const Coordinates& coords,
                                      std::vector<ConstantFit>& fits) {
  std::vector<std::size_t> sensitive;
  for (std::size_t i = 0; i < coords.constants.size(); ++i) {
    const double most = j.col(static_cast<Eigen::Index>(i)).cwiseAbs().maxCoeff();
    if (most >= kMinSensitivity) {
      sensitive.push_back(i);
      continue;
    }
    fits[i].reason = "the measurements do not depend on it";
  }
  if (sensitive.empty()) return {};
  Eigen::MatrixXd unit(j.rows(), static_cast<Eigen::Index>(sensitive.size()));
  for (std::size_t k = 0; k < sensitive.size(); ++k) {
    const auto c = j.col(static_cast<Eigen::Index>(sensitive[k]));
    unit.col(static_cast<Eigen::Index>(k)) = c / c.norm();
  }
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(unit);
  const Eigen::MatrixXd r = qr.matrixR().triangularView<Eigen::Upper>();
  const auto& order = qr.colsPermutation().indices();
  std::vector<std::size_t> kept;
  for (Eigen::Index k = 0; k < order.size(); ++k) {
    const auto column = static_cast<std::size_t>(order(k));
    if (k < r.rows() && std::fabs(r(k, k)) >= kMinIndependence) {
      kept.push_back(column);
      continue;
    }
    std::size_t closest = kept.empty() ? column : kept.front();
    double best = -1;
    for (std::size_t other : kept) {
      const double cosine = std::fabs(unit.col(static_cast<Eigen::Index>(column))
                                          .dot(unit.col(static_cast<Eigen::Index>(other))));
      if (cosine > best) {
        best = cosine;
        closest = other;
      }
    }
    fits[sensitive[column]].reason =
        fmt::format("moves the measurements as {} does; they cannot tell the two apart",
                    coords.constants[sensitive[closest]].key);
  }
  std::vector<std::size_t> out;
  for (std::size_t k : kept) out.push_back(sensitive[k]);
  std::sort(out.begin(), out.end());
  return out;
}

// Of `kept`, the constants that the measurements, linearised at `start`, determine: each one's
// standard deviation as the fit would state it (the Gauss-Newton covariance, scaled by the
// residual variance of the linearised fit) within FitOptions::max_relative_sd of its value. The
// least determined goes first, one at a time, as after the fit. Where the predictions are
// nearly linear in the constants this is the fit's own verdict without fitting; it spares a
// nonlinear fit for each constant the measurements cannot determine.
std::vector<std::size_t> determined(const Eigen::MatrixXd& j, const Residuals& at_start,
                                    const Coordinates& coords, const std::vector<double>& start,
                                    std::vector<std::size_t> kept, const FitOptions& options,
                                    std::vector<ConstantFit>& fits) {
  const Eigen::VectorXd r = Eigen::Map<const Eigen::VectorXd>(
      at_start.log_ratio.data(), static_cast<Eigen::Index>(at_start.log_ratio.size()));
  while (!kept.empty()) {
    Eigen::MatrixXd a(j.rows(), static_cast<Eigen::Index>(kept.size()));
    for (std::size_t k = 0; k < kept.size(); ++k)
      a.col(static_cast<Eigen::Index>(k)) = j.col(static_cast<Eigen::Index>(kept[k]));
    const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(a);
    const double ss = (r - a * cod.solve(r)).squaredNorm();
    const double dof = std::max<double>(1, static_cast<double>(r.size()) - kept.size());
    const Eigen::MatrixXd cov =
        (ss / dof) * (a.transpose() * a).completeOrthogonalDecomposition().pseudoInverse();
    std::optional<std::size_t> worst;
    double worst_ratio = 1, worst_sd = 0;
    for (std::size_t k = 0; k < kept.size(); ++k) {
      const std::size_t i = kept[k];
      const double sd = std::sqrt(std::max(
                            0.0, cov(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(k)))) *
                        coords.range(i);
      const double scale = std::max(std::fabs(coords.value(i, start[i])), 0.05 * coords.range(i));
      const double ratio = sd / (options.max_relative_sd * scale);
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        worst = k;
        worst_sd = sd;
      }
    }
    if (!worst) break;
    fits[kept[*worst]].reason = fmt::format(
        "the measurements determine it to +- {:.3g} at best (linearised at the catalogue)",
        worst_sd);
    kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(*worst));
  }
  return kept;
}

std::string hex_digest(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a: a short name, not a security property
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:08x}", static_cast<std::uint32_t>(h ^ (h >> 32)));
}

}  // namespace

Calibration calibrate(const GpuFile& base, Measurements& m, const FitOptions& options) {
  // Ceres reports through glog; what it has to say reaches the user as Calibration::solver.
  FLAGS_minloglevel = google::GLOG_FATAL;
  Calibration out;
  Coordinates coords;
  for (const FreeConstant& c : free_constants(base)) {
    ConstantFit fit{c.key, c.value, c.value, 0, false, "", c.bounds.value_or(Bounds{})};
    if (!c.bounds) {
      fit.reason = "no physical range is known for it here";
      out.constants.push_back(fit);
      continue;
    }
    coords.constants.push_back(c);
  }
  std::vector<ConstantFit> fits;
  for (const auto& c : coords.constants)
    fits.push_back({c.key, c.value, c.value, 0, false, "", *c.bounds});

  const std::vector<std::size_t> groups = all_groups(m);
  std::vector<double> start;
  for (std::size_t i = 0; i < coords.constants.size(); ++i)
    start.push_back(coords.coordinate(i, coords.constants[i].value));
  Fitter fitter(base, m, coords, options);
  const Evaluator everything(base, m, coords, groups);
  const Residuals before = fitter.exact(start, groups);
  out.residuals = before.log_ratio.size();
  out.rms_before = rms(before.log_ratio);
  ErrorSum err_before;
  err_before.add(before);
  out.fit_error_before = err_before.mean();
  // Cross-validation: whole groups held out, the identified constants refitted on the rest. The
  // catalogue's predictions of each fold's held-out groups are those of its own search.
  const std::size_t folds =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(0, options.folds)), groups.size());
  const auto held_out = [&](std::size_t fold) {
    std::vector<std::size_t> test;
    for (std::size_t g : groups)
      if (g % folds == fold) test.push_back(g);
    return test;
  };
  std::vector<Residuals> catalogue_held_out;
  if (folds >= 2)
    for (std::size_t fold = 0; fold < folds; ++fold)
      catalogue_held_out.push_back(Evaluator(base, m, coords, held_out(fold))(start));

  const Eigen::MatrixXd j_start = jacobian(everything, start, options.step);
  std::vector<std::size_t> fitted = determined(j_start, before, coords, start,
                                               identifiable(j_start, coords, fits), options, fits);
  // Fit; drop the least certain constant while one is uncertain or stopped by a bound, and fit
  // again from where the last fit ended, the dropped constant back at the catalogue's value.
  // Where a search makes the predictions, all of it on the plans of one search, then again on
  // those of a search at the fitted constants, until the constants settle.
  Solved solved{start, "nothing to fit"};
  for (int round = 1;; ++round) {
    const std::vector<double> from = solved.u;
    for (;;) {
      solved = solve(base, m, coords, groups, fitted, solved.u, options);
      if (fitted.empty()) break;
      const auto worst = judge(base, m, coords, groups, fitted, solved.u, options, fits);
      if (!worst) break;
      const std::size_t dropped = fitted[*worst];
      if (options.on_progress)
        options.on_progress(fmt::format(
            "fit on every group: {} of {} constant(s) left; {} is not "
            "identified: {}",
            fitted.size() - 1, fitted.size(), coords.constants[dropped].key, fits[dropped].reason));
      solved.u[dropped] = start[dropped];
      fits[dropped].value = fits[dropped].catalogue;
      fits[dropped].sd = 0;
      fitted.erase(fitted.begin() + static_cast<std::ptrdiff_t>(*worst));
    }
    if (!fitter.searches() || fitted.empty()) break;
    const double moved = largest_move(fitted, from, solved.u);
    const bool settled = moved <= options.settled;
    fitter.report("fit on every group", round, fitted.size(), moved, settled);
    if (settled || round >= options.max_rounds) break;
    fitter.search(solved.u, groups);
  }
  for (std::size_t i : fitted) {
    fits[i].identified = true;
    fits[i].reason = "identified";
  }
  out.solver = solved.report;
  const Residuals after = fitter.exact(solved.u, groups);
  out.rms_after = rms(after.log_ratio);
  ErrorSum err_after;
  err_after.add(after);
  out.fit_error_after = err_after.mean();

  if (folds >= 2) {
    ErrorSum cv_fit, cv_catalogue;
    out.cv.folds = static_cast<int>(folds);
    for (std::size_t fold = 0; fold < folds; ++fold) {
      const std::vector<std::size_t> test = held_out(fold);
      std::vector<std::size_t> train;
      for (std::size_t g : groups)
        if (g % folds != fold) train.push_back(g);
      const Solved s =
          fitter.fit(train, fitted, start, fmt::format("fold {} of {}", fold + 1, folds));
      ErrorSum fit_fold, catalogue_fold;
      for (ErrorSum* sum : {&cv_fit, &fit_fold}) sum->add(fitter.exact(s.u, test));
      for (ErrorSum* sum : {&cv_catalogue, &catalogue_fold}) sum->add(catalogue_held_out[fold]);
      HeldOutFold f{{}, fit_fold.mean(), catalogue_fold.mean()};
      for (std::size_t g : test) f.held_out.push_back(m.group_name(g));
      out.cv.per_fold.push_back(std::move(f));
    }
    out.cv.calibrated = cv_fit.mean();
    out.cv.catalogue = cv_catalogue.mean();
  }
  out.constants.insert(out.constants.end(), fits.begin(), fits.end());
  return out;
}

GpuFile Calibration::calibrated_file(const GpuFile& base, const Measurements& m) const {
  GpuFile out = base;
  Json constants = Json::array();
  std::string fitted_values;
  for (const ConstantFit& c : this->constants) {
    constants.push_back({{"constant", c.key},
                         {"catalogue", c.catalogue},
                         {"value", c.value},
                         {"sd", c.sd},
                         {"identified", c.identified},
                         {"reason", c.reason}});
    if (!c.identified) continue;
    fitted_values += fmt::format("{}={};", c.key, c.value);
    Json& field = out.document[c.key];
    field["source"] = fmt::format(
        "fitted by kareus calibrate to the measurements its \"calibration\" section lists: "
        "{:.6g} +- {:.2g}; the catalogue's {:.6g} was {}",
        c.value, c.sd, c.catalogue, base.source(c.key));
    field["value"] = c.value;
  }
  Json per_fold = Json::array();
  for (const HeldOutFold& f : cv.per_fold)
    per_fold.push_back({{"held_out", f.held_out},
                        {"time_error", f.calibrated.time},
                        {"energy_error", f.calibrated.energy},
                        {"catalogue_time_error", f.catalogue.time},
                        {"catalogue_energy_error", f.catalogue.energy}});
  const std::string base_name = base.model();
  out.document["name"] = base_name + "@" + hex_digest(fitted_values);
  out.document["display_name"] = base.document.value("display_name", base_name) + " (calibrated)";
  out.document["calibration"] = {
      {"base", base.name()},
      {"created_utc", fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", std::chrono::floor<std::chrono::seconds>(
                                                               std::chrono::system_clock::now()))},
      {"measurements", m.files()},
      {"what", m.describe()},
      {"count", m.observations()},
      {"fit",
       {{"rms_log_before", rms_before},
        {"rms_log_after", rms_after},
        {"time_error_before", fit_error_before.time},
        {"energy_error_before", fit_error_before.energy},
        {"time_error_after", fit_error_after.time},
        {"energy_error_after", fit_error_after.energy}}},
      {"cross_validated",
       {{"folds", cv.folds},
        {"per_fold", per_fold},
        {"time_error", cv.calibrated.time},
        {"energy_error", cv.calibrated.energy},
        {"catalogue_time_error", cv.catalogue.time},
        {"catalogue_energy_error", cv.catalogue.energy}}},
      {"constants", constants}};
  out.spec();  // the file must load as any GPU file does
  return out;
}

}  // namespace kareus::calibration
