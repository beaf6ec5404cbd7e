// SPDX-License-Identifier: Apache-2.0
#include "search_state.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kareus/core/error.hpp"
#include "kareus/search/clock_fronts.hpp"
#include "kareus/search/front_confidence.hpp"
#include "kareus/search/hypervolume.hpp"

namespace kareus::search {

SearchState::SearchState(Problem& problem, const SearchOptions& options)
    : problem_(problem),
      options_(options),
      measured_flag_(problem.size(), false),
      index_of_(problem.size(), problem.size()) {
  if (problem.size() == 0) throw Error("search: the configuration space is empty");
  if (options.budget && *options.budget == 0) {
    throw Error::invalid("search options", "budget", "0",
                         "must be a positive number of measurements");
  }
  cap_ = std::min(problem.size(), options.budget.value_or(problem.size()));
}

std::size_t SearchState::remaining() const {
  return std::min(size() - points_.size(), cap_ - std::min(cap_, spent()));
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
    index_of_[ids[i]] = points_.size();
    points_.push_back({ids[i], results[i], 1, batches_, selected_by[i]});
    readings_.push_back({{results[i].time.value(), results[i].dynamic_energy.value()}});
  }
  charge(results);
}

void SearchState::repeat(std::vector<std::size_t> ids) {
  ids.resize(std::min(ids.size(), cap_ - std::min(cap_, spent())));
  // Each id's next reading is its samples-th repeat; ids with as many readings go as one batch.
  std::vector<std::vector<std::size_t>> by_repeat;
  for (std::size_t id : ids) {
    if (id >= size() || !measured_flag_[id]) {
      throw Error(fmt::format("search: config id {} is out of range or not measured", id));
    }
    const std::size_t r = points_[index_of_[id]].samples;
    if (by_repeat.size() <= r) by_repeat.resize(r + 1);
    by_repeat[r].push_back(id);
  }
  std::vector<Measurement> all;
  for (std::size_t r = 1; r < by_repeat.size(); ++r) {
    if (by_repeat[r].empty()) continue;
    const std::vector<Measurement> results = problem_.measure_repeat(by_repeat[r], r);
    if (results.size() != by_repeat[r].size()) {
      throw Error(fmt::format("search: the problem answered {} repeats for {} configs",
                              results.size(), by_repeat[r].size()));
    }
    for (std::size_t i = 0; i < results.size(); ++i) {
      MeasuredPoint& p = points_[index_of_[by_repeat[r][i]]];
      const double n = static_cast<double>(p.samples);
      const auto mean = [&](auto before, auto reading) {
        return decltype(before)((before.value() * n + reading.value()) / (n + 1));
      };
      p.measurement.time = mean(p.measurement.time, results[i].time);
      p.measurement.total_energy = mean(p.measurement.total_energy, results[i].total_energy);
      p.measurement.dynamic_energy = mean(p.measurement.dynamic_energy, results[i].dynamic_energy);
      ++p.samples;
      readings_[index_of_[p.id]].push_back(
          {results[i].time.value(), results[i].dynamic_energy.value()});
      ++repeats_;
      all.push_back(results[i]);
    }
  }
  if (!all.empty()) charge(all);
}

std::vector<std::vector<SampledPoint>> SearchState::sampled_by_clock(
    const ClockLayout& layout, std::vector<std::vector<std::size_t>>& ids) const {
  std::vector<std::vector<SampledPoint>> points(layout.clocks());
  ids.assign(layout.clocks(), {});
  for (const MeasuredPoint& p : points_) {
    const std::size_t c = layout.clock_of[p.id];
    points[c].push_back(
        {{p.measurement.time.value(), p.measurement.dynamic_energy.value()}, p.samples});
    ids[c].push_back(p.id);
  }
  return points;
}

Point2 SearchState::noise() const {
  return pooled_relative_sigma(readings_);
}

void SearchState::charge(const std::vector<Measurement>& results) {
  for (const Measurement& m : results) {
    if (m.reused) {
      reused_gpu_seconds_ += m.gpu_cost.value();
    } else {
      ++taken_;
      gpu_seconds_ += m.gpu_cost.value();
    }
  }
  ++batches_;
  if (options_.on_progress) {
    std::vector<Measurement> all;
    for (const auto& p : points_) all.push_back(p.measurement);
    options_.on_progress({spent(), cap_, observed_hypervolume(all), gpu_seconds_ / 3600.0});
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
  s.measurements_reused = spent() - taken_;
  s.repeats = repeats_;
  if (repeats_ > 0) {
    const Point2 sigma = noise();
    s.noise_time = sigma.x;
    s.noise_energy = sigma.y;
    std::vector<std::vector<std::size_t>> ids;
    s.confidence = front_confidence(sampled_by_clock(clock_layout(problem_), ids), sigma);
  }
  s.batches = batches_;
  s.hypervolume = observed_hypervolume(all);
  s.gpu_hours = gpu_seconds_ / 3600.0;
  s.gpu_hours_reused = reused_gpu_seconds_ / 3600.0;
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
