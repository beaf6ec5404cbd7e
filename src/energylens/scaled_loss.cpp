#include "scaled_loss.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kareus::energylens::detail {
namespace {

// Huber's loss, doubled so that it equals the squared error within the threshold, and its
// derivative.
double huber(double u, double delta) {
  const double a = std::fabs(u);
  return a <= delta ? u * u : 2.0 * delta * a - delta * delta;
}

double huber_slope(double u, double delta) {
  return std::clamp(2.0 * u, -2.0 * delta, 2.0 * delta);
}

// One group's rows as a function of its log multiplier m: their loss, its first and second
// derivatives. `v` holds f / E per row for the relative loss, log E - log f for the others.
struct GroupCurve {
  Loss loss;
  std::span<const double> v;
  double delta;  // Huber threshold

  void at(double m, double& d0, double& d1, double& d2) const {
    d0 = d1 = d2 = 0.0;
    for (double x : v) {
      if (loss == Loss::kRelative) {
        const double q = std::exp(m) * x;
        d0 += (q - 1.0) * (q - 1.0);
        d1 += 2.0 * (q - 1.0) * q;
        d2 += 2.0 * q * (2.0 * q - 1.0);
      } else {
        const double u = m - x;
        d0 += loss == Loss::kLog ? u * u : huber(u, delta);
        d1 += loss == Loss::kLog ? 2.0 * u : huber_slope(u, delta);
        d2 += loss == Loss::kLog || std::fabs(u) <= delta ? 2.0 : 0.0;
      }
    }
  }
};

// The m minimising the group's loss + weight (m - t)^2. It lies between the group's own optimum
// `free` (where the loss's slope is 0) and t, and the slope of the sum is <= 0 at the lower end,
// >= 0 at the upper: Newton's method, falling back to bisection where it would leave the bracket.
double pooled_log_scale(const GroupCurve& c, double free, double t, double weight) {
  double lo = std::min(free, t), hi = std::max(free, t);
  double m = free;
  for (int i = 0; i < 200 && hi - lo > 1e-14 * std::max(1.0, std::fabs(m)); ++i) {
    double d0 = 0.0, d1 = 0.0, d2 = 0.0;
    c.at(m, d0, d1, d2);
    const double slope = d1 + 2.0 * weight * (m - t);
    (slope < 0.0 ? lo : hi) = m;
    const double curvature = d2 + 2.0 * weight;
    const double newton = m - slope / curvature;
    const double next = curvature > 0.0 && newton > lo && newton < hi ? newton : 0.5 * (lo + hi);
    if (std::fabs(next - m) <= 1e-15 * std::max(1.0, std::fabs(m))) break;
    m = next;
  }
  return m;
}

struct Pooled {
  std::vector<double> log_scale;
  double penalty = 0.0;  // weight x (effects^2 + ridge x slopes^2)
};

// The log multipliers and regression coefficients minimising the rows' loss plus the pooling
// penalty: for fixed coefficients each multiplier is a one-dimensional problem; the profile over
// the coefficients is smooth and (near the optimum) convex, so Newton's method with a
// backtracking line search finds them in a few steps (one for the log loss, where it is
// quadratic).
Pooled pool_scales(const std::vector<GroupCurve>& curves, const std::vector<double>& free,
                   const Pooling& pooling) {
  const Eigen::MatrixXd& X = pooling.design;
  const double w = pooling.weight;
  const auto g = X.rows(), q = X.cols();
  Eigen::VectorXd slope_mask = Eigen::VectorXd::Ones(q);
  slope_mask(0) = 0.0;
  // The ridge counts as `pooling.ridge` one-row groups: a one-row group's pull on the regression
  // is w / (1 + w) rows' worth (its row and its effect's prior in series).
  const Eigen::VectorXd ridge = 2.0 * w / (1.0 + w) * pooling.ridge * slope_mask;
  Pooled out{free, 0.0};
  Eigen::VectorXd curvature(g);
  // The profile at beta: its value, and each group's m and curvature on the way.
  auto profile = [&](const Eigen::VectorXd& beta) {
    const Eigen::VectorXd t = X * beta;
    double total = 0.5 * beta.dot(ridge.cwiseProduct(beta));
    for (Eigen::Index i = 0; i < g; ++i) {
      const auto gi = static_cast<std::size_t>(i);
      const double m = pooled_log_scale(curves[gi], free[gi], t(i), w);
      double d0 = 0.0, d1 = 0.0, d2 = 0.0;
      curves[gi].at(m, d0, d1, d2);
      const double h = std::max(d2, 0.0);
      curvature(i) = 2.0 * w * h / (h + 2.0 * w);
      out.log_scale[gi] = m;
      total += d0 + w * (m - t(i)) * (m - t(i));
    }
    return total;
  };
  const Eigen::Map<const Eigen::VectorXd> m_free(free.data(), g);
  Eigen::MatrixXd start = X.transpose() * X;
  start.diagonal() += ridge / (2.0 * w);  // the same ridge relative to unit group weights
  Eigen::VectorXd beta = start.completeOrthogonalDecomposition().solve(X.transpose() * m_free);
  double value = profile(beta);
  for (int iteration = 0; iteration < 50; ++iteration) {
    const Eigen::Map<const Eigen::VectorXd> m(out.log_scale.data(), g);
    const Eigen::VectorXd gradient =
        -2.0 * w * (X.transpose() * (m - X * beta)) + ridge.cwiseProduct(beta);
    Eigen::MatrixXd hessian = X.transpose() * curvature.asDiagonal() * X;
    hessian.diagonal() += ridge;
    const Eigen::VectorXd step = -hessian.completeOrthogonalDecomposition().solve(gradient);
    const double descent = gradient.dot(step);
    if (!(descent < 0.0) || step.lpNorm<Eigen::Infinity>() < 1e-13) break;
    double alpha = 1.0, next = value;
    Eigen::VectorXd trial = beta;
    for (int halving = 0; halving < 40; ++halving, alpha *= 0.5) {
      trial = beta + alpha * step;
      next = profile(trial);
      if (next <= value + 1e-4 * alpha * descent) break;
    }
    if (!(next < value)) {
      value = profile(beta);  // the groups' m at the best beta found
      break;
    }
    beta = trial;
    value = next;
  }
  const Eigen::Map<const Eigen::VectorXd> m(out.log_scale.data(), g);
  out.penalty = w * (m - X * beta).squaredNorm() + 0.5 * beta.dot(ridge.cwiseProduct(beta));
  return out;
}
}  // namespace

double huber_location(std::span<const double> d, double delta) {
  // sum_i psi(m - d_i) is non-decreasing in m, <= 0 at min(d) and >= 0 at max(d): bisect for the
  // rows within the threshold, then solve exactly for m with them (the others pull by delta).
  auto pull = [&](double m) {
    double sum = 0.0;
    for (double x : d) sum += huber_slope(m - x, delta);
    return sum;
  };
  double lo = *std::min_element(d.begin(), d.end());
  double hi = *std::max_element(d.begin(), d.end());
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, std::fabs(lo)); ++i) {
    const double mid = 0.5 * (lo + hi);
    (pull(mid) < 0.0 ? lo : hi) = mid;
  }
  const double m = 0.5 * (lo + hi);
  double inside = 0.0, sum = 0.0;
  for (double x : d) {
    const double u = m - x;
    if (std::fabs(u) <= delta) {
      inside += 1.0;
      sum += x;
    } else {
      sum -= std::copysign(delta, u);
    }
  }
  return inside > 0.0 ? sum / inside : m;
}

double scaled_loss(Loss loss, const std::vector<double>& f, const std::vector<double>& energy,
                   const ScaleGroups& groups, const std::vector<double>* df, std::size_t k,
                   std::vector<double>* grad, std::vector<double>* scales_out,
                   double huber_threshold, const Pooling* pooling) {
  constexpr double kTiny = 1e-300;
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t n = f.size(), ng = groups.names.size();
  // One buffer for all groups (ScaleGroups::slot): this runs at every step of every fit.
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(f[i])) return inf;
    if (loss != Loss::kRelative && f[i] <= 0.0) return inf;
    values[groups.slot[i]] =
        loss == Loss::kRelative ? f[i] / energy[i] : std::log(energy[i]) - std::log(f[i]);
  }
  auto group_values = [&](std::size_t g) {
    return std::span<const double>(values).subspan(groups.start[g],
                                                   groups.start[g + 1] - groups.start[g]);
  };
  std::vector<double> s(ng, 1.0);
  for (std::size_t g = 0; g < ng; ++g) {
    const std::span<const double> v = group_values(g);
    if (loss == Loss::kRelative) {
      double a = 0.0, b = 0.0;
      for (double r : v) {
        a += r;
        b += r * r;
      }
      s[g] = b > 0.0 ? a / b : 1.0;
    } else if (loss == Loss::kLog) {
      double a = 0.0;
      for (double gap : v) a += gap;
      s[g] = std::exp(a / static_cast<double>(v.size()));
    } else {
      s[g] = std::exp(huber_location(v, huber_threshold));
    }
    // A negative multiplier would predict negative energy: such a model is not admissible.
    if (!(s[g] > 0.0) || !std::isfinite(s[g])) return inf;
  }
  double penalty = 0.0;
  if (pooling && pooling->weight > 0.0) {
    std::vector<GroupCurve> curves;
    std::vector<double> free;
    for (std::size_t g = 0; g < ng; ++g) {
      curves.push_back({loss, group_values(g), huber_threshold});
      free.push_back(std::log(s[g]));
    }
    const Pooled pooled = pool_scales(curves, free, *pooling);
    for (std::size_t g = 0; g < ng; ++g) s[g] = std::exp(pooled.log_scale[g]);
    penalty = pooled.penalty;
  }
  if (scales_out) *scales_out = s;
  if (grad) grad->assign(k, 0.0);
  double total = penalty;
  for (std::size_t i = 0; i < n; ++i) {
    const double sg = s[groups.of_row[i]];
    double loss_i = 0.0, slope = 0.0;  // the row's loss and its derivative in f
    if (loss == Loss::kRelative) {
      const double u = sg * f[i] / energy[i] - 1.0;
      loss_i = u * u;
      slope = 2.0 * u * sg / energy[i];
    } else {
      const double fi = std::max(f[i], kTiny);
      const double u = std::log(sg * fi) - std::log(energy[i]);
      loss_i = loss == Loss::kLog ? u * u : huber(u, huber_threshold);
      slope = (loss == Loss::kLog ? 2.0 * u : huber_slope(u, huber_threshold)) / fi;
    }
    total += loss_i;
    if (grad && df)
      for (std::size_t j = 0; j < k; ++j) (*grad)[j] += slope * (*df)[i * k + j];
  }
  const double dn = static_cast<double>(n);
  if (grad)
    for (double& g : *grad) g /= dn;
  return total / dn;
}

}  // namespace kareus::energylens::detail
