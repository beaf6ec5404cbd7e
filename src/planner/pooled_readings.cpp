// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/pooled_readings.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace kareus::planner {

namespace {

// Alternating weighted least squares converges geometrically on a connected shape-clock design;
// this many sweeps leave far less than any noise worth pooling.
constexpr int kSweeps = 100;

}  // namespace

std::vector<double> pooled_log_estimates(const std::vector<LogReading>& readings, double sigma) {
  std::vector<double> out;
  for (const LogReading& r : readings) out.push_back(r.value);
  if (sigma <= 0.0 || readings.empty()) return out;
  std::size_t shapes = 0, clocks = 0;
  for (const LogReading& r : readings) {
    shapes = std::max(shapes, r.shape + 1);
    clocks = std::max(clocks, r.clock + 1);
  }
  // Additive fit value ~ a[shape] + b[clock], weighted by samples.
  std::vector<double> a(shapes, 0.0), b(clocks, 0.0);
  for (int sweep = 0; sweep < kSweeps; ++sweep) {
    std::vector<double> sum(shapes, 0.0), weight(shapes, 0.0);
    for (const LogReading& r : readings) {
      sum[r.shape] += static_cast<double>(r.samples) * (r.value - b[r.clock]);
      weight[r.shape] += static_cast<double>(r.samples);
    }
    for (std::size_t s = 0; s < shapes; ++s)
      if (weight[s] > 0) a[s] = sum[s] / weight[s];
    sum.assign(clocks, 0.0);
    weight.assign(clocks, 0.0);
    for (const LogReading& r : readings) {
      sum[r.clock] += static_cast<double>(r.samples) * (r.value - a[r.shape]);
      weight[r.clock] += static_cast<double>(r.samples);
    }
    for (std::size_t c = 0; c < clocks; ++c)
      if (weight[c] > 0) b[c] = sum[c] / weight[c];
  }
  // Degrees of freedom of the residuals: readings less the fitted effects (one is shared).
  std::vector<bool> shape_seen(shapes, false), clock_seen(clocks, false);
  for (const LogReading& r : readings) shape_seen[r.shape] = clock_seen[r.clock] = true;
  const auto effects = static_cast<double>(std::count(shape_seen.begin(), shape_seen.end(), true) +
                                           std::count(clock_seen.begin(), clock_seen.end(), true)) -
                       1.0;
  const double dof = static_cast<double>(readings.size()) - effects;
  if (dof <= 0) return out;
  // Under noise alone the weighted squared residuals sum to sigma^2 x dof; an interaction of
  // variance tau^2 per configuration adds about tau^2 x dof x (mean samples).
  double squares = 0.0, samples = 0.0;
  for (const LogReading& r : readings) {
    const double residual = r.value - a[r.shape] - b[r.clock];
    squares += static_cast<double>(r.samples) * residual * residual;
    samples += static_cast<double>(r.samples);
  }
  const double mean_samples = samples / static_cast<double>(readings.size());
  const double tau2 = std::max(0.0, (squares - sigma * sigma * dof) / (dof * mean_samples));
  for (std::size_t i = 0; i < readings.size(); ++i) {
    const LogReading& r = readings[i];
    const double fit = a[r.shape] + b[r.clock];
    const double noise_var = sigma * sigma / static_cast<double>(r.samples);
    const double w = tau2 / (tau2 + noise_var);
    out[i] = fit + w * (r.value - fit);
  }
  return out;
}

KeyFrontiers pooled_readings(KeyFrontiers keys) {
  // One instrument reads every key, so the noise is estimated from all keys' repeats together:
  // a key's few repeats alone leave its estimate uncertain by about a third.
  double repeats = 0.0, var_t = 0.0, var_e = 0.0;
  for (const auto& [key, r] : keys) {
    const auto n = static_cast<double>(r.summary.repeats);
    repeats += n;
    var_t += n * r.summary.noise_time * r.summary.noise_time;
    var_e += n * r.summary.noise_energy * r.summary.noise_energy;
  }
  if (repeats <= 0.0 || (var_t <= 0.0 && var_e <= 0.0)) return keys;
  const double sigma_t = std::sqrt(var_t / repeats);
  const double sigma_e = std::sqrt(var_e / repeats);
  for (auto& [key, r] : keys) {
    std::map<std::pair<std::string, int>, std::size_t> shape_of;
    std::map<double, std::size_t> clock_of;
    for (const auto& m : r.measured) {
      shape_of.try_emplace({m.config.slot, m.config.comm_sms}, shape_of.size());
      clock_of.try_emplace(m.config.clock.value(), clock_of.size());
    }
    std::vector<LogReading> time, energy;
    for (const auto& m : r.measured) {
      const std::size_t s = shape_of.at({m.config.slot, m.config.comm_sms});
      const std::size_t c = clock_of.at(m.config.clock.value());
      time.push_back({s, c, std::log(m.time.value()), m.samples});
      energy.push_back({s, c, std::log(m.dynamic_energy.value()), m.samples});
    }
    const auto t = pooled_log_estimates(time, sigma_t);
    const auto e = pooled_log_estimates(energy, sigma_e);
    for (std::size_t i = 0; i < r.measured.size(); ++i) {
      auto& m = r.measured[i];
      const Seconds pooled_time{std::exp(t[i])};
      const Joules pooled_dynamic{std::exp(e[i])};
      // Static energy is static power times time: it follows the pooled time.
      const Joules static_energy = (m.total_energy - m.dynamic_energy) * (pooled_time / m.time);
      m.time = pooled_time;
      m.dynamic_energy = pooled_dynamic;
      m.total_energy = pooled_dynamic + static_energy;
    }
  }
  return keys;
}

}  // namespace kareus::planner
