// SPDX-License-Identifier: Apache-2.0
// Internal: the pieces of a fit (fit.cpp). The rows reduced to what the loss needs and L-BFGS-B
// over them (fit_problem.cpp); the row noise and the scale term at a fitted shape
// (fit_scale.cpp); the shape prior's MAP step (fit_priors.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kareus/core/rng.hpp"
#include "kareus/energylens/fit.hpp"
#include "kareus/energylens/scale_model.hpp"
#include "scaled_loss.hpp"

namespace kareus::energylens::detail {

// Ridge on the standardised scale exponents: one group's worth of evidence that an exponent is
// 0. Against dozens of groups it barely moves a well-determined exponent; with two or three it
// keeps an exponent drawn through two noisy multipliers from extrapolating wildly, and it
// splits an exponent between collinear descriptors (parameters = active parameters in every
// dense model).
inline constexpr double kScaleRidge = 1.0;

// Rows reduced to what the loss needs.
struct Problem {
  std::vector<Features> x;
  std::vector<double> energy;
  ScaleGroups groups;
  std::vector<std::string> scale_by;
  // The linear parameters, which a start solves for by least squares.
  std::vector<std::size_t> linear;
  // Some row was measured over a whole run, so tau_r is fitted (else it stays 0, unused).
  bool runs = false;
  // The parameters the optimiser moves: free_parameters(runs).
  std::vector<std::size_t> moved;
  double prior_weight = 0.0;  // the shape prior's (0: none)

  Problem(const std::vector<Sample>& rows, const std::vector<std::string>& by,
          bool descriptors = false);

  // `objective` false: the rows' loss alone, without the shape prior.
  double evaluate(const Params& p, Gradient* grad, std::vector<double>* scales_out,
                  bool objective = true) const;
  // With the non-linear parameters fixed the closed form is linear in a_p, a_d, d1, d2, c_kv and
  // c_step: solves for them by non-negative least squares on relative residuals (active set: drop
  // negatives).
  void init_linear(Params& p) const;
};

// An optimiser run's end: its parameters, its loss, and whether L-BFGS-B converged.
struct Start {
  Params params;
  double loss;
  bool converged;
};

// L-BFGS-B from `p` within the parameters' bounds.
Start run_lbfgsb(const Problem& problem, Params p, int max_iterations);

// Starts: the fixed one (b = 0.5, e = 1, g = 0), each shape parameter at its prior's centre, and
// one drawn at random; each with tau_r at kRunStartTauStart where it is fitted and the linear
// parameters by least squares.
Params fixed_start(const Problem& problem);
Params prior_start(const Problem& problem);
Params start_from(const Problem& problem, Params p);
Params random_start(Rng& rng);

// Row noise at `p`: the variance of the log residuals around each group's own multiplier
// (`scales`), over the degrees of freedom the fit leaves.
double row_noise(const Params& p, const Problem& problem, const std::vector<double>& scales);
// Each group's row count, family, workload and descriptors (looked up before any fitting, so
// that a row the catalogues do not know fails at once).
std::vector<GroupEvidence> group_evidence(const Problem& problem, const std::vector<Sample>& rows,
                                          bool descriptors);
// The model's scale term at its parameters: the groups' own multipliers regressed on their
// descriptors with the row noise from the residuals around them; its exponents, the group
// multipliers and their variances, its level folded into the linear parameters.
void fit_scale_term(EnergyModel& model, const Problem& problem,
                    std::vector<GroupEvidence> evidence);

// The shape prior's MAP fit from `p` (fit_priors.cpp), which `p` becomes.
void fit_with_prior(Problem& problem, Params& p, int max_iterations);

}  // namespace kareus::energylens::detail
