// SPDX-License-Identifier: Apache-2.0
// Whether a training job's model states and activations fit in its GPUs' memory: a lower bound no
// Megatron configuration beats (a job above it is refused) and a realistic estimate of the
// heaviest pipeline stage (reported, and warned about when above the capacity).
#pragma once

#include <optional>
#include <string>

#include "kareus/core/json.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::workload {

inline constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

struct MemoryEstimate {
  double capacity_gib = 0;
  // Mixed-precision Adam's model states sharded over every GPU of the job (ZeRO-3 / FSDP).
  double lower_bound_gib = 0;
  // The heaviest stage under Megatron's distributed optimizer: its model states plus the
  // activations 1F1B keeps in flight there.
  int stage = 0;
  double model_states_gib = 0;
  double activations_gib = 0;
  double estimate_gib() const { return model_states_gib + activations_gib; }
  bool lower_bound_fits() const { return lower_bound_gib <= capacity_gib; }
  bool estimate_fits() const { return estimate_gib() <= capacity_gib; }
};

MemoryEstimate estimate_memory(const Workload& w);

// Throws Error (bad input) when even the lower bound exceeds the GPU's memory: what is needed,
// what the GPU has, and how many GPUs the model states need. `where` opens the message.
void require_model_states_fit(const Workload& w, const std::string& where);

// One line for stderr when the estimate exceeds the capacity but the lower bound does not;
// empty otherwise.
std::string memory_warning(const Workload& w);

// The layout with the fewest GPUs per pipeline (tp x pp; cp and dp as in `w`) whose estimate fits,
// with the widest tensor parallelism within a node first; nullopt when none does. The layer
// split is the default one.
std::optional<Parallelism> smallest_fitting_layout(const Workload& w);

// {"capacity_gib", "lower_bound_gib", "estimate_gib", "stage", "model_states_gib",
// "activations_gib", "fits"}.
Json to_json(const MemoryEstimate& m);

}  // namespace kareus::workload
