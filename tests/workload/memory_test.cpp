// SPDX-License-Identifier: Apache-2.0
#include "kareus/workload/memory.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "common/error_of.hpp"
#include "common/workloads.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/paths.hpp"

namespace kareus::workload {
namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

WorkloadRequest paper_job() {  // Llama-3.2-3B, TP8 PP2, the Kareus paper's testbed
  return testing::llama3b_request(8, 1);
}

WorkloadRequest llama70b(const char* gpu, int microbatch_size, int microbatches) {
  WorkloadRequest r;
  r.model = "llama3.3-70b";
  r.gpu = gpu;
  r.parallelism.microbatch_size = microbatch_size;
  r.parallelism.sequence_length = 4096;
  r.parallelism.microbatches = microbatches;
  return r;
}

// By hand from llama3.2-3b's config (h 3072, 24 heads of 128, 8 KV heads, MLP 8192, 28 layers,
// vocabulary 128256, tied embeddings):
//   one layer: 3072 x (3072 + 2 x 1024) + 3072 x 3072 + 3 x 3072 x 8192 = 100,663,296
//   the table: 128256 x 3072 = 394,002,432; the model: 28 layers + the table = 3,212,574,720.
TEST(Memory, MatchesAHandComputation) {
  const MemoryEstimate m = estimate_memory(make_workload(paper_job()));
  EXPECT_EQ(m.capacity_gib, 40);
  // 16 B x 3,212,574,720 over 16 GPUs.
  EXPECT_DOUBLE_EQ(m.lower_bound_gib, 3'212'574'720.0 / kGib);
  // Stages of 15 and 13 layers; the last holds the tied table's copy and the logits.
  ASSERT_EQ(m.stage, 1);
  // (13 x 100,663,296 + 394,002,432) / 8 = 212,828,160 parameters x (6 + 12 / 1) B.
  EXPECT_DOUBLE_EQ(m.model_states_gib, 18.0 * 212'828'160.0 / kGib);
  // s b h / t = 8 x 4096 x 3072 / 8 = 12,582,912. One microbatch in flight on the last stage:
  // 13 layer inputs of 2 s b h / t, one recomputed layer of 34 s b h / t, the output's
  // 4 s b h / t and 4 s b v / t of fp32 logits (8 x 4096 x 128256 x 4 / 8 = 2,101,346,304).
  const double activations =
      13 * 2 * 12'582'912.0 + 34 * 12'582'912.0 + 4 * 12'582'912.0 + 2'101'346'304.0;
  EXPECT_DOUBLE_EQ(m.activations_gib, activations / kGib);
  EXPECT_TRUE(m.estimate_fits());
}

TEST(Memory, NoRecomputationKeepsEveryLayersActivations) {
  WorkloadRequest r = paper_job();
  r.parallelism.recompute = Recompute::kNone;
  const Workload w = make_workload(r);
  // Stage 0 now: two microbatches in flight through 15 layers of 34 s b h / t each.
  const MemoryEstimate m = estimate_memory(w);
  ASSERT_EQ(m.stage, 0);
  EXPECT_DOUBLE_EQ(m.activations_gib, 2 * 15 * 34 * 12'582'912.0 / kGib);
  EXPECT_DOUBLE_EQ(m.model_states_gib, 18.0 * (15 * 100'663'296.0 + 394'002'432.0) / 8 / kGib);
}

// More GPUs of any kind never need more memory per GPU.
TEST(Memory, FallsAsTensorPipelineOrDataParallelismGrows) {
  WorkloadRequest r = llama70b("h200", 2, 16);
  r.parallelism.recompute = Recompute::kFull;
  r.training_job = false;  // estimates of layouts that do not fit are wanted too
  auto at = [&](int tp, int pp, int dp) {
    WorkloadRequest q = r;
    q.parallelism.tp = tp;
    q.parallelism.pp = pp;
    q.parallelism.dp = dp;
    return estimate_memory(make_workload(q));
  };
  for (int pp : {1, 2, 4, 8})
    for (int dp : {1, 2, 8}) {
      for (int tp : {1, 2, 4}) {
        const MemoryEstimate a = at(tp, pp, dp), b = at(2 * tp, pp, dp);
        EXPECT_LT(b.lower_bound_gib, a.lower_bound_gib);
        EXPECT_LT(b.estimate_gib(), a.estimate_gib()) << tp << " " << pp << " " << dp;
      }
      if (pp < 8) {
        EXPECT_LT(at(2, 2 * pp, dp).lower_bound_gib, at(2, pp, dp).lower_bound_gib);
        EXPECT_LT(at(2, 2 * pp, dp).model_states_gib, at(2, pp, dp).model_states_gib);
      }
      EXPECT_LT(at(2, pp, 2 * dp).lower_bound_gib, at(2, pp, dp).lower_bound_gib);
      EXPECT_LT(at(2, pp, 2 * dp).estimate_gib(), at(2, pp, dp).estimate_gib());
    }
  for (int tp : {1, 2, 4, 8})
    for (int dp : {1, 2, 8})
      EXPECT_LE(at(tp, 8, dp).lower_bound_gib, at(tp, 1, dp).lower_bound_gib);
}

// Every shipped workload ran (or, the 70B emulation, is laid out as such jobs run): none may be
// refused, and none should be warned about.
TEST(Memory, EveryShippedWorkloadFits) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir() / "workloads")) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const Workload w = make_workload(read_workload_request(entry.path().string()));
    const MemoryEstimate m = estimate_memory(w);
    EXPECT_TRUE(m.lower_bound_fits()) << entry.path();
    EXPECT_TRUE(m.estimate_fits()) << entry.path() << ": " << m.estimate_gib() << " GiB";
    EXPECT_EQ(memory_warning(w), "") << entry.path();
  }
  EXPECT_GE(files, 24);
}

TEST(Memory, SeventyBillionOnOneGpuIsRefusedWithWhatItNeeds) {
  WorkloadRequest r = llama70b("a100-sxm4-40gb", 2, 4);
  const std::string message = testing::error_of([&] { make_workload(r); });
  // 16 B x 70.6 B parameters is over a terabyte.
  EXPECT_THAT(message, ::testing::HasSubstr("does not fit on 1 x a100-sxm4-40gb"));
  EXPECT_THAT(message, ::testing::HasSubstr("the GPU has 40 GiB"));
  EXPECT_THAT(message, ::testing::HasSubstr("raise tp, pp or dp"));
  EXPECT_THAT(message, ::testing::ContainsRegex("at least 10[0-9][0-9]\\.[0-9] GiB per GPU"));
  // As many GPUs as the message asks for are enough for the bound.
  r.parallelism.tp = 8;
  r.parallelism.pp = 4;
  EXPECT_EQ(testing::error_of([&] { make_workload(r); }), "");
}

TEST(Memory, AStudyOfLayersIsNotATrainingJob) {
  WorkloadRequest r = llama70b("a100-sxm4-40gb", 1, 1);
  r.training_job = false;
  EXPECT_EQ(testing::error_of([&] { make_workload(r); }), "");
}

TEST(Memory, WarnsWhenTheEstimateButNotTheBoundExceedsTheGpu) {
  WorkloadRequest r = paper_job();
  r.parallelism.recompute = Recompute::kNone;
  r.parallelism.microbatch_size = 64;  // 2 x 15 x 34 s b h / t = 8 x the paper's 8 x 2.9 GiB
  const Workload w = make_workload(r);
  const MemoryEstimate m = estimate_memory(w);
  ASSERT_TRUE(m.lower_bound_fits());
  ASSERT_FALSE(m.estimate_fits());
  EXPECT_THAT(memory_warning(w), ::testing::StartsWith("warning: llama3.2-3b on a100-sxm4-40gb"));
  EXPECT_EQ(memory_warning(make_workload(paper_job())), "");
}

}  // namespace
}  // namespace kareus::workload
