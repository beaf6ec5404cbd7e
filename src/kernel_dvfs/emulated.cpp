// SPDX-License-Identifier: Apache-2.0
#include "kareus/kernel_dvfs/emulated.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "kareus/core/error.hpp"
#include "kareus/executor/emulator.hpp"

namespace kareus::kernel_dvfs {
namespace {

using workload::Kernel;
using workload::KernelKind;

void price(const emulator::Emulator& emu, const Kernel& kernel, const std::vector<MHz>& clocks,
           KernelProfile& out) {
  for (MHz f : clocks) {
    const auto r = emu.run_kernel(kernel, emulator::ClockPolicy::locked_at(f));
    out.time.push_back(r.time);
    out.energy.push_back(r.total_energy());
  }
}

// Arithmetic intensity (FLOP per HBM byte) of a typical kernel of each kind, used to place a
// traced kernel on the roofline: a 2048^3 fp16 GEMM reads and writes 3 x 2048^2 x 2 bytes
// (683 FLOP/B); fused attention over 2048 tokens with 128-wide heads does 4 s^2 d FLOPs over
// 8 s d bytes of q, k, v, o (s/2 = 1024 FLOP/B); an fp16 binary elementwise op does one FLOP per
// 6 bytes.
double typical_intensity(KernelKind kind) {
  switch (kind) {
    case KernelKind::kGemm:
      return 2.0 * 2048.0 / 6.0;
    case KernelKind::kAttention:
      return 2048.0 / 2.0;
    case KernelKind::kMemory:
    case KernelKind::kCollective:
      break;
  }
  return 1.0 / 6.0;
}

bool contains_any(const std::string& text, std::initializer_list<const char*> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](const char* w) { return text.find(w) != std::string::npos; });
}

}  // namespace

std::vector<MHz> planning_clocks(const GpuSpec& gpu) {
  auto clocks = gpu.search_clocks();
  std::sort(clocks.begin(), clocks.end());
  return clocks;
}

KernelSequence emulate_layers(const workload::Workload& w, int layers,
                              const std::vector<MHz>& clocks) {
  require(layers >= 1, "kernel-dvfs", field_ref("layers"), std::to_string(layers), "must be >= 1");
  const emulator::Emulator emu(w.gpu);
  const double batch = w.parallelism.microbatch_size;
  const auto forward = workload::layer_forward(w, batch);
  const auto backward = workload::layer_backward(w, batch);
  KernelSequence seq;
  seq.source =
      fmt::format("{} on emulated {}, {} layer(s), microbatch {} x {} tokens", w.model.name,
                  w.gpu.name, layers, w.parallelism.microbatch_size, w.parallelism.sequence_length);
  seq.clocks = clocks;
  seq.notes.push_back(
      "times and energies from the GPU emulator: each kernel alone at a locked clock (the power "
      "limit may still throttle it), static plus dynamic energy");
  for (int pass = 0; pass < 2; ++pass) {
    for (int l = 0; l < layers; ++l) {
      const int layer = pass == 0 ? l : layers - 1 - l;
      for (const Kernel& k : pass == 0 ? forward : backward) {
        KernelProfile profile{fmt::format("L{}/{}", layer, k.name),
                              pass == 0 ? Direction::kForward : Direction::kBackward,
                              {},
                              {}};
        price(emu, k, clocks, profile);
        seq.kernels.push_back(std::move(profile));
      }
    }
  }
  validate(seq);
  return seq;
}

KernelKind classify_kernel(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // Fused attention kernels are CUTLASS-based, so they are recognised before GEMMs.
  if (contains_any(n, {"fmha", "flash", "attention", "sdpa"})) return KernelKind::kAttention;
  if (contains_any(n, {"gemm", "cutlass", "cublas", "xmma", "matmul", "s16816", "s1688"}))
    return KernelKind::kGemm;
  return KernelKind::kMemory;
}

KernelSequence scale_trace(const TorchTrace& trace, MHz recorded, const GpuSpec& gpu,
                           std::vector<MHz> clocks) {
  if (!gpu.supports_clock(recorded))
    throw Error::invalid(
        trace.source, field_ref("trace_clock"), format_number(recorded.value()),
        fmt::format("unknown clock; {} supports {}-{} MHz in steps of {} MHz", gpu.name,
                    gpu.clock_min.value(), gpu.clock_max.value(), gpu.clock_step.value()));
  // The measured clock is always a candidate, so the plan can keep what was measured.
  if (std::find(clocks.begin(), clocks.end(), recorded) == clocks.end()) {
    clocks.push_back(recorded);
    std::sort(clocks.begin(), clocks.end());
  }
  const emulator::Emulator emu(gpu);
  KernelSequence seq;
  seq.source = fmt::format("{} (recorded at {} MHz, scaled on emulated {})", trace.source,
                           recorded.value(), gpu.name);
  seq.clocks = clocks;
  seq.notes.push_back(fmt::format(
      "only {} MHz was measured: times and energies at other clocks are the emulator's model of "
      "each kernel's kind (GEMM, attention or memory-bound, from its name), scaled so that the "
      "time at {} MHz is the traced duration",
      recorded.value(), recorded.value()));
  if (trace.overlapping > 0)
    seq.notes.push_back(fmt::format(
        "{} kernels overlap the previous one (several streams); their times are added as if they "
        "ran one after another",
        trace.overlapping));
  const Seconds overhead = gpu.kernel_launch_overhead;
  for (const auto& tk : trace.kernels) {
    Kernel k;
    k.name = tk.name;
    k.kind = classify_kernel(tk.name);
    k.backward = tk.pass == Direction::kBackward;
    // One unit of work at the typical intensity; the emulator's time is linear in the amount of
    // work above the launch overhead, so one rescaling matches the traced duration.
    k.bytes = 1e9;
    k.flops = k.bytes * typical_intensity(k.kind);
    const Seconds unit = emu.kernel_time(k, recorded, gpu.sm_count) - overhead;
    const double scale = std::max(1e-6, (tk.duration - overhead) / unit);
    k.bytes *= scale;
    k.flops *= scale;
    KernelProfile profile{tk.name, tk.pass, {}, {}};
    price(emu, k, clocks, profile);
    // The power limit can throttle the recorded clock itself; pin that clock's time to the
    // measurement and keep each clock's modelled power.
    const auto at = static_cast<std::size_t>(std::find(clocks.begin(), clocks.end(), recorded) -
                                             clocks.begin());
    const double pin = tk.duration / profile.time[at];
    for (std::size_t c = 0; c < clocks.size(); ++c) {
      profile.time[c] = profile.time[c] * pin;
      profile.energy[c] = profile.energy[c] * pin;
    }
    seq.kernels.push_back(std::move(profile));
  }
  validate(seq);
  return seq;
}

}  // namespace kareus::kernel_dvfs
