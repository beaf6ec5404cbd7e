// SPDX-License-Identifier: Apache-2.0
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

RunLedger& RunLedger::operator+=(const RunLedger& o) {
  idle += o.idle;
  compute_dynamic += o.compute_dynamic;
  collective_dynamic += o.collective_dynamic;
  compute_time += o.compute_time;
  overlap_time += o.overlap_time;
  collective_time += o.collective_time;
  launch_gap_time += o.launch_gap_time;
  return *this;
}

RunResult& RunResult::operator+=(const RunResult& o) {
  time += o.time;
  dynamic_energy += o.dynamic_energy;
  static_energy += o.static_energy;
  clock_seconds += o.clock_seconds;
  ledger += o.ledger;
  return *this;
}

// Duration of each active kernel in this phase (as if the phase lasted the whole kernel) and
// the power drawn while it lasts.
struct Emulator::Phase {
  MHz clock;
  double compute_duration = 0;   // s for the whole compute kernel at this phase's conditions
  double compute_gap_share = 0;  // of it, between kernels (launch overhead, host launch path)
  double comm_duration = 0;      // s for the whole collective
  double compute_power = 0;      // W above idle
  double comm_power = 0;         // W above idle
  double idle_power = 0;         // W: board power at this clock with nothing running
  bool compute = false;
  bool comm = false;
  double total_power() const { return compute_power + comm_power + idle_power; }
};

Emulator::Emulator(GpuSpec gpu, EmulatorOptions options)
    : gpu_(std::move(gpu)), options_(options), governor_clocks_(gpu_.supported_clocks()) {}

LaunchGrid Emulator::launch_grid(const Kernel& k) const {
  if (k.gemm_m <= 0 || k.gemm_n <= 0 || k.gemm_batch <= 0) return {};
  const double batch = k.gemm_batch;
  if (k.kind == KernelKind::kAttention) {
    // FlashAttention launches one CTA per block of query rows per (sequence, head).
    return {std::ceil(k.gemm_m / gpu_.gemm_tile_m) * batch, k.gemm_k};
  }
  double tiles =
      std::ceil(k.gemm_m / gpu_.gemm_tile_m) * std::ceil(k.gemm_n / gpu_.gemm_tile_n) * batch;
  double split = 1;
  if (tiles < gpu_.sm_count) {
    split = std::max(
        1.0, std::min(std::floor(gpu_.sm_count / tiles), std::floor(k.gemm_k / kMinSplitKChunk)));
  }
  return {tiles * split, k.gemm_k / split};
}

double Emulator::math_efficiency(const Kernel& k, const LaunchGrid& grid) const {
  const GpuSpec& g = gpu_;
  if (k.kind == KernelKind::kAttention) {
    // Each CTA walks the keys its queries see (half of them under the causal mask).
    const double keys = k.gemm_n;
    const double loop =
        k.backward ? g.attention_backward_efficiency : g.attention_forward_efficiency;
    return keys > 0 ? loop * keys / (keys + g.attention_kv_overhead) : loop;
  }
  // Each tile pays a prologue and an epilogue besides its main loop over K (public A100 GEMMs:
  // a long-K product runs near the main loop's rate, a K = 768 one at about 60 % of it).
  const double k_len = grid.k_per_cta > 0 ? grid.k_per_cta : k.gemm_k;
  const double tile = k_len > 0 ? k_len / (k_len + g.gemm_k_overhead) : 1.0;
  return g.gemm_mma_efficiency * tile;
}

ComputeAlone Emulator::compute_alone(const Kernel& k, int sms, MHz f) const {
  const GpuSpec& g = gpu_;
  const double n = g.sm_count;
  const double s = std::clamp(static_cast<double>(sms), 1.0, n);
  ComputeAlone out;
  if (k.flops > 0) {
    const LaunchGrid grid = launch_grid(k);
    const double full_gpu_time =
        k.flops /
        (g.peak_bf16_dense_tflops * 1e12 * (f / g.peak_reference_clock) * math_efficiency(k, grid));
    // Tiles run in waves of one CTA per SM: a partial last wave leaves SMs idle, and SMs taken
    // by a collective add waves (W'/W). A kernel without a known shape divides evenly.
    const double ctas = grid.ctas;
    const double waves = ctas > 0 ? std::ceil(ctas / s) : 0;
    out.math_time = ctas > 0 ? full_gpu_time * n * waves / ctas : full_gpu_time * n / s;
    out.busy_sms = ctas > 0 ? std::min(s, ctas / waves) : s;
  }
  const double clock_factor =
      std::min(1.0, f.value() / (g.memory_clock_knee_fraction * g.clock_max.value()));
  const double hbm = g.memory_bandwidth_gbps * 1e9 * g.memory_efficiency * clock_factor;
  out.memory_time = k.bytes / (hbm * g.memory_sm_scaling(s / n));
  out.duration = out.active() + g.kernel_launch_overhead.value();
  out.duration = std::max(out.duration, g.host_launch_interval.value());
  out.held_sms = s;
  return out;
}

double Emulator::collective_alone(const Kernel& comm, int ctas, MHz f, double* busbw) const {
  const double bw = comm.link == workload::Link::kScaleOut
                        ? gpu_.scale_out_bandwidth_per_gpu_gbps * 1e9
                        : gpu_.collective_busbw(ctas, f);
  if (busbw) *busbw = bw;
  const double bytes = workload::bus_bytes(comm);
  // A ring streams only once its first chunks have gone round every hop: a cost that grows with
  // the message until the chunks reach their largest size.
  const double fill = workload::ring_hops(comm) * gpu_.collective_fill_per_hop.value() *
                      (1.0 - std::exp(-bytes / gpu_.collective_fill_bytes));
  return gpu_.collective_latency.value() + fill + bytes / std::max(bw, 1.0);
}

double Emulator::active_sm_power(MHz f) const {
  // SM switching power ~ V^2 f per active SM.
  const double v = gpu_.voltage(f);
  return gpu_.dynamic_power_coefficient * v * v * (f.value() / 1000.0) / gpu_.sm_count;
}

double Emulator::hbm_power(double bytes_per_second) const {
  return bytes_per_second * 8.0 * gpu_.memory_access_energy_pj_per_bit * 1e-12;
}

double Emulator::compute_power(const ComputeAlone& whole, const Kernel& k, MHz f, double held_sms,
                               double stretch) const {
  const GpuSpec& g = gpu_;
  const double sm = active_sm_power(f);
  const double running = whole.active() / whole.duration;  // not waiting between kernels
  const double math = whole.active() > 0 ? whole.math_time / whole.active() : 0.0;
  // Power while running, on the whole GPU: the memory system and fabric, the SMs' switching
  // (tensor cores and the data path) and the HBM traffic.
  const double running_power =
      g.uncore_active_power.value() +
      sm * (whole.busy_sms * math + whole.held_sms * (1.0 - math) * g.data_movement_sm_activity);
  const double alone = running * running_power + hbm_power(k.bytes / whole.duration);
  // A share of it is drawn for as long as the kernel holds its SMs (clock tree, schedulers,
  // resident warps); the rest follows the work, which a stretched kernel does as much of over a
  // longer time.
  const double r = g.sm_resident_power_fraction;
  const double held = r * running * running_power * held_sms / whole.held_sms;
  return held + (alone - r * running * running_power) / stretch;
}

double Emulator::collective_power(const Kernel& comm, int ctas, double alone, double stretch,
                                  MHz f) const {
  // Its CTAs copy, reduce and poll flags at full speed whether data moves or not; its traffic
  // is the same bytes over a longer time when stretched.
  return active_sm_power(f) * ctas * gpu_.collective_sm_activity +
         hbm_power(gpu_.hbm_bytes_per_link_byte * workload::bus_bytes(comm) / alone) / stretch;
}

Emulator::Phase Emulator::evaluate(const Kernel* compute, const Kernel* comm, int comm_sms,
                                   MHz f) const {
  const GpuSpec& g = gpu_;
  const int n = g.sm_count;
  Phase p;
  p.clock = f;
  p.idle_power = g.idle_power_at(f).value();
  p.compute = compute != nullptr;
  p.comm = comm != nullptr;
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
  }
  if (!compute) {
    if (comm) p.comm_power = collective_power(*comm, comm_sms, comm_alone, 1.0, f);
    return p;
  }
  const int held = n - (comm ? comm_sms : 0);
  const ComputeAlone c = compute_alone(*compute, held, f);
  const ComputeAlone whole_gpu = comm ? compute_alone(*compute, n, f) : c;
  p.compute_duration = c.duration;
  p.compute_gap_share = 1.0 - c.active() / c.duration;
  if (comm) {
    // Both kernels stretch while they share the GPU: the compute kernel with the HBM traffic
    // the collective causes, worse the more memory-bound it is; the collective when it is
    // latency-bound (few CTAs, far from saturating its links) and, as the memory path fills,
    // with the traffic it moves itself.
    const double memory_bound = std::min(1.0, c.memory_time / c.duration);
    p.compute_duration *=
        1.0 + comm_hbm_share * (1.0 + g.interference_memory_bound_gain * memory_bound);
    const double unsaturated =
        std::max(0.0, 1.0 - comm_busbw / (g.collective_busbw_ceiling_gbps * 1e9));
    p.comm_duration *= 1.0 +
                       g.collective_stretch_latency_bound * unsaturated * (1.0 + memory_bound) +
                       g.collective_stretch_memory * comm_hbm_share * comm_hbm_share;
    p.comm_power = collective_power(*comm, comm_sms, comm_alone, p.comm_duration / comm_alone, f);
  }
  p.compute_power =
      compute_power(whole_gpu, *compute, f, held, p.compute_duration / whole_gpu.duration);
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
  RunLedger ledger;
  double comm_left = program.comm ? 1.0 : 0.0;  // fraction of the collective still to run
  bool comm_running = false;
  auto advance = [&](const Phase& p, double dt) {
    t += dt;
    energy += p.total_power() * dt;
    clock_s += p.clock.value() * dt;
    ledger.idle += Joules(p.idle_power * dt);
    ledger.compute_dynamic += Joules(p.compute_power * dt);
    ledger.collective_dynamic += Joules(p.comm_power * dt);
    const Seconds gap(p.compute ? dt * p.compute_gap_share : 0.0);
    ledger.launch_gap_time += gap;
    if (p.compute && p.comm)
      ledger.overlap_time += Seconds(dt) - gap;
    else if (p.compute)
      ledger.compute_time += Seconds(dt) - gap;
    else
      ledger.collective_time += Seconds(dt);
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
  r.ledger = ledger;
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
  // The reading's parts keep their shares of the exact run, so they still add up.
  const double energy_scale =
      exact.total_energy().value() > 0 ? r.total_energy() / exact.total_energy() : 1.0;
  const double time_scale = exact.time.value() > 0 ? r.time / exact.time : 1.0;
  r.ledger.idle = exact.ledger.idle * energy_scale;
  r.ledger.compute_dynamic = exact.ledger.compute_dynamic * energy_scale;
  r.ledger.collective_dynamic = exact.ledger.collective_dynamic * energy_scale;
  r.ledger.compute_time = exact.ledger.compute_time * time_scale;
  r.ledger.overlap_time = exact.ledger.overlap_time * time_scale;
  r.ledger.collective_time = exact.ledger.collective_time * time_scale;
  r.ledger.launch_gap_time = exact.ledger.launch_gap_time * time_scale;
  return r;
}

}  // namespace kareus::emulator
