// SPDX-License-Identifier: Apache-2.0
#include "kareus/workload/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"

namespace kareus::workload {
namespace {

// Mixed-precision Adam keeps 2 B of bf16 weights, 2 B of bf16 gradients and 12 B of fp32 master
// weights, momentum and variance per parameter (Rajbhandari et al., ZeRO, SC 2020, section 3.1:
// "16 Psi"); ZeRO stage 3, which Megatron-Core offers as its fully sharded data parallelism,
// divides all of it by the number of GPUs holding a copy. Nothing GPU-resident stores less.
constexpr double kFullyShardedStateBytes = 16.0;

// Megatron-LM's distributed optimizer with bf16 weights and fp32 gradients: 6 B per parameter
// stay on every GPU (weights and gradient buffer), 12 B (fp32 master weights and Adam's two
// moments) are sharded across the data-parallel group (Megatron-LM
// docs/source/api-guide/dist_optimizer.md, "6 + 12/d"). Megatron-Core shards it over data and
// context parallelism together (parallel_state's data-parallel group "with context parallel"),
// since both hold the same weights.
constexpr double kReplicatedStateBytes = 6.0;
constexpr double kShardedStateBytes = 12.0;

// Activations of one transformer layer per microbatch under tensor and sequence parallelism
// (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", MLSys
// 2023, section 4): s b h / t (34 + 5 a s / h) bytes. Sequence parallelism is assumed because
// Megatron runs tensor parallelism with it (the paper's point); its reduce-scatter and all-gather
// move the bytes of the all-reduce the workload model times. Flash attention, which the workload
// model runs (kernels.cpp), keeps no s x s score matrix, so the 5 a s / h term is dropped; the 34
// counts a GPT layer's 16-bit tensors, and a Llama layer's SwiGLU and GQA come within a few percent
// of it. Full recomputation keeps only each layer's 2 s b h / t input (their section 5) plus one
// layer's full set while that layer's backward recomputes it.
constexpr double kLayerActivationBytes = 34.0;
constexpr double kLayerInputBytes = 2.0;

// The last stage also keeps the final norm's and the output projection's 2 s b h / t inputs and
// the fp32 logits the cross entropy reads, vocabulary-parallel: 4 s b h / t + 4 s b v / t
// (Korthikanti et al., section 4, the total over a pipeline).
constexpr double kOutputInputsBytes = 4.0;
constexpr double kLogitBytes = 4.0;

double gib(double bytes) {
  return bytes / kBytesPerGib;
}

// Weights one GPU of `stage` holds: its layers and, on the first stage, the input embedding; on
// the last, the output layer (with tied embeddings Megatron still keeps a copy there when the two
// are on different stages).
double stage_parameters_per_gpu(const Workload& w, int stage, int layers) {
  const auto& m = w.model;
  const double table = static_cast<double>(m.vocab_size) * m.hidden_size;
  const int last = w.parallelism.pp - 1;
  double embeddings = 0;
  if (stage == 0) embeddings += table;
  if (stage == last && (!m.tie_word_embeddings || last > 0)) embeddings += table;
  return (layers * m.layer_parameters() + embeddings) / w.parallelism.tp;
}

double stage_activation_bytes(const Workload& w, int stage, int layers) {
  const auto& p = w.parallelism;
  // Tensor times sequence parallelism shard every activation; context parallelism the sequence.
  const double sbh_per_gpu = w.tokens_per_microbatch() * w.model.hidden_size / p.tp;
  const double full_layer = kLayerActivationBytes * sbh_per_gpu;
  // 1F1B: stage s runs pp - s forwards before its first backward (pipeline.cpp, build_1f1b).
  const double in_flight = std::min(p.pp - stage, p.microbatches);
  double bytes = p.recompute == Recompute::kFull
                     ? in_flight * layers * kLayerInputBytes * sbh_per_gpu + full_layer
                     : in_flight * layers * full_layer;
  if (stage == p.pp - 1)
    bytes += kOutputInputsBytes * sbh_per_gpu +
             kLogitBytes * w.tokens_per_microbatch() * w.model.vocab_size / p.tp;
  return bytes;
}

// " the smallest layout that fits is tp 2 x pp 1" for the end of a message, or nothing.
std::string smallest_layout_hint(const Workload& w) {
  const auto p = smallest_fitting_layout(w);
  if (!p) return "";
  return fmt::format("; the smallest layout that fits is tp {} x pp {}{}", p->tp, p->pp,
                     p->cp == 1 && p->dp == 1 ? "" : fmt::format(" (cp {}, dp {})", p->cp, p->dp));
}

}  // namespace

MemoryEstimate estimate_memory(const Workload& w) {
  const auto& p = w.parallelism;
  MemoryEstimate out;
  out.capacity_gib = w.gpu.memory_capacity_gib;
  out.lower_bound_gib = gib(kFullyShardedStateBytes * w.model.total_parameters() / w.total_gpus());
  const double state_bytes = kReplicatedStateBytes + kShardedStateBytes / (p.dp * p.cp);
  const std::vector<int> layers = w.stage_layers();
  double heaviest = -1;
  for (int s = 0; s < p.pp; ++s) {
    const double states = state_bytes * stage_parameters_per_gpu(w, s, layers[s]);
    const double activations = stage_activation_bytes(w, s, layers[s]);
    if (states + activations <= heaviest) continue;
    heaviest = states + activations;
    out.stage = s;
    out.model_states_gib = gib(states);
    out.activations_gib = gib(activations);
  }
  return out;
}

void require_model_states_fit(const Workload& w, const std::string& where) {
  const MemoryEstimate m = estimate_memory(w);
  if (m.lower_bound_fits()) return;
  const double gpus_needed = std::ceil(m.lower_bound_gib * w.total_gpus() / m.capacity_gib);
  throw Error(fmt::format(
      "{}: {} does not fit on {} x {}: its weights, gradients and Adam states need at least "
      "{:.1f} GiB per GPU even sharded over every GPU ({} B per parameter), and the GPU has "
      "{:g} GiB; raise tp, pp or dp so that tp x cp x pp x dp >= {:g}{}",
      where, w.model.name, w.total_gpus(), w.gpu.name, m.lower_bound_gib, kFullyShardedStateBytes,
      m.capacity_gib, gpus_needed, smallest_layout_hint(w)));
}

std::string memory_warning(const Workload& w) {
  const MemoryEstimate m = estimate_memory(w);
  if (m.estimate_fits() || !m.lower_bound_fits()) return "";
  return fmt::format(
      "warning: {} on {} (TP{} CP{} PP{} DP{}) probably does not fit: stage {} needs about "
      "{:.1f} GiB per GPU ({:.1f} GiB of model states under Megatron's distributed optimizer, "
      "{:.1f} GiB of activations) and the GPU has {:g} GiB; raise tp, pp or dp, recompute "
      "activations, or shorten the microbatch{}",
      w.model.name, w.gpu.name, w.parallelism.tp, w.parallelism.cp, w.parallelism.pp,
      w.parallelism.dp, m.stage, m.estimate_gib(), m.model_states_gib, m.activations_gib,
      m.capacity_gib, smallest_layout_hint(w));
}

std::optional<Parallelism> smallest_fitting_layout(const Workload& w) {
  const auto& m = w.model;
  const int widest_tp = std::max(1, w.parallelism.gpus_per_node / w.parallelism.cp);
  for (int gpus = 1; gpus <= widest_tp * m.num_hidden_layers; ++gpus) {
    for (int tp = std::min(gpus, widest_tp); tp >= 1; --tp) {
      const int pp = gpus / tp;
      if (gpus % tp != 0 || pp > m.num_hidden_layers) continue;
      // make_workload's rules for tp (workload.cpp).
      if (m.num_attention_heads % tp != 0) continue;
      if (m.num_key_value_heads % tp != 0 && tp % m.num_key_value_heads != 0) continue;
      Workload candidate = w;
      candidate.parallelism.tp = tp;
      candidate.parallelism.pp = pp;
      candidate.parallelism.layer_split.clear();
      const MemoryEstimate e = estimate_memory(candidate);
      if (e.lower_bound_fits() && e.estimate_fits()) return candidate.parallelism;
    }
  }
  return std::nullopt;
}

Json to_json(const MemoryEstimate& m) {
  return {{"capacity_gib", m.capacity_gib},
          {"lower_bound_gib", m.lower_bound_gib},
          {"estimate_gib", m.estimate_gib()},
          {"stage", m.stage},
          {"model_states_gib", m.model_states_gib},
          {"activations_gib", m.activations_gib},
          {"fits", m.estimate_fits()}};
}

}  // namespace kareus::workload
