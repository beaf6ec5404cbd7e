// SPDX-License-Identifier: Apache-2.0
// The kernels of one training step, as Megatron-LM with Transformer Engine runs them: FLOPs and
// HBM bytes from the tensor shapes, and the collectives with their bytes and group sizes.
#pragma once

#include <string>
#include <vector>

#include "kareus/workload/pipeline.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::workload {

enum class KernelKind { kGemm, kAttention, kMemory, kCollective };
// Launch-slot class, as the artifact launches: consecutive memory-bound ops share one slot.
enum class SlotClass { kNorm, kLinear, kRope, kAttn, kActivation, kNone };
enum class Collective { kAllReduce, kAllGather, kReduceScatter, kSendRecv };
enum class Link { kNvlink, kScaleOut };

struct Kernel {
  std::string name;
  KernelKind kind = KernelKind::kMemory;
  SlotClass slot = SlotClass::kNone;
  double flops = 0;
  double bytes = 0;  // HBM bytes read + written
  bool backward = false;
  // Collectives only.
  Collective collective = Collective::kAllReduce;
  double comm_bytes = 0;  // size of the full buffer (AllReduce input, AllGather output, ...)
  int group_size = 1;
  Link link = Link::kNvlink;
  // GEMMs and attention: the shape of one matrix product (m x k times k x n, gemm_batch of them
  // at once) so that a real-GPU executor can run it; flops is a whole multiple of its FLOPs
  // (attention runs several products of that shape). Zero for other kernels.
  double gemm_m = 0;
  double gemm_n = 0;
  double gemm_k = 0;
  double gemm_batch = 0;

  bool is_collective() const { return kind == KernelKind::kCollective; }
};

// Kernel factories for the layer builders below, what-if tools and tests. Shapes are bf16.
Kernel gemm_kernel(std::string name, double m, double n, double k, bool backward = false);
Kernel memory_kernel(std::string name, SlotClass slot, double bytes, bool backward = false);
Kernel collective_kernel(std::string name, Collective c, double bytes, int group, Link link);
// Causal flash attention of `batch` sequences: seq_q queries against seq_kv keys per head.
Kernel attention_kernel(double batch, double seq_q, double seq_kv, double q_heads, double kv_heads,
                        double head_dim, bool backward);

const char* to_string(KernelKind kind);
const char* to_string(SlotClass slot);
const char* to_string(Collective c);
const char* to_string(Link link);  // "nvlink" | "scale-out"

// One transformer layer for `batch` sequences (a microbatch, or half of one for a nanobatch).
std::vector<Kernel> layer_forward(const Workload& w, double batch);
std::vector<Kernel> layer_backward(const Workload& w, double batch);
// Work outside the transformer layers, on the full microbatch.
std::vector<Kernel> embedding_kernels(const Workload& w, Direction d);
std::vector<Kernel> output_and_loss_kernels(const Workload& w, Direction d);
// Everything one pipeline instruction runs, in order, with full recomputation's re-run forward
// first in a backward instruction.
std::vector<Kernel> instruction_kernels(const Workload& w, int stage, Direction d);
// The activation (or its gradient) sent between neighbouring stages for one microbatch.
Kernel pipeline_transfer(const Workload& w);
// The data-parallel gradient AllReduce of one stage at the end of the iteration (DP > 1).
Kernel gradient_reduction(const Workload& w, int stage);
// The optimizer step of one GPU of a stage after the gradients are reduced: fused Adam over the
// parameters it holds, bound by HBM traffic.
Kernel optimizer_step(const Workload& w, int stage);

// Bytes one GPU sends (and receives) in a collective: the bus-bandwidth volume factors of
// nccl-tests' PERFORMANCE.md (AllReduce 2(n-1)/n, AllGather and ReduceScatter (n-1)/n) times
// the buffer size.
double bus_bytes(const Kernel& collective);
// Steps a ring collective's data takes from GPU to GPU: 2(n-1) for AllReduce (reduce-scatter,
// then all-gather), n-1 for AllGather and ReduceScatter, 1 for a send/receive.
double ring_hops(const Kernel& collective);

// FLOPs of one whole iteration over all GPUs, from the kernel lists (for cross-checks).
double iteration_flops(const Workload& w);

}  // namespace kareus::workload
