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

  Residuals operator()(const std::vector<double>& u) const {
    std::map<std::string, double> values;
    for (std::size_t i = 0; i < u.size(); ++i)
      values[coords_.constants[i].key] = coords_.value(i, u[i]);
    return m_.residuals(base_.with_values(values).spec(), groups_);
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

std::string hex_digest(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a: a short name, not a security property
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:08x}", static_cast<std::uint32_t>(h ^ (h >> 32)));
}

}  // namespace

Calibration calibrate(const GpuFile& base, const Measurements& m, const FitOptions& options) {
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
  const Evaluator everything(base, m, coords, groups);
  const Residuals before = everything(start);
  out.residuals = before.log_ratio.size();
  out.rms_before = rms(before.log_ratio);
  ErrorSum err_before;
  err_before.add(before);
  out.fit_error_before = err_before.mean();

  std::vector<std::size_t> fitted =
      identifiable(jacobian(everything, start, options.step), coords, fits);
  Solved solved{start, "nothing to fit"};
  // Fit; drop the least certain constant while one is uncertain or stopped by a bound.
  for (;;) {
    solved = solve(base, m, coords, groups, fitted, start, options);
    if (fitted.empty()) break;
    std::vector<double> u;
    for (std::size_t i : fitted) u.push_back(solved.u[i]);
    const Subproblem sub = subproblem(base, coords, fitted, start);
    const Evaluator f(sub.base, m, sub.coords, groups);
    const Eigen::MatrixXd j = jacobian(f, u, options.step);
    const auto r = f(u).log_ratio;
    const double dof = std::max<double>(1, static_cast<double>(r.size() - fitted.size()));
    double ss = 0;
    for (double x : r) ss += x * x;
    const Eigen::MatrixXd info = j.transpose() * j;
    const Eigen::MatrixXd cov = (ss / dof) * info.completeOrthogonalDecomposition().pseudoInverse();
    std::size_t worst = fitted.size();
    double worst_ratio = 1;
    for (std::size_t k = 0; k < fitted.size(); ++k) {
      const std::size_t i = fitted[k];
      ConstantFit& fit = fits[i];
      fit.value = coords.value(i, u[k]);
      fit.sd = std::sqrt(
                   std::max(0.0, cov(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(k)))) *
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
    if (worst == fitted.size()) break;
    const std::size_t dropped = fitted[worst];
    fits[dropped].value = fits[dropped].catalogue;
    fits[dropped].sd = 0;
    fitted.erase(fitted.begin() + static_cast<std::ptrdiff_t>(worst));
  }
  for (std::size_t i : fitted) {
    fits[i].identified = true;
    fits[i].reason = "identified";
  }
  out.solver = solved.report;
  std::vector<double> final_u = start;
  for (std::size_t i : fitted) final_u[i] = solved.u[i];
  const Residuals after = everything(final_u);
  out.rms_after = rms(after.log_ratio);
  ErrorSum err_after;
  err_after.add(after);
  out.fit_error_after = err_after.mean();

  // Cross-validation: whole groups held out, the identified constants refitted on the rest.
  const std::size_t folds =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(0, options.folds)), groups.size());
  ErrorSum cv_fit, cv_catalogue;
  if (folds >= 2) {
    for (std::size_t fold = 0; fold < folds; ++fold) {
      std::vector<std::size_t> train, test;
      for (std::size_t g : groups) (g % folds == fold ? test : train).push_back(g);
      const Solved s = solve(base, m, coords, train, fitted, start, options);
      cv_fit.add(Evaluator(base, m, coords, test)(s.u));
      cv_catalogue.add(Evaluator(base, m, coords, test)(start));
    }
    out.cv = {static_cast<int>(folds), cv_fit.mean(), cv_catalogue.mean()};
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
        {"time_error", cv.calibrated.time},
        {"energy_error", cv.calibrated.energy},
        {"catalogue_time_error", cv.catalogue.time},
        {"catalogue_energy_error", cv.catalogue.energy}}},
      {"constants", constants}};
  out.spec();  // the file must load as any GPU file does
  return out;
}

}  // namespace kareus::calibration
