// SPDX-License-Identifier: Apache-2.0
#include "kareus/workload/kernels.hpp"

#include <algorithm>

namespace kareus::workload {
namespace {

constexpr double kBf16 = 2.0;  // bytes per element
constexpr double kFp32 = 4.0;

struct Shapes {
  double tokens;     // tokens of this GPU (batch x local sequence)
  double batch;      // sequences
  double seq_local;  // query positions per GPU (sequence / CP)
  double seq_total;  // key positions seen by attention after CP gathers
  double h;          // hidden size
  double q_width;    // query heads x head_dim on this GPU
  double kv_width;   // key/value heads x head_dim on this GPU
  double ffn;        // intermediate size on this GPU
  double heads_local;
  double head_dim;
};

Shapes shapes(const Workload& w, double batch) {
  const auto& m = w.model;
  const auto& p = w.parallelism;
  Shapes s;
  s.batch = batch;
  s.seq_local = static_cast<double>(p.sequence_length) / p.cp;
  s.seq_total = p.sequence_length;
  s.tokens = batch * s.seq_local;
  s.h = m.hidden_size;
  s.heads_local = static_cast<double>(m.num_attention_heads) / p.tp;
  s.head_dim = m.head_dim;
  s.q_width = s.heads_local * m.head_dim;
  // With fewer KV heads than TP ranks, Megatron replicates one KV head per rank.
  s.kv_width = std::max(1.0, static_cast<double>(m.num_key_value_heads) / p.tp) * m.head_dim;
  s.ffn = static_cast<double>(m.intermediate_size) / p.tp;
  return s;
}

// Flash attention over the shapes of this GPU.
Kernel attention(const Shapes& s, bool backward) {
  return attention_kernel(s.batch, s.seq_local, s.seq_total, s.heads_local, s.kv_width / s.head_dim,
                          s.head_dim, backward);
}

}  // namespace

Kernel gemm_kernel(std::string name, double m, double n, double k, bool backward) {
  Kernel g;
  g.name = std::move(name);
  g.kind = KernelKind::kGemm;
  g.slot = SlotClass::kLinear;
  g.flops = 2.0 * m * n * k;
  g.bytes = kBf16 * (m * k + k * n + m * n);
  g.backward = backward;
  g.gemm_m = m;
  g.gemm_n = n;
  g.gemm_k = k;
  g.gemm_batch = 1;
  return g;
}

Kernel memory_kernel(std::string name, SlotClass slot, double bytes, bool backward) {
  Kernel k;
  k.name = std::move(name);
  k.kind = KernelKind::kMemory;
  k.slot = slot;
  k.bytes = bytes;
  k.backward = backward;
  return k;
}

Kernel collective_kernel(std::string name, Collective c, double bytes, int group, Link link) {
  Kernel k;
  k.name = std::move(name);
  k.kind = KernelKind::kCollective;
  k.collective = c;
  k.comm_bytes = bytes;
  k.group_size = group;
  k.link = link;
  return k;
}

// Flash attention: 4 x b x s_q x s_kv x heads x d FLOPs forward (QK^T and PV), halved by the
// causal mask; backward recomputes QK^T and adds three more matmuls (2.5x forward).
Kernel attention_kernel(double batch, double seq_q, double seq_kv, double q_heads, double kv_heads,
                        double head_dim, bool backward) {
  Kernel k;
  k.name = backward ? "attention_bwd" : "attention";
  k.kind = KernelKind::kAttention;
  k.slot = SlotClass::kAttn;
  const double fwd = 4.0 * batch * seq_q * seq_kv * q_heads * head_dim * 0.5;
  k.flops = backward ? 2.5 * fwd : fwd;
  const double io =
      kBf16 * (2 * batch * seq_q * q_heads * head_dim + 2 * batch * seq_kv * kv_heads * head_dim);
  k.bytes = backward ? 2.0 * io : io;
  k.backward = backward;
  // Per (sequence, head), QK^T is [s_q x d] x [d x s_kv/2 under the causal mask]; P.V has the
  // same FLOPs, so forward is two such products and backward five.
  k.gemm_m = seq_q;
  k.gemm_n = seq_kv * 0.5;
  k.gemm_k = head_dim;
  k.gemm_batch = batch * q_heads;
  return k;
}

const char* to_string(Link link) {
  return link == Link::kNvlink ? "nvlink" : "scale-out";
}

const char* to_string(KernelKind kind) {
  switch (kind) {
    case KernelKind::kGemm:
      return "gemm";
    case KernelKind::kAttention:
      return "attention";
    case KernelKind::kMemory:
      return "memory";
    case KernelKind::kCollective:
      return "collective";
  }
  return "?";
}

const char* to_string(SlotClass slot) {
  switch (slot) {
    case SlotClass::kNorm:
      return "norm";
    case SlotClass::kLinear:
      return "linear";
    case SlotClass::kRope:
      return "rope";
    case SlotClass::kAttn:
      return "attn";
    case SlotClass::kActivation:
      return "activation";
    case SlotClass::kNone:
      return "none";
  }
  return "?";
}

const char* to_string(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "allreduce";
    case Collective::kAllGather:
      return "allgather";
    case Collective::kReduceScatter:
      return "reducescatter";
    case Collective::kSendRecv:
      return "sendrecv";
  }
  return "?";
}

std::vector<Kernel> layer_forward(const Workload& w, double batch) {
  const Shapes s = shapes(w, batch);
  const auto& p = w.parallelism;
  const double act = kBf16 * s.tokens * s.h;  // one [tokens, hidden] activation
  const double qkv_width = s.q_width + 2 * s.kv_width;
  std::vector<Kernel> k;
  k.push_back(memory_kernel("input_norm", SlotClass::kNorm, 2 * act));
  k.push_back(gemm_kernel("qkv_proj", s.tokens, qkv_width, s.h));
  double post = 2 * kBf16 * s.tokens * qkv_width;
  if (w.model.qk_norm) post += 2 * kBf16 * s.tokens * (s.q_width + s.kv_width);
  k.push_back(memory_kernel("qkv_post", SlotClass::kRope, post));
  k.push_back(
      memory_kernel("rotary", SlotClass::kRope, 2 * kBf16 * s.tokens * (s.q_width + s.kv_width)));
  if (p.cp > 1) {
    k.push_back(collective_kernel("cp_allgather_kv", Collective::kAllGather,
                                  kBf16 * 2 * s.batch * s.seq_total * s.kv_width, p.cp,
                                  Link::kNvlink));
  }
  k.push_back(attention(s, false));
  k.push_back(gemm_kernel("out_proj", s.tokens, s.h, s.q_width));
  if (p.tp > 1)
    k.push_back(
        collective_kernel("tp_allreduce_attn", Collective::kAllReduce, act, p.tp, Link::kNvlink));
  k.push_back(memory_kernel("bias_dropout_add", SlotClass::kNorm, 3 * act));
  k.push_back(memory_kernel("pre_mlp_norm", SlotClass::kNorm, 2 * act));
  const double fc1_width = (w.model.gated_mlp ? 2 : 1) * s.ffn;
  k.push_back(gemm_kernel("fc1", s.tokens, fc1_width, s.h));
  k.push_back(memory_kernel(w.model.gated_mlp ? "swiglu" : "gelu", SlotClass::kActivation,
                            kBf16 * s.tokens * (fc1_width + s.ffn)));
  k.push_back(gemm_kernel("fc2", s.tokens, s.h, s.ffn));
  if (p.tp > 1)
    k.push_back(
        collective_kernel("tp_allreduce_mlp", Collective::kAllReduce, act, p.tp, Link::kNvlink));
  k.push_back(memory_kernel("bias_dropout_add_mlp", SlotClass::kNorm, 3 * act));
  return k;
}

std::vector<Kernel> layer_backward(const Workload& w, double batch) {
  const Shapes s = shapes(w, batch);
  const auto& p = w.parallelism;
  const double act = kBf16 * s.tokens * s.h;
  const double qkv_width = s.q_width + 2 * s.kv_width;
  const double fc1_width = (w.model.gated_mlp ? 2 : 1) * s.ffn;
  std::vector<Kernel> k;
  // Backward kernels read the incoming gradient and the saved input and write the gradient.
  k.push_back(memory_kernel("bias_dropout_add_mlp_bwd", SlotClass::kNorm, 2 * act, true));
  k.push_back(gemm_kernel("fc2_dgrad", s.tokens, s.ffn, s.h, true));
  k.push_back(gemm_kernel("fc2_wgrad", s.ffn, s.h, s.tokens, true));
  k.push_back(memory_kernel(w.model.gated_mlp ? "swiglu_bwd" : "gelu_bwd", SlotClass::kActivation,
                            kBf16 * s.tokens * (s.ffn + 2 * fc1_width), true));
  k.push_back(gemm_kernel("fc1_dgrad", s.tokens, s.h, fc1_width, true));
  k.push_back(gemm_kernel("fc1_wgrad", fc1_width, s.h, s.tokens, true));
  if (p.tp > 1)
    k.push_back(collective_kernel("tp_allreduce_fc1_grad", Collective::kAllReduce, act, p.tp,
                                  Link::kNvlink));
  k.push_back(memory_kernel("pre_mlp_norm_bwd", SlotClass::kNorm, 3 * act, true));
  k.push_back(memory_kernel("bias_dropout_add_bwd", SlotClass::kNorm, 2 * act, true));
  k.push_back(gemm_kernel("out_proj_dgrad", s.tokens, s.q_width, s.h, true));
  k.push_back(gemm_kernel("out_proj_wgrad", s.h, s.q_width, s.tokens, true));
  if (p.cp > 1) {
    k.push_back(collective_kernel("cp_allgather_kv_bwd", Collective::kAllGather,
                                  kBf16 * 2 * s.batch * s.seq_total * s.kv_width, p.cp,
                                  Link::kNvlink));
  }
  k.push_back(attention(s, true));
  if (p.cp > 1) {
    k.push_back(collective_kernel("cp_reducescatter_dkv", Collective::kReduceScatter,
                                  kBf16 * 2 * s.batch * s.seq_total * s.kv_width, p.cp,
                                  Link::kNvlink));
  }
  k.push_back(memory_kernel("rotary_bwd", SlotClass::kRope,
                            2 * kBf16 * s.tokens * (s.q_width + s.kv_width), true));
  double post = 2 * kBf16 * s.tokens * qkv_width;
  if (w.model.qk_norm) post += 3 * kBf16 * s.tokens * (s.q_width + s.kv_width);
  k.push_back(memory_kernel("qkv_post_bwd", SlotClass::kRope, post, true));
  k.push_back(gemm_kernel("qkv_proj_dgrad", s.tokens, s.h, qkv_width, true));
  k.push_back(gemm_kernel("qkv_proj_wgrad", qkv_width, s.h, s.tokens, true));
  if (p.tp > 1)
    k.push_back(collective_kernel("tp_allreduce_qkv_grad", Collective::kAllReduce, act, p.tp,
                                  Link::kNvlink));
  k.push_back(memory_kernel("input_norm_bwd", SlotClass::kNorm, 3 * act, true));
  return k;
}

std::vector<Kernel> embedding_kernels(const Workload& w, Direction d) {
  const Shapes s = shapes(w, w.parallelism.microbatch_size);
  const double act = kBf16 * s.tokens * s.h;
  std::vector<Kernel> k;
  const bool fwd = d == Direction::kForward;
  // Vocabulary-parallel embedding: each rank looks up its shard, then an AllReduce sums them.
  k.push_back(memory_kernel(fwd ? "embedding" : "embedding_bwd", SlotClass::kNorm, 2 * act, !fwd));
  if (fwd && w.parallelism.tp > 1)
    k.push_back(collective_kernel("tp_allreduce_embedding", Collective::kAllReduce, act,
                                  w.parallelism.tp, Link::kNvlink));
  return k;
}

std::vector<Kernel> output_and_loss_kernels(const Workload& w, Direction d) {
  const Shapes s = shapes(w, w.parallelism.microbatch_size);
  const double act = kBf16 * s.tokens * s.h;
  const double vocab = static_cast<double>(w.model.vocab_size) / w.parallelism.tp;
  const double logits = s.tokens * vocab;
  std::vector<Kernel> k;
  if (d == Direction::kForward) {
    k.push_back(memory_kernel("final_norm", SlotClass::kNorm, 2 * act));
    k.push_back(gemm_kernel("output_proj", s.tokens, vocab, s.h));
    // Vocab-parallel cross-entropy: fp32 max/exp/sum over the logits shard.
    k.push_back(memory_kernel("cross_entropy", SlotClass::kNorm, logits * (kBf16 + kFp32)));
  } else {
    k.push_back(
        memory_kernel("cross_entropy_bwd", SlotClass::kNorm, logits * (kFp32 + kBf16), true));
    k.push_back(gemm_kernel("output_proj_dgrad", s.tokens, s.h, vocab, true));
    k.push_back(gemm_kernel("output_proj_wgrad", vocab, s.h, s.tokens, true));
    if (w.parallelism.tp > 1)
      k.push_back(collective_kernel("tp_allreduce_output_grad", Collective::kAllReduce, act,
                                    w.parallelism.tp, Link::kNvlink));
    k.push_back(memory_kernel("final_norm_bwd", SlotClass::kNorm, 3 * act, true));
  }
  return k;
}

std::vector<Kernel> instruction_kernels(const Workload& w, int stage, Direction d) {
  const int layers = w.stage_layers().at(stage);
  const bool first = stage == 0;
  const bool last = stage == w.parallelism.pp - 1;
  const double batch = w.parallelism.microbatch_size;
  std::vector<Kernel> out;
  auto append = [&](const std::vector<Kernel>& ks) { out.insert(out.end(), ks.begin(), ks.end()); };
  if (d == Direction::kForward) {
    if (first) append(embedding_kernels(w, d));
    const auto layer = layer_forward(w, batch);
    for (int l = 0; l < layers; ++l) append(layer);
    if (last) append(output_and_loss_kernels(w, d));
  } else {
    if (w.parallelism.recompute == Recompute::kFull) {
      const auto layer = layer_forward(w, batch);
      for (int l = 0; l < layers; ++l) append(layer);
    }
    if (last) append(output_and_loss_kernels(w, d));
    const auto layer = layer_backward(w, batch);
    for (int l = 0; l < layers; ++l) append(layer);
    if (first) append(embedding_kernels(w, d));
  }
  return out;
}

Kernel pipeline_transfer(const Workload& w) {
  const double bytes = kBf16 * w.tokens_per_microbatch() * w.model.hidden_size;
  return collective_kernel("pp_send_recv", Collective::kSendRecv, bytes, 2,
                           w.pipeline_crosses_nodes() ? Link::kScaleOut : Link::kNvlink);
}

namespace {

// Parameters one GPU of a stage holds: its layers' share under TP, and the embedding or output
// layer's vocabulary shard on the first and last stage.
double stage_parameters_per_gpu(const Workload& w, int stage) {
  double params = w.model.layer_parameters() * w.stage_layers().at(stage) / w.parallelism.tp;
  if (stage == 0 || stage == w.parallelism.pp - 1) {
    params += static_cast<double>(w.model.vocab_size) * w.model.hidden_size / w.parallelism.tp;
  }
  return params;
}

// HBM bytes a fused Adam step moves per parameter with fp32 master weights (Megatron's mixed
// precision): fp32 gradient, weight and both moments read (16 B); weight and moments written
// (12 B); the bf16 copy of the weight written (2 B). A public H100 measurement of fused Adam
// (pytorch/pytorch#119842: 3.58 ms for about 547 M bf16 parameters, about 2.1 TB/s) confirms
// the step is bound by HBM traffic.
constexpr double kAdamBytesPerParameter = 30.0;

}  // namespace

Kernel optimizer_step(const Workload& w, int stage) {
  return memory_kernel("optimizer_adam", SlotClass::kNone,
                       kAdamBytesPerParameter * stage_parameters_per_gpu(w, stage));
}

Kernel gradient_reduction(const Workload& w, int stage) {
  const double params = stage_parameters_per_gpu(w, stage);
  // Megatron accumulates and reduces gradients in fp32 by default.
  return collective_kernel("dp_allreduce_grads", Collective::kAllReduce, kFp32 * params,
                           w.parallelism.dp * w.parallelism.cp,
                           w.data_parallel_crosses_nodes() ? Link::kScaleOut : Link::kNvlink);
}

double bus_bytes(const Kernel& collective) {
  const double n = std::max(1, collective.group_size);
  switch (collective.collective) {
    case Collective::kAllReduce:
      return collective.comm_bytes * 2.0 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return collective.comm_bytes * (n - 1) / n;
    case Collective::kSendRecv:
      return collective.comm_bytes;
  }
  return collective.comm_bytes;
}

double ring_hops(const Kernel& collective) {
  const double n = std::max(1, collective.group_size);
  switch (collective.collective) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1);
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return n - 1;
    case Collective::kSendRecv:
      return 1;
  }
  return 1;
}

double iteration_flops(const Workload& w) {
  double per_pipeline = 0;
  for (int s = 0; s < w.parallelism.pp; ++s) {
    for (Direction d : {Direction::kForward, Direction::kBackward}) {
      double f = 0;
      for (const auto& k : instruction_kernels(w, s, d)) f += k.flops;
      per_pipeline += f * w.gpus_per_stage() * w.parallelism.microbatches;
    }
  }
  return per_pipeline * w.parallelism.dp;
}

}  // namespace kareus::workload
