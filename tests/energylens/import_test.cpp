// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/import.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/paths.hpp"

namespace kareus::energylens {
namespace {

const std::filesystem::path kMlEnergy =
    data_dir() / "energylens/mlenergy-v2/mlenergy_v2_llm_configs.csv";
const std::filesystem::path kTpb =
    data_dir() / "energylens/tokenpowerbench/tokenpowerbench_upstream_runs.csv";

TEST(EnergyLensImport, MlEnergyKeepsEveryRow) {
  const ImportResult r = import_dataset(ImportFormat::kMlenergyV2, kMlEnergy);
  EXPECT_EQ(r.rows_read, 356u);
  ASSERT_EQ(r.data.samples.size(), 356u);
  EXPECT_FALSE(r.data.has_input_tokens);
  EXPECT_TRUE(r.data.has_time);
  std::set<std::string> scenarios;
  for (const Sample& s : r.data.samples) scenarios.insert(s.scenario);
  EXPECT_EQ(scenarios.size(), 57u);  // the dataset README's (workload, GPU, model) groups
  // Values are copied, not transformed: check one row against the source.
  const CsvTable src = CsvTable::read_file(kMlEnergy);
  const CsvRow first = src.row(0);
  EXPECT_DOUBLE_EQ(r.data.samples[0].energy->value(), first.number("energy_per_req_J"));
  EXPECT_DOUBLE_EQ(r.data.samples[0].batch, first.number("max_batch_reqs"));
  EXPECT_DOUBLE_EQ(r.data.samples[0].time->value(),
                   first.number("avg_tpot_s") * first.number("avg_output_tokens"));
  // The notes say how the missing prefill input is handled.
  bool prefill_note = false;
  for (const auto& n : r.notes) prefill_note |= n.find("prefill") != std::string::npos;
  EXPECT_TRUE(prefill_note);
  // The written CSV reads back as a valid canonical dataset with the same rows.
  EXPECT_EQ(parse_dataset(dataset_to_csv(r.data), "x.csv").samples.size(), 356u);
}

TEST(EnergyLensImport, TokenPowerBenchKeepsEveryRow) {
  const ImportResult r = import_dataset(ImportFormat::kTokenpowerbench, kTpb);
  EXPECT_EQ(r.rows_read, 185u);
  ASSERT_EQ(r.data.samples.size(), 185u);
  const CsvTable src = CsvTable::read_file(kTpb);
  for (std::size_t i = 0; i < src.rows(); ++i) {
    const CsvRow row = src.row(i);
    const Sample& s = r.data.samples[i];
    EXPECT_NEAR(s.energy->value() * row.number("responses"), row.number("gpu_energy_J"),
                1e-6 * row.number("gpu_energy_J"));
    EXPECT_LE(s.batch, row.number("batch_size_field"));
    EXPECT_LE(s.batch, row.number("responses"));
    EXPECT_EQ(s.model.find("models--"), std::string::npos) << s.model;
    // The run's duration and the metered GPUs feed the run-start term.
    EXPECT_DOUBLE_EQ(s.run->value(), row.number("duration_s"));
    EXPECT_GE(*s.gpus_metered, 1.0);
    // The output cap and the requests of the run feed the run's drain.
    EXPECT_EQ(s.max_output_tokens, row.number("fn_output_len"));
    EXPECT_EQ(s.requests, row.number("responses"));
  }
  EXPECT_TRUE(r.data.has_drain);
  const Dataset back = parse_dataset(dataset_to_csv(r.data), "x.csv");
  ASSERT_EQ(back.samples.size(), 185u);
  EXPECT_EQ(back.samples[2].gpus_metered, 4.0);  // gpu0..gpu3 in per_gpu_power_W
  // The first row: DeepSpeed, Llama-3.1-8B, 52002 requests capped at 500 tokens.
  EXPECT_TRUE(back.has_drain);
  EXPECT_EQ(back.samples[0].max_output_tokens, 500.0);
  EXPECT_EQ(back.samples[0].requests, 52002.0);
}

TEST(EnergyLensImport, BadInputIsAnErrorNotASkippedRow) {
  const auto dir = std::filesystem::path(KAREUS_TEST_DATA_DIR) / "energylens";
  try {
    import_dataset(ImportFormat::kTokenpowerbench, dir / "tokenpowerbench_bad_energy.csv");
    FAIL() << "a row with an empty energy was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(":3"), std::string::npos) << m;
    EXPECT_NE(m.find("gpu_energy_J"), std::string::npos) << m;
  }
  EXPECT_THROW(import_dataset(ImportFormat::kMlenergyV2, kTpb), Error);  // wrong format
  EXPECT_THROW(parse_import_format("csv"), Error);
}

}  // namespace
}  // namespace kareus::energylens
