#include "search_state.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kareus/core/error.hpp"
#include "kareus/search/hypervolume.hpp"

namespace kareus::search {

SearchState::SearchState(Problem& problem, const SearchOptions& options)
    : problem_(problem), options_(options), measured_flag_(problem.size(), false) {
  if (problem.size() == 0) throw Error("search: the configuration space is empty");
  if (options.budget && *options.budget == 0) {
    throw Error::invalid("search options", "budget", "0",
                         "must be a positive number of measurements");
  }
  cap_ = std::min(problem.size(), options.budget.value_or(problem.size()));
}

std::size_t SearchState::remaining() const {
  return cap_ - points_.size();
}

std::vector<std::size_t> SearchState::unmeasured() const {
  std::vector<std::size_t> ids;
  for (std::size_t id = 0; id < size(); ++id) {
    if (!measured_flag_[id]) ids.push_back(id);
  }
  return ids;
}

void SearchState::measure(std::vector<std::size_t> ids, const std::string& selected_by) {
  std::vector<std::string> labels(ids.size(), selected_by);
  measure(std::move(ids), labels);
}

void SearchState::measure(std::vector<std::size_t> ids,
                          const std::vector<std::string>& selected_by) {
  ids.resize(std::min(ids.size(), remaining()));
  if (ids.empty()) return;
  for (std::size_t id : ids) {
    if (id >= size() || measured_flag_[id]) {
      throw Error(fmt::format("search: config id {} is out of range or already measured", id));
    }
    measured_flag_[id] = true;
  }
  const std::vector<Measurement> results = problem_.measure(ids);
  if (results.size() != ids.size()) {
    throw Error(fmt::format("search: the problem answered {} measurements for {} configs",
                            results.size(), ids.size()));
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!results[i].reused) {
      ++taken_;
      gpu_seconds_ += results[i].gpu_cost.value();
    }
    points_.push_back({ids[i], results[i], batches_, selected_by[i]});
  }
  ++batches_;
  if (options_.on_progress) {
    std::vector<Measurement> all;
    for (const auto& p : points_) all.push_back(p.measurement);
    options_.on_progress({points_.size(), cap_, observed_hypervolume(all), gpu_seconds_ / 3600.0});
  }
}

StopReason SearchState::stop_reason(StopReason planned) const {
  if (points_.size() == size()) return StopReason::kSpaceExhausted;
  if (remaining() == 0) return StopReason::kBudget;
  return planned;
}

SearchResult SearchState::finish(StopReason reason) const {
  SearchResult result;
  result.measured = points_;
  std::vector<Point2> total;
  std::vector<Point2> dynamic;
  std::vector<Measurement> all;
  for (const auto& p : points_) {
    total.push_back({p.measurement.time.value(), p.measurement.total_energy.value()});
    dynamic.push_back({p.measurement.time.value(), p.measurement.dynamic_energy.value()});
    all.push_back(p.measurement);
  }
  for (std::size_t i : pareto_indices(total)) result.frontier_total.push_back(points_[i].id);
  for (std::size_t i : pareto_indices(dynamic)) result.frontier_dynamic.push_back(points_[i].id);
  SearchSummary& s = result.summary;
  s.strategy = options_.strategy;
  s.configurations = size();
  s.measurements_taken = taken_;
  s.measurements_reused = points_.size() - taken_;
  s.batches = batches_;
  s.hypervolume = observed_hypervolume(all);
  s.gpu_hours = gpu_seconds_ / 3600.0;
  s.stop_reason = reason;
  return result;
}

FeatureMatrix all_features(const Problem& problem, bool physical) {
  std::vector<std::vector<double>> rows;
  rows.reserve(problem.size());
  for (std::size_t id = 0; id < problem.size(); ++id) {
    std::vector<double> row = physical ? problem.physical_features(id) : problem.raw_features(id);
    if (physical && row.empty()) return all_features(problem, false);
    rows.push_back(std::move(row));
  }
  return FeatureMatrix::from_rows(rows);
}

}  // namespace kareus::search
