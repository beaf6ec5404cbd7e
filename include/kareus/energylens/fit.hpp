// SPDX-License-Identifier: Apache-2.0
// Fitting the closed form with L-BFGS-B (LBFGSpp) from a few dozen measured rows.
//
// Different models and GPUs differ in energy by orders of magnitude, which the closed form (no
// model-size term) cannot express. Rows are therefore split into scale groups (by default: same
// model and GPU); the closed form's parameters are shared and each group gets one positive
// multiplier, solved in closed form for every parameter vector (variable projection), so it adds no
// search dimension. The loss is the mean squared relative error, and a Gaussian prior on the shape
// keeps the exponents the rows barely determine near their physical values.
//
// The multipliers are then explained by the scale term (scale_model.hpp): with descriptors, a
// log-linear function of the model's and GPU's descriptors (descriptors.hpp) plus a shrunk group
// effect; without, the geometric mean plus that effect. A group never seen in training gets the
// scale term alone, and every prediction carries an interval from the two variances.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/energylens/closed_form.hpp"
#include "kareus/energylens/dataset.hpp"
#include "kareus/energylens/model.hpp"

namespace kareus::energylens {

struct FitOptions {
  int restarts = 8;  // the first start is fixed, the others are drawn from `seed`
  std::uint64_t seed = 1;
  int max_iterations = 300;
  // Columns whose values form a scale group: any of "model", "gpu", "scenario". Empty: one group.
  std::vector<std::string> scale_by = {"model", "gpu"};
  // Explain the group multipliers by model and GPU descriptors (needs model and GPU names that
  // data/models and data/gpus know); false: by their geometric mean only. The CLI and the
  // benchmark turn it on.
  bool descriptors = false;
  // Point predictions from this many fits: the fit to all rows and bags - 1 fits to bootstrap
  // resamples of them (seeded by `seed`), combined as the median of their predictions. 1: the
  // single fit. The resamples' fits are also the model's replicates. The CLI and the benchmark
  // use kDefaultBags; 1 here keeps the building block (and the tests that check it) at the cost
  // of one fit.
  int bags = 1;
};

// Where the fit starts tau_r (s): the order of a GPU's rise to its loaded power.
inline constexpr double kRunStartTauStart = 1.0;

// The closed form's parameters a fit moves, in Param order: all but tau_r, which it moves only
// where some row was metered from its run's start (`runs`). The experimental design (design.hpp)
// differentiates the prediction in these.
std::vector<std::size_t> free_parameters(bool runs);

// One shape parameter's prior: normal with this centre and standard deviation, on the
// parameter or (log_scale) on its natural logarithm. Centres and widths: docs/energylens.md,
// "Shape prior".
struct ShapePrior {
  Param param;
  double centre;
  double sd;
  bool log_scale;
};
const std::array<ShapePrior, 8>& shape_priors();
// sum over shape_priors() of ((value - centre) / sd)^2, times `weight`; its gradient is added to
// `grad` when given.
double shape_prior_penalty(const Params& p, double weight, Gradient* grad);

// The bag `fit` and `evaluate` use unless told otherwise: on both shipped datasets it lowers the
// error of the random split and of every transfer protocol, at 2-6x the CPU time of one fit
// (docs/benchmarks/energylens.md).
inline constexpr int kDefaultBags = 10;

// Validates a scale-by list ("model,gpu", "none", ...).
std::vector<std::string> parse_scale_by(std::string_view text);

// The loss of `p` on `rows` (with each group's optimal multiplier) and its gradient.
double fit_loss(const Params& p, const std::vector<Sample>& rows,
                const std::vector<std::string>& scale_by, Gradient* grad);

// The fit to `rows` alone (options.bags is ignored): what fit_energy_model bags.
EnergyModel fit_single_model(const std::vector<Sample>& rows, const FitOptions& options);

EnergyModel fit_energy_model(const std::vector<Sample>& rows, const FitOptions& options);

}  // namespace kareus::energylens
