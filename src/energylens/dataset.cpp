// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/dataset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"
#include "kareus/energylens/import.hpp"

namespace kareus::energylens {
namespace {

// What a row may give for each number: beyond any real deployment at both ends, so that no
// measurement is refused, and within what the fit computes in doubles (the closed form raises the
// batch and GPU counts to powers up to 2 and multiplies token counts; the relative loss squares
// prediction over energy), so that no row can make it infinite. docs/energylens.md lists them.
struct Range {
  double low;
  double high;
};
// GPU counts and degrees: up to 2^24 GPUs, as for workload files (docs/hardening.md).
constexpr Range kGpuCount{1.0, 16777216.0};
// Sequences in flight: ten million, 3,000 times the largest batch of the shipped datasets.
constexpr Range kBatchRange{1e-9, 1e7};
// Tokens per request or per context: a billion, 100 times the longest published context.
constexpr Range kTokens{1e-9, 1e9};
constexpr Range kRequestCount{1.0, 1e12};
// Energy per request: from a microjoule (a token on the smallest GPU costs about a millijoule) to
// a terajoule.
constexpr Range kEnergyJ{1e-6, 1e12};
// Durations: from a microsecond to 30 years.
constexpr Range kSecondsRange{1e-6, 1e9};
// Average power: a gigawatt.
constexpr Range kPowerW{1e-6, 1e9};

double within(const CsvRow& row, std::string_view column, double value, Range r) {
  if (!(value >= r.low && value <= r.high))
    row.fail(column, fmt::format("must lie in [{:g}, {:g}]", r.low, r.high));
  return value;
}
double number_in(const CsvRow& row, std::string_view column, Range r) {
  return within(row, column, row.positive_number(column), r);
}
double integer_in(const CsvRow& row, std::string_view column, Range r) {
  return within(row, column, static_cast<double>(row.positive_integer(column)), r);
}

// The run's drain: both columns or neither on a row, since one alone fixes no step count.
void parse_drain(const CsvRow& row, Sample& s) {
  const bool cap = row.optional_text("max_output_tokens").has_value();
  if (cap != row.optional_text("requests").has_value())
    row.fail(cap ? "requests" : "max_output_tokens",
             "max_output_tokens and requests go together (the run's drain needs both)");
  if (!cap) return;
  s.max_output_tokens = integer_in(row, "max_output_tokens", kTokens);
  s.requests = integer_in(row, "requests", kRequestCount);
  if (*s.requests < s.batch * s.dp)
    row.fail("requests",
             "must be at least batch x dp (a run cannot keep more sequences running than it was "
             "given)");
}

Sample parse_row(const CsvRow& row, EnergyColumn energy, bool workload_column) {
  Sample s;
  s.line = row.line();
  s.scenario = row.text("scenario");
  if (s.scenario.empty()) row.fail("scenario", "a scenario name is required");
  s.tp = integer_in(row, "tp", kGpuCount);
  s.pp = integer_in(row, "pp", kGpuCount);
  if (row.optional_text("dp")) s.dp = integer_in(row, "dp", kGpuCount);
  s.batch = number_in(row, "batch", kBatchRange);
  s.output_tokens = number_in(row, "output_tokens", kTokens);
  if (energy == EnergyColumn::kRequired || row.optional_text("energy_j"))
    s.energy = Joules(number_in(row, "energy_j", kEnergyJ));
  if (row.optional_text("input_tokens")) s.input_tokens = number_in(row, "input_tokens", kTokens);
  s.model = row.optional_text("model").value_or("");
  s.gpu = row.optional_text("gpu").value_or("");
  if (workload_column) {
    s.workload = row.text("workload");
    if (s.workload.empty())
      row.fail("workload",
               "a workload name is required in every row once the column exists (it sets the "
               "scale group; drop the column if the rows share one)");
  }
  if (row.optional_text("time_s")) s.time = Seconds(number_in(row, "time_s", kSecondsRange));
  if (row.optional_text("power_w")) s.power = Watts(number_in(row, "power_w", kPowerW));
  if (row.optional_text("run_s")) s.run = Seconds(number_in(row, "run_s", kSecondsRange));
  if (row.optional_text("gpus_metered")) {
    s.gpus_metered = integer_in(row, "gpus_metered", kGpuCount);
    if (*s.gpus_metered < s.tp * s.pp * s.dp)
      row.fail("gpus_metered", "must be at least tp x pp x dp (the GPUs that serve the row)");
  }
  parse_drain(row, s);
  if (row.optional_text("max_model_len"))
    s.max_model_len = integer_in(row, "max_model_len", kTokens);
  return s;
}

// Either every row has the drain columns or none does: a fit that counts the drain on some rows
// only would give the per-step terms two meanings.
bool drain_on_every_row(const CsvTable& table, const Dataset& data) {
  const auto drained = static_cast<std::size_t>(
      std::count_if(data.samples.begin(), data.samples.end(),
                    [](const Sample& s) { return s.requests.has_value(); }));
  if (drained > 0 && drained < data.samples.size())
    for (std::size_t i = 0; i < data.samples.size(); ++i)
      if (!data.samples[i].requests)
        table.row(i).fail("requests",
                          "other rows have max_output_tokens and requests, so every row must");
  return drained > 0;
}

}  // namespace

Dataset dataset_of(const CsvTable& table, EnergyColumn energy) {
  std::vector<std::string> required = {"scenario", "tp", "pp", "batch", "output_tokens"};
  if (energy == EnergyColumn::kRequired) required.push_back("energy_j");
  if (const auto raw = raw_format_of(table))
    throw Error(
        fmt::format("{}: a raw {} dataset, not the canonical EnergyLens CSV: convert it "
                    "first with import_dataset",
                    table.source(), to_string(*raw)));
  table.require_columns(required);
  Dataset data;
  data.source = table.source();
  if (table.rows() == 0) throw Error(fmt::format("{}: no data rows", data.source));
  data.has_workload = table.has_column("workload");
  for (std::size_t i = 0; i < table.rows(); ++i)
    data.samples.push_back(parse_row(table.row(i), energy, data.has_workload));

  const auto with_inputs =
      std::count_if(data.samples.begin(), data.samples.end(),
                    [](const Sample& s) { return s.input_tokens.has_value(); });
  if (with_inputs > 0 && static_cast<std::size_t>(with_inputs) < data.samples.size()) {
    for (std::size_t i = 0; i < data.samples.size(); ++i)
      if (!data.samples[i].input_tokens)
        table.row(i).fail("input_tokens",
                          "other rows report input tokens, so every row must (the prefill term "
                          "cannot mean different things on different rows)");
  }
  data.has_input_tokens = with_inputs > 0;
  data.has_time = std::all_of(data.samples.begin(), data.samples.end(),
                              [](const Sample& s) { return s.time.has_value(); });
  data.has_run = std::any_of(data.samples.begin(), data.samples.end(),
                             [](const Sample& s) { return s.run || s.gpus_metered; });
  data.has_drain = drain_on_every_row(table, data);
  data.has_max_model_len = std::any_of(data.samples.begin(), data.samples.end(),
                                       [](const Sample& s) { return s.max_model_len.has_value(); });
  return data;
}

Dataset parse_dataset(std::string_view text, std::string source_name, EnergyColumn energy) {
  return dataset_of(CsvTable::parse(text, std::move(source_name)), energy);
}

Dataset read_dataset(const std::filesystem::path& path, EnergyColumn energy) {
  return dataset_of(CsvTable::read_file(path), energy);
}

std::string dataset_to_csv(const Dataset& data) {
  std::string out = "scenario,tp,pp,dp,batch,output_tokens";
  if (data.has_input_tokens) out += ",input_tokens";
  out += ",energy_j,model,gpu";
  if (data.has_workload) out += ",workload";
  out += ",time_s,power_w";
  if (data.has_run) out += ",run_s,gpus_metered";
  if (data.has_drain) out += ",max_output_tokens,requests";
  if (data.has_max_model_len) out += ",max_model_len";
  out += "\n";
  auto opt = [](const auto& v) { return v ? format_number(v->value()) : std::string(); };
  for (const Sample& s : data.samples) {
    out += fmt::format("{},{},{},{},{},{}", csv_escape(s.scenario), format_number(s.tp),
                       format_number(s.pp), format_number(s.dp), format_number(s.batch),
                       format_number(s.output_tokens));
    if (data.has_input_tokens) out += "," + format_number(s.input_tokens.value_or(0.0));
    out += fmt::format(",{},{},{}", opt(s.energy), csv_escape(s.model), csv_escape(s.gpu));
    if (data.has_workload) out += "," + csv_escape(s.workload);
    out += fmt::format(",{},{}", opt(s.time), opt(s.power));
    if (data.has_run)
      out +=
          fmt::format(",{},{}", opt(s.run), s.gpus_metered ? format_number(*s.gpus_metered) : "");
    if (data.has_drain)
      out += fmt::format(",{},{}", format_number(*s.max_output_tokens), format_number(*s.requests));
    if (data.has_max_model_len)
      out += "," + (s.max_model_len ? format_number(*s.max_model_len) : std::string());
    out += "\n";
  }
  return out;
}

std::vector<std::vector<std::size_t>> scenario_groups(const std::vector<Sample>& samples,
                                                      const std::vector<std::size_t>& rows) {
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t r : rows) {
    auto [it, inserted] = index.emplace(samples[r].scenario, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(r);
  }
  return groups;
}

}  // namespace kareus::energylens
