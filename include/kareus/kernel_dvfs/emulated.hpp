// SPDX-License-Identifier: Apache-2.0
// Kernel sequences priced by the GPU emulator: a model's transformer layers from the workload
// model, or a profiler trace recorded at one clock and scaled to the others per kernel kind.
#pragma once

#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/kernel_dvfs/profile.hpp"
#include "kareus/kernel_dvfs/torch_trace.hpp"
#include "kareus/workload/kernels.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::kernel_dvfs {

// The clocks the planner chooses from: the GPU's Kareus search range, ascending.
std::vector<MHz> planning_clocks(const GpuSpec& gpu);

// `layers` transformer layers of one microbatch, forward then backward, each kernel run alone on
// the emulator at every clock (time and static + dynamic energy).
KernelSequence emulate_layers(const workload::Workload& w, int layers,
                              const std::vector<MHz>& clocks);

// The kernel kind a traced kernel's name indicates (cuBLAS/CUTLASS GEMM, fused attention, or
// memory-bound elementwise/normalisation/reduction/copy work).
workload::KernelKind classify_kernel(const std::string& name);

// Each traced kernel becomes an emulator kernel of its kind whose time at `recorded` equals the
// traced duration; its time and energy at every clock then follow the emulator. `recorded` joins
// `clocks` when it is not one of them.
KernelSequence scale_trace(const TorchTrace& trace, MHz recorded, const GpuSpec& gpu,
                           std::vector<MHz> clocks);

}  // namespace kareus::kernel_dvfs
