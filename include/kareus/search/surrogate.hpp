// SPDX-License-Identifier: Apache-2.0
// Surrogates of the two measured objectives, time and dynamic energy, and their bootstrap
// ensemble. Total energy is derived (dynamic + static power x time), never trained on its own,
// as in the artifact.
#pragma once

#include <cstdint>
#include <vector>

#include "kareus/xgb/booster.hpp"

namespace kareus::search {

using xgb::Booster;
using xgb::BoosterParams;
using xgb::FeatureMatrix;

struct ObjectiveValues {
  std::vector<double> time_s;
  std::vector<double> dynamic_j;
};

class ObjectiveModel {
 public:
  ObjectiveModel(const FeatureMatrix& x, const ObjectiveValues& y, const BoosterParams& params);
  ObjectiveValues predict(const FeatureMatrix& x) const;

 private:
  Booster time_;
  Booster dynamic_;
};

struct EnsembleOptions {
  std::size_t members = 5;
  // Each member trains on this fraction of the rows, drawn with replacement.
  double fraction = 0.8;
  std::uint64_t seed = 0;
};

// Standard deviation across ensemble members of each objective's prediction at every row of
// `candidates` (population standard deviation, as numpy's default).
ObjectiveValues ensemble_spread(const FeatureMatrix& x, const ObjectiveValues& y,
                                const FeatureMatrix& candidates, const BoosterParams& params,
                                const EnsembleOptions& options);

}  // namespace kareus::search
