// SPDX-License-Identifier: Apache-2.0
// Whether a candidate inference configuration can be served at all, and how many requests at once:
// the BF16 weights one GPU holds, and the KV cache the rest of the memory an inference server lets
// itself use can hold, after vLLM (the engine of the shipped datasets). select never picks a
// candidate that does not fit, and predict marks it (docs/energylens.md, "Candidates that cannot
// be served").
#pragma once

#include <optional>

#include "kareus/energylens/dataset.hpp"

namespace kareus::energylens {

// vLLM's default --gpu-memory-utilization (EngineArgs.gpu_memory_utilization = 0.9, vLLM engine
// arguments documentation): the share of GPU memory it takes for weights, activations and KV
// cache; the rest is left to the CUDA context and other processes.
inline constexpr double kUsableMemoryFraction = 0.9;
// BF16 weights.
inline constexpr double kWeightBytes = 2.0;

// Why a candidate cannot be served.
enum class MemoryLimit {
  kNone,
  kWeights,  // its weights per GPU exceed the usable memory
  // The KV cache left beside the weights holds less than one sequence of the model's maximum
  // context: vLLM refuses to start ("The model's max seq len (...) is larger than the maximum
  // number of tokens that can be stored in KV cache", vllm/worker/worker.py,
  // raise_if_cache_size_invalid).
  kKvCache,
};

struct MemoryFit {
  double weights_gib = 0.0;  // 2 B x parameters / (TP x PP) on each GPU
  double usable_gib = 0.0;   // kUsableMemoryFraction x the GPU's capacity
  // One token's K and V on each GPU: 2 x layers / PP x KV heads per GPU x head dim x 2 B, with
  // max(1, KV heads / TP) KV heads per GPU (vLLM splits them over TP and replicates them when TP
  // exceeds them, ModelConfig.get_num_kv_heads).
  double kv_bytes_per_token = 0.0;
  // The row's max_model_len, else the config's max_position_embeddings (vLLM's default
  // --max-model-len); absent when neither gives one, and then the KV cache is not checked
  // against it.
  std::optional<double> max_context;
  // The tokens a request in flight holds in the KV cache on average: its prompt (input_tokens,
  // when the row gives them) and half its output. A saturated server runs requests at staggered
  // points of their decode, each holding the tokens it has so far, so the running batch is
  // limited by the mean footprint, not by complete requests (counted complete, five ML.ENERGY
  // rows would be cut below the mean batch they measured; docs/energylens.md).
  double sequence_tokens = 0.0;
  bool prompt_counted = false;  // whether sequence_tokens includes the row's input_tokens
  double batch = 0.0;           // the row's batch (sequences one replica runs at once)

  // What the usable memory leaves for the KV cache on each GPU; 0 when the weights do not fit.
  double kv_room_gib() const;
  // Tokens the KV cache holds (per replica: every GPU of it holds its layers' and heads' share).
  double kv_tokens() const;
  // Requests in flight (of sequence_tokens each) the KV cache holds at once.
  double kv_concurrency() const;
  MemoryLimit limit() const;
  bool fits() const { return limit() == MemoryLimit::kNone; }
  // It fits, but the KV cache holds fewer requests in flight than its batch: vLLM runs fewer at
  // once than configured.
  bool batch_limited_by_kv() const { return fits() && kv_concurrency() < batch; }
};

// The check for a row whose model and GPU the catalogues know (descriptors.hpp); nullopt, and
// nothing checked, for a row that names neither or one they do not know.
std::optional<MemoryFit> memory_fit(const Sample& s);

// Whether `s` is known not to fit (a row memory_fit cannot check counts as fitting).
bool does_not_fit(const Sample& s);

}  // namespace kareus::energylens
