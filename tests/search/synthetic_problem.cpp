// SPDX-License-Identifier: Apache-2.0
#include "synthetic_problem.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "kareus/core/rng.hpp"
#include "kareus/search/hypervolume.hpp"

namespace kareus::testing {
namespace {

constexpr std::size_t kClocks = 18;    // 900..1410 MHz step 30 (A100, as the artifact searches)
constexpr std::size_t kSmCounts = 10;  // 3..30 step 3
constexpr double kTotalSms = 108.0;    // A100 SM count (A100 datasheet)

}  // namespace

SyntheticProblem::SyntheticProblem(SyntheticShape shape) : shape_(shape) {
  Rng rng(shape.seed);
  memory_fraction_ = rng.uniform(0.15, 0.45);
  const double all_slots[] = {0.0, 0.2, 0.45, 0.7};
  for (std::size_t s = 0; s < shape.slots; ++s) {
    slot_fraction_.push_back(all_slots[s] * rng.uniform(0.8, 1.2));
  }
  shape_.compute_s *= rng.uniform(0.8, 1.25);
  shape_.comm_bytes *= rng.uniform(0.8, 1.25);
}

std::size_t SyntheticProblem::size() const {
  return kClocks * kSmCounts * shape_.slots;
}

SyntheticProblem::Coordinates SyntheticProblem::coordinates(std::size_t id) const {
  const std::size_t slot = id % shape_.slots;
  const std::size_t sm_index = (id / shape_.slots) % kSmCounts;
  const std::size_t clock_index = id / (shape_.slots * kSmCounts);
  return {900.0 + 30.0 * static_cast<double>(clock_index), 3.0 * static_cast<double>(sm_index + 1),
          sm_index, slot};
}

std::string SyntheticProblem::key(std::size_t id) const {
  const Coordinates c = coordinates(id);
  return fmt::format("slot_{}/{}sm@{}MHz", c.slot, c.sms, c.clock_mhz);
}

std::vector<double> SyntheticProblem::raw_features(std::size_t id) const {
  const Coordinates c = coordinates(id);
  std::vector<double> row{c.clock_mhz, static_cast<double>(c.sm_index)};
  for (std::size_t s = 0; s < shape_.slots; ++s) row.push_back(s == c.slot ? 1.0 : 0.0);
  return row;
}

std::vector<double> SyntheticProblem::physical_features(std::size_t id) const {
  const Coordinates c = coordinates(id);
  // What a partition knows from its workload model before measuring: compute time at the clock,
  // bytes per comm SM and when the comm starts.
  const double compute =
      shape_.compute_s * (1.0 - memory_fraction_ + memory_fraction_ * 1410.0 / c.clock_mhz);
  return {c.clock_mhz, compute, shape_.comm_bytes / c.sms, slot_fraction_[c.slot] * compute};
}

search::Measurement SyntheticProblem::truth(std::size_t id) const {
  const Coordinates c = coordinates(id);
  const double f = c.clock_mhz / 1410.0;
  // Compute slows with the clock (its compute-bound part) and with the SMs the comm takes.
  const double compute = shape_.compute_s * ((1.0 - memory_fraction_) / f + memory_fraction_) *
                         kTotalSms / (kTotalSms - c.sms);
  // Comm bandwidth grows with SMs and saturates; it barely depends on the SM clock.
  const double bandwidth = std::min(c.sms * 9e9, 180e9) * (0.9 + 0.1 * f);
  const double comm = 15e-6 + shape_.comm_bytes / bandwidth;
  const double start = slot_fraction_[c.slot] * compute;
  // Overlap contention: compute and comm sharing memory bandwidth slow each other a little.
  const double overlap = std::max(0.0, std::min(compute, start + comm) - start);
  const double time = std::max(compute, start + comm) + 0.15 * overlap;
  // Compute power ~ f * V^2 with V roughly linear in f above a floor.
  const double voltage = 0.7 + 0.3 * f;
  const double compute_power = 260.0 * f * voltage * voltage;
  const double comm_power = 1.6 * c.sms * (0.6 + 0.4 * f);
  double dynamic = compute_power * compute + comm_power * comm;

  Rng noise(shape_.seed * 1000003 + id);
  const double t = time * (1.0 + noise.uniform(-shape_.noise, shape_.noise));
  dynamic *= 1.0 + noise.uniform(-shape_.noise, shape_.noise);
  const Joules total = Joules(dynamic) + static_power() * Seconds(t);
  // The measurement protocol (protocol.hpp): 2 s settle, 5 s cooldown, 10 warm-up iterations, 5 s
  // window, on 8 GPUs.
  const Seconds cost = Seconds((2.0 + 5.0 + 10.0 * t + 5.0) * 8.0);
  return {Seconds(t), total, Joules(dynamic), cost, false};
}

std::vector<search::Measurement> SyntheticProblem::measure(const std::vector<std::size_t>& ids) {
  return measure_repeat(ids, 0);
}

std::vector<search::Measurement> SyntheticProblem::measure_repeat(
    const std::vector<std::size_t>& ids, std::size_t repeat) {
  std::vector<search::Measurement> out;
  for (std::size_t id : ids) {
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    if (repeat == 0) measured_ids_.push_back(id);
    if (!log_.empty()) {
      std::ofstream(log_, std::ios::app)
          << key(id) << (repeat == 0 ? "" : "#" + std::to_string(repeat)) << '\n';
    }
    out.push_back(truth(id));
  }
  return out;
}

double hv_fraction(const search::SearchResult& result, const SyntheticProblem& problem) {
  std::vector<search::Point2> all;
  search::Point2 worst{0, 0};
  for (std::size_t id = 0; id < problem.size(); ++id) {
    const search::Measurement m = problem.truth(id);
    all.push_back({m.time.value(), m.total_energy.value()});
    worst = {std::max(worst.x, all.back().x), std::max(worst.y, all.back().y)};
  }
  const search::Point2 ref{1.1 * worst.x, 1.1 * worst.y};
  std::vector<search::Point2> found;
  for (const auto& p : result.measured) {
    found.push_back({p.measurement.time.value(), p.measurement.total_energy.value()});
  }
  return search::hypervolume_2d(found, ref) / search::hypervolume_2d(all, ref);
}

}  // namespace kareus::testing
