// SPDX-License-Identifier: Apache-2.0
#include "roofline_prior.hpp"

#include <algorithm>

namespace kareus::search {
namespace {

using workload::Kernel;
using workload::KernelKind;

double kernel_seconds(const Kernel& k, double clock_fraction, double sm_fraction,
                      const GpuSpec& gpu) {
  const double flops_rate =
      gpu.peak_bf16_dense_tflops * 1e12 * clock_fraction * std::max(sm_fraction, 1e-3);
  const double bytes_rate = gpu.memory_bandwidth_gbps * 1e9;
  return std::max(k.flops / flops_rate, k.bytes / bytes_rate);
}

}  // namespace

RooflineFigures roofline(const partition::Partition& p, const partition::ExecConfig& config,
                         const GpuSpec& gpu) {
  RooflineFigures r;
  const double clock_fraction = config.clock / gpu.peak_reference_clock;
  const double sm_fraction =
      static_cast<double>(gpu.sm_count - config.comm_sms) / static_cast<double>(gpu.sm_count);
  const partition::LaunchSlot* slot = p.find_slot(config.slot);
  const int launch = slot ? slot->op_index : 0;

  std::vector<double> start;
  std::vector<double> length;
  for (std::size_t i = 0; i < p.compute.size(); ++i) {
    start.push_back(r.compute_s);
    length.push_back(kernel_seconds(p.compute[i], clock_fraction, sm_fraction, gpu));
    if (static_cast<int>(i) < launch) r.launch_offset_s += length.back();
    r.compute_s += length.back();
  }
  if (p.comm) {
    // The catalogue's bandwidth curve: linear in CTAs x clock, saturating at the topology's
    // ceiling.
    r.comm_s = gpu.collective_latency.value() +
               workload::bus_bytes(*p.comm) / gpu.collective_busbw(config.comm_sms, config.clock);
  }
  r.partition_s = std::max(r.compute_s, r.launch_offset_s + r.comm_s);
  r.exposed_comm_s = r.partition_s - r.compute_s;
  const double window_end = r.launch_offset_s + r.comm_s;
  for (std::size_t i = 0; i < p.compute.size(); ++i) {
    if (p.compute[i].kind != KernelKind::kMemory) continue;
    const double overlap =
        std::min(window_end, start[i] + length[i]) - std::max(r.launch_offset_s, start[i]);
    r.overlapped_memory_s += std::max(0.0, overlap);
  }
  const double cube = (config.clock / gpu.clock_max) * (config.clock / gpu.clock_max) *
                      (config.clock / gpu.clock_max);
  r.dynamic_proxy = cube * (r.compute_s * sm_fraction +
                            r.comm_s * static_cast<double>(config.comm_sms) / gpu.sm_count);
  return r;
}

std::vector<double> roofline_features(const partition::Partition& p,
                                      const partition::ExecConfig& config, const GpuSpec& gpu) {
  const RooflineFigures r = roofline(p, config, gpu);
  const partition::LaunchSlot* slot = p.find_slot(config.slot);
  return {config.clock.value(),
          static_cast<double>(config.comm_sms),
          static_cast<double>(slot ? slot->op_index : 0),
          r.compute_s,
          r.launch_offset_s,
          r.comm_s,
          r.partition_s,
          r.exposed_comm_s,
          r.overlapped_memory_s,
          r.dynamic_proxy};
}

}  // namespace kareus::search
