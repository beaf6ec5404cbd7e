// SPDX-License-Identifier: Apache-2.0
// kareus gpus / kareus models: what the catalogue holds.
#include <fmt/format.h>

#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common_flags.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/core/printable.hpp"
#include "kareus/core/table.hpp"
#include "kareus/core/wrap.hpp"
#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/workload/model.hpp"

namespace kareus::cli {

namespace {

// The figures `kareus gpus` shows, by their key in data/gpus/<gpu>.json.
const std::vector<std::string> kShownFigures{"sm_count",
                                             "clock_min_mhz",
                                             "clock_max_mhz",
                                             "memory_capacity_gib",
                                             "memory_bandwidth_gbps",
                                             "peak_bf16_dense_tflops",
                                             "power_limit_default_w",
                                             "static_power_w"};

// Each shown figure's source, as its catalogue file gives it (load_gpu keeps the values only).
Json figure_sources(const std::string& gpu) {
  const auto doc = JsonDocument::load_file(data_dir() / "gpus" / (gpu + ".json"));
  Json sources = Json::object();
  for (const auto& key : kShownFigures) sources[key] = doc.root().at(key).string("source");
  return sources;
}

}  // namespace

void register_gpus_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("gpus", "List the GPU catalogue (data/gpus)");
  auto json = std::make_shared<bool>(false);
  auto sources = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print one JSON document (with every figure's source)");
  cmd->add_flag("--sources", *sources, "Under each GPU, where each of its figures comes from");
  cmd->callback([json, sources] {
    Json doc = Json::array();
    TextTable table(
        {"name", "SMs", "clock MHz", "mem GiB", "mem GB/s", "bf16 TFLOPS", "limit W", "static W"});
    std::string cited;
    for (const auto& name : list_gpus()) {
      const GpuSpec g = load_gpu(name);
      const Json figure_source = figure_sources(name);
      doc.push_back({{"name", g.name},
                     {"display_name", g.display_name},
                     {"sm_count", g.sm_count},
                     {"clock_min_mhz", g.clock_min.value()},
                     {"clock_max_mhz", g.clock_max.value()},
                     {"memory_capacity_gib", g.memory_capacity_gib},
                     {"memory_bandwidth_gbps", g.memory_bandwidth_gbps},
                     {"peak_bf16_dense_tflops", g.peak_bf16_dense_tflops},
                     {"power_limit_default_w", g.power_limit_default.value()},
                     {"static_power_w", g.static_power.value()},
                     {"sources", figure_source}});
      table.add_row({g.name, std::to_string(g.sm_count),
                     fmt::format("{:g}-{:g}", g.clock_min.value(), g.clock_max.value()),
                     fmt::format("{:g}", g.memory_capacity_gib),
                     fmt::format("{:g}", g.memory_bandwidth_gbps),
                     fmt::format("{:g}", g.peak_bf16_dense_tflops),
                     fmt::format("{:g}", g.power_limit_default.value()),
                     fmt::format("{:g}", g.static_power.value())});
      cited += "\n" + printable(g.name) + "\n";
      for (const auto& key : kShownFigures)
        cited += wrap(printable(figure_source.at(key).get<std::string>()), kLineWidth,
                      "  " + key + ": ", "    ");
    }
    if (*json)
      std::cout << doc.dump(2) << "\n";
    else
      std::cout << table.render() << (*sources ? cited : "");
  });
}

void register_models_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("models", "List the model catalogue (data/models)");
  auto json = std::make_shared<bool>(false);
  add_json_flag(*cmd, *json);
  cmd->callback([json] {
    Json doc = Json::array();
    TextTable table(
        {"name", "layers", "hidden", "heads", "kv heads", "ffn", "vocab", "params B", "experts"});
    for (const auto& name : workload::list_models()) {
      const auto m = workload::load_model(name);
      doc.push_back({{"name", m.name},
                     {"num_hidden_layers", m.num_hidden_layers},
                     {"hidden_size", m.hidden_size},
                     {"num_attention_heads", m.num_attention_heads},
                     {"num_key_value_heads", m.num_key_value_heads},
                     {"intermediate_size", m.intermediate_size},
                     {"vocab_size", m.vocab_size},
                     {"qk_norm", m.qk_norm},
                     {"parameters", m.total_parameters()},
                     {"active_parameters", m.active_parameters()},
                     {"num_local_experts", m.experts},
                     {"num_experts_per_tok", m.experts_per_token},
                     // kareus plan/simulate/search take dense models only (workload.cpp).
                     {"trainable", !m.mixture_of_experts()}});
      table.add_row({m.name, std::to_string(m.num_hidden_layers), std::to_string(m.hidden_size),
                     std::to_string(m.num_attention_heads), std::to_string(m.num_key_value_heads),
                     std::to_string(m.intermediate_size), std::to_string(m.vocab_size),
                     fmt::format("{:.2f}", m.total_parameters() / 1e9),
                     // Words first, so the column reads left-aligned under its header.
                     m.mixture_of_experts() ? fmt::format("top {} of {} (EnergyLens only)",
                                                          m.experts_per_token, m.experts)
                                            : "none"});
    }
    std::cout << (*json ? doc.dump(2) + "\n" : table.render());
  });
}

}  // namespace kareus::cli
