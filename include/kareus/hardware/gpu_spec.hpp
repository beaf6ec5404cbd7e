// The GPU catalogue: one JSON file per GPU type in data/gpus/, every number with its source.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "kareus/core/units.hpp"

namespace kareus {

// A monotone piecewise-linear curve y(x) through measured points, clamped at both ends.
class PiecewiseLinear {
 public:
  PiecewiseLinear() = default;
  explicit PiecewiseLinear(std::vector<std::pair<double, double>> points);
  double operator()(double x) const;
  const std::vector<std::pair<double, double>>& points() const { return points_; }

 private:
  std::vector<std::pair<double, double>> points_;
};

struct GpuSpec {
  std::string name;
  std::string display_name;
  int sm_count = 0;

  MHz clock_min, clock_max, clock_step, default_application_clock;
  // The clock range Kareus searches (the artifact uses 1410..900 step 30 on A100).
  MHz search_clock_max, search_clock_min, search_clock_step;

  double memory_clock_mhz = 0;
  // The datasheet's memory size; its "GB" are binary (HBM and GDDR chips come in powers of two).
  double memory_capacity_gib = 0;
  double memory_bandwidth_gbps = 0;  // GB/s
  double l2_cache_mb = 0;
  double peak_bf16_dense_tflops = 0;  // at peak_reference_clock
  MHz peak_reference_clock;
  double nvlink_per_direction_gbps = 0;
  double collective_busbw_ceiling_gbps = 0;
  double scale_out_bandwidth_per_gpu_gbps = 0;

  Watts power_limit_min, power_limit_default, power_limit_max;
  Watts idle_power;
  // Power of a GPU blocked on communication (Kareus/Perseus "P2P" power): the static part.
  Watts static_power;

  // Board power at a locked clock with nothing running (W vs MHz): the part of static power
  // that follows the clock. static_power above stays the accounting convention (Kareus/Perseus
  // subtract it from measured energy to get "dynamic" energy).
  PiecewiseLinear locked_idle_power;

  double voltage_floor_v = 0;
  MHz voltage_knee;
  double voltage_slope_v_per_mhz = 0;

  int nccl_default_channels = 0;
  Seconds collective_latency;
  double memory_access_energy_pj_per_bit = 0;
  // GPU-side gap between consecutive kernels on a stream, and the host launch path's floor on
  // how often one stream can start a kernel (a kernel shorter than it leaves the GPU waiting).
  Seconds kernel_launch_overhead;
  Seconds host_launch_interval;

  // Matrix-product tiling, for wave quantisation: one CTA per tile per SM at a time.
  int gemm_tile_m = 0;
  int gemm_tile_n = 0;
  PiecewiseLinear memory_sm_scaling;  // memory-bound throughput fraction vs SM fraction

  // Collective bus bandwidth on c CTAs at clock f: x / (1 + x^p)^(1/p) of the ceiling, with
  // x = c x per-CTA bandwidth x f / f_max / ceiling (linear in CTAs x clock, then saturating).
  double collective_busbw_per_cta_gbps = 0;
  double collective_saturation_sharpness = 0;

  // Co-run interference (docs/emulator.md): HBM bytes moved per byte a collective sends over
  // NVLink; how much more a memory-bound kernel suffers from that traffic than a compute-bound
  // one; and how much a co-running compute kernel stretches the collective, when the
  // collective is latency-bound (few CTAs) and through the memory traffic it causes.
  double hbm_bytes_per_link_byte = 0;
  double interference_memory_bound_gain = 0;
  double collective_stretch_latency_bound = 0;
  double collective_stretch_memory = 0;
  // Share of its power a compute kernel keeps drawing for the time it is stretched by
  // interference (its SMs stay resident and stall).
  double stalled_power_fraction = 0;

  double attention_forward_efficiency = 0;
  double attention_backward_efficiency = 0;
  double memory_clock_knee_fraction = 0;
  double gemm_efficiency = 0;
  double memory_efficiency = 0;
  double dynamic_power_coefficient = 0;  // W per (GHz x V^2) at full SM activity
  // Power of the memory system and on-chip fabric while a kernel runs; does not follow the SM
  // clock.
  Watts uncore_active_power;
  // SM activity of kernels that mostly move data (elementwise ops, collectives' copy loops)
  // relative to a tensor-core GEMM.
  double data_movement_sm_activity = 0;

  // Every supported SM clock, ascending.
  std::vector<MHz> supported_clocks() const;
  // The clocks Kareus searches, descending from search_clock_max (as the artifact lists them).
  std::vector<MHz> search_clocks() const;
  bool supports_clock(MHz f) const;
  // Graphics voltage: flat at the floor up to the knee, linear above it.
  double voltage(MHz f) const;
  // Board power at a locked clock f with nothing running.
  Watts idle_power_at(MHz f) const { return Watts(locked_idle_power(f.value())); }
  // Collective bus bandwidth (B/s) on `ctas` CTAs at clock f over NVLink/NVSwitch or PCIe.
  double collective_busbw(double ctas, MHz f) const;
};

// Loads data/gpus/<name>.json (or any path ending in .json). Every numeric field must be an
// object {"value": ..., "source": "..."}; a number without a source is rejected.
GpuSpec load_gpu(const std::string& name_or_path);
// Names of the GPUs in the catalogue, sorted.
std::vector<std::string> list_gpus();

}  // namespace kareus
