// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/fit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "fit_problem.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/energylens/bootstrap.hpp"

namespace kareus::energylens {
namespace {

using detail::Problem;

// Every start left the loss infinite: some row's closed form, or its ratio to the row's energy,
// overflows for every parameter vector tried (inputs beyond what the CSV reader accepts). Named by
// the first such row at the fixed start.
Error not_finite(const Problem& problem, const std::vector<Sample>& rows) {
  const Params p = detail::fixed_start(problem);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double ratio = closed_form(p, problem.x[i]) / problem.energy[i];
    if (!std::isfinite(ratio) || !(ratio > 0.0))
      return Error(fmt::format(
          "line {}: the closed form of this row (batch {:g}, output_tokens {:g}, energy_j {:g}) is "
          "not a finite multiple of its energy, so no fit is possible",
          rows[i].line, rows[i].batch, rows[i].output_tokens, problem.energy[i]));
  }
  return Error(fmt::format("no start gave a finite loss on the {} rows", rows.size()));
}

}  // namespace

std::vector<std::size_t> free_parameters(bool runs) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < kParams; ++k)
    if (runs || k != tau_r) out.push_back(k);
  return out;
}

std::vector<std::string> parse_scale_by(std::string_view text) {
  std::vector<std::string> out;
  if (text == "none" || text.empty()) return out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item(text.substr(pos, comma - pos));
    if (item != "model" && item != "gpu" && item != "scenario")
      throw Error::invalid("", field_ref("scale_by"), text,
                           "a comma-separated list of model, gpu, scenario, or none");
    out.push_back(item);
    pos = comma + 1;
  }
  return out;
}

double fit_loss(const Params& p, const std::vector<Sample>& rows,
                const std::vector<std::string>& scale_by, Gradient* grad) {
  return Problem(rows, scale_by).evaluate(p, grad, nullptr);
}

EnergyModel fit_single_model(const std::vector<Sample>& rows, const FitOptions& options) {
  if (rows.size() < 2)
    throw Error(fmt::format("fitting needs at least 2 rows, got {}", rows.size()));
  if (options.restarts < 1)
    throw Error::invalid("", "restarts", std::to_string(options.restarts), "must be >= 1");
  if (options.bags < 1)
    throw Error::invalid("", field_ref("bags"), std::to_string(options.bags),
                         "must be >= 1 (1: the single fit)");
  const bool by_model_and_gpu =
      std::find(options.scale_by.begin(), options.scale_by.end(), "model") !=
          options.scale_by.end() &&
      std::find(options.scale_by.begin(), options.scale_by.end(), "gpu") != options.scale_by.end();
  if (options.descriptors && !by_model_and_gpu)
    throw Error::invalid(
        "", field_ref("scale_by"), fmt::format("{}", fmt::join(options.scale_by, ",")),
        fmt::format("the descriptor scale needs groups by model and gpu (or {} off)",
                    field_ref("descriptors")));
  Problem problem(rows, options.scale_by, options.descriptors);
  std::vector<GroupEvidence> evidence = detail::group_evidence(problem, rows, options.descriptors);
  Rng rng(options.seed);
  EnergyModel model;
  model.scale_by = options.scale_by;
  model.descriptors = options.descriptors;
  model.train_rows = rows.size();
  model.drained =
      std::any_of(rows.begin(), rows.end(), [](const Sample& s) { return s.requests.has_value(); });
  model.ranges = training_ranges(rows);
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < options.restarts; ++r) {
    const Params drawn = r == 0 ? Params{} : detail::random_start(rng);
    const Params p = r == 0 ? detail::fixed_start(problem) : detail::start_from(problem, drawn);
    const detail::Start s = detail::run_lbfgsb(problem, p, options.max_iterations);
    model.restarts_converged += s.converged ? 1 : 0;
    if (s.loss < best) {
      best = s.loss;
      model.params = s.params;
    }
  }
  if (!std::isfinite(best)) throw not_finite(problem, rows);
  detail::fit_with_prior(problem, model.params, options.max_iterations);
  model.shape_prior_weight = problem.prior_weight;
  model.train_loss = problem.evaluate(model.params, nullptr, nullptr, false);
  detail::fit_scale_term(model, problem, std::move(evidence));
  return model;
}

EnergyModel fit_energy_model(const std::vector<Sample>& rows, const FitOptions& options) {
  EnergyModel model = fit_single_model(rows, options);
  if (options.bags > 1) add_replicates(model, rows, options, options.bags - 1, options.seed);
  return model;
}

}  // namespace kareus::energylens
