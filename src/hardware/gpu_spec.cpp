// SPDX-License-Identifier: Apache-2.0
#include "kareus/hardware/gpu_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/hardware/gpu_file.hpp"

namespace kareus {
namespace fs = std::filesystem;

PiecewiseLinear::PiecewiseLinear(std::vector<std::pair<double, double>> points)
    : points_(std::move(points)) {
  if (points_.size() < 2) throw Error("internal: a piecewise-linear curve needs 2 points");
}

double PiecewiseLinear::operator()(double x) const {
  if (x <= points_.front().first) return points_.front().second;
  if (x >= points_.back().first) return points_.back().second;
  auto hi = std::upper_bound(points_.begin(), points_.end(), x,
                             [](double v, const auto& p) { return v < p.first; });
  auto lo = hi - 1;
  const double t = (x - lo->first) / (hi->first - lo->first);
  return lo->second + t * (hi->second - lo->second);
}

std::vector<MHz> GpuSpec::supported_clocks() const {
  std::vector<MHz> out;
  for (double f = clock_min.value(); f <= clock_max.value() + 1e-9; f += clock_step.value())
    out.emplace_back(f);
  return out;
}

std::vector<MHz> GpuSpec::search_clocks() const {
  std::vector<MHz> out;
  for (double f = search_clock_max.value(); f >= search_clock_min.value() - 1e-9;
       f -= search_clock_step.value())
    out.emplace_back(f);
  return out;
}

bool GpuSpec::supports_clock(MHz f) const {
  // NVML lists and locks whole MHz: 1740.5 or 1740.0001 is no clock of any GPU.
  if (f.value() != std::round(f.value())) return false;
  if (f < clock_min - MHz(1e-9) || f > clock_max + MHz(1e-9)) return false;
  const double steps = (f - clock_min).value() / clock_step.value();
  return std::fabs(steps - std::round(steps)) < 1e-6;
}

double GpuSpec::voltage(MHz f) const {
  return voltage_floor_v + voltage_slope_v_per_mhz * std::max(0.0, (f - voltage_knee).value());
}

double GpuSpec::collective_busbw(double ctas, MHz f) const {
  const double ceiling = collective_busbw_ceiling_gbps * 1e9;
  const double x = ctas * collective_busbw_per_cta_gbps * 1e9 * (f / clock_max) / ceiling;
  const double p = collective_saturation_sharpness;
  return ceiling * x / std::pow(1.0 + std::pow(x, p), 1.0 / p);
}

namespace {

// A sourced number: {"value": x, "source": "..."}.
double sourced(const JsonValue& root, std::string_view key) {
  const JsonValue field = root.at(key);
  if (!field.is_object())
    field.fail(R"(expected {"value": <number>, "source": "<where it comes from>"})");
  const std::string source = field.string("source");
  if (source.empty()) field.at("source").fail("every figure needs a non-empty source");
  return field.number("value");
}

double sourced_positive(const JsonValue& root, std::string_view key) {
  const double v = sourced(root, key);
  if (!(v > 0)) root.at(key).at("value").fail("expected a positive number");
  return v;
}

PiecewiseLinear sourced_curve(const JsonValue& root, std::string_view key) {
  const JsonValue field = root.at(key);
  if (field.string("source").empty()) field.at("source").fail("every curve needs a source");
  const JsonValue points = field.at("points");
  std::vector<std::pair<double, double>> out;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const JsonValue p = points.at(i);
    if (p.size() != 2) p.fail("expected a [x, y] pair");
    out.emplace_back(p.at(std::size_t{0}).as_number(), p.at(std::size_t{1}).as_number());
    if (i > 0 && !(out[i].first > out[i - 1].first)) p.fail("x values must increase");
  }
  if (out.size() < 2) points.fail("expected at least 2 points");
  return PiecewiseLinear(std::move(out));
}

GpuSpec parse_gpu(const JsonValue& r) {
  GpuSpec g;
  g.name = r.string("name");
  g.display_name = r.string("display_name");
  g.sm_count = static_cast<int>(sourced_positive(r, "sm_count"));
  g.clock_min = MHz(sourced_positive(r, "clock_min_mhz"));
  g.clock_max = MHz(sourced_positive(r, "clock_max_mhz"));
  g.clock_step = MHz(sourced_positive(r, "clock_step_mhz"));
  g.default_application_clock = MHz(sourced_positive(r, "default_application_clock_mhz"));
  g.search_clock_max = MHz(sourced_positive(r, "search_clock_max_mhz"));
  g.search_clock_min = MHz(sourced_positive(r, "search_clock_min_mhz"));
  g.search_clock_step = MHz(sourced_positive(r, "search_clock_step_mhz"));
  g.memory_clock_mhz = sourced_positive(r, "memory_clock_mhz");
  g.memory_capacity_gib = sourced_positive(r, "memory_capacity_gib");
  g.memory_bandwidth_gbps = sourced_positive(r, "memory_bandwidth_gbps");
  g.l2_cache_mb = sourced_positive(r, "l2_cache_mb");
  g.peak_bf16_dense_tflops = sourced_positive(r, "peak_bf16_dense_tflops");
  g.peak_reference_clock = MHz(sourced_positive(r, "peak_reference_clock_mhz"));
  g.nvlink_per_direction_gbps = sourced_positive(r, "nvlink_per_direction_gbps");
  g.collective_busbw_ceiling_gbps = sourced_positive(r, "collective_busbw_ceiling_gbps");
  g.scale_out_bandwidth_per_gpu_gbps = sourced_positive(r, "scale_out_bandwidth_per_gpu_gbps");
  g.power_limit_min = Watts(sourced_positive(r, "power_limit_min_w"));
  g.power_limit_default = Watts(sourced_positive(r, "power_limit_default_w"));
  g.power_limit_max = Watts(sourced_positive(r, "power_limit_max_w"));
  g.idle_power = Watts(sourced_positive(r, "idle_power_w"));
  g.static_power = Watts(sourced_positive(r, "static_power_w"));
  g.voltage_floor_v = sourced_positive(r, "voltage_floor_v");
  g.voltage_knee = MHz(sourced_positive(r, "voltage_knee_mhz"));
  g.voltage_slope_v_per_mhz = sourced(r, "voltage_slope_v_per_mhz");
  g.nccl_default_channels = static_cast<int>(sourced_positive(r, "nccl_default_channels"));
  g.collective_latency = microseconds(sourced_positive(r, "collective_latency_us"));
  g.memory_access_energy_pj_per_bit = sourced_positive(r, "memory_access_energy_pj_per_bit");
  g.kernel_launch_overhead = microseconds(sourced(r, "kernel_launch_overhead_us"));
  g.host_launch_interval = microseconds(sourced(r, "host_launch_interval_us"));
  g.locked_idle_power = sourced_curve(r, "locked_idle_power_w");
  g.gemm_tile_m = static_cast<int>(sourced_positive(r, "gemm_tile_m"));
  g.gemm_tile_n = static_cast<int>(sourced_positive(r, "gemm_tile_n"));
  g.memory_sm_scaling = sourced_curve(r, "memory_sm_scaling");
  g.collective_busbw_per_cta_gbps = sourced_positive(r, "collective_busbw_per_cta_gbps");
  g.collective_saturation_sharpness = sourced_positive(r, "collective_saturation_sharpness");
  g.hbm_bytes_per_link_byte = sourced_positive(r, "hbm_bytes_per_link_byte");
  g.interference_memory_bound_gain = sourced(r, "interference_memory_bound_gain");
  g.collective_stretch_latency_bound = sourced(r, "collective_stretch_latency_bound");
  g.collective_stretch_memory = sourced(r, "collective_stretch_memory");
  g.sm_resident_power_fraction = sourced(r, "sm_resident_power_fraction");
  g.uncore_active_power = Watts(sourced(r, "uncore_active_power_w"));
  g.attention_forward_efficiency = sourced_positive(r, "attention_forward_efficiency");
  g.attention_backward_efficiency = sourced_positive(r, "attention_backward_efficiency");
  g.attention_kv_overhead = sourced(r, "attention_kv_overhead");
  g.memory_clock_knee_fraction = sourced_positive(r, "memory_clock_knee_fraction");
  g.gemm_mma_efficiency = sourced_positive(r, "gemm_mma_efficiency");
  g.gemm_k_overhead = sourced(r, "gemm_k_overhead");
  g.memory_efficiency = sourced_positive(r, "memory_efficiency");
  g.dynamic_power_coefficient = sourced_positive(r, "dynamic_power_coefficient_w_per_ghz_v2");
  g.data_movement_sm_activity = sourced_positive(r, "data_movement_sm_activity");
  g.collective_sm_activity = sourced_positive(r, "collective_sm_activity");
  g.collective_fill_per_hop = microseconds(sourced(r, "collective_fill_per_hop_us"));
  g.collective_fill_bytes = sourced_positive(r, "collective_fill_bytes");

  const std::string& src = r.source();
  auto check = [&](bool ok, std::string_view field, double value, std::string_view allowed) {
    require(ok, src, field, format_number(value), allowed);
  };
  check(g.clock_min < g.clock_max, "clock_min_mhz", g.clock_min.value(),
        "must be below clock_max_mhz");
  check(g.supports_clock(g.search_clock_max) && g.supports_clock(g.search_clock_min) &&
            g.search_clock_min <= g.search_clock_max,
        "search_clock_max_mhz", g.search_clock_max.value(),
        "search range must lie on the supported clock grid, min <= max");
  check(g.power_limit_min <= g.power_limit_default && g.power_limit_default <= g.power_limit_max,
        "power_limit_default_w", g.power_limit_default.value(), "must lie in [min, max]");
  check(g.static_power < g.power_limit_default, "static_power_w", g.static_power.value(),
        "must be below the default power limit");
  check(g.gemm_mma_efficiency <= 1 && g.memory_efficiency <= 1, "gemm_mma_efficiency",
        g.gemm_mma_efficiency, "efficiencies must be in (0, 1]");
  check(g.sm_resident_power_fraction >= 0 && g.sm_resident_power_fraction < 1,
        "sm_resident_power_fraction", g.sm_resident_power_fraction, "must be in [0, 1)");
  return g;
}

}  // namespace

GpuSpec load_gpu(const std::string& name_or_path) {
  fs::path path = name_or_path;
  if (path.extension() != ".json") path = data_dir() / "gpus" / (name_or_path + ".json");
  // A name too long for the file system is an unknown name, not an exception.
  std::error_code missing;
  if (!fs::exists(path, missing) && fs::path(name_or_path).extension() != ".json") {
    if (auto user = find_user_gpu(name_or_path)) path = *user;
  }
  if (!fs::exists(path, missing)) {
    std::string known;
    for (const auto& n : list_gpus()) known += (known.empty() ? "" : ", ") + n;
    throw Error::invalid("", "gpu", name_or_path, "unknown GPU; known: " + known);
  }
  return parse_gpu(JsonDocument::load_file(path).root());
}

std::vector<std::string> list_gpus() {
  std::vector<std::string> names;
  const fs::path dir = data_dir() / "gpus";
  if (!fs::exists(dir)) return names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

GpuSpec gpu_from_document(const JsonValue& root) {
  return parse_gpu(root);
}

}  // namespace kareus
