// SPDX-License-Identifier: Apache-2.0
// A small RAII layer over the XGBoost C API, shared by the partition search's surrogates and
// EnergyLens's tree baselines: every return code is checked and turned into a
// kareus::Error carrying XGBGetLastError(), and every handle is freed on every path.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kareus::xgb {

class DMatrix;

// Dense row-major feature matrix.
struct FeatureMatrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<float> values;

  static FeatureMatrix from_rows(const std::vector<std::vector<double>>& rows);
  // The subset of rows at `indices` (repeats allowed, for bootstrap resamples); an index past
  // the last row throws.
  FeatureMatrix select(const std::vector<std::size_t>& indices) const;
};

struct BoosterParams {
  // The artifact's settings (Appendix C): squared error, depth 6, eta 0.3, subsample 0.8,
  // colsample_bytree 0.8, min_child_weight 1, 100 rounds.
  int max_depth = 6;
  double eta = 0.3;
  double subsample = 0.8;
  double colsample_bytree = 0.8;
  double min_child_weight = 1.0;
  int rounds = 100;
  std::uint64_t seed = 0;
  // Further XGBoost parameters by name, e.g. {"num_parallel_tree", "100"} for a random forest.
  std::vector<std::pair<std::string, std::string>> extra;
};

class Booster {
 public:
  // Trains on (x, y); single-threaded so the result depends on the seed only.
  Booster(const FeatureMatrix& x, const std::vector<double>& y, const BoosterParams& params);
  ~Booster();
  Booster(Booster&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Booster& operator=(Booster&& other) noexcept;
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;

  std::vector<double> predict(const FeatureMatrix& x) const;

 private:
  void configure_and_train(const DMatrix& train, const BoosterParams& params);

  void* handle_ = nullptr;
};

}  // namespace kareus::xgb
