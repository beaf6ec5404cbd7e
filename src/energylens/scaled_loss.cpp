#include "scaled_loss.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kareus::energylens::detail {

double scaled_loss(Loss loss, const std::vector<double>& f, const std::vector<double>& energy,
                   const ScaleGroups& groups, const std::vector<double>* df, std::size_t k,
                   std::vector<double>* grad, std::vector<double>* scales_out) {
  constexpr double kTiny = 1e-300;
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t n = f.size(), ng = groups.names.size();
  std::vector<double> a(ng, 0.0), b(ng, 0.0), count(ng, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(f[i])) return inf;
    const std::size_t g = groups.of_row[i];
    if (loss == Loss::kRelative) {
      const double r = f[i] / energy[i];
      a[g] += r;
      b[g] += r * r;
    } else {
      if (f[i] <= 0.0) return inf;
      a[g] += std::log(energy[i]) - std::log(f[i]);
      count[g] += 1.0;
    }
  }
  std::vector<double> s(ng, 1.0);
  for (std::size_t g = 0; g < ng; ++g) {
    if (loss == Loss::kRelative)
      s[g] = b[g] > 0.0 ? a[g] / b[g] : 1.0;
    else
      s[g] = std::exp(a[g] / count[g]);
    // A negative multiplier would predict negative energy: such a model is not admissible.
    if (!(s[g] > 0.0) || !std::isfinite(s[g])) return inf;
  }
  if (scales_out) *scales_out = s;
  if (grad) grad->assign(k, 0.0);
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double sg = s[groups.of_row[i]];
    double u = 0.0, w = 0.0;  // residual and d(residual)/d(f)
    if (loss == Loss::kRelative) {
      u = sg * f[i] / energy[i] - 1.0;
      w = sg / energy[i];
    } else {
      const double fi = std::max(f[i], kTiny);
      u = std::log(sg * fi) - std::log(energy[i]);
      w = 1.0 / fi;
    }
    total += u * u;
    if (grad && df)
      for (std::size_t j = 0; j < k; ++j) (*grad)[j] += 2.0 * u * w * (*df)[i * k + j];
  }
  const double dn = static_cast<double>(n);
  if (grad)
    for (double& g : *grad) g /= dn;
  return total / dn;
}

}  // namespace kareus::energylens::detail
