// SPDX-License-Identifier: Apache-2.0
#include "kareus/calibration/free_constants.hpp"

#include <fmt/format.h>

#include <functional>
#include <map>

namespace kareus::calibration {
namespace {

using BoundsOf = std::function<Bounds(const GpuSpec&)>;

Bounds fixed(double lower, double upper, std::string why) {
  return {lower, upper, std::move(why)};
}

// Each range is what the quantity can physically be, not a window around the catalogue's fit.
const std::map<std::string, BoundsOf>& physical_bounds() {
  static const std::map<std::string, BoundsOf> table = {
      {"gemm_mma_efficiency",
       [](const GpuSpec&) { return fixed(0.3, 1.0, "a fraction of the datasheet tensor rate"); }},
      {"gemm_k_overhead",
       [](const GpuSpec&) {
         return fixed(0, 4096, "a tile's fixed cost, in elements of its reduction loop");
       }},
      {"attention_forward_efficiency",
       [](const GpuSpec&) { return fixed(0.2, 1.0, "a fraction of the datasheet tensor rate"); }},
      {"attention_backward_efficiency",
       [](const GpuSpec&) { return fixed(0.2, 1.0, "a fraction of the datasheet tensor rate"); }},
      {"attention_kv_overhead",
       [](const GpuSpec&) { return fixed(0, 2048, "a CTA's fixed cost, in keys of its loop"); }},
      {"dynamic_power_coefficient_w_per_ghz_v2",
       [](const GpuSpec& g) {
         const double v = g.voltage(g.clock_max);
         const double top = 2 * g.power_limit_max.value() / (g.clock_max.value() / 1000 * v * v);
         return fixed(0.01 * top, top,
                      fmt::format("full activity at the top clock draws between 2 % and twice "
                                  "the {:g} W limit",
                                  g.power_limit_max.value()));
       }},
      {"uncore_active_power_w",
       [](const GpuSpec& g) {
         return fixed(0, (g.power_limit_max - g.idle_power).value(),
                      "between idle and the board's power limit");
       }},
      {"data_movement_sm_activity",
       [](const GpuSpec&) {
         return fixed(0.001, 1, "some activity, at most a tensor-core GEMM's");
       }},
      {"collective_sm_activity",
       [](const GpuSpec&) {
         return fixed(0.001, 1, "some activity, at most a tensor-core GEMM's");
       }},
      {"sm_resident_power_fraction",
       [](const GpuSpec&) { return fixed(0, 0.99, "a share of an active SM's power"); }},
      {"voltage_knee_mhz",
       [](const GpuSpec& g) {
         return fixed(g.clock_min.value(), g.clock_max.value(), "inside the clock range");
       }},
      {"voltage_slope_v_per_mhz",
       [](const GpuSpec& g) {
         return fixed(0, (1.2 - g.voltage_floor_v) / (0.25 * (g.clock_max - g.clock_min).value()),
                      "the voltage needs a quarter of the clock range at least to rise from its "
                      "floor to 1.2 V");
       }},
      {"collective_busbw_per_cta_gbps",
       [](const GpuSpec& g) {
         return fixed(0.5, g.collective_busbw_ceiling_gbps, "one CTA moves at most the ceiling");
       }},
      {"collective_saturation_sharpness",
       [](const GpuSpec&) { return fixed(0.5, 20, "from a soft to an abrupt saturation"); }},
      {"collective_latency_us",
       [](const GpuSpec&) { return fixed(1, 500, "a collective call's fixed cost"); }},
      {"collective_fill_per_hop_us",
       [](const GpuSpec&) { return fixed(0, 100, "a ring's fill time per hop"); }},
      {"collective_fill_bytes",
       [](const GpuSpec&) { return fixed(1e5, 1e10, "the message size over which a fill grows"); }},
      {"interference_memory_bound_gain",
       [](const GpuSpec&) { return fixed(0, 5, "a memory-bound kernel's extra stretch"); }},
      {"collective_stretch_latency_bound",
       [](const GpuSpec&) { return fixed(0, 5, "a latency-bound collective's stretch"); }},
      {"collective_stretch_memory",
       [](const GpuSpec&) { return fixed(0, 20, "a collective's stretch from memory traffic"); }},
  };
  return table;
}

}  // namespace

bool is_free(const std::string& source) {
  return source.starts_with("fitted") || source.starts_with("chosen") ||
         source.find("[derived]") != std::string::npos;
}

std::vector<FreeConstant> free_constants(const GpuFile& file) {
  const GpuSpec spec = file.spec();
  std::vector<FreeConstant> out;
  for (const std::string& key : file.constants()) {
    const std::string source = file.source(key);
    if (!is_free(source)) continue;
    FreeConstant c{key, file.value(key), source, std::nullopt};
    if (auto it = physical_bounds().find(key); it != physical_bounds().end())
      c.bounds = it->second(spec);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace kareus::calibration
