// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/memory_fit.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kareus/core/paths.hpp"
#include "kareus/energylens/import.hpp"
#include "kareus/energylens/select.hpp"

namespace kareus::energylens {
namespace {

// Every row of both public datasets was measured, so its weights were loaded and its KV cache
// allocated: none may fail the check, and the ML.ENERGY rows, whose models and GPUs the catalogues
// all know, are all checked. ML.ENERGY keeps only runs whose mean running batch exceeded 95 % of
// the configured one, so the count of requests in flight (an upper bound there: it has no
// prompts) may not cut any row below that; counted as complete requests, five would be.
TEST(EnergyLensMemoryFit, EveryShippedRowFits) {
  const ImportResult ml = import_dataset(
      ImportFormat::kMlenergyV2, data_dir() / "energylens/mlenergy-v2/mlenergy_v2_llm_configs.csv");
  const ImportResult tpb =
      import_dataset(ImportFormat::kTokenpowerbench,
                     data_dir() / "energylens/tokenpowerbench/tokenpowerbench_upstream_runs.csv");
  ASSERT_EQ(ml.data.samples.size(), 356u);
  for (const Sample& s : ml.data.samples) {
    const auto fit = memory_fit(s);
    ASSERT_TRUE(fit.has_value()) << "line " << s.line << ": " << s.model << " on " << s.gpu;
    EXPECT_TRUE(fit->fits()) << "line " << s.line << ": " << s.model << " TP" << s.tp << " PP"
                             << s.pp << " on " << s.gpu << ": " << fit->weights_gib << " GiB";
    EXPECT_GT(fit->kv_concurrency(), 0.95 * s.batch) << "line " << s.line;
  }
  ASSERT_FALSE(tpb.data.samples.empty());
  for (const Sample& s : tpb.data.samples) EXPECT_FALSE(does_not_fit(s)) << "line " << s.line;
}

TEST(EnergyLensMemoryFit, BfloatWeightsAgainstNinetyPercentOfTheGpu) {
  Sample s;
  s.model = "llama3.3-70b";
  s.gpu = "h100-sxm";
  s.tp = 2;
  const auto fit = memory_fit(s);
  ASSERT_TRUE(fit.has_value());
  // 70.55 B parameters x 2 B / 2 GPUs = 65.7 GiB of the usable 0.9 x 80 = 72 GiB.
  EXPECT_NEAR(fit->weights_gib, 65.7, 0.1);
  EXPECT_DOUBLE_EQ(fit->usable_gib, 72.0);
  EXPECT_TRUE(fit->fits());
  s.tp = 1;
  EXPECT_TRUE(does_not_fit(s));
  s.gpu = "no-such-gpu";  // a model fitted without descriptors takes any name: not checked
  EXPECT_FALSE(memory_fit(s).has_value());
}

// Llama-3.1-8B (data/models/meta-llama-3.1-8b-instruct.json) at TP 2 on A100-SXM4-40GB, by hand.
TEST(EnergyLensMemoryFit, KvFootprintAndConcurrencyByHand) {
  Sample s;
  s.model = "meta-llama-3.1-8b-instruct";
  s.gpu = "a100-sxm4-40gb";
  s.tp = 2;
  s.batch = 512;
  s.input_tokens = 1000;
  s.output_tokens = 1048;
  const auto fit = memory_fit(s);
  ASSERT_TRUE(fit.has_value());
  // Parameters: embeddings 2 (untied) x 128256 x 4096 = 1,050,673,152; a layer's attention
  // 4096 x (4096 + 2 x 8 x 128) + 4096 x 4096 = 41,943,040 and gated MLP 3 x 4096 x 14336 =
  // 176,160,768, so 32 layers x 218,103,808 = 6,979,321,856; in all 8,029,995,008.
  // Weights per GPU: 2 B x 8,029,995,008 / 2 = 8,029,995,008 B = 7.478515625 GiB.
  EXPECT_DOUBLE_EQ(fit->weights_gib, 8029995008.0 / (1024.0 * 1024.0 * 1024.0));
  EXPECT_DOUBLE_EQ(fit->usable_gib, 36.0);  // 0.9 x 40 GiB
  // KV room: 36 GiB = 38,654,705,664 B less the weights = 30,624,710,656 B.
  EXPECT_DOUBLE_EQ(fit->kv_room_gib(), 30624710656.0 / (1024.0 * 1024.0 * 1024.0));
  // One token's K and V on a GPU: 2 x 32 layers x (8 KV heads / 2) x 128 x 2 B = 65,536 B.
  EXPECT_DOUBLE_EQ(fit->kv_bytes_per_token, 65536.0);
  // 30,624,710,656 / 65,536 = 467,296 tokens; a request in flight holds its 1000 prompt tokens
  // and half its 1048 output on average, 1524 tokens, so 467,296 / 1524 = 306.6: 306 requests at
  // once, below the batch of 512.
  EXPECT_DOUBLE_EQ(fit->kv_tokens(), 467296.0);
  EXPECT_DOUBLE_EQ(fit->sequence_tokens, 1524.0);
  EXPECT_TRUE(fit->prompt_counted);
  EXPECT_DOUBLE_EQ(fit->kv_concurrency(), 306.0);
  EXPECT_TRUE(fit->batch_limited_by_kv());
  EXPECT_TRUE(fit->fits());  // a smaller batch than configured, not a failure to start
  s.batch = 306;
  EXPECT_FALSE(memory_fit(s)->batch_limited_by_kv());
  // Without a prompt only the output counts: 467,296 / 524 = 891.8.
  s.input_tokens.reset();
  EXPECT_FALSE(memory_fit(s)->prompt_counted);
  EXPECT_DOUBLE_EQ(memory_fit(s)->kv_concurrency(), 891.0);
  // Beyond its 8 KV heads TP replicates them (one per GPU): at TP 16 a GPU holds 2 x 32 x 1 x
  // 128 x 2 B = 16,384 B per token, not a sixteenth of the 524,288 B of all heads.
  s.tp = 16;
  EXPECT_DOUBLE_EQ(memory_fit(s)->kv_bytes_per_token, 16384.0);
  // PP splits the layers: at TP 2 x PP 2, 2 x 16 x 4 x 128 x 2 B = 32,768 B.
  s.tp = 2;
  s.pp = 2;
  EXPECT_DOUBLE_EQ(memory_fit(s)->kv_bytes_per_token, 32768.0);
}

// Llama-3.3-70B's config.json with the max_position_embeddings the Hugging Face one gives
// (131072): the shipped data/models/llama3.3-70b.json does not carry it.
std::string llama70b_with_context() {
  const auto path = std::filesystem::temp_directory_path() / "kareus_el_llama70b_context.json";
  std::ofstream(path) << R"({"model_type": "llama", "hidden_size": 8192,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
    "intermediate_size": 28672, "num_hidden_layers": 80, "vocab_size": 128256,
    "tie_word_embeddings": false, "hidden_act": "silu", "max_position_embeddings": 131072})";
  return path.string();
}

TEST(EnergyLensMemoryFit, KvCacheBelowTheMaximumContextDoesNotFit) {
  Sample s;
  s.model = llama70b_with_context();
  s.gpu = "h100-sxm";
  s.tp = 2;
  s.batch = 1;
  s.output_tokens = 100;
  // TP 2: weights 65.7 GiB of the usable 72 leave 6.29 GiB; 2 x 80 x 4 x 128 x 2 B = 163,840 B
  // per token, so 41,241 tokens, below one sequence of 131,072: vLLM would not start.
  auto fit = memory_fit(s);
  ASSERT_TRUE(fit.has_value());
  ASSERT_TRUE(fit->max_context.has_value());
  EXPECT_DOUBLE_EQ(*fit->max_context, 131072.0);
  EXPECT_LT(fit->weights_gib, fit->usable_gib);
  EXPECT_DOUBLE_EQ(fit->kv_tokens(), 41241.0);
  EXPECT_EQ(fit->limit(), MemoryLimit::kKvCache);
  EXPECT_FALSE(fit->batch_limited_by_kv());  // it does not run at all
  EXPECT_TRUE(does_not_fit(s));
  // TP 4: 39.1 GiB at 81,920 B per token hold 513,100 tokens.
  s.tp = 4;
  EXPECT_EQ(memory_fit(s)->limit(), MemoryLimit::kNone);
  // TP 1: the weights fail first, and are the reason given.
  s.tp = 1;
  EXPECT_EQ(memory_fit(s)->limit(), MemoryLimit::kWeights);
  // The shipped config gives no maximum context: the same TP 2 is not checked against one.
  s.model = "llama3.3-70b";
  s.tp = 2;
  fit = memory_fit(s);
  EXPECT_FALSE(fit->max_context.has_value());
  EXPECT_DOUBLE_EQ(fit->kv_tokens(), 41241.0);
  EXPECT_TRUE(fit->fits());
  // The server's own context replaces the config's, either way: 32,768 tokens fit in 41,241,
  // 65,536 do not, with or without a config maximum.
  s.max_model_len = 65536;
  EXPECT_EQ(memory_fit(s)->limit(), MemoryLimit::kKvCache);
  s.model = llama70b_with_context();
  s.max_model_len = 32768;
  EXPECT_DOUBLE_EQ(*memory_fit(s)->max_context, 32768.0);
  EXPECT_TRUE(memory_fit(s)->fits());
}

EnergyModel energy_grows_with_tp() {  // E = 100 * out / batch + 10 * tp, as select_test.cpp
  EnergyModel m;
  m.params[a_d] = 100.0;
  m.params[e_d] = 1e-6;
  m.params[b_d] = 1.0;
  m.params[d1] = 10.0;
  return m;
}

TEST(EnergyLensMemoryFit, SelectNeverPicksACandidateThatCannotLoadItsWeights) {
  // TP1 is predicted cheapest and measured fastest, but 141 GiB of weights cannot load on 80 GB.
  const Dataset c = parse_dataset(
      "scenario,model,gpu,tp,pp,batch,output_tokens,time_s\n"
      "s,llama3.3-70b,h100-sxm,1,1,100,1,1.0\n"
      "s,llama3.3-70b,h100-sxm,2,1,100,1,2.0\n"
      "s,llama3.3-70b,h100-sxm,4,1,100,1,3.0\n"
      "big,meta-llama-3.1-405b-instruct,h100-sxm,1,1,100,1,1.0\n"
      "big,meta-llama-3.1-405b-instruct,h100-sxm,2,1,100,1,1.0\n",
      "cand.csv", EnergyColumn::kOptional);
  const auto sel = select_configurations(energy_grows_with_tp(), c);
  ASSERT_EQ(sel.size(), 2u);
  ASSERT_EQ(sel[0].ranking.size(), 3u);
  EXPECT_FALSE(sel[0].none_fits);
  EXPECT_EQ(sel[0].ranking[0].row, 1u);  // TP2, the cheapest that fits
  EXPECT_EQ(sel[0].ranking[1].row, 2u);
  EXPECT_EQ(sel[0].ranking[2].row, 0u);  // TP1, last although predicted cheapest
  EXPECT_FALSE(sel[0].ranking[2].fits());
  EXPECT_FALSE(sel[0].ranking[2].close_to_best);
  ASSERT_TRUE(sel[0].latency_optimal.has_value());
  EXPECT_EQ(*sel[0].latency_optimal, 1u);  // TP1 is faster but cannot run
  EXPECT_TRUE(sel[1].none_fits);
  EXPECT_FALSE(sel[1].latency_optimal.has_value());
  EXPECT_FALSE(sel[1].too_close_to_call);
}

TEST(EnergyLensMemoryFit, SelectNeverPicksACandidateWhoseKvCacheCannotHoldTheMaximumContext) {
  // TP 2 is predicted cheapest and measured fastest, but vLLM cannot start it with a KV cache
  // for one 131,072-token sequence; TP 4 and TP 8 can.
  const std::string model = llama70b_with_context();
  const Dataset c = parse_dataset(
      "scenario,model,gpu,tp,pp,batch,output_tokens,time_s\n"
      "s," +
          model +
          ",h100-sxm,2,1,100,1,1.0\n"
          "s," +
          model +
          ",h100-sxm,4,1,100,1,2.0\n"
          "s," +
          model + ",h100-sxm,8,1,100,1,3.0\n",
      "cand.csv", EnergyColumn::kOptional);
  const auto sel = select_configurations(energy_grows_with_tp(), c);
  ASSERT_EQ(sel.size(), 1u);
  EXPECT_FALSE(sel[0].none_fits);
  EXPECT_EQ(sel[0].ranking[0].row, 1u);  // TP 4
  EXPECT_EQ(sel[0].ranking[1].row, 2u);
  EXPECT_EQ(sel[0].ranking[2].row, 0u);  // TP 2, last
  ASSERT_TRUE(sel[0].ranking[2].memory.has_value());
  EXPECT_EQ(sel[0].ranking[2].memory->limit(), MemoryLimit::kKvCache);
  ASSERT_TRUE(sel[0].latency_optimal.has_value());
  EXPECT_EQ(*sel[0].latency_optimal, 1u);
}

}  // namespace
}  // namespace kareus::energylens
