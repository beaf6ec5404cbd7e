// SPDX-License-Identifier: Apache-2.0
// The measured points of a search in the shapes the model-based strategies need.
#pragma once

#include <vector>

#include "kareus/search/hypervolume.hpp"
#include "kareus/search/surrogate.hpp"
#include "search_state.hpp"

namespace kareus::search {

struct Observed {
  FeatureMatrix x;
  ObjectiveValues y;
  std::vector<Point2> total;    // (time, total energy)
  std::vector<Point2> dynamic;  // (time, dynamic energy)
};

Observed observed(const SearchState& state, const FeatureMatrix& features);

// Predicted (time, total energy) and (time, dynamic energy) points; total energy is derived as
// dynamic + static power x time.
struct PredictedPoints {
  std::vector<Point2> total;
  std::vector<Point2> dynamic;
};
PredictedPoints predicted_points(const ObjectiveValues& prediction, Watts static_power);

// Relative hypervolume improvement of a batch in (time, total energy): both hypervolumes are taken
// under the normalisation and reference point of all points after the batch.
double relative_improvement(const std::vector<Point2>& before, const std::vector<Point2>& after);

}  // namespace kareus::search
