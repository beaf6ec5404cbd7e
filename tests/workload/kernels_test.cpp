// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "common/error_of.hpp"
#include "kareus/core/error.hpp"
#include "kareus/workload/kernels.hpp"

namespace kareus::workload {
namespace {

Workload make(const std::string& model, int tp, int cp, int pp, int mbs, int seq, int m,
              Recompute rc = Recompute::kFull) {
  WorkloadRequest r;
  r.model = model;
  r.gpu = "a100-sxm4-40gb";
  r.parallelism.tp = tp;
  r.parallelism.cp = cp;
  r.parallelism.pp = pp;
  r.parallelism.microbatch_size = mbs;
  r.parallelism.sequence_length = seq;
  r.parallelism.microbatches = m;
  r.parallelism.recompute = rc;
  return make_workload(r);
}

const Kernel& find(const std::vector<Kernel>& ks, const std::string& name) {
  auto it = std::find_if(ks.begin(), ks.end(), [&](const Kernel& k) { return k.name == name; });
  EXPECT_NE(it, ks.end()) << name;
  return *it;
}

// Narayanan et al. (SC'21) style closed form: 2 FLOPs per parameter per token forward, twice
// that backward, causal attention's QK^T and PV, the output layer, plus one more forward of the
// layers under full recomputation.
double closed_form_flops(const Workload& w) {
  const auto& m = w.model;
  const auto& p = w.parallelism;
  const double tokens = double(p.microbatch_size) * p.sequence_length * p.microbatches * p.dp;
  const double layer_fwd =
      2.0 * m.layer_parameters() + 2.0 * p.sequence_length * m.num_attention_heads * m.head_dim;
  const double layers_fwd = tokens * m.num_hidden_layers * layer_fwd;
  const double output_fwd = tokens * 2.0 * m.hidden_size * m.vocab_size;
  const double recompute = p.recompute == Recompute::kFull ? layers_fwd : 0.0;
  // Flash attention's backward recomputes QK^T: half of the forward attention FLOPs again.
  const double attention_fwd =
      tokens * m.num_hidden_layers * p.sequence_length * m.num_attention_heads * m.head_dim * 2.0;
  return 3.0 * (layers_fwd + output_fwd) + recompute + 0.5 * attention_fwd;
}

TEST(Kernels, IterationFlopsMatchClosedForm) {
  for (const auto& w :
       {make("llama3.2-3b", 8, 1, 2, 8, 4096, 8), make("llama3.2-3b", 4, 2, 2, 8, 4096, 8),
        make("qwen3-1.7b", 8, 1, 2, 16, 4096, 8, Recompute::kNone),
        make("gpt3-xl", 1, 1, 1, 4, 2048, 2)}) {
    SCOPED_TRACE(w.model.name);
    EXPECT_NEAR(iteration_flops(w) / closed_form_flops(w), 1.0, 0.02);
  }
}

TEST(Kernels, BytesAndFlopsComputedByHand) {
  const auto w = make("llama3.2-3b", 8, 1, 2, 8, 4096, 8);
  const auto fwd = layer_forward(w, 8);
  // QKV: [32768 tokens x 3072] x [3072 x (24 + 2 x 8) heads / 8 x 128].
  const Kernel& qkv = find(fwd, "qkv_proj");
  EXPECT_DOUBLE_EQ(qkv.flops, 2.0 * 32768 * 640 * 3072);
  EXPECT_DOUBLE_EQ(qkv.bytes, 2.0 * (32768.0 * 3072 + 3072.0 * 640 + 32768.0 * 640));
  // RMSNorm reads and writes one bf16 activation.
  EXPECT_DOUBLE_EQ(find(fwd, "input_norm").bytes, 4.0 * 32768 * 3072);
  const Kernel& ar = find(fwd, "tp_allreduce_attn");
  EXPECT_EQ(ar.collective, Collective::kAllReduce);
  EXPECT_EQ(ar.group_size, 8);
  EXPECT_DOUBLE_EQ(ar.comm_bytes, 2.0 * 32768 * 3072);
  // Causal flash attention: 4 b s^2 (heads/tp) d / 2.
  EXPECT_DOUBLE_EQ(find(fwd, "attention").flops, 4.0 * 8 * 4096.0 * 4096 * 3 * 128 * 0.5);
}

TEST(Kernels, LayerOrderFollowsMegatron) {
  const auto w = make("llama3.2-3b", 4, 2, 2, 8, 4096, 8);
  std::vector<std::string> names;
  for (const auto& k : layer_forward(w, 4)) names.push_back(k.name);
  const std::vector<std::string> expected = {"input_norm",
                                             "qkv_proj",
                                             "qkv_post",
                                             "rotary",
                                             "cp_allgather_kv",
                                             "attention",
                                             "out_proj",
                                             "tp_allreduce_attn",
                                             "bias_dropout_add",
                                             "pre_mlp_norm",
                                             "fc1",
                                             "swiglu",
                                             "fc2",
                                             "tp_allreduce_mlp",
                                             "bias_dropout_add_mlp"};
  EXPECT_EQ(names, expected);
  const auto bwd = layer_backward(w, 4);
  EXPECT_EQ(find(bwd, "cp_reducescatter_dkv").group_size, 2);
  // Backward runs the linear layers in reverse with two GEMMs each.
  EXPECT_EQ(std::count_if(bwd.begin(), bwd.end(),
                          [](const Kernel& k) { return k.kind == KernelKind::kGemm; }),
            8);
}

TEST(Kernels, RecomputationRerunsTheForward) {
  const auto full = make("llama3.2-3b", 8, 1, 2, 8, 4096, 8, Recompute::kFull);
  const auto none = make("llama3.2-3b", 8, 1, 2, 8, 4096, 8, Recompute::kNone);
  const auto with = instruction_kernels(full, 0, Direction::kBackward);
  const auto without = instruction_kernels(none, 0, Direction::kBackward);
  EXPECT_EQ(with.size() - without.size(), layer_forward(full, 8).size() * 15);
  EXPECT_EQ(full.stage_layers(), (std::vector<int>{15, 13}));
}

TEST(Kernels, ExtraWorkOnFirstAndLastStage) {
  const auto w = make("llama3.2-3b", 8, 1, 2, 8, 4096, 8);
  const auto first = instruction_kernels(w, 0, Direction::kForward);
  const auto last = instruction_kernels(w, 1, Direction::kForward);
  EXPECT_EQ(first.front().name, "embedding");
  EXPECT_EQ(last.back().name, "cross_entropy");
  EXPECT_EQ(pipeline_transfer(w).link, Link::kScaleOut);  // TP8 fills a node; PP crosses nodes
}

TEST(Workload, RejectsBadLayouts) {
  EXPECT_THROW(make("llama3.2-3b", 5, 1, 2, 8, 4096, 8), Error);   // 24 heads
  EXPECT_THROW(make("llama3.2-3b", 4, 2, 2, 8, 4097, 8), Error);   // CP sequence split
  EXPECT_THROW(make("llama3.2-3b", 8, 1, 40, 8, 4096, 8), Error);  // more stages than layers
  EXPECT_THROW(make("llama3.2-3b", 8, 2, 2, 8, 4096, 8), Error);   // TP x CP beyond a node
  EXPECT_THROW(make("llama3.2-3b", 8, 1, 2, 0, 4096, 8), Error);
  EXPECT_THROW(make("no-such-model", 1, 1, 1, 1, 128, 1), Error);
  try {
    make("llama3.2-3b", 5, 1, 2, 8, 4096, 8);
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "command line: tp = 5: must divide num_attention_heads (24) of llama3.2-3b");
  }
}

TEST(Workload, ANameTooLongForAFileIsAnUnknownModel) {
  // Found by fuzz_workload: the catalogue lookup threw std::filesystem_error (ENAMETOOLONG).
  EXPECT_THAT(testing::error_of([] { load_model(std::string(400, 'x')); }),
              ::testing::HasSubstr("unknown model"));
}

TEST(Workload, LoadsHfStyleConfig) {
  const auto m = load_model("qwen3-1.7b");
  EXPECT_TRUE(m.qk_norm);
  EXPECT_TRUE(m.gated_mlp);
  EXPECT_FALSE(load_model("gpt3-xl").gated_mlp);
  EXPECT_NEAR(load_model("llama3.2-3b").total_parameters() / 1e9, 3.21, 0.02);
  EXPECT_NEAR(load_model("llama3.3-70b").total_parameters() / 1e9, 70.6, 0.3);
  // The maximum context is optional: 0 when the config does not give it.
  EXPECT_EQ(load_model("gpt3-xl").max_position_embeddings, 2048);
  EXPECT_EQ(load_model("llama3.3-70b").max_position_embeddings, 0);
  const auto dense = load_model("llama3.2-3b");
  EXPECT_EQ(dense.active_parameters(), dense.total_parameters());
}

// Mixtral 8x7B: 46.7 B parameters, 12.9 B active per token (Mistral AI's model card).
TEST(Workload, MixtureOfExpertsCountsEveryExpertAndIsRefusedForTraining) {
  const auto m = load_model("mixtral-8x7b-instruct-v0.1");
  EXPECT_TRUE(m.mixture_of_experts());
  EXPECT_NEAR(m.total_parameters() / 1e9, 46.7, 0.2);
  EXPECT_NEAR(m.active_parameters() / 1e9, 12.9, 0.1);
  try {
    make("mixtral-8x7b-instruct-v0.1", 8, 1, 4, 1, 4096, 8);
    ADD_FAILURE() << "an MoE was planned as its dense shell";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "command line: model = mixtral-8x7b-instruct-v0.1: a mixture of experts (8 "
                 "experts, 2 per token): the training planner models dense transformers only (no "
                 "expert layers, no all-to-all)");
  }
}

}  // namespace
}  // namespace kareus::workload

namespace kareus::workload {
namespace {

TEST(Workload, LayerSplitLeavesRoomForTheOutputLayer) {
  auto split = [](const char* model, int pp) {
    WorkloadRequest r;
    r.model = model;
    r.gpu = "a100-sxm4-40gb";
    r.parallelism.pp = pp;
    r.parallelism.dp = 64;  // room for the model states, which the split does not depend on
    return make_workload(r).stage_layers();
  };
  EXPECT_EQ(split("llama3.2-3b", 2), (std::vector<int>{15, 13}));  // the paper's split
  EXPECT_EQ(split("llama3.2-3b", 4), (std::vector<int>{8, 7, 7, 6}));
  EXPECT_EQ(split("llama3.2-3b", 1), (std::vector<int>{28}));
  EXPECT_EQ(split("llama3.3-70b", 10), (std::vector<int>{9, 8, 8, 8, 8, 8, 8, 8, 8, 7}));
  // One layer per stage leaves nothing to move: an even split.
  EXPECT_EQ(split("llama3.2-3b", 28), std::vector<int>(28, 1));
}

}  // namespace
}  // namespace kareus::workload
