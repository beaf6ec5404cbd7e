// SPDX-License-Identifier: Apache-2.0
// The workload's factor in the scale term, on the real ML.ENERGY data: a parallel configuration
// held out is predicted better with it than with the same rows without their workload column.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "kareus/core/paths.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/energylens/fit.hpp"
#include "kareus/energylens/import.hpp"
#include "kareus/energylens/metrics.hpp"

namespace kareus::energylens {
namespace {

// Leave one parallel configuration (TP x PP) out of ML.ENERGY v2: train on 50 random rows of
// the others, predict the held-out configuration's rows (4 restarts, 3 seeds), pooled.
double held_out_parallel_mape(const std::vector<Sample>& rows) {
  std::map<std::pair<double, double>, std::vector<std::size_t>> configs;
  for (std::size_t i = 0; i < rows.size(); ++i) configs[{rows[i].tp, rows[i].pp}].push_back(i);
  FitOptions o;
  o.descriptors = true;
  o.restarts = 4;
  std::vector<double> measured, predicted;
  Rng rng(17);
  for (int seed = 0; seed < 3; ++seed) {
    for (const auto& [config, test] : configs) {
      std::vector<std::size_t> others;
      for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].tp != config.first || rows[i].pp != config.second) others.push_back(i);
      std::vector<Sample> train;
      for (std::size_t k : rng.sample_without_replacement(others.size(), 50))
        train.push_back(rows[others[k]]);
      const EnergyModel m = fit_energy_model(train, o);
      for (std::size_t i : test) {
        measured.push_back(rows[i].energy->value());
        predicted.push_back(m.predict(rows[i]).value());
      }
    }
  }
  return mape_percent(measured, predicted);
}

// Without the TP 1 rows most of the training set's small models are vision-language ones, whose
// requests carry an image; without the workload's factor the scale term gives new text models
// their level (docs/energylens.md, "The workload"). Here the rows are the same but for the
// workload column.
TEST(EnergyLensParallel, TheWorkloadFactorLowersTheErrorOnAHeldOutParallelConfiguration) {
  const ImportResult imported = import_dataset(
      ImportFormat::kMlenergyV2, data_dir() / "energylens/mlenergy-v2/mlenergy_v2_llm_configs.csv");
  std::vector<Sample> unnamed = imported.data.samples;
  for (Sample& s : unnamed) s.workload.clear();
  const double with = held_out_parallel_mape(imported.data.samples);
  const double without = held_out_parallel_mape(unnamed);
  RecordProperty("mape_with_workloads", std::to_string(with));
  RecordProperty("mape_without_workloads", std::to_string(without));
  std::printf("leave-one-parallelism-out MAPE: %.1f %% with the workloads, %.1f %% without\n", with,
              without);
  EXPECT_LT(with, 0.75 * without);
}

}  // namespace
}  // namespace kareus::energylens
