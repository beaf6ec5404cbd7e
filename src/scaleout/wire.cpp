// SPDX-License-Identifier: Apache-2.0
#include "wire.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"

namespace kareus::scaleout::wire {
namespace {

constexpr std::size_t kFields = 4;  // time, total energy, dynamic energy, GPU cost

}  // namespace

std::string encode(const Task& task) {
  Json configs = Json::array();
  for (const auto& c : task.configs) configs.push_back(c.to_json());
  // nlohmann writes doubles with max_digits10, so clocks round-trip exactly.
  return Json{{"workload", task.workload}, {"partition", task.partition}, {"configs", configs}}
      .dump();
}

Task decode_task(std::string_view bytes) {
  const auto doc = JsonDocument::parse(bytes, "scale-out task");
  const JsonValue root = doc.root();
  Task t;
  t.workload = static_cast<std::size_t>(root.integer("workload"));
  t.partition = root.string("partition");
  const JsonValue configs = root.at("configs");
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const JsonValue c = configs.at(i);
    t.configs.push_back(
        {c.string("slot"), static_cast<int>(c.integer("comm_sms")), MHz(c.number("clock_mhz"))});
  }
  return t;
}

std::string encode(const std::vector<executor::Measurement>& readings) {
  std::string out(readings.size() * kFields * sizeof(double), '\0');
  char* at = out.data();
  for (const auto& m : readings) {
    const std::array<double, kFields> row{m.time.value(), m.total_energy.value(),
                                          m.dynamic_energy.value(), m.gpu_cost.value()};
    std::memcpy(at, row.data(), sizeof(row));
    at += sizeof(row);
  }
  return out;
}

std::vector<executor::Measurement> decode_readings(std::string_view bytes, std::size_t expected,
                                                   int from_rank) {
  constexpr std::size_t kRow = kFields * sizeof(double);
  if (bytes.size() != expected * kRow)
    throw Error(fmt::format("rank {} answered {} bytes for {} configurations (expected {})",
                            from_rank, bytes.size(), expected, expected * kRow));
  std::vector<executor::Measurement> out;
  for (std::size_t i = 0; i < expected; ++i) {
    std::array<double, kFields> row{};
    std::memcpy(row.data(), bytes.data() + i * kRow, kRow);
    out.push_back({Seconds(row[0]), Joules(row[1]), Joules(row[2]), Seconds(row[3])});
  }
  return out;
}

}  // namespace kareus::scaleout::wire
