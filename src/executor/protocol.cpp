// SPDX-License-Identifier: Apache-2.0
#include "kareus/executor/protocol.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"

namespace kareus::executor {
namespace {
constexpr const char* kWhere = "measurement protocol";
}

void MeasurementProtocol::validate() const {
  for (const auto& [field, value] :
       {std::pair{"clock_settle_s", clock_settle}, std::pair{"cooldown_s", cooldown}}) {
    require(value.value() >= 0, kWhere, field, format_number(value.value()), "must be >= 0");
  }
  require(window.value() > 0, kWhere, "window_s", format_number(window.value()), "must be > 0");
  for (const auto& [field, value] : {std::pair{"calibration_warmup", calibration_warmup},
                                     std::pair{"calibration_iterations", calibration_iterations},
                                     std::pair{"warmup_iterations", warmup_iterations}}) {
    require(value >= 0, kWhere, field, std::to_string(value), "must be >= 0");
  }
}

long MeasurementProtocol::window_iterations(Seconds iteration_time) const {
  require(iteration_time.value() > 0, kWhere, "iteration time",
          format_number(iteration_time.value()), "must be > 0");
  return std::max(1L, static_cast<long>(std::floor(window / iteration_time)));
}

Seconds MeasurementProtocol::wall_time(Seconds iteration_time, bool clock_change) const {
  const long iterations = calibration_warmup + calibration_iterations + warmup_iterations +
                          window_iterations(iteration_time);
  return (clock_change ? clock_settle : Seconds(0.0)) + cooldown +
         iteration_time * static_cast<double>(iterations);
}

ReducedReading reduce(const WindowReading& reading, Watts static_power) {
  require(
      !reading.rank_elapsed.empty() && reading.rank_elapsed.size() == reading.rank_energy.size(),
      kWhere, "ranks",
      fmt::format("{} times, {} energies", reading.rank_elapsed.size(), reading.rank_energy.size()),
      "one elapsed time and one energy reading per rank, at least one rank");
  require(reading.iterations > 0, kWhere, "iterations", std::to_string(reading.iterations),
          "must be > 0");
  const double n = static_cast<double>(reading.iterations);
  Seconds slowest(0.0);
  Joules job(0.0);
  for (std::size_t r = 0; r < reading.rank_elapsed.size(); ++r) {
    slowest = std::max(slowest, reading.rank_elapsed[r]);
    job += reading.rank_energy[r];
  }
  ReducedReading out;
  out.time = slowest / n;
  out.total_energy = job / (n * static_cast<double>(reading.rank_energy.size()));
  out.dynamic_energy = out.total_energy - static_power * out.time;
  return out;
}

}  // namespace kareus::executor
