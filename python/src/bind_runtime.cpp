// SPDX-License-Identifier: Apache-2.0
// kareus.FrequencyController and kareus.EnergyMonitor. Calls that may wait on NVML, kareusd or
// the controller's worker release the GIL, so other Python threads (and the autograd engine's)
// keep running.
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>

#include "bindings.hpp"
#include "kareus/core/error.hpp"
#include "kareus/runtime/daemon_client.hpp"
#include "kareus/runtime/device_map.hpp"
#include "kareus/runtime/energy_monitor.hpp"
#include "kareus/runtime/frequency_controller.hpp"
#include "kareus/runtime/gpu_queue.hpp"

namespace kareus::python {
namespace {

using runtime::FrequencyController;

// The job's description, as PipelineStage and FrequencyController take it (docs/python.md).
runtime::JobShape job_shape(const py::dict& job) {
  runtime::JobShape shape;
  for (const auto& [key, value] : job) {
    const std::string name = py::str(key);
    if (value.is_none()) continue;
    if (name == "pipeline_stages")
      shape.pipeline_stages = value.cast<int>();
    else if (name == "microbatches")
      shape.microbatches = value.cast<int>();
    else if (name == "tp")
      shape.tp = value.cast<int>();
    else if (name == "cp")
      shape.cp = value.cast<int>();
    else if (name == "dp")
      shape.dp = value.cast<int>();
    else if (name == "model")
      shape.model = value.cast<std::string>();
    else if (name == "recompute")
      shape.recompute = value.cast<std::string>();
    else if (name == "virtual_pipeline_stages")
      shape.virtual_pipeline_stages = value.cast<int>();
    else if (name == "rank")
      shape.rank = value.cast<int>();
    else if (name == "ranks_sharing_gpu")
      shape.ranks_sharing_gpu = value.cast<std::vector<int>>();
    else
      throw Error::invalid("FrequencyController", "job", name,
                           "pipeline_stages, microbatches, tp, cp, dp, model, recompute, "
                           "virtual_pipeline_stages, rank, ranks_sharing_gpu");
  }
  return shape;
}

std::unique_ptr<FrequencyController> make_controller(const Schedule& schedule, int stage,
                                                     unsigned gpu,
                                                     const std::optional<std::string>& daemon,
                                                     runtime::ControllerOptions options,
                                                     std::optional<std::uintptr_t> cuda_stream) {
  std::unique_ptr<runtime::ClockBackend> backend;
  if (daemon)
    backend = std::make_unique<runtime::DaemonClockBackend>(
        std::make_shared<runtime::DaemonClient>(*daemon), gpu);
  else
    backend =
        std::make_unique<runtime::NvmlClockBackend>(std::make_shared<const nvml::Nvml>(), gpu);
  if (cuda_stream) options.gpu_queue = runtime::cuda_stream_queue(*cuda_stream);
  return std::make_unique<FrequencyController>(schedule, stage, std::move(backend), options);
}

}  // namespace

void bind_runtime(py::module_& m) {
  using release = py::call_guard<py::gil_scoped_release>;

  using Stats = runtime::ControllerStats;
  py::class_<Stats>(m, "ControllerStats")
      .def_readonly("instructions", &Stats::instructions)
      .def_readonly("clock_changes", &Stats::clock_changes)
      .def_readonly("skipped", &Stats::skipped)
      .def_readonly("applied", &Stats::applied)
      .def_property_readonly("max_lead_s", [](const Stats& s) { return s.max_lead.value(); })
      .def_property_readonly("max_lateness_s",
                             [](const Stats& s) { return s.max_lateness.value(); })
      .def_property_readonly("mean_lateness_s", [](const Stats& s) {
        return s.applied ? s.total_lateness.value() / static_cast<double>(s.applied) : 0.0;
      });

  py::class_<FrequencyController>(
      m, "FrequencyController",
      "Applies one stage's schedule clocks on one GPU; a context manager that restores the "
      "default clocks on exit.")
      .def(py::init([](const Schedule& schedule, int stage, unsigned gpu,
                       const std::optional<std::string>& daemon, bool restore_on_signals,
                       int pipeline_stages, int microbatches, bool check_gpu_model,
                       bool partition_clocks, bool lock_memory_clock,
                       std::optional<std::uintptr_t> cuda_stream, const py::dict& job,
                       const std::optional<std::string>& record, int rank) {
             runtime::ControllerOptions options;
             options.restore_on_signals = restore_on_signals;
             options.job = job_shape(job);
             if (pipeline_stages) options.job.pipeline_stages = pipeline_stages;
             if (microbatches) options.job.microbatches = microbatches;
             options.check_gpu_model = check_gpu_model;
             options.partition_clocks = partition_clocks;
             options.lock_memory_clock = lock_memory_clock;
             if (record) options.record = runtime::RecordOptions{*record, rank, gpu, nullptr, {}};
             py::gil_scoped_release unlocked;
             return make_controller(schedule, stage, gpu, daemon, std::move(options), cuda_stream);
           }),
           py::arg("schedule"), py::arg("stage"), py::kw_only(), py::arg("gpu") = 0u,
           py::arg("daemon_socket") = py::none(),
           py::arg("restore_on_signals") = runtime::ControllerOptions{}.restore_on_signals,
           py::arg("pipeline_stages") = 0, py::arg("microbatches") = 0,
           py::arg("check_gpu_model") = runtime::ControllerOptions{}.check_gpu_model,
           py::arg("partition_clocks") = runtime::ControllerOptions{}.partition_clocks,
           py::arg("lock_memory_clock") = runtime::ControllerOptions{}.lock_memory_clock,
           py::arg("cuda_stream") = py::none(), py::arg("job") = py::dict(),
           py::arg("record") = py::none(), py::arg("rank") = 0,
           "Checks the job shape (pipeline_stages, microbatches; 0: unchecked; job: a dict of "
           "tp, cp, dp, model, recompute, virtual_pipeline_stages, rank, ranks_sharing_gpu), the "
           "GPU model and every clock of the stage against the GPU before any clock changes, and "
           "reports every mismatch in one kareus.Error. daemon_socket: kareusd's socket (None: "
           "NVML in this process). cuda_stream: a CUDA stream handle "
           "(torch.cuda.current_stream().cuda_stream): each clock change then lands when the GPU "
           "reaches its instruction on that stream (None: when the host reaches it). "
           "partition_clocks: apply step_clocks_mhz, reported with on_instruction_step (otherwise "
           "such a schedule is refused). lock_memory_clock: memory clock at its maximum until the "
           "clocks are restored. record: write a measurement record to this file ('{rank}' in it "
           "becomes rank; docs/measurement-format.md).")
      .def_property_readonly("stage", &FrequencyController::stage)
      .def("on_instruction_begin", &FrequencyController::on_instruction_begin, py::arg("stage"),
           py::arg("microbatch"), py::arg("direction"), release(),
           "Before each forward/backward; must be the stage's next instruction.")
      .def("on_instruction_step", &FrequencyController::on_instruction_step, py::arg("step"),
           release(), "Step `step` of the current instruction begins (partition_clocks).")
      .def("on_instruction_end", &FrequencyController::on_instruction_end, release(),
           "The current instruction ends (optional; with a record its span ends here).")
      .def_property_readonly("record_path",
                             [](const FrequencyController& c) -> std::optional<std::string> {
                               const auto p = c.record_path();
                               if (p.empty()) return std::nullopt;
                               return p.string();
                             })
      .def("on_step_end", &FrequencyController::on_step_end, release(),
           "End of an iteration; the schedule starts over.")
      .def("wait_until_applied", &FrequencyController::wait_until_applied, release())
      .def("restore_default_clocks", &FrequencyController::restore_default_clocks, release())
      .def_property_readonly("stats", &FrequencyController::stats)
      .def(
          "__enter__", [](FrequencyController& c) -> FrequencyController& { return c; },
          py::return_value_policy::reference)
      .def(
          "__exit__",
          // A block that ends normally played every clock it queued: they reach the GPU (or
          // their failure is raised) before the reset. After an exception they are dropped.
          [](FrequencyController& c, const py::object& exc_type, const py::object&,
             const py::object&) {
            const bool completed = exc_type.is_none();
            py::gil_scoped_release unlocked;
            try {
              if (completed) c.wait_until_applied();
            } catch (...) {
              c.restore_default_clocks();
              throw;
            }
            c.restore_default_clocks();
          },
          py::arg("exc_type"), py::arg("exc_value"), py::arg("traceback"));

  m.def(
      "nvml_index_of_cuda_device",
      [](int cuda_index) { return runtime::nvml_index_of_cuda_device(nvml::Nvml(), cuda_index); },
      py::arg("cuda_index"), release(),
      "The NVML index of CUDA device `cuda_index` under this process's CUDA_VISIBLE_DEVICES "
      "(indices or GPU UUIDs).");
  m.def(
      "nvml_index_of_uuid",
      [](const std::string& uuid) {
        return runtime::nvml_index_of_cuda_device(0, uuid, [] {
          const nvml::Nvml nvml;
          std::vector<std::string> uuids;
          for (unsigned i = 0; i < nvml.device_count(); ++i) uuids.push_back(nvml.uuid(i));
          return uuids;
        }());
      },
      py::arg("uuid"), release(), "The NVML index of the GPU with this UUID (or unique prefix).");
  m.def(
      "nvml_gpu_name", [](unsigned gpu) { return nvml::Nvml().name(gpu); }, py::arg("gpu"),
      release());

  py::class_<runtime::EnergyMeasurement>(m, "EnergyMeasurement")
      .def_property_readonly("time_s",
                             [](const runtime::EnergyMeasurement& e) { return e.time.value(); })
      .def_readonly("gpus", &runtime::EnergyMeasurement::gpus)
      .def_property_readonly("gpu_energy_j",
                             [](const runtime::EnergyMeasurement& e) {
                               std::vector<double> out;
                               for (const auto& j : e.gpu_energy) out.push_back(j.value());
                               return out;
                             })
      .def_property_readonly(
          "total_energy_j",
          [](const runtime::EnergyMeasurement& e) { return e.total_energy.value(); })
      .def("__repr__", [](const runtime::EnergyMeasurement& e) {
        return "kareus.EnergyMeasurement(time_s=" + format_number(e.time.value()) +
               ", total_energy_j=" + format_number(e.total_energy.value()) + ")";
      });

  py::class_<runtime::EnergyMonitor>(
      m, "EnergyMonitor", "Named, nestable time and energy windows over NVML GPUs (Zeus-style).")
      .def(py::init([](std::vector<unsigned> gpus, double power_sample_interval_s) {
             runtime::EnergyMonitorOptions options;
             options.power_sample_interval = Seconds(power_sample_interval_s);
             return std::make_unique<runtime::EnergyMonitor>(std::make_shared<const nvml::Nvml>(),
                                                             std::move(gpus), options);
           }),
           py::arg("gpus"), py::kw_only(),
           py::arg("power_sample_interval_s") =
               runtime::EnergyMonitorOptions{}.power_sample_interval.value(),
           release())
      .def("begin_window", &runtime::EnergyMonitor::begin_window, py::arg("name"), release())
      .def("end_window", &runtime::EnergyMonitor::end_window, py::arg("name"), release())
      .def("integrates_power", &runtime::EnergyMonitor::integrates_power, py::arg("gpu"));
}

}  // namespace kareus::python
