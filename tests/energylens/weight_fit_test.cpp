#include "kareus/energylens/weight_fit.hpp"

#include <gtest/gtest.h>

#include "kareus/core/paths.hpp"
#include "kareus/energylens/import.hpp"
#include "kareus/energylens/select.hpp"

namespace kareus::energylens {
namespace {

// Every row of both public datasets was measured, so its weights were loaded: none may fail the
// check, and the ML.ENERGY rows, whose models and GPUs the catalogues all know, are all checked.
TEST(EnergyLensWeightFit, EveryShippedRowFits) {
  const ImportResult ml = import_dataset(
      ImportFormat::kMlenergyV2, data_dir() / "energylens/mlenergy-v2/mlenergy_v2_llm_configs.csv");
  const ImportResult tpb =
      import_dataset(ImportFormat::kTokenpowerbench,
                     data_dir() / "energylens/tokenpowerbench/tokenpowerbench_upstream_runs.csv");
  ASSERT_EQ(ml.data.samples.size(), 356u);
  for (const Sample& s : ml.data.samples) {
    const auto fit = weight_fit(s);
    ASSERT_TRUE(fit.has_value()) << "line " << s.line << ": " << s.model << " on " << s.gpu;
    EXPECT_TRUE(fit->fits()) << "line " << s.line << ": " << s.model << " TP" << s.tp << " PP"
                             << s.pp << " on " << s.gpu << ": " << fit->weights_gib << " GiB";
  }
  ASSERT_FALSE(tpb.data.samples.empty());
  for (const Sample& s : tpb.data.samples) EXPECT_FALSE(does_not_fit(s)) << "line " << s.line;
}

TEST(EnergyLensWeightFit, BfloatWeightsAgainstNinetyPercentOfTheGpu) {
  Sample s;
  s.model = "llama3.3-70b";
  s.gpu = "h100-sxm";
  s.tp = 2;
  const auto fit = weight_fit(s);
  ASSERT_TRUE(fit.has_value());
  // 70.55 B parameters x 2 B / 2 GPUs = 65.7 GiB of the usable 0.9 x 80 = 72 GiB.
  EXPECT_NEAR(fit->weights_gib, 65.7, 0.1);
  EXPECT_DOUBLE_EQ(fit->usable_gib, 72.0);
  EXPECT_TRUE(fit->fits());
  s.tp = 1;
  EXPECT_TRUE(does_not_fit(s));
  s.gpu = "no-such-gpu";  // a model fitted without descriptors takes any name: not checked
  EXPECT_FALSE(weight_fit(s).has_value());
}

EnergyModel energy_grows_with_tp() {  // E = 100 * out / batch + 10 * tp, as select_test.cpp
  EnergyModel m;
  m.params[a_d] = 100.0;
  m.params[e_d] = 1e-6;
  m.params[b_d] = 1.0;
  m.params[d1] = 10.0;
  return m;
}

TEST(EnergyLensWeightFit, SelectNeverPicksACandidateThatCannotLoadItsWeights) {
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

}  // namespace
}  // namespace kareus::energylens
