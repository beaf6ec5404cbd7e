// SPDX-License-Identifier: Apache-2.0
// Schedules through the C API: load, parse, export and read back instruction by instruction.
#include <cstdlib>

#include "handles.hpp"
#include "status.hpp"

namespace kareus::capi {
namespace {

const StageSchedule& stage_of(const kareus_schedule* schedule, int stage) {
  const auto& stages = required(schedule, "schedule")->schedule.stages;
  if (stage < 0) throw ArgumentError("stage " + std::to_string(stage) + " is negative");
  check_index(static_cast<std::size_t>(stage), stages.size(), "stage");
  return stages[static_cast<std::size_t>(stage)];
}

const ScheduleInstruction& instruction_of(const kareus_schedule* schedule, int stage,
                                          std::size_t index) {
  const auto& instructions = stage_of(schedule, stage).instructions;
  check_index(index, instructions.size(), "instruction");
  return instructions[index];
}

}  // namespace
}  // namespace kareus::capi

using namespace kareus;
using namespace kareus::capi;

extern "C" {

kareus_status kareus_schedule_load(const char* path, kareus_schedule** out) {
  return guarded([&] {
    required(out, "out");
    *out = wrap(load_schedule(required(path, "path")));
  });
}

kareus_status kareus_schedule_parse(const char* json, const char* source_name,
                                    kareus_schedule** out) {
  return guarded([&] {
    required(out, "out");
    *out = wrap(parse_schedule(required(json, "json"), source_name ? source_name : "schedule"));
  });
}

void kareus_schedule_free(kareus_schedule* schedule) {
  delete schedule;
}

kareus_status kareus_schedule_to_json(const kareus_schedule* schedule, char** json) {
  return guarded([&] {
    required(json, "json");
    *json = copy_to_malloc(to_json(required(schedule, "schedule")->schedule));
  });
}

kareus_status kareus_schedule_get_info(const kareus_schedule* schedule,
                                       kareus_schedule_info* info) {
  return guarded([&] {
    required(info, "info");
    const auto& s = required(schedule, "schedule")->schedule;
    *info = {s.method.c_str(),
             s.gpu.c_str(),
             s.predicted.iteration_time.value(),
             s.predicted.energy.value(),
             s.predicted.dynamic_energy.value(),
             static_cast<int>(s.stages.size())};
  });
}

kareus_status kareus_schedule_instruction_count(const kareus_schedule* schedule, int stage,
                                                size_t* count) {
  return guarded(
      [&] { *required(count, "count") = stage_of(schedule, stage).instructions.size(); });
}

kareus_status kareus_schedule_instruction(const kareus_schedule* schedule, int stage, size_t index,
                                          kareus_instruction* out) {
  return guarded([&] {
    required(out, "out");
    const auto& i = instruction_of(schedule, stage, index);
    *out = {i.microbatch,        i.direction.c_str(), i.clock.value(),
            i.execution.c_str(), i.partitions.size(), i.recompute_partitions.size()};
  });
}

kareus_status kareus_schedule_partition(const kareus_schedule* schedule, int stage, size_t index,
                                        int recompute, size_t k, kareus_partition_launch* out) {
  return guarded([&] {
    required(out, "out");
    const auto& i = instruction_of(schedule, stage, index);
    const auto& launches = recompute ? i.recompute_partitions : i.partitions;
    check_index(k, launches.size(), "partition launch");
    const auto& [name, launch] = *std::next(launches.begin(), static_cast<std::ptrdiff_t>(k));
    *out = {name.c_str(), launch.slot.c_str(), launch.sms};
  });
}

}  // extern "C"
