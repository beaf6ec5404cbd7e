// SPDX-License-Identifier: Apache-2.0
// The GPU catalogue: one JSON file per GPU type in data/gpus/, every number with its source.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "kareus/core/units.hpp"

namespace kareus {

class JsonValue;

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
  // Share of a fully active SM's dynamic power that an SM holding a CTA draws whatever its
  // progress (clock tree, schedulers, resident warps): kept for the whole time a kernel is
  // stretched. The rest follows the work done, so a stretched kernel spreads the same work
  // energy over a longer time.
  double sm_resident_power_fraction = 0;

  // FlashAttention's main loop rate as a fraction of the datasheet tensor rate, and the fixed
  // cost of each CTA (loading its queries, the softmax epilogue, writing its output) in keys of
  // the loop: a CTA over L keys runs at L / (L + attention_kv_overhead) of the loop's rate.
  double attention_forward_efficiency = 0;
  double attention_backward_efficiency = 0;
  double attention_kv_overhead = 0;
  double memory_clock_knee_fraction = 0;
  // Tensor-core throughput of a matrix product's main loop, as a fraction of the datasheet rate
  // at the clock, and the fixed cost of each tile (prologue, epilogue) in elements of the
  // reduction dimension: a tile over K runs at K / (K + gemm_k_overhead) of the main loop's rate.
  double gemm_mma_efficiency = 0;
  double gemm_k_overhead = 0;
  double memory_efficiency = 0;
  double dynamic_power_coefficient = 0;  // W per (GHz x V^2) at full SM activity
  // Power of the memory system and on-chip fabric while a kernel runs; does not follow the SM
  // clock.
  Watts uncore_active_power;
  // SM-side activity (load/store units, L1, L2 and crossbar, all on the SM clock) of a
  // memory-bound kernel streaming at full HBM bandwidth, relative to a tensor-core GEMM.
  double data_movement_sm_activity = 0;
  // Activity of a collective's CTAs (copy, reduce and flag polling; they spin while they wait,
  // so they keep it when stretched) relative to a tensor-core GEMM's SMs.
  double collective_sm_activity = 0;
  // NCCL's fixed cost per call is collective_latency; a ring also fills and drains its pipeline
  // of chunks, one chunk time per hop (2(n-1) hops for AllReduce, n-1 for AllGather and
  // ReduceScatter), which costs up to collective_fill_per_hop a hop as chunks grow with the
  // message: (1 - exp(-bus bytes / collective_fill_bytes)) of it.
  Seconds collective_fill_per_hop;
  double collective_fill_bytes = 0;

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

// Loads data/gpus/<name>.json (or any path ending in .json, or a calibrated GPU of that name in
// the user's catalogue, hardware/gpu_file.hpp). Every numeric field must be an object
// {"value": ..., "source": "..."}; a number without a source is rejected.
GpuSpec load_gpu(const std::string& name_or_path);
// The GPU of a parsed GPU file (the same checks as load_gpu), e.g. a catalogue file with some
// constants replaced (hardware/gpu_file.hpp).
GpuSpec gpu_from_document(const JsonValue& root);
// Names of the GPUs in the catalogue, sorted.
std::vector<std::string> list_gpus();

}  // namespace kareus
