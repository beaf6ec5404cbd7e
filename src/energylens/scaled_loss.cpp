// SPDX-License-Identifier: Apache-2.0
#include "scaled_loss.hpp"

#include <cmath>
#include <limits>
#include <span>

namespace kareus::energylens::detail {

double scaled_loss(const std::vector<double>& f, const std::vector<double>& energy,
                   const ScaleGroups& groups, const std::vector<double>* df, std::size_t k,
                   std::vector<double>* grad, std::vector<double>* scales_out) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t n = f.size(), ng = groups.names.size();
  // One buffer for all groups (ScaleGroups::slot): this runs at every step of every fit.
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(f[i])) return inf;
    values[groups.slot[i]] = f[i] / energy[i];
  }
  auto group_values = [&](std::size_t g) {
    return std::span<const double>(values).subspan(groups.start[g],
                                                   groups.start[g + 1] - groups.start[g]);
  };
  // Each group's multiplier minimises sum (s r - 1)^2 over its ratios r = f / E: s = sum r / sum
  // r^2.
  std::vector<double> s(ng, 1.0);
  for (std::size_t g = 0; g < ng; ++g) {
    double a = 0.0, b = 0.0;
    for (double r : group_values(g)) {
      a += r;
      b += r * r;
    }
    s[g] = b > 0.0 ? a / b : 1.0;
    // A negative multiplier would predict negative energy: such a model is not admissible.
    if (!(s[g] > 0.0) || !std::isfinite(s[g])) return inf;
  }
  if (scales_out) *scales_out = s;
  if (grad) grad->assign(k, 0.0);
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double sg = s[groups.of_row[i]];
    const double u = sg * f[i] / energy[i] - 1.0;
    total += u * u;
    if (grad && df) {
      const double slope = 2.0 * u * sg / energy[i];  // the row's loss's derivative in f
      for (std::size_t j = 0; j < k; ++j) (*grad)[j] += slope * (*df)[i * k + j];
    }
  }
  const double dn = static_cast<double>(n);
  if (grad)
    for (double& g : *grad) g /= dn;
  return total / dn;
}

}  // namespace kareus::energylens::detail
