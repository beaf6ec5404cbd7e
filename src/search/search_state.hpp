// SPDX-License-Identifier: Apache-2.0
// What every strategy shares: the measured set, the budget, cost accounting, progress reports
// and the final result. Strategies only decide which ids to measure next.
#pragma once

#include <vector>

#include "kareus/search/clock_fronts.hpp"
#include "kareus/search/front_confidence.hpp"
#include "kareus/search/hypervolume.hpp"
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
  // New configurations still allowed: the budget less every reading so far (repeats included),
  // at most the configurations not yet measured.
  std::size_t remaining() const;
  // Readings so far, repeats included: what the budget is charged.
  std::size_t spent() const { return points_.size() + repeats_; }
  // Unmeasured ids in increasing order.
  std::vector<std::size_t> unmeasured() const;
  const std::vector<MeasuredPoint>& points() const { return points_; }
  std::size_t batches() const { return batches_; }

  // Measures `ids` (truncated to remaining()) as one batch, labelled with the rule that picked
  // each one. Ids must be unmeasured and distinct.
  void measure(std::vector<std::size_t> ids, const std::vector<std::string>& selected_by);
  void measure(std::vector<std::size_t> ids, const std::string& selected_by);
  // Reads measured `ids` (distinct) once more as one batch, truncated to the budget left; each
  // point's measurement becomes the mean of its readings.
  void repeat(std::vector<std::size_t> ids);
  // Relative noise of (time, dynamic energy) pooled over the repeated points
  // (kareus/search/front_confidence.hpp).
  Point2 noise() const;
  const MeasuredPoint& point_of(std::size_t id) const { return points_[index_of_[id]]; }
  // Measured points by clock rank of `layout`: mean (time, dynamic energy) and readings; their
  // config ids in `ids` alike.
  std::vector<std::vector<SampledPoint>> sampled_by_clock(
      const ClockLayout& layout, std::vector<std::vector<std::size_t>>& ids) const;

  // The stop reason when the strategy ran out of its own plan: the budget or the space if
  // either ran out, otherwise `planned`.
  StopReason stop_reason(StopReason planned) const;
  SearchResult finish(StopReason reason) const;

 private:
  // Counts a batch's readings: taken or reused, GPU time; then reports progress.
  void charge(const std::vector<Measurement>& results);

  Problem& problem_;
  const SearchOptions& options_;
  std::size_t cap_;
  std::vector<bool> measured_flag_;
  std::vector<MeasuredPoint> points_;
  // (time, dynamic energy) readings of each point, in points_ order.
  std::vector<std::vector<Point2>> readings_;
  std::vector<std::size_t> index_of_;  // id -> position in points_
  std::size_t repeats_ = 0;
  std::size_t batches_ = 0;
  std::size_t taken_ = 0;
  double gpu_seconds_ = 0.0;
  double reused_gpu_seconds_ = 0.0;
};

// Features of every configuration, physical ones when asked for and available.
FeatureMatrix all_features(const Problem& problem, bool physical);

}  // namespace kareus::search
