// SPDX-License-Identifier: Apache-2.0
#include "kareus/kernel_dvfs/profile_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/limits.hpp"

namespace kareus::kernel_dvfs {
namespace {

std::string list_clocks(const std::set<double>& clocks) {
  std::string out;
  for (double f : clocks) out += (out.empty() ? "" : ", ") + format_number(f);
  return out + " MHz";
}

std::optional<Direction> parse_pass(const CsvRow& row) {
  const auto text = row.optional_text("pass");
  if (!text) return std::nullopt;
  if (*text == "forward") return Direction::kForward;
  if (*text == "backward") return Direction::kBackward;
  row.fail("pass", "expected forward, backward or empty");
}

struct Measured {
  std::optional<Direction> pass = std::nullopt;
  std::map<double, std::pair<Seconds, Joules>> at;
};

KernelSequence from_table(const CsvTable& table,
                          const std::optional<std::vector<MHz>>& allowed_clocks) {
  const std::string& source = table.source();
  table.require_columns({"kernel", "clock_mhz", "time_s", "energy_j"});
  if (table.rows() == 0) throw Error(source + ": no rows, expected one per kernel and clock");

  std::set<double> gpu_clocks;
  if (allowed_clocks)
    for (MHz f : *allowed_clocks) gpu_clocks.insert(f.value());
  std::vector<std::string> order;
  std::map<std::string, Measured> kernels;
  for (std::size_t i = 0; i < table.rows(); ++i) {
    const CsvRow row = table.row(i);
    const std::string& name = row.text("kernel");
    if (name.empty()) row.fail("kernel", "a kernel name is required");
    const double clock = row.number("clock_mhz");
    if (!is_clock_mhz(clock)) row.fail("clock_mhz", kClockMhzAllowed);
    if (allowed_clocks && !gpu_clocks.contains(clock))
      row.fail("clock_mhz", fmt::format("not a supported clock of the GPU; allowed: {}",
                                        list_clocks(gpu_clocks)));
    const double time = row.number("time_s");
    if (!(time > 0 && time <= kMaxDurationSeconds))
      row.fail("time_s", fmt::format("expected a duration > 0 and at most {:.0f} seconds",
                                     kMaxDurationSeconds));
    const double energy = row.positive_number("energy_j");
    if (energy > kMaxEnergyJoules)
      row.fail("energy_j", fmt::format("expected at most {:g} joules", kMaxEnergyJoules));
    const std::optional<Direction> pass = parse_pass(row);

    auto [it, inserted] = kernels.try_emplace(name);
    if (inserted) {
      if (static_cast<std::int64_t>(order.size()) == kMaxKernels)
        row.fail("kernel", fmt::format("a profile may hold at most {} kernels", kMaxKernels));
      order.push_back(name);
      it->second.pass = pass;
    } else if (it->second.pass != pass) {
      row.fail("pass", fmt::format("kernel '{}' was given pass '{}' on an earlier row", name,
                                   pass_name(it->second.pass)));
    }
    if (!it->second.at.try_emplace(clock, Seconds(time), Joules(energy)).second)
      row.fail("clock_mhz", fmt::format("kernel '{}' already has a row at this clock; name "
                                        "repeated launches distinctly (e.g. '{}#2')",
                                        name, name));
  }

  std::set<double> clocks;
  std::string clocks_from;
  if (allowed_clocks) {
    clocks = gpu_clocks;
    clocks_from = "the GPU's clock table";
  } else {
    for (const auto& [f, _] : kernels.at(order.front()).at) clocks.insert(f);
    clocks_from = fmt::format("the clocks of kernel '{}', the first in the file", order.front());
    if (static_cast<std::int64_t>(clocks.size()) > kMaxClocks)
      throw Error(fmt::format("{}: kernel '{}' has rows at {} clocks; a profile may use at most {}",
                              source, order.front(), clocks.size(), kMaxClocks));
  }
  for (std::size_t i = 0; i < table.rows(); ++i) {
    const CsvRow row = table.row(i);
    if (!clocks.contains(row.number("clock_mhz")))
      row.fail("clock_mhz",
               fmt::format("unknown clock; allowed ({}): {}", clocks_from, list_clocks(clocks)));
  }

  KernelSequence sequence;
  sequence.source = source;
  for (double f : clocks) sequence.clocks.push_back(MHz(f));
  for (const auto& name : order) {
    const Measured& m = kernels.at(name);
    KernelProfile profile{name, m.pass, {}, {}};
    for (double f : clocks) {
      const auto it = m.at.find(f);
      if (it == m.at.end())
        throw Error(
            fmt::format("{}: kernel '{}' has no row at {} MHz; every kernel needs a row at "
                        "each clock ({})",
                        source, name, format_number(f), list_clocks(clocks)));
      profile.time.push_back(it->second.first);
      profile.energy.push_back(it->second.second);
    }
    sequence.kernels.push_back(std::move(profile));
  }
  validate(sequence);
  return sequence;
}

}  // namespace

KernelSequence parse_profile_csv(std::string_view text, const std::string& source,
                                 const std::optional<std::vector<MHz>>& allowed_clocks) {
  return from_table(CsvTable::parse(text, source), allowed_clocks);
}

KernelSequence load_profile_csv(const std::filesystem::path& path,
                                const std::optional<std::vector<MHz>>& allowed_clocks) {
  return from_table(CsvTable::read_file(path), allowed_clocks);
}

}  // namespace kareus::kernel_dvfs
