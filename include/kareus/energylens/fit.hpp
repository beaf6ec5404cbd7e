// Fitting the closed form with L-BFGS-B (LBFGSpp) from a few dozen measured rows.
//
// Different models and GPUs differ in energy by orders of magnitude, which the closed form (no
// model-size term) cannot express. Rows are therefore split into scale groups (by default: same
// model and GPU); the twelve parameters are shared and each group gets one positive multiplier,
// solved in closed form for every parameter vector (variable projection), so it adds no search
// dimension. With one group this is exactly the paper's 12-parameter model. A group never seen in
// training is predicted with the geometric-mean multiplier (1 after normalisation).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/energylens/closed_form.hpp"
#include "kareus/energylens/dataset.hpp"

namespace kareus::energylens {

enum class Loss { relative, log };  // mean squared relative error, or mean squared log error

Loss parse_loss(std::string_view text);
std::string_view loss_name(Loss loss);

struct FitOptions {
  Loss loss = Loss::relative;
  int restarts = 8;  // the first start is fixed, the others are drawn from `seed`
  std::uint64_t seed = 1;
  int max_iterations = 300;
  // Columns whose values form a scale group: any of "model", "gpu", "scenario". Empty: one group.
  std::vector<std::string> scale_by = {"model", "gpu"};
};

// Validates a --scale-by list ("model,gpu", "none", ...).
std::vector<std::string> parse_scale_by(std::string_view text);
std::string scale_group_key(const Sample& s, const std::vector<std::string>& scale_by);

struct EnergyModel {
  Params params{};
  Loss loss = Loss::relative;
  std::vector<std::string> scale_by;
  std::map<std::string, double> scales;  // scale group -> multiplier (geometric mean 1)
  double train_loss = 0.0;
  std::size_t train_rows = 0;
  int restarts_converged = 0;

  double scale_of(const Sample& s) const;
  Joules predict(const Sample& s) const;
  Json to_json() const;
  static EnergyModel from_json(const JsonValue& v);
};

// The loss of `p` on `rows` (with each group's optimal multiplier) and its gradient.
double fit_loss(const Params& p, const std::vector<Sample>& rows, Loss loss,
                const std::vector<std::string>& scale_by, Gradient* grad);

EnergyModel fit_energy_model(const std::vector<Sample>& rows, const FitOptions& options);

}  // namespace kareus::energylens
