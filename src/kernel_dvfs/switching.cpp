// SPDX-License-Identifier: Apache-2.0
#include "kareus/kernel_dvfs/switching.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/limits.hpp"

namespace kareus::kernel_dvfs {
namespace {

frontier::SwitchCost from_table(const CsvTable& table, const std::vector<MHz>& clocks,
                                Watts power) {
  table.require_columns({"from_mhz", "to_mhz", "latency_ms"});
  const std::size_t n = clocks.size();
  std::map<double, std::size_t> index_of;
  for (std::size_t c = 0; c < n; ++c) index_of.emplace(clocks[c].value(), c);
  std::string allowed;
  for (MHz f : clocks) allowed += (allowed.empty() ? "" : ", ") + format_number(f.value());
  allowed = "one of the profile's clocks: " + allowed + " MHz";
  const auto clock_of = [&](const CsvRow& row, const char* column) {
    const auto it = index_of.find(row.number(column));
    if (it == index_of.end()) row.fail(column, allowed);
    return it->second;
  };
  std::vector<std::vector<std::optional<Seconds>>> seen(n, std::vector<std::optional<Seconds>>(n));
  for (std::size_t i = 0; i < table.rows(); ++i) {
    const CsvRow row = table.row(i);
    const std::size_t from = clock_of(row, "from_mhz");
    const std::size_t to = clock_of(row, "to_mhz");
    const double ms = row.non_negative_number("latency_ms");
    if (ms > kMaxWaitMilliseconds)
      row.fail("latency_ms", fmt::format("expected at most {:g} ms", kMaxWaitMilliseconds));
    if (seen[from][to]) row.fail("to_mhz", "this (from_mhz, to_mhz) pair already has a row");
    seen[from][to] = milliseconds(ms);
  }
  frontier::SwitchCost cost;
  cost.power = power;
  cost.latency.assign(n, std::vector<Seconds>(n, Seconds(0)));
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      if (!seen[a][b])
        throw Error(fmt::format(
            "{}: no row for the switch {} -> {} MHz; every ordered pair of the "
            "profile's clocks needs one",
            table.source(), format_number(clocks[a].value()), format_number(clocks[b].value())));
      cost.latency[a][b] = *seen[a][b];
    }
  return cost;
}

}  // namespace

frontier::SwitchCost load_switch_latency_csv(const std::filesystem::path& path,
                                             const std::vector<MHz>& clocks, Watts power) {
  return from_table(CsvTable::read_file(path), clocks, power);
}

frontier::SwitchCost parse_switch_latency_csv(std::string_view text, const std::string& source,
                                              const std::vector<MHz>& clocks, Watts power) {
  return from_table(CsvTable::parse(text, source), clocks, power);
}

}  // namespace kareus::kernel_dvfs
