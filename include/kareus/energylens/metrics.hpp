// SPDX-License-Identifier: Apache-2.0
// Accuracy measures of an energy predictor on held-out rows (definitions in docs/energylens.md).
#pragma once

#include <cstddef>
#include <vector>

#include "kareus/energylens/dataset.hpp"

namespace kareus::energylens {

// Mean absolute percentage error, in percent.
double mape_percent(const std::vector<double>& measured, const std::vector<double>& predicted);

struct SelectionScore {
  // Mean over scenarios with >= 2 rows of: the share of predicted-best rows (ties in the
  // prediction split the credit) whose measured energy is the scenario's minimum. NaN if none.
  double top1 = 0.0;
  std::size_t scenarios = 0;
  // Mean over the same scenarios of what the pick costs: the measured energy of the
  // predicted-best rows (averaged over a predicted tie) over the scenario's least, minus 1. Top-1
  // counts a pick 0.5 % worse than the best as a miss; this says how much such misses cost.
  double regret = 0.0;
  // Over all pairs within a scenario whose measured energies differ: ordered like the
  // measurement = 1, predicted tie = 1/2, reversed = 0; pooled over scenarios. NaN if no pair.
  double pairwise = 0.0;
  std::size_t pairs = 0;
  // The same over the pairs whose TP, PP or DP differ: how well the model ranks parallelisms.
  double pairwise_parallelism = 0.0;
  std::size_t parallelism_pairs = 0;
  // The same over the pairs a choice can tell apart: different configurations (TP, PP, DP or
  // batch) whose measured energies differ by more than kSeparation. Pairs closer than that, and
  // repeated runs of one configuration, are ordered by run-to-run noise as much as by the model.
  double pairwise_separated = 0.0;
  std::size_t separated_pairs = 0;
};

// Relative gap in measured energy (larger / smaller - 1) below which a pair is not "separated".
// 5 %: repeated runs of one TokenPowerBench configuration lie a median 7.6 % apart
// (docs/benchmarks/energylens.md), so closer pairs are within run-to-run noise.
inline constexpr double kSeparation = 0.05;

// `score[i]` ranks samples[rows[i]] (lower = better); its scale does not matter.
SelectionScore selection_score(const std::vector<Sample>& samples,
                               const std::vector<std::size_t>& rows,
                               const std::vector<double>& score);

}  // namespace kareus::energylens
