// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"

namespace kareus::energylens {
namespace {

constexpr std::string_view kPrefillNote =
    "input tokens are not reported: the prefill term is kept with input_tokens = 1 per request, "
    "so its scale a_p absorbs the mean prompt length, assumed common to all rows of a scale group";

// ML.ENERGY leaderboard v2 (github.com/ml-energy/leaderboard-v2 @ c3af7f3), one row per
// (workload, GPU, model, max_num_seqs, TP, PP).
const std::vector<std::string> kMlenergyColumns = {"workload",
                                                   "gpu",
                                                   "model",
                                                   "tp",
                                                   "pp",
                                                   "max_batch_reqs",
                                                   "energy_per_req_J",
                                                   "avg_output_tokens",
                                                   "avg_tpot_s",
                                                   "avg_power_all_gpus_W"};

ImportResult import_mlenergy(const CsvTable& t) {
  t.require_columns(kMlenergyColumns);
  ImportResult r;
  r.data.source = t.source();
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const CsvRow row = t.row(i);
    Sample s;
    s.line = row.line();
    s.model = row.text("model");
    s.gpu = row.text("gpu");
    s.workload = row.text("workload");
    s.scenario = fmt::format("{}|{}|{}", s.workload, s.gpu, s.model);
    s.tp = static_cast<double>(row.positive_integer("tp"));
    s.pp = static_cast<double>(row.positive_integer("pp"));
    s.batch = row.positive_number("max_batch_reqs");
    s.output_tokens = row.positive_number("avg_output_tokens");
    s.energy = Joules(row.positive_number("energy_per_req_J"));
    s.time = Seconds(row.positive_number("avg_tpot_s") * s.output_tokens);
    s.power = Watts(row.positive_number("avg_power_all_gpus_W"));
    r.data.samples.push_back(std::move(s));
  }
  r.data.has_workload = true;
  r.notes = {
      "workload = workload (it refines the scale groups and carries a factor in the scale term); "
      "scenario = workload|gpu|model; batch = max_batch_reqs (max_num_seqs x PP, the configured "
      "batch; runs below 95% saturation were already dropped upstream)",
      "energy_j = energy_per_req_J (steady-state energy of all GPUs per request); output_tokens = "
      "avg_output_tokens",
      "time_s = avg_tpot_s x avg_output_tokens (decode latency of one request); power_w = "
      "avg_power_all_gpus_W",
      std::string(kPrefillNote)};
  return r;
}

// Hugging Face cache folders are named models--<org>--<name>; the last part is the model.
std::string model_name(const std::string& raw) {
  const auto pos = raw.rfind("--");
  return pos == std::string::npos ? raw : raw.substr(pos + 2);
}

// TokenPowerBench (github.com/chenxuniu/TokenPowerBench @ ec00f52), one row per run.
const std::vector<std::string> kTokenpowerbenchColumns = {"engine",           "model",
                                                          "batch_size_field", "fn_output_len",
                                                          "duration_s",       "total_output_tokens",
                                                          "responses",        "gpu_avg_power_W",
                                                          "gpu_energy_J",     "per_gpu_power_W"};

ImportResult import_tokenpowerbench(const CsvTable& t) {
  t.require_columns(kTokenpowerbenchColumns);
  ImportResult r;
  r.data.source = t.source();
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const CsvRow row = t.row(i);
    const double requests = row.positive_number("responses");
    const std::string& per_gpu = row.text("per_gpu_power_W");
    if (per_gpu.empty()) row.fail("per_gpu_power_W", "a list gpuN=W;... is required");
    const auto gpus = 1 + std::count(per_gpu.begin(), per_gpu.end(), ';');
    const auto cap = row.positive_integer("fn_output_len");
    Sample s;
    s.line = row.line();
    // The model column names the model alone (its descriptors); the engine, which changes the
    // energy as much as a configuration does, is part of the scenario.
    s.model = model_name(row.text("model"));
    s.gpu = "NVIDIA H100 NVL";
    s.scenario = fmt::format("tokenpowerbench|{}@{}|gpus={}|max_output={}", s.model,
                             row.text("engine"), gpus, cap);
    s.batch = std::min(row.positive_number("batch_size_field"), requests);
    s.output_tokens = row.positive_number("total_output_tokens") / requests;
    s.energy = Joules(row.positive_number("gpu_energy_J") / requests);
    s.time = Seconds(row.positive_number("duration_s") / requests);
    s.power = Watts(row.positive_number("gpu_avg_power_W"));
    s.run = Seconds(row.positive_number("duration_s"));
    s.gpus_metered = static_cast<double>(gpus);
    // A run serves its requests in waves of the batch, each request capped at fn_output_len.
    s.max_output_tokens = static_cast<double>(cap);
    s.requests = requests;
    r.data.samples.push_back(std::move(s));
  }
  r.data.has_run = true;
  r.data.has_drain = true;
  r.notes = {
      "scenario = model@engine|number of GPUs metered|max output length (the workload); the GPU "
      "is the dataset's H100 NVL (gpu_memory_total_mb = 95830)",
      "batch = min(batch_size, responses): vLLM cannot run more sequences at once than it was "
      "given",
      "energy_j = gpu_energy_J / responses (all metered GPUs, idle ones included); the upstream "
      "gpu_energy_per_response_J is not used because it disagrees with gpu_energy_J / responses",
      "output_tokens = total_output_tokens / responses; time_s = duration_s / responses; "
      "power_w = gpu_avg_power_W",
      "run_s = duration_s (the whole run, from its start: the run-start term); gpus_metered = "
      "the GPUs in per_gpu_power_W",
      "max_output_tokens = fn_output_len (the run's output cap); requests = responses (served "
      "in waves of the batch, each lasting until its longest request reaches the cap: the "
      "run's drain)",
      std::string(kPrefillNote)};
  return r;
}

}  // namespace

ImportFormat parse_import_format(std::string_view text) {
  if (text == "mlenergy-v2") return ImportFormat::kMlenergyV2;
  if (text == "tokenpowerbench") return ImportFormat::kTokenpowerbench;
  throw Error::invalid("", field_ref("format"), text, "allowed: mlenergy-v2, tokenpowerbench");
}

const char* to_string(ImportFormat format) {
  return format == ImportFormat::kMlenergyV2 ? "mlenergy-v2" : "tokenpowerbench";
}

std::optional<ImportFormat> raw_format_of(const CsvTable& table) {
  if (table.has_column("scenario")) return std::nullopt;
  const auto has_all = [&table](const std::vector<std::string>& columns) {
    return std::all_of(columns.begin(), columns.end(),
                       [&table](const std::string& c) { return table.has_column(c); });
  };
  if (has_all(kMlenergyColumns)) return ImportFormat::kMlenergyV2;
  if (has_all(kTokenpowerbenchColumns)) return ImportFormat::kTokenpowerbench;
  return std::nullopt;
}

ImportResult import_dataset(ImportFormat format, const std::filesystem::path& in) {
  const CsvTable table = CsvTable::read_file(in);
  if (table.rows() == 0) throw Error(fmt::format("{}: no data rows", in.string()));
  ImportResult r =
      format == ImportFormat::kMlenergyV2 ? import_mlenergy(table) : import_tokenpowerbench(table);
  r.rows_read = table.rows();
  r.data.has_time = true;
  return r;
}

}  // namespace kareus::energylens
