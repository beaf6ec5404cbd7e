#include "kareus/executor/emulator.hpp"

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"

namespace kareus::emulator {
namespace {

using workload::Kernel;
using workload::KernelKind;

// cuBLAS splits the reduction dimension of a product whose tiles cannot fill the GPU
// (split-K), but not into chunks shorter than this many elements of K [E: CUTLASS split-K
// examples use 128-512-wide K slices; the middle is taken].
constexpr double kMinSplitKChunk = 256;

}  // namespace

RunResult& RunResult::operator+=(const RunResult& o) {
  time += o.time;
  dynamic_energy += o.dynamic_energy;
  static_energy += o.static_energy;
  clock_seconds += o.clock_seconds;
  return *this;
}

// Duration of each active kernel in this phase (as if the phase lasted the whole kernel) and
// the power drawn while it lasts.
struct Emulator::Phase {
  MHz clock;
  double compute_duration = 0;  // s for the whole compute kernel at this phase's conditions
  double comm_duration = 0;     // s for the whole collective
  double dynamic_power = 0;     // W above the idle power at this clock
  double idle_power = 0;        // W: board power at this clock with nothing running
  double total_power() const { return dynamic_power + idle_power; }
};

Emulator::Emulator(GpuSpec gpu, EmulatorOptions options)
    : gpu_(std::move(gpu)), options_(options), governor_clocks_(gpu_.supported_clocks()) {}

double Emulator::launch_grid(const Kernel& k) const {
  if (k.gemm_m <= 0 || k.gemm_n <= 0 || k.gemm_batch <= 0) return 0;
  const double batch = k.gemm_batch;
  if (k.kind == KernelKind::kAttention) {
    // FlashAttention launches one CTA per block of query rows per (sequence, head).
    return std::ceil(k.gemm_m / gpu_.gemm_tile_m) * batch;
  }
  double tiles =
      std::ceil(k.gemm_m / gpu_.gemm_tile_m) * std::ceil(k.gemm_n / gpu_.gemm_tile_n) * batch;
  if (tiles < gpu_.sm_count) {
    const double split =
        std::min(std::floor(gpu_.sm_count / tiles), std::floor(k.gemm_k / kMinSplitKChunk));
    tiles *= std::max(1.0, split);
  }
  return tiles;
}

ComputeAlone Emulator::compute_alone(const Kernel& k, int sms, MHz f) const {
  const GpuSpec& g = gpu_;
  const double n = g.sm_count;
  const double s = std::clamp(static_cast<double>(sms), 1.0, n);
  ComputeAlone out;
  if (k.flops > 0) {
    double eff = g.gemm_efficiency;
    if (k.kind == KernelKind::kAttention)
      eff = k.backward ? g.attention_backward_efficiency : g.attention_forward_efficiency;
    const double full_gpu_time =
        k.flops / (g.peak_bf16_dense_tflops * 1e12 * (f / g.peak_reference_clock) * eff);
    // Tiles run in waves of one CTA per SM: a partial last wave leaves SMs idle, and SMs taken
    // by a collective add waves (W'/W). A kernel without a known shape divides evenly.
    const double grid = launch_grid(k);
    const double waves = grid > 0 ? std::ceil(grid / s) : grid;
    out.math_time = grid > 0 ? full_gpu_time * n * waves / grid : full_gpu_time * n / s;
    out.busy_sms = grid > 0 ? std::min(s, grid / waves) : s;
  }
  const double clock_factor =
      std::min(1.0, f.value() / (g.memory_clock_knee_fraction * g.clock_max.value()));
  const double hbm = g.memory_bandwidth_gbps * 1e9 * g.memory_efficiency * clock_factor;
  out.memory_time = k.bytes / (hbm * g.memory_sm_scaling(s / n));
  out.duration = std::max(out.math_time, out.memory_time) + g.kernel_launch_overhead.value();
  out.duration = std::max(out.duration, g.host_launch_interval.value());
  out.held_sms = s;
  return out;
}

double Emulator::collective_alone(const Kernel& comm, int ctas, MHz f, double* busbw) const {
  const double bw = comm.link == workload::Link::kScaleOut
                        ? gpu_.scale_out_bandwidth_per_gpu_gbps * 1e9
                        : gpu_.collective_busbw(ctas, f);
  if (busbw) *busbw = bw;
  return gpu_.collective_latency.value() + workload::bus_bytes(comm) / std::max(bw, 1.0);
}

double Emulator::active_sm_power(MHz f) const {
  // SM switching power ~ V^2 f per active SM.
  const double v = gpu_.voltage(f);
  return gpu_.dynamic_power_coefficient * v * v * (f.value() / 1000.0) / gpu_.sm_count;
}

double Emulator::hbm_power(double bytes_per_second) const {
  return bytes_per_second * 8.0 * gpu_.memory_access_energy_pj_per_bit * 1e-12;
}

double Emulator::compute_power(const ComputeAlone& c, const Kernel& k, MHz f) const {
  const double math_busy = c.math_time / c.duration;
  return active_sm_power(f) * (c.busy_sms * math_busy +
                               c.held_sms * (1.0 - math_busy) * gpu_.data_movement_sm_activity) +
         gpu_.uncore_active_power.value() + hbm_power(k.bytes / c.duration);
}

double Emulator::collective_power(const Kernel& comm, int ctas, double duration, MHz f) const {
  return active_sm_power(f) * ctas * gpu_.data_movement_sm_activity +
         hbm_power(gpu_.hbm_bytes_per_link_byte * workload::bus_bytes(comm) / duration);
}

Emulator::Phase Emulator::evaluate(const Kernel* compute, const Kernel* comm, int comm_sms,
                                   MHz f) const {
  const GpuSpec& g = gpu_;
  const int n = g.sm_count;
  Phase p;
  p.clock = f;
  p.idle_power = g.idle_power_at(f).value();
  // NVLink traffic of the collective as a share of HBM bandwidth: what the compute kernel
  // beside it competes with (NVIDIA/nccl#1428: 2-3 HBM bytes per NVLink byte).
  double comm_busbw = 0;
  double comm_alone = 0;
  double comm_hbm_share = 0;
  if (comm) {
    comm_alone = collective_alone(*comm, comm_sms, f, &comm_busbw);
    const double hbm = g.memory_bandwidth_gbps * 1e9 * g.memory_efficiency;
    comm_hbm_share = std::min(1.0, g.hbm_bytes_per_link_byte * comm_busbw / hbm);
    p.comm_duration = comm_alone;
    p.dynamic_power += collective_power(*comm, comm_sms, comm_alone, f);
  }
  if (!compute) return p;
  const ComputeAlone c = compute_alone(*compute, n - (comm ? comm_sms : 0), f);
  p.compute_duration = c.duration;
  if (!comm) {
    p.dynamic_power += compute_power(c, *compute, f);
    return p;
  }
  const ComputeAlone whole_gpu = compute_alone(*compute, n, f);
  // Both kernels stretch while they share the GPU: the compute kernel with the HBM traffic the
  // collective causes, worse the more memory-bound it is; the collective when it is
  // latency-bound (few CTAs, far from saturating its links) and, as the memory path fills,
  // with the traffic it moves itself.
  const double memory_bound = std::min(1.0, c.memory_time / c.duration);
  p.compute_duration *=
      1.0 + comm_hbm_share * (1.0 + g.interference_memory_bound_gain * memory_bound);
  // A stretched kernel (fewer SMs, more waves, interference) does the same work over a longer
  // time; its SMs, resident and stalled, keep drawing part of their power meanwhile.
  const double stretch = p.compute_duration / whole_gpu.duration;
  p.dynamic_power += compute_power(whole_gpu, *compute, f) *
                     (1.0 + g.stalled_power_fraction * (stretch - 1.0)) / stretch;
  const double unsaturated =
      std::max(0.0, 1.0 - comm_busbw / (g.collective_busbw_ceiling_gbps * 1e9));
  p.comm_duration *= 1.0 + g.collective_stretch_latency_bound * unsaturated * (1.0 + memory_bound) +
                     g.collective_stretch_memory * comm_hbm_share * comm_hbm_share;
  return p;
}

Emulator::Phase Emulator::evaluate_under(const Kernel* compute, const Kernel* comm, int comm_sms,
                                         const ClockPolicy& policy) const {
  // A locked clock is an upper bound: the power limit still throttles below it, as on real
  // GPUs (GEMMs at 1410 MHz on A100 sit under the 400 W cap, gpu-physics-anchors C4). The
  // default governor boosts up to the maximum clock under the same rule.
  const MHz ceiling = policy.mode == ClockPolicy::Mode::kLocked ? policy.locked : gpu_.clock_max;
  const double limit = policy.mode == ClockPolicy::Mode::kLocked ? gpu_.power_limit_default.value()
                                                                 : policy.power_limit.value();
  Phase top = evaluate(compute, comm, comm_sms, ceiling);
  if (top.total_power() <= limit) return top;
  // Power rises with the clock, so a binary search over the supported clocks below the
  // ceiling finds the highest one that fits.
  const auto end = std::upper_bound(governor_clocks_.begin(), governor_clocks_.end(), ceiling);
  std::size_t lo = 0;
  std::size_t hi = static_cast<std::size_t>(end - governor_clocks_.begin());
  if (hi == 0) return top;
  Phase best = evaluate(compute, comm, comm_sms, governor_clocks_[lo]);
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    Phase p = evaluate(compute, comm, comm_sms, governor_clocks_[mid]);
    if (p.total_power() <= limit) {
      lo = mid;
      best = p;
    } else {
      hi = mid;
    }
  }
  return best;
}

RunResult Emulator::run_partition(const PartitionProgram& program,
                                  const ClockPolicy& policy) const {
  const std::size_t n = program.compute.size();
  if (program.comm &&
      (program.launch_index < 0 || static_cast<std::size_t>(program.launch_index) > n))
    throw Error("internal: partition launch index out of range");
  if (program.comm && program.comm->link == workload::Link::kNvlink &&
      (program.comm_sms < 1 || program.comm_sms >= gpu_.sm_count))
    throw Error("internal: a collective needs between 1 SM and all but one of the GPU's SMs");
  double t = 0, energy = 0, clock_s = 0;
  double comm_left = program.comm ? 1.0 : 0.0;  // fraction of the collective still to run
  bool comm_running = false;
  auto advance = [&](const Phase& p, double dt) {
    t += dt;
    energy += p.total_power() * dt;
    clock_s += p.clock.value() * dt;
  };
  for (std::size_t i = 0; i <= n; ++i) {
    if (program.comm && static_cast<std::size_t>(program.launch_index) == i) comm_running = true;
    if (i == n) break;
    const Kernel* k = &program.compute[i];
    double left = 1.0;
    while (left > 0) {
      if (comm_running && comm_left > 0) {
        // The overlap lasts as long as the shorter stretched kernel; the rest runs alone.
        const Phase p = evaluate_under(k, program.comm, program.comm_sms, policy);
        const double dt = std::min(left * p.compute_duration, comm_left * p.comm_duration);
        advance(p, dt);
        left = std::max(0.0, left - dt / p.compute_duration);
        comm_left = std::max(0.0, comm_left - dt / p.comm_duration);
        if (left < 1e-12) left = 0;
        if (comm_left < 1e-12) comm_left = 0;
      } else {
        const Phase p = evaluate_under(k, nullptr, 0, policy);
        advance(p, left * p.compute_duration);
        left = 0;
      }
    }
  }
  if (comm_left > 0) {
    const Phase p = evaluate_under(nullptr, program.comm, program.comm_sms, policy);
    advance(p, comm_left * p.comm_duration);
  }
  // Kareus and Perseus split a measurement into static energy (their blocked-GPU power times
  // time) and the rest, which they call dynamic; the emulator reports the same split.
  RunResult r;
  r.time = Seconds(t);
  r.static_energy = gpu_.static_power * r.time;
  r.dynamic_energy = Joules(energy) - r.static_energy;
  r.clock_seconds = clock_s;
  return r;
}

RunResult Emulator::run_sequential(std::span<const Kernel> kernels, const ClockPolicy& policy,
                                   int comm_sms) const {
  const int sms = comm_sms > 0 ? comm_sms : gpu_.nccl_default_channels;
  RunResult total;
  for (const Kernel& k : kernels) {
    PartitionProgram p;
    if (k.is_collective()) {
      p.comm = &k;
      p.comm_sms = sms;
      p.launch_index = 0;
    } else {
      p.compute = std::span<const Kernel>(&k, 1);
    }
    total += run_partition(p, policy);
  }
  return total;
}

RunResult Emulator::run_kernel(const Kernel& kernel, const ClockPolicy& policy) const {
  return run_sequential(std::span<const Kernel>(&kernel, 1), policy);
}

Seconds Emulator::kernel_time(const Kernel& kernel, MHz f, int sms) const {
  if (kernel.is_collective()) return Seconds(collective_alone(kernel, sms, f));
  return Seconds(compute_alone(kernel, sms, f).duration);
}

CoRun Emulator::co_run(const Kernel& compute, const Kernel& comm, int comm_sms,
                       const ClockPolicy& policy) const {
  const Phase p = evaluate_under(&compute, &comm, comm_sms, policy);
  return {p.clock, Seconds(p.compute_duration), Seconds(p.comm_duration), Watts(p.total_power())};
}

RunResult Emulator::measure(const RunResult& exact, Rng& rng, Seconds elapsed) const {
  RunResult r = exact;
  const double drift = 1.0 + options_.drift_per_hour * to_hours(elapsed);
  const double time_noise = options_.noise_sigma > 0 ? rng.normal(1.0, options_.noise_sigma) : 1.0;
  const double energy_noise =
      options_.noise_sigma > 0 ? rng.normal(1.0, options_.noise_sigma) : 1.0;
  r.time = exact.time * std::max(0.5, time_noise);
  r.static_energy = gpu_.static_power * r.time;
  r.dynamic_energy = exact.dynamic_energy * std::max(0.5, energy_noise) * drift;
  r.clock_seconds = exact.clock_seconds * (r.time / exact.time);
  return r;
}

}  // namespace kareus::emulator
