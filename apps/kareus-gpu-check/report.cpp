// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "check.hpp"
#include "kareus/core/table.hpp"

namespace kareus::gpu_check {
namespace {

std::string agreement_text(const executor::RankAgreement& a) {
  return fmt::format("{}/{}{}", a.agreeing, a.pairs, a.same() ? " same" : " differs");
}

Json agreement_json(const executor::RankAgreement& a) {
  return {{"pairs", a.pairs}, {"agreeing", a.agreeing}, {"same", a.same()}};
}

}  // namespace

std::string format_text(const CheckRequest& request, const CheckResult& result) {
  const workload::Workload& w = request.workload;
  std::string out = fmt::format(
      "GPU check: {} TP{} CP{}, microbatch {} x {} tokens, on {} (catalogue entry {})\n{}\n\n",
      w.model.name, w.parallelism.tp, w.parallelism.cp, w.parallelism.microbatch_size,
      w.parallelism.sequence_length, result.device, w.gpu.name, result.clock_note);
  std::vector<std::string> header{"partition", "slot", "SMs", "clock MHz", "emu ms", "emu J"};
  if (!result.dry_run) {
    for (const char* h : {"gpu ms", "gpu J", "read MHz"}) header.emplace_back(h);
  }
  TextTable t(header);
  for (const auto& r : result.rows) {
    std::vector<std::string> row{r.partition,
                                 r.config.slot,
                                 std::to_string(r.config.comm_sms),
                                 fmt::format("{:.0f}", r.config.clock.value()),
                                 fmt::format("{:.3f}", to_milliseconds(r.emulated.time)),
                                 fmt::format("{:.3f}", r.emulated.total_energy.value())};
    if (r.measured) {
      row.push_back(fmt::format("{:.3f}", to_milliseconds(r.measured->time)));
      row.push_back(fmt::format("{:.3f}", r.measured->total_energy.value()));
      row.push_back(fmt::format("{:.0f}", r.observed_clock->value()));
    }
    t.add_row(std::move(row));
  }
  out += t.render();
  if (result.dry_run) {
    out +=
        fmt::format("\n{} configurations; the protocol would take about {:.1f} min of GPU time\n",
                    result.rows.size(), result.emulated_gpu_time.value() / 60.0);
    return out;
  }
  TextTable k({"partition", "time order (agreeing pairs)", "energy order (agreeing pairs)"});
  for (const auto& a : result.keys) {
    k.add_row({a.partition, agreement_text(a.time), agreement_text(a.energy)});
  }
  out += fmt::format(
      "\nranking of each key's configurations, emulator vs GPU (pairs the emulator separates by "
      "more than {:.0f}%):\n{}\nsame ranking: {}\n",
      100 * request.tie_tolerance, k.render(), result.same_ranking() ? "yes" : "no");
  return out;
}

Json to_json(const CheckRequest& request, const CheckResult& result) {
  Json rows = Json::array();
  for (const auto& r : result.rows) {
    Json row{{"partition", r.partition},
             {"slot", r.config.slot},
             {"comm_sms", r.config.comm_sms},
             {"clock_mhz", r.config.clock.value()},
             {"emulated_time_s", r.emulated.time.value()},
             {"emulated_energy_j", r.emulated.total_energy.value()},
             {"emulated_dynamic_energy_j", r.emulated.dynamic_energy.value()}};
    if (r.measured) {
      row["measured_time_s"] = r.measured->time.value();
      row["measured_energy_j"] = r.measured->total_energy.value();
      row["measured_dynamic_energy_j"] = r.measured->dynamic_energy.value();
      row["observed_clock_mhz"] = r.observed_clock->value();
    }
    rows.push_back(std::move(row));
  }
  Json doc{{"workload", request.workload.to_json()},
           {"dry_run", result.dry_run},
           {"device", result.device},
           {"clock_mhz", result.clock.value()},
           {"clock_controlled", false},
           {"clock_note", result.clock_note},
           {"tie_tolerance", request.tie_tolerance},
           {"emulated_gpu_time_s", result.emulated_gpu_time.value()},
           {"configurations", std::move(rows)}};
  if (!result.dry_run) {
    Json keys = Json::array();
    for (const auto& a : result.keys) {
      keys.push_back({{"partition", a.partition},
                      {"time_ranking", agreement_json(a.time)},
                      {"energy_ranking", agreement_json(a.energy)}});
    }
    doc["keys"] = std::move(keys);
    doc["same_ranking"] = result.same_ranking();
  }
  return doc;
}

}  // namespace kareus::gpu_check
