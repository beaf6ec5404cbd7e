// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/memory_fit.hpp"

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"
#include "kareus/energylens/descriptors.hpp"
#include "kareus/workload/memory.hpp"

namespace kareus::energylens {

// The KV cache gets what the usable memory leaves after the weights. Not subtracted, so the room
// here is larger than vLLM's by what they take:
// - the activations and workspace of vLLM's profiling forward pass (max_num_batched_tokens
//   tokens at once), which depend on the engine's settings the candidate CSV does not carry;
// - CUDA graphs' memory pool and NCCL's buffers;
// - the rounding of each sequence up to whole KV blocks (16 tokens by default).
double MemoryFit::kv_room_gib() const {
  return std::max(0.0, usable_gib - weights_gib);
}

double MemoryFit::kv_tokens() const {
  return std::floor(kv_room_gib() * workload::kBytesPerGib / kv_bytes_per_token);
}

double MemoryFit::kv_concurrency() const {
  return std::floor(kv_tokens() / sequence_tokens);
}

MemoryLimit MemoryFit::limit() const {
  if (weights_gib > usable_gib) return MemoryLimit::kWeights;
  if (max_context && kv_tokens() < *max_context) return MemoryLimit::kKvCache;
  return MemoryLimit::kNone;
}

std::optional<MemoryFit> memory_fit(const Sample& s) {
  if (s.model.empty() || s.gpu.empty()) return std::nullopt;
  ModelDescriptors m;
  GpuDescriptors g;
  // A model fitted without descriptors takes candidates the catalogues need not know.
  try {
    m = model_descriptors(s.model);
    g = gpu_descriptors(s.gpu);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kInvalidInput) throw;
    return std::nullopt;
  }
  const double kv_heads_per_gpu = std::max(1.0, m.kv_heads / s.tp);
  MemoryFit fit;
  fit.weights_gib = kWeightBytes * m.parameters / (s.tp * s.pp) / workload::kBytesPerGib;
  fit.usable_gib = kUsableMemoryFraction * g.memory_capacity_gib;
  fit.kv_bytes_per_token = m.kv_bytes_per_token / s.pp * (kv_heads_per_gpu / m.kv_heads);
  if (s.max_model_len)
    fit.max_context = *s.max_model_len;
  else if (m.max_context > 0)
    fit.max_context = m.max_context;
  fit.prompt_counted = s.input_tokens.has_value();
  fit.sequence_tokens = s.input_tokens.value_or(0.0) + s.output_tokens / 2.0;
  fit.batch = s.batch;
  return fit;
}

bool does_not_fit(const Sample& s) {
  const auto fit = memory_fit(s);
  return fit && !fit->fits();
}

}  // namespace kareus::energylens
