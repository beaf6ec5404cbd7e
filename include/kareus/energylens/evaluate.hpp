// SPDX-License-Identifier: Apache-2.0
// The evaluation protocol: random train/test splits over seeds, a sample-efficiency curve, a
// batch-size extrapolation test, and leave-one-model-out / leave-one-GPU-out transfer, for
// EnergyLens and every baseline on the same splits.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/energylens/dataset.hpp"
#include "kareus/energylens/design.hpp"
#include "kareus/energylens/fit.hpp"

namespace kareus::energylens {

struct EvaluateOptions {
  std::size_t train_size = 50;
  int seeds = 10;
  std::uint64_t seed = 1;
  FitOptions fit;
  std::vector<std::size_t> curve_sizes = {10, 20, 50, 100, 200};
  bool progress = true;
  // > 0: the pool protocol. Each seed splits the rows at random into a pool of this share, which
  // a user could measure, and a test set of the rest; the training rows are chosen from the pool
  // by `design`, so that both designs are scored on the same test rows. 0: train on random rows,
  // test on all the others (the design must then be random). Leave-one-out folds choose from the
  // rows of the other models or GPUs; the extrapolation keeps its batch split.
  double pool_share = 0.0;
  Design design = Design::kRandom;
  // design_measurements' group_precision (the benchmark's sensitivity to it).
  double design_group_precision = kDesignRidge;
};

// Mean and sample standard deviation over seeds; seeds where the metric is undefined (no
// scenario with two held-out rows) are left out and `count` says how many remained.
struct Stat {
  double mean = 0.0;
  double std = 0.0;
  std::size_t count = 0;
};

struct ModelScores {
  std::optional<Stat> mape;  // absent for a ranking proxy
  Stat top1;
  Stat regret;  // energy of the pick over the scenario's least, minus 1 (metrics.hpp)
  Stat pairwise;
  Stat pairwise_parallelism;  // count 0 when no scenario varies TP, PP or DP
  Stat pairwise_separated;    // pairs of configurations more than kSeparation apart
};

using Scores = std::map<std::string, ModelScores>;

struct Extrapolation {
  double train_max_batch = 0.0;  // train on batch <= this
  double test_min_batch = 0.0;   // test on batch in [3x, 10x] of it
  double test_max_batch = 0.0;
  std::size_t train_rows = 0;
  std::size_t test_rows = 0;
  Scores scores;
};

// Transfer to a model, GPU or TP x PP x DP configuration never measured: each of its values in
// turn is held out, the models train on `train_size` random rows of the others (all of them if
// fewer), and every row is scored by the fold that held it out; one score per seed over all rows.
struct LeaveOneOut {
  std::string column;  // "model", "gpu" or "parallelism"
  std::size_t folds = 0;
  Scores scores;
};

struct EvaluationReport {
  std::string source;
  std::size_t rows = 0;
  std::size_t scenarios = 0;
  std::size_t train_size = 0;
  int seeds = 0;
  double pool_share = 0.0;  // EvaluateOptions::pool_share
  Design design = Design::kRandom;
  Scores scores;
  std::vector<std::pair<std::size_t, Scores>> curve;
  std::optional<Extrapolation> extrapolation;  // absent when no batch range fits
  std::vector<LeaveOneOut> leave_one_out;      // columns with at least two named values
  Json to_json() const;
  std::string to_markdown() const;
};

EvaluationReport evaluate(const Dataset& data, const EvaluateOptions& options);

// One of the random split protocol's splits: training rows, held-out rows (sorted), and the seed
// the models fitted on it are given.
struct RandomSplit {
  std::vector<std::size_t> train, test;
  std::uint64_t seed = 0;
};
// The `options.seeds` splits evaluate() scores without a pool, `train_size` training rows each
// from `rows`.
std::vector<RandomSplit> random_splits(std::size_t rows, std::size_t train_size,
                                       const EvaluateOptions& options);
// The splits evaluate() scores: random_splits without a pool; with one, each seed's pool and test
// rows drawn as random_splits draws its order, the training rows the pool's first `train_size`
// in that order (random) or design_measurements on the pool (d-optimal), which reads no energy.
std::vector<RandomSplit> evaluation_splits(const Dataset& data, std::size_t train_size,
                                           const EvaluateOptions& options);

}  // namespace kareus::energylens
