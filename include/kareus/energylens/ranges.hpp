// SPDX-License-Identifier: Apache-2.0
// The span of each numeric input over a model's training rows, and the inputs of a candidate
// that lie outside it: there the closed form's terms are extrapolated, and a term the training
// rows barely exercised (a decode exponent fitted on small batches, say) decides the prediction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/energylens/dataset.hpp"

namespace kareus::energylens {

struct TrainedRange {
  std::string variable;  // the CSV column
  double low = 0.0;
  double high = 0.0;
};

// A candidate's value of `variable` outside the training rows' [low, high].
struct OutOfRange {
  std::string variable;
  double value = 0.0;
  double low = 0.0;
  double high = 0.0;
};

// The range of every input the closed form reads, over the rows that give it (an optional
// column no training row gives has none).
std::vector<TrainedRange> training_ranges(const std::vector<Sample>& rows);

// The inputs of `s` outside `ranges`; an input `s` does not give is not checked.
std::vector<OutOfRange> outside_ranges(const std::vector<TrainedRange>& ranges, const Sample& s);

Json ranges_to_json(const std::vector<TrainedRange>& ranges);
// Refuses an unknown variable or low > high, naming the key.
std::vector<TrainedRange> ranges_from_json(const JsonValue& v);

// "batch 256 (trained 1..64)".
std::string describe(const OutOfRange& o);

}  // namespace kareus::energylens
