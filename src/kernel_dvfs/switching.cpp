#include "kareus/kernel_dvfs/switching.hpp"

#include <fmt/format.h>

#include <optional>

#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"

namespace kareus::kernel_dvfs {
namespace {

std::optional<std::size_t> index_of(const std::vector<MHz>& clocks, double f) {
  for (std::size_t c = 0; c < clocks.size(); ++c)
    if (clocks[c].value() == f) return c;
  return std::nullopt;
}

frontier::SwitchCost from_table(const CsvTable& table, const std::vector<MHz>& clocks,
                                Watts power) {
  table.require_columns({"from_mhz", "to_mhz", "latency_ms"});
  const std::size_t n = clocks.size();
  std::vector<std::vector<std::optional<Seconds>>> seen(n, std::vector<std::optional<Seconds>>(n));
  std::string allowed;
  for (MHz f : clocks) allowed += (allowed.empty() ? "" : ", ") + format_number(f.value());
  allowed = "one of the profile's clocks: " + allowed + " MHz";
  for (std::size_t i = 0; i < table.rows(); ++i) {
    const CsvRow row = table.row(i);
    const auto from = index_of(clocks, row.number("from_mhz"));
    if (!from) row.fail("from_mhz", allowed);
    const auto to = index_of(clocks, row.number("to_mhz"));
    if (!to) row.fail("to_mhz", allowed);
    const double ms = row.non_negative_number("latency_ms");
    if (seen[*from][*to]) row.fail("to_mhz", "this (from_mhz, to_mhz) pair already has a row");
    seen[*from][*to] = milliseconds(ms);
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
