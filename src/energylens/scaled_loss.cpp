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

}  // namespace

double huber_location(const std::vector<double>& d, double delta) {
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
                   double huber_threshold) {
  constexpr double kTiny = 1e-300;
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t n = f.size(), ng = groups.names.size();
  std::vector<double> a(ng, 0.0), b(ng, 0.0), count(ng, 0.0);
  std::vector<std::vector<double>> log_gap(loss == Loss::kHuber ? ng : 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(f[i])) return inf;
    const std::size_t g = groups.of_row[i];
    if (loss == Loss::kRelative) {
      const double r = f[i] / energy[i];
      a[g] += r;
      b[g] += r * r;
    } else {
      if (f[i] <= 0.0) return inf;
      const double gap = std::log(energy[i]) - std::log(f[i]);
      a[g] += gap;
      count[g] += 1.0;
      if (loss == Loss::kHuber) log_gap[g].push_back(gap);
    }
  }
  std::vector<double> s(ng, 1.0);
  for (std::size_t g = 0; g < ng; ++g) {
    if (loss == Loss::kRelative)
      s[g] = b[g] > 0.0 ? a[g] / b[g] : 1.0;
    else if (loss == Loss::kLog)
      s[g] = std::exp(a[g] / count[g]);
    else
      s[g] = std::exp(huber_location(log_gap[g], huber_threshold));
    // A negative multiplier would predict negative energy: such a model is not admissible.
    if (!(s[g] > 0.0) || !std::isfinite(s[g])) return inf;
  }
  if (scales_out) *scales_out = s;
  if (grad) grad->assign(k, 0.0);
  double total = 0.0;
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
