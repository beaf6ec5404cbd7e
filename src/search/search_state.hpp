// What every strategy shares: the measured set, the budget, cost accounting, progress reports
// and the final result. Strategies only decide which ids to measure next.
#pragma once

#include <vector>

#include "kareus/search/search.hpp"
#include "kareus/xgb/booster.hpp"

namespace kareus::search {

using xgb::Booster;
using xgb::BoosterParams;
using xgb::FeatureMatrix;

class SearchState {
 public:
  SearchState(Problem& problem, const SearchOptions& options);

  Problem& problem() { return problem_; }
  const SearchOptions& options() const { return options_; }
  std::size_t size() const { return measured_flag_.size(); }
  bool is_measured(std::size_t id) const { return measured_flag_[id]; }
  // Measurements still allowed: the budget (or the space size) minus those taken so far.
  std::size_t remaining() const;
  // Unmeasured ids in increasing order.
  std::vector<std::size_t> unmeasured() const;
  const std::vector<MeasuredPoint>& points() const { return points_; }
  std::size_t batches() const { return batches_; }

  // Measures `ids` (truncated to remaining()) as one batch, labelled with the rule that picked
  // each one. Ids must be unmeasured and distinct.
  void measure(std::vector<std::size_t> ids, const std::vector<std::string>& selected_by);
  void measure(std::vector<std::size_t> ids, const std::string& selected_by);

  // The stop reason when the strategy ran out of its own plan: the budget or the space if
  // either ran out, otherwise `planned`.
  StopReason stop_reason(StopReason planned) const;
  SearchResult finish(StopReason reason) const;

 private:
  Problem& problem_;
  const SearchOptions& options_;
  std::size_t cap_;
  std::vector<bool> measured_flag_;
  std::vector<MeasuredPoint> points_;
  std::size_t batches_ = 0;
  std::size_t taken_ = 0;
  double gpu_seconds_ = 0.0;
};

// Features of every configuration, physical ones when asked for and available.
FeatureMatrix all_features(const Problem& problem, bool physical);

}  // namespace kareus::search
