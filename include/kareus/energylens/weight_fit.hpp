// Whether a candidate inference configuration can load its model at all: the BF16 weights one GPU
// holds against the memory an inference server lets itself use. select never picks a candidate
// that does not fit, and predict marks it.
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

struct WeightFit {
  double weights_gib = 0.0;  // 2 B x parameters / (TP x PP) on each GPU
  double usable_gib = 0.0;   // kUsableMemoryFraction x the GPU's capacity
  bool fits() const { return weights_gib <= usable_gib; }
};

// The check for a row whose model and GPU the catalogues know (descriptors.hpp); nullopt, and
// nothing checked, for a row that names neither or one they do not know.
std::optional<WeightFit> weight_fit(const Sample& s);

// Whether `s` is known not to fit (a row weight_fit cannot check counts as fitting).
bool does_not_fit(const Sample& s);

}  // namespace kareus::energylens
