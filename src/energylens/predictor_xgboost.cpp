// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "baseline_features.hpp"
#include "kareus/core/error.hpp"
#include "kareus/energylens/predictors.hpp"
#include "kareus/xgb/booster.hpp"

namespace kareus::energylens {
namespace {

class XgbPredictor final : public Predictor {
 public:
  XgbPredictor(TreeKind kind, std::vector<std::string> scale_by, std::uint64_t seed)
      : kind_(kind), scale_by_(std::move(scale_by)), seed_(seed) {}
  std::string name() const override {
    return kind_ == TreeKind::kRandomForest ? "random_forest" : "gradient_boosting";
  }

  void fit(const std::vector<Sample>& train) override {
    groups_.clear();
    for (const Sample& s : train)
      groups_.emplace(scale_group_key(s, scale_by_), static_cast<float>(groups_.size()));
    columns_ = BaselineColumns::of(train);
    std::vector<double> label;
    for (const Sample& s : train) label.push_back(std::log(s.energy->value()));
    xgb::BoosterParams params;
    params.seed = seed_;
    params.colsample_bytree = 1.0;
    params.min_child_weight = 1.0;
    if (kind_ == TreeKind::kRandomForest) {
      // Breiman-style forest as XGBoost documents it: one round of parallel trees, eta 1,
      // row and column subsampling. Its single round starts from base_score, which XGBoost 1.7
      // leaves at 0.5 while log energies are 3-8, and lambda 1 pulls a leaf of n rows only
      // n / (n + 1) of the way to its rows: started from 0.5 that shrinks every prediction
      // toward 0.5 J. Starting from the labels' mean with no leaf penalty makes each tree's leaf
      // its rows' mean, as in a Breiman forest.
      params.rounds = 1;
      params.eta = 1.0;
      params.max_depth = 8;
      params.subsample = 0.632;
      double mean = 0;
      for (double y : label) mean += y / static_cast<double>(label.size());
      params.extra = {{"num_parallel_tree", "100"},
                      {"colsample_bynode", "0.8"},
                      {"base_score", fmt::format("{}", mean)},
                      {"lambda", "0"}};
    } else {
      // Boosting with common defaults for small data.
      params.rounds = 200;
      params.eta = 0.1;
      params.max_depth = 4;
      params.subsample = 0.8;
    }
    booster_.emplace(features(train), label, params);
  }

  std::vector<double> predict(const std::vector<Sample>& rows) const override {
    if (!booster_) throw Error("internal: " + name() + " predicts before it is fitted");
    std::vector<double> out = booster_->predict(features(rows));
    for (double& v : out) v = std::exp(v);
    return out;
  }

 private:
  xgb::FeatureMatrix features(const std::vector<Sample>& rows) const {
    xgb::FeatureMatrix x;
    x.rows = rows.size();
    // tp, pp, batch, output and input tokens, the scale group's code; the cap and the requests
    // with the drain; the workload's code with a workload column. Missing values are NaN, which
    // the trees route by their learned default.
    x.cols = 6 + (columns_.drain ? 2 : 0) + (columns_.workloads.empty() ? 0 : 1);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const Sample& s : rows) {
      const auto g = groups_.find(scale_group_key(s, scale_by_));
      for (double v : {s.tp, s.pp, s.batch, s.output_tokens, s.input_tokens.value_or(nan)})
        x.values.push_back(static_cast<float>(v));
      x.values.push_back(g == groups_.end() ? nan : g->second);
      if (columns_.drain)
        for (const auto& v : {s.max_output_tokens, s.requests})
          x.values.push_back(v ? static_cast<float>(*v) : nan);
      if (!columns_.workloads.empty()) {
        const auto w = columns_.workloads.find(s.workload);
        x.values.push_back(w == columns_.workloads.end() ? nan : static_cast<float>(w->second));
      }
    }
    return x;
  }

  TreeKind kind_;
  std::vector<std::string> scale_by_;
  std::uint64_t seed_;
  std::map<std::string, float> groups_;
  BaselineColumns columns_;
  std::optional<xgb::Booster> booster_;
};

}  // namespace

std::unique_ptr<Predictor> make_xgboost(TreeKind kind, std::vector<std::string> scale_by,
                                        std::uint64_t seed) {
  return std::make_unique<XgbPredictor>(kind, std::move(scale_by), seed);
}

}  // namespace kareus::energylens
