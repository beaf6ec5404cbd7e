// SPDX-License-Identifier: Apache-2.0
// The canonical EnergyLens CSV: one row per measured (or candidate) serving configuration.
// Required columns: scenario,tp,pp,batch,output_tokens,energy_j. Optional: dp,input_tokens,model,
// gpu,workload,time_s,power_w,run_s,gpus_metered,max_output_tokens,requests,max_model_len. Energy,
// time and tokens refer to one request (docs/energylens.md).
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/core/csv.hpp"
#include "kareus/core/units.hpp"

namespace kareus::energylens {

inline constexpr std::size_t kDescriptorValues = 4;

struct Sample {
  std::string scenario;  // rows among which one configuration is chosen
  double tp = 1.0;
  double pp = 1.0;
  double dp = 1.0;
  double batch = 1.0;
  double output_tokens = 1.0;
  std::optional<double> input_tokens;
  std::optional<Joules> energy;  // absent only for candidate configurations
  std::string model;
  std::string gpu;
  // What the requests are (ML.ENERGY's `llm_text_generation/chat`, say): it sets the mean prompt,
  // text or image tokens, that the prefill scale absorbs; empty when the CSV has no such column.
  std::string workload;
  std::optional<Seconds> time;
  std::optional<Watts> power;
  // The measured run the row comes from: its duration (absent for a steady-state measurement or a
  // candidate configuration) and how many GPUs its energy counts (default TP x PP x DP; more when
  // idle GPUs were metered too). They enter the run-start term (closed_form.hpp).
  std::optional<Seconds> run;
  std::optional<double> gpus_metered;
  // The run's drain: each request's output cap and the requests the metered run served in waves
  // of batch x dp (absent for a steady-state measurement). They set how many decode steps the run
  // takes (closed_form.hpp).
  std::optional<double> max_output_tokens;
  std::optional<double> requests;
  // The context the server is started with (vLLM's --max-model-len): the memory check
  // (memory_fit.hpp) needs room for one sequence of it, in place of the model config's maximum.
  std::optional<double> max_model_len;
  std::size_t line = 0;  // line in the source file, for messages
  // The model's and GPU's descriptors in ScaleTerm order (parameters / 1e9, active parameters /
  // 1e9, KV MB per token, W per GB/s of HBM), zero unless attach_descriptors() filled them.
  std::array<double, kDescriptorValues> descriptors{};
};

struct Dataset {
  std::string source;
  std::vector<Sample> samples;
  // Either every row reports input tokens or none does (mixing would change the prefill term's
  // meaning from row to row).
  bool has_input_tokens = false;
  bool has_workload = false;       // the CSV has a workload column (then every row names one)
  bool has_time = false;           // every row has time_s
  bool has_run = false;            // some row has run_s or gpus_metered (written as columns)
  bool has_drain = false;          // every row has max_output_tokens and requests
  bool has_max_model_len = false;  // some row has max_model_len (written as a column)

  double energy_j(std::size_t i) const { return samples[i].energy->value(); }
};

enum class EnergyColumn { kRequired, kOptional };

// The canonical CSV `table`; a raw public dataset is refused (raw_format_of).
Dataset dataset_of(const CsvTable& table, EnergyColumn energy = EnergyColumn::kRequired);
Dataset parse_dataset(std::string_view text, std::string source_name,
                      EnergyColumn energy = EnergyColumn::kRequired);
Dataset read_dataset(const std::filesystem::path& path,
                     EnergyColumn energy = EnergyColumn::kRequired);
std::string dataset_to_csv(const Dataset& data);

// Indices of the rows of each scenario, scenarios in order of first appearance.
std::vector<std::vector<std::size_t>> scenario_groups(const std::vector<Sample>& samples,
                                                      const std::vector<std::size_t>& rows);

}  // namespace kareus::energylens
