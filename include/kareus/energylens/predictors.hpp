// SPDX-License-Identifier: Apache-2.0
// Everything the evaluation compares: EnergyLens and the baselines (random forest and gradient
// boosting through XGBoost's C API, a per-batch linear model, and latency-proxy selection).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kareus/energylens/dataset.hpp"
#include "kareus/energylens/fit.hpp"

namespace kareus::energylens {

class Predictor {
 public:
  virtual ~Predictor() = default;
  virtual std::string name() const = 0;
  // False for a ranking proxy whose scores are not energies (then it has no MAPE).
  virtual bool predicts_energy() const { return true; }
  virtual void fit(const std::vector<Sample>& train) = 0;
  virtual std::vector<double> predict(const std::vector<Sample>& rows) const = 0;
};

std::unique_ptr<Predictor> make_energylens(const FitOptions& options);

enum class TreeKind { kRandomForest, kGradientBoosting };
// Trees see tp, pp, batch, tokens and the scale group (model/GPU) as a categorical code, and,
// where the training rows carry them, the run's drain (max_output_tokens, requests) and the
// workload as a code: the same information EnergyLens gets. They are trained on log energy so
// that relative errors count as in the other models.
std::unique_ptr<Predictor> make_xgboost(TreeKind kind, std::vector<std::string> scale_by,
                                        std::uint64_t seed);

// One ridge regression of log energy per batch size seen in training, on log TP, log PP, log
// tokens, the scale group and, where the training rows carry them, log max_output_tokens, log
// requests and the workload; a batch size not seen in training uses the nearest one (log scale).
std::unique_ptr<Predictor> make_per_batch_linear(std::vector<std::string> scale_by);

// Ranks by measured time per request (the latency-optimal choice); needs time_s on every row.
std::unique_ptr<Predictor> make_latency_proxy();

}  // namespace kareus::energylens
