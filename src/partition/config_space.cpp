// SPDX-License-Identifier: Apache-2.0
#include "kareus/partition/config_space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "kareus/core/error.hpp"

namespace kareus::partition {
namespace {

// Paper App. C: groups of 4 or more GPUs get 3..30 SMs in steps of 3, smaller ones 1..20.
constexpr int kLargeGroup = 4;

template <typename T>
std::string join(const std::vector<T>& values) {
  std::string out;
  for (const T& v : values) out += (out.empty() ? "" : ", ") + fmt::format("{}", v);
  return out;
}

std::string clock_list(const std::vector<MHz>& clocks) {
  std::vector<double> mhz;
  for (MHz f : clocks) mhz.push_back(f.value());
  return join(mhz);
}

bool parse_int(std::string_view text, int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string ExecConfig::key() const {
  return fmt::format("{}/{}sm@{}MHz", slot, comm_sms, format_number(clock.value()));
}

Json ExecConfig::to_json() const {
  return Json{{"slot", slot}, {"comm_sms", comm_sms}, {"clock_mhz", clock.value()}, {"key", key()}};
}

std::vector<int> comm_sm_counts(const workload::Kernel& collective) {
  std::vector<int> out;
  if (collective.group_size >= kLargeGroup) {
    for (int s = 3; s <= 30; s += 3) out.push_back(s);
  } else {
    for (int s = 1; s <= 20; ++s) out.push_back(s);
  }
  return out;
}

ConfigSpace ConfigSpace::of(const Partition& p, const GpuSpec& gpu) {
  if (p.fixed || !p.comm) {
    throw Error(fmt::format(
        "partition '{}' has nothing to search: {}", p.key.empty() ? "(no collective)" : p.key,
        !p.comm ? std::string("it overlaps no collective")
                : fmt::format("it runs the fixed configuration {} on {} SMs",
                              p.slots.empty() ? "" : p.slots.front().name, kTrailSms)));
  }
  std::vector<std::string> slots;
  for (const LaunchSlot& s : p.launch_options) slots.push_back(s.name);
  return ConfigSpace(p.key, gpu.search_clocks(), comm_sm_counts(*p.comm), std::move(slots));
}

ConfigSpace::ConfigSpace(std::string partition_key, std::vector<MHz> clocks,
                         std::vector<int> comm_sms, std::vector<std::string> slots)
    : partition_key_(std::move(partition_key)),
      clocks_(std::move(clocks)),
      comm_sms_(std::move(comm_sms)),
      slots_(std::move(slots)) {
  const auto distinct = [](const auto& v) {
    return std::set(v.begin(), v.end()).size() == v.size();
  };
  std::vector<double> mhz;
  for (MHz f : clocks_) mhz.push_back(f.value());
  require(!clocks_.empty() && distinct(mhz), where(), "clocks", clock_list(clocks_),
          "a non-empty list of distinct clocks");
  require(!comm_sms_.empty() && distinct(comm_sms_) &&
              std::all_of(comm_sms_.begin(), comm_sms_.end(), [](int s) { return s > 0; }),
          where(), "comm_sms", join(comm_sms_), "a non-empty list of distinct positive SM counts");
  require(!slots_.empty() && distinct(slots_), where(), "slots", join(slots_),
          "a non-empty list of distinct launch slots");
}

std::string ConfigSpace::where() const {
  return fmt::format("config space of partition '{}'", partition_key_);
}

ConfigSpace::Index ConfigSpace::index(std::size_t id) const {
  require(id < size(), where(), "config id", std::to_string(id),
          fmt::format("must be below {}", size()));
  return {id / (slots_.size() * comm_sms_.size()), id / slots_.size() % comm_sms_.size(),
          id % slots_.size()};
}

std::size_t ConfigSpace::id(const Index& i) const {
  require(
      i.clock < clocks_.size() && i.sms < comm_sms_.size() && i.slot < slots_.size(), where(),
      "config index", fmt::format("({}, {}, {})", i.clock, i.sms, i.slot),
      fmt::format("must be below ({}, {}, {})", clocks_.size(), comm_sms_.size(), slots_.size()));
  return (i.clock * comm_sms_.size() + i.sms) * slots_.size() + i.slot;
}

ExecConfig ConfigSpace::at(std::size_t id) const {
  const Index i = index(id);
  return {slots_[i.slot], comm_sms_[i.sms], clocks_[i.clock]};
}

std::size_t ConfigSpace::id_of(const ExecConfig& c) const {
  Index i;
  const auto slot = std::find(slots_.begin(), slots_.end(), c.slot);
  require(slot != slots_.end(), where(), "slot", c.slot, "one of " + join(slots_));
  i.slot = static_cast<std::size_t>(slot - slots_.begin());
  const auto sms = std::find(comm_sms_.begin(), comm_sms_.end(), c.comm_sms);
  require(sms != comm_sms_.end(), where(), "comm_sms", std::to_string(c.comm_sms),
          "one of " + join(comm_sms_));
  i.sms = static_cast<std::size_t>(sms - comm_sms_.begin());
  const auto clock = std::find_if(clocks_.begin(), clocks_.end(),
                                  [&](MHz f) { return std::fabs((f - c.clock).value()) < 1e-6; });
  require(clock != clocks_.end(), where(), "clock_mhz", format_number(c.clock.value()),
          "one of " + clock_list(clocks_));
  i.clock = static_cast<std::size_t>(clock - clocks_.begin());
  return id(i);
}

std::size_t ConfigSpace::parse(std::string_view key) const {
  const std::string text(key);
  const auto fail = [&]() -> std::size_t {
    throw Error::invalid(where(), "config", text,
                         fmt::format("the form SLOT/<n>sm@<f>MHz, e.g. {}", this->key(0)));
  };
  const std::size_t slash = key.find('/');
  const std::size_t sm = key.find("sm@", slash == std::string_view::npos ? 0 : slash);
  if (slash == std::string_view::npos || sm == std::string_view::npos || !key.ends_with("MHz")) {
    return fail();
  }
  int sms = 0;
  int mhz = 0;
  if (!parse_int(key.substr(slash + 1, sm - slash - 1), sms) ||
      !parse_int(key.substr(sm + 3, key.size() - 3 - (sm + 3)), mhz)) {
    return fail();
  }
  return id_of({std::string(key.substr(0, slash)), sms, MHz(mhz)});
}

std::size_t ConfigSpace::from_json(const JsonValue& value) const {
  if (value.raw().is_string()) return parse(value.as_string());
  if (!value.is_object())
    value.fail("a config key string or an object {slot, comm_sms, clock_mhz}");
  return id_of({value.string("slot"), value.at("comm_sms").as_positive_int(),
                MHz(value.at("clock_mhz").as_positive_number())});
}

}  // namespace kareus::partition
