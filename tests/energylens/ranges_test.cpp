// SPDX-License-Identifier: Apache-2.0
// Training ranges: a candidate outside them is named with its value and the range, the model
// file keeps them (and old files without them check nothing), and select does not call a pick
// between extrapolated candidates when the bag's fits order them differently.
#include <gtest/gtest.h>

#include "kareus/core/error.hpp"
#include "kareus/energylens/select.hpp"

namespace kareus::energylens {
namespace {

const char* const kTraining =
    "scenario,tp,pp,batch,output_tokens,energy_j\n"
    "s,1,1,1,100,50\n"
    "s,2,1,16,100,20\n"
    "s,1,1,64,300,10\n";

TEST(EnergyLensRanges, NameEachInputOutsideTheTrainingRows) {
  const Dataset train = parse_dataset(kTraining, "train.csv");
  const std::vector<TrainedRange> ranges = training_ranges(train.samples);
  // No training row gives input_tokens or the drain: those inputs have no range.
  ASSERT_EQ(ranges.size(), 5u);
  const Dataset c = parse_dataset(
      "scenario,tp,pp,batch,output_tokens,input_tokens\n"
      "c,1,1,64,100,500\n"
      "c,4,1,256,100,500\n",
      "cand.csv", EnergyColumn::kOptional);
  EXPECT_TRUE(outside_ranges(ranges, c.samples[0]).empty());  // batch 64 is the edge, inside
  const std::vector<OutOfRange> o = outside_ranges(ranges, c.samples[1]);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(describe(o[0]), "tp 4 (trained 1..2)");
  EXPECT_EQ(describe(o[1]), "batch 256 (trained 1..64)");
}

TEST(EnergyLensRanges, TheModelFileKeepsThemAndOldFilesCheckNothing) {
  const Dataset train = parse_dataset(kTraining, "train.csv");
  FitOptions fit;
  fit.scale_by = {};
  fit.restarts = 1;
  const EnergyModel m = fit_energy_model(train.samples, fit);
  Json j = m.to_json();
  const EnergyModel back = EnergyModel::from_json(JsonDocument::parse(j.dump(), "m.json").root());
  Sample big = train.samples[0];
  big.batch = 512.0;
  ASSERT_EQ(back.outside_training_range(big).size(), 1u);
  EXPECT_EQ(back.outside_training_range(big)[0].high, 64.0);
  j.erase("training_ranges");
  const EnergyModel old = EnergyModel::from_json(JsonDocument::parse(j.dump(), "m.json").root());
  EXPECT_TRUE(old.outside_training_range(big).empty());
  j["training_ranges"] = {{"batch", {{"low", 64.0}, {"high", 1.0}}}};
  EXPECT_THROW(EnergyModel::from_json(JsonDocument::parse(j.dump(), "m.json").root()), Error);
  j["training_ranges"] = {{"colour", {{"low", 1.0}, {"high", 2.0}}}};
  EXPECT_THROW(EnergyModel::from_json(JsonDocument::parse(j.dump(), "m.json").root()), Error);
}

// A bag of two fits that agree on batch <= 64 where the rows were and part beyond it: the first
// decode term falls with the batch (b_d = 1), the second rises with it (b_d = -0.5). The row
// noise is 0, so only the bag can make a pick uncertain.
EnergyModel split_bag() {
  EnergyModel m;
  m.params[a_d] = 100.0;
  m.params[b_d] = 1.0;
  m.params[e_d] = 1e-6;
  EnergyModel rising = m;
  rising.params[a_d] = 1.0;
  rising.params[b_d] = -0.5;
  m.replicates = {rising};
  m.bags = 2;
  m.ranges = training_ranges(parse_dataset(kTraining, "train.csv").samples);
  return m;
}

TEST(EnergyLensRanges, SelectDoesNotCallAPickTheBagSplitsOnBeyondTheData) {
  const EnergyModel m = split_bag();
  const Dataset c = parse_dataset(
      "scenario,tp,pp,batch,output_tokens\n"
      "in,1,1,16,100\nin,1,1,64,100\n"
      "out,1,1,64,100\nout,1,1,256,100\n",
      "cand.csv", EnergyColumn::kOptional);
  const std::vector<Selection> sel = select_configurations(m, c);
  ASSERT_EQ(sel.size(), 2u);
  // Inside the range the order is the row noise's to judge: the split is not flagged.
  EXPECT_EQ(sel[0].ranking[0].row, 1u);
  EXPECT_FALSE(sel[0].ranking[1].bag_disagrees);
  EXPECT_FALSE(sel[0].too_close_to_call);
  // Beyond it the rising fit orders batch 256 after 64, the bag before it.
  EXPECT_EQ(sel[1].ranking[0].row, 3u);
  ASSERT_EQ(sel[1].ranking[0].outside.size(), 1u);
  EXPECT_EQ(sel[1].ranking[0].outside[0].variable, "batch");
  EXPECT_FALSE(sel[1].ranking[1].close_to_best);
  EXPECT_TRUE(sel[1].ranking[1].bag_disagrees);
  EXPECT_TRUE(sel[1].too_close_to_call);
  // Fits that agree beyond the data leave the pick standing.
  EnergyModel agreeing = m;
  agreeing.replicates[0].params[b_d] = 0.5;
  EXPECT_FALSE(select_configurations(agreeing, c)[1].too_close_to_call);
}

}  // namespace
}  // namespace kareus::energylens
