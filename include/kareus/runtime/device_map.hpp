// SPDX-License-Identifier: Apache-2.0
// CUDA device index -> NVML device index. CUDA numbers only the devices CUDA_VISIBLE_DEVICES
// lists, in its order (Slurm and Kubernetes set it per job, often as GPU UUIDs), while NVML
// numbers every device of the machine, so a rank's `cuda:1` may be NVML device 5.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kareus::nvml {
class Nvml;
}

namespace kareus::runtime {

// The NVML index of CUDA device `cuda_index` given the value of CUDA_VISIBLE_DEVICES
// (std::nullopt: unset, every device visible in NVML order). Entries are NVML indices or UUIDs
// ("GPU-5a1c...", a unique prefix being enough, as CUDA accepts); like CUDA, the list ends at
// the first entry that names no device. MIG entries are refused: a MIG instance shares the
// parent GPU's clocks. `uuids` holds every NVML device's UUID in NVML order. Throws Error naming
// CUDA_VISIBLE_DEVICES and the entry when the mapping does not exist.
unsigned nvml_index_of_cuda_device(int cuda_index, const std::optional<std::string>& visible,
                                   const std::vector<std::string>& uuids);

// The same against the machine's NVML, reading CUDA_VISIBLE_DEVICES from the environment.
unsigned nvml_index_of_cuda_device(const nvml::Nvml& nvml, int cuda_index);

}  // namespace kareus::runtime
