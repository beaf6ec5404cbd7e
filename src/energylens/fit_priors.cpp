// SPDX-License-Identifier: Apache-2.0
// The shape prior (fit.hpp, ShapePrior) and the fit's MAP step with it (fit_problem.hpp), whose
// weight is the row noise of the unpenalised fit (empirical Bayes).
#include <cmath>

#include "fit_problem.hpp"

namespace kareus::energylens {

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

namespace detail {

// MAP in one step, empirical Bayes: the row noise sigma^2 of the unpenalised fit
// `p`, then the loss (a mean over n rows of about the squared log error, so n / (2 sigma^2) times
// it is the rows' negative log likelihood) plus sigma^2 / n times the prior's sum of squared
// standardised deviations (twice its negative log density) minimised from `p` and from the prior's
// centre; the lower objective wins. A runaway exponent sits in its own basin, which a descent from
// `p` alone need not leave.
void fit_with_prior(Problem& problem, Params& p, int max_iterations) {
  std::vector<double> scales;
  problem.evaluate(p, nullptr, &scales, false);
  problem.prior_weight = row_noise(p, problem, scales) / static_cast<double>(problem.x.size());
  if (!(problem.prior_weight > 0.0)) return;
  Start best = run_lbfgsb(problem, p, max_iterations);
  const Start centred = run_lbfgsb(problem, prior_start(problem), max_iterations);
  if (centred.loss < best.loss) best = centred;
  p = best.params;
}

}  // namespace detail
}  // namespace kareus::energylens
