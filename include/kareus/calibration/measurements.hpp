// SPDX-License-Identifier: Apache-2.0
// What a GPU's emulator is fitted to: measured spans it can predict, in groups that
// cross-validation holds out whole. Two kinds: measurement records of the runtime (every
// instruction span whose end the training loop reported), and published frontiers of whole
// plans (the Kareus artifact's CSV), which the planner reproduces on the emulator.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kareus/calibration/planned_frontier.hpp"
#include "kareus/executor/instruction.hpp"
#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/measurement/record.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::calibration {

// log(predicted / measured) per observation, and whether it is an energy or a time.
struct Residuals {
  std::vector<double> log_ratio;
  std::vector<bool> energy;
};

class Measurements {
 public:
  virtual ~Measurements() = default;
  virtual std::size_t groups() const = 0;
  virtual std::string group_name(std::size_t group) const = 0;
  // Measured values the residuals compare with (time and energy count one each).
  virtual std::size_t observations() const = 0;
  // The residuals of the observations of `groups` on `gpu`, in a fixed order.
  virtual Residuals residuals(const GpuSpec& gpu, const std::vector<std::size_t>& groups) const = 0;
  // Predictions that a search makes (the planner's frontier) are the choices it made on a
  // reference GPU, valued on the GPU residuals() is given: a fit moves the constants without
  // searching again. This searches again, on `gpu`, for `groups`, and says whether the
  // predictions depend on a search at all (false: every prediction is exact on any GPU).
  virtual bool search_on(const GpuSpec& /*gpu*/, const std::vector<std::size_t>& /*groups*/) {
    return false;
  }
  // One line: where the measurements come from and how many there are.
  virtual std::string describe() const = 0;
  // The files read, for the calibrated file's provenance.
  virtual std::vector<std::string> files() const = 0;
};

// Instruction spans of measurement records, each predicted by running its instruction (stage,
// direction, clock, partitions) on the emulator. A group is one workload at one clock, so
// cross-validation predicts clocks it did not fit.
class SpanMeasurements final : public Measurements {
 public:
  // Checks the records: one GPU model, the one `gpu` names; a workload echo the catalogue knows
  // in each schedule; enough spans, at two clocks at least. With `only_workload`, records of
  // other workloads are left out. Throws Error naming the file and record.
  SpanMeasurements(const std::vector<measurement::Record>& records, const GpuSpec& gpu,
                   const std::optional<workload::Workload>& only_workload = std::nullopt);

  std::size_t groups() const override { return group_names_.size(); }
  std::string group_name(std::size_t group) const override { return group_names_.at(group); }
  std::size_t observations() const override { return 2 * spans_.size(); }
  Residuals residuals(const GpuSpec& gpu, const std::vector<std::size_t>& groups) const override;
  std::string describe() const override;
  std::vector<std::string> files() const override { return files_; }

  // The GPU model the records name (NVML's spelling).
  const std::string& gpu_model() const { return gpu_model_; }

 private:
  struct Config {
    std::size_t workload = 0;
    int stage = 0;
    workload::Direction direction = workload::Direction::kForward;
    MHz clock;
    bool nanobatch = false;
    std::map<std::string, PartitionLaunch> partitions;
    std::map<std::string, PartitionLaunch> recompute;
    std::size_t group = 0;
  };
  struct Span {
    std::size_t config = 0;
    double time = 0;
    double energy = 0;
  };
  std::size_t add_config(Config c, const std::string& group_name);

  std::vector<std::string> files_;
  std::string gpu_model_;
  std::vector<workload::Workload> workloads_;
  std::vector<std::string> workload_names_;
  std::vector<Config> configs_;
  std::vector<std::string> group_names_;
  std::vector<Span> spans_;
};

// The Kareus artifact's frontier CSV (tests/data/calibration/README.md): per method, the plans'
// iteration times and dynamic energies over one GPU of each stage. Each method's frontier is
// planned on the emulator and compared point by point: its fastest and slowest times, and at
// every real point's relative position between them, its energy. A group is one method. The
// frontier compared is the plans of the last search_on() valued on the GPU given
// (planned_frontier.hpp).
class FrontierMeasurements final : public Measurements {
 public:
  // Throws Error naming the file, row and column.
  FrontierMeasurements(const std::filesystem::path& csv, const workload::Workload& w);

  std::size_t groups() const override { return methods_.size(); }
  std::string group_name(std::size_t group) const override { return methods_.at(group).name; }
  std::size_t observations() const override;
  // Throws Error for a group no search_on() has planned.
  Residuals residuals(const GpuSpec& gpu, const std::vector<std::size_t>& groups) const override;
  bool search_on(const GpuSpec& gpu, const std::vector<std::size_t>& groups) override;
  std::string describe() const override;
  std::vector<std::string> files() const override { return {csv_.string()}; }

 private:
  struct Point {
    double time = 0;
    double dynamic_energy = 0;  // one GPU of each stage, summed
  };
  struct Method {
    std::string name;  // as the CSV spells it
    int planner_method = 0;
    std::vector<Point> points;  // by increasing time
  };
  std::filesystem::path csv_;
  workload::Workload workload_;
  std::vector<Method> methods_;
  std::map<std::size_t, PlannedFrontier> planned_;  // per group, its last search's plans
};

// The workload a schedule was planned for (its echo), on the catalogue GPU of its model: a
// calibrated GPU's name stands for its model's, whose constants the caller replaces. Throws Error
// naming `where`.
workload::Workload schedule_workload(const Schedule& s, const std::string& where);

// Reads every record; throws Error naming the file and record of the first bad one.
std::vector<measurement::Record> read_records(const std::vector<std::string>& paths);

}  // namespace kareus::calibration
