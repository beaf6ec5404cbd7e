// SPDX-License-Identifier: Apache-2.0
// kareus.Schedule: what the planner exports and the runtime enforces (docs/schedule-format.md).
#include <pybind11/operators.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "bindings.hpp"
#include "kareus/core/error.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::python {

void bind_schedule(py::module_& m) {
  py::class_<PartitionLaunch>(m, "PartitionLaunch",
                              "Where a partition's communication kernel starts, on how many SMs.")
      .def_readonly("slot", &PartitionLaunch::slot)
      .def_readonly("sms", &PartitionLaunch::sms)
      .def(py::self == py::self)
      .def("__repr__", [](const PartitionLaunch& p) {
        return "kareus.PartitionLaunch(slot='" + p.slot + "', sms=" + std::to_string(p.sms) + ")";
      });

  py::class_<ScheduleInstruction>(m, "ScheduleInstruction",
                                  "One forward or backward of a stage, with its SM clock.")
      .def_readonly("microbatch", &ScheduleInstruction::microbatch)
      .def_readonly("direction", &ScheduleInstruction::direction)
      .def_property_readonly("clock_mhz",
                             [](const ScheduleInstruction& i) { return i.clock.value(); })
      .def_readonly("execution", &ScheduleInstruction::execution)
      .def_readonly("partitions", &ScheduleInstruction::partitions)
      .def_readonly("recompute_partitions", &ScheduleInstruction::recompute_partitions)
      .def_property_readonly("step_clocks_mhz",
                             [](const ScheduleInstruction& i) {
                               std::vector<double> out;
                               for (const MHz f : i.step_clocks) out.push_back(f.value());
                               return out;
                             })
      .def_property_readonly("predicted_time_s",
                             [](const ScheduleInstruction& i) -> std::optional<double> {
                               if (!i.predicted_time) return std::nullopt;
                               return i.predicted_time->value();
                             })
      .def_property_readonly("predicted_energy_j",
                             [](const ScheduleInstruction& i) -> std::optional<double> {
                               if (!i.predicted_energy) return std::nullopt;
                               return i.predicted_energy->value();
                             })
      .def(py::self == py::self)
      .def("__repr__", [](const ScheduleInstruction& i) {
        return "kareus.ScheduleInstruction(microbatch=" + std::to_string(i.microbatch) +
               ", direction='" + i.direction + "', clock_mhz=" + format_number(i.clock.value()) +
               ")";
      });

  py::class_<StageSchedule>(m, "StageSchedule", "A pipeline stage's instructions in 1F1B order.")
      .def_readonly("stage", &StageSchedule::stage)
      .def_readonly("instructions", &StageSchedule::instructions)
      .def(py::self == py::self);

  py::class_<Schedule>(m, "Schedule", "Per pipeline stage, the clock of every instruction.")
      .def_readonly("format_version", &Schedule::format_version)
      .def_property_readonly("workload", [](const Schedule& s) { return to_python(s.workload); })
      .def_readonly("method", &Schedule::method)
      .def_readonly("gpu", &Schedule::gpu)
      .def_property_readonly("predicted_iteration_time_s",
                             [](const Schedule& s) { return s.predicted.iteration_time.value(); })
      .def_property_readonly("predicted_energy_j",
                             [](const Schedule& s) { return s.predicted.energy.value(); })
      .def_property_readonly("predicted_dynamic_energy_j",
                             [](const Schedule& s) { return s.predicted.dynamic_energy.value(); })
      .def_readonly("stages", &Schedule::stages)
      .def("to_json", [](const Schedule& s) { return to_json(s); })
      .def(
          "save",
          [](const Schedule& s, const std::filesystem::path& path) {
            write_file_atomically(path, to_json(s));
          },
          py::arg("path"), "Writes the JSON document (atomically).")
      .def(py::self == py::self)
      .def("__repr__", [](const Schedule& s) {
        return "kareus.Schedule(method='" + s.method + "', gpu='" + s.gpu +
               "', stages=" + std::to_string(s.stages.size()) + ")";
      });

  m.def("load_schedule", &load_schedule, py::arg("path"),
        "Reads and validates a schedule file; kareus.Error names the file and field.");
  m.def(
      "parse_schedule",
      [](const std::string& text, const std::string& source_name) {
        return parse_schedule(text, source_name);
      },
      py::arg("text"), py::arg("source_name") = "schedule");
}

}  // namespace kareus::python
