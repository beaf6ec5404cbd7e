// SPDX-License-Identifier: Apache-2.0
// kareus run-schedule: shows (--dry-run) or plays one iteration of a planner schedule's
// per-instruction SM clocks on a GPU, through NVML or kareusd, with measured time and energy.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "commands.hpp"
#include "common_flags.hpp"
#include "deprecated_alias.hpp"
#include "flag_checks.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/limits.hpp"
#include "kareus/core/printable.hpp"
#include "kareus/core/table.hpp"
#include "kareus/core/wrap.hpp"
#include "kareus/nvml/nvml.hpp"
#include "kareus/runtime/daemon_client.hpp"
#include "kareus/runtime/energy_monitor.hpp"
#include "kareus/runtime/frequency_controller.hpp"

namespace kareus::cli {
namespace {

// The partitions cell's width: what kLineWidth leaves after the other columns at their widest
// (stage, a three-digit index, instruction, clock, action, observed clock, execution, and the
// two spaces between columns).
constexpr std::size_t kPartitionsWidth = kLineWidth - 59;

struct RunScheduleFlags {
  std::string schedule;
  bool dry_run = false;
  int stage = -1;
  unsigned gpu = 0;
  double hold_ms = 100;
  std::string daemon;
  bool json = false;
  std::string record;
  int rank = 0;
  int iterations = 1;
};

// One instruction as the controller treats it: `change` when its clock differs from the one
// before it on the same stage (the controller skips the NVML call otherwise).
struct Step {
  int stage;
  std::size_t index;
  const ScheduleInstruction* instruction;
  bool change;
  double observed_mhz = 0;  // SM clock read back after applying (played runs only)
};

std::vector<Step> steps_of(const Schedule& s, int only_stage) {
  std::vector<Step> out;
  for (const auto& stage : s.stages) {
    if (only_stage >= 0 && stage.stage != only_stage) continue;
    for (std::size_t i = 0; i < stage.instructions.size(); ++i) {
      const bool change = i == 0 || stage.instructions[i - 1].clock != stage.instructions[i].clock;
      out.push_back({stage.stage, i, &stage.instructions[i], change});
    }
  }
  return out;
}

std::string launches(const std::map<std::string, PartitionLaunch>& partitions) {
  std::string out;
  for (const auto& [key, p] : partitions) {
    out += fmt::format("{}{}@{}/{}", out.empty() ? "" : " ", key, p.slot, p.sms);
  }
  return out;
}

Json launches_json(const std::map<std::string, PartitionLaunch>& partitions) {
  Json out = Json::object();
  for (const auto& [key, p] : partitions) out[key] = {{"slot", p.slot}, {"sms", p.sms}};
  return out;
}

struct Played {
  runtime::EnergyMeasurement measurement;
  runtime::ControllerStats stats;
  std::filesystem::path record;  // empty when not recording
};

void play(const RunScheduleFlags& f, const Schedule& s, std::vector<Step>& steps, Played& out) {
  // The daemon first: without it, "cannot connect to kareusd" is what the user must act on, even
  // where this process could not load NVML either.
  std::shared_ptr<runtime::DaemonClient> client;
  if (!f.daemon.empty()) client = std::make_shared<runtime::DaemonClient>(f.daemon);
  auto nvml = std::make_shared<const nvml::Nvml>();
  std::unique_ptr<runtime::ClockBackend> backend;
  if (client) {
    backend = std::make_unique<runtime::DaemonClockBackend>(client, f.gpu);
  } else {
    backend = std::make_unique<runtime::NvmlClockBackend>(nvml, f.gpu);
  }
  runtime::ControllerOptions options;
  if (!f.record.empty()) options.record = runtime::RecordOptions{f.record, f.rank, f.gpu, nvml, {}};
  runtime::FrequencyController controller(s, f.stage, std::move(backend), options);
  runtime::EnergyMonitor monitor(nvml, {f.gpu});
  monitor.begin_window("run-schedule");
  for (int iteration = 0; iteration < f.iterations; ++iteration) {
    for (Step& step : steps) {
      controller.on_instruction_begin(step.stage, step.instruction->microbatch,
                                      step.instruction->direction);
      controller.wait_until_applied();
      step.observed_mhz = nvml->sm_clock(f.gpu).value();
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(f.hold_ms));
      controller.on_instruction_end();
    }
    controller.on_step_end();
  }
  out.measurement = monitor.end_window("run-schedule");
  out.stats = controller.stats();
  out.record = controller.record_path();
}

std::string format_report(const RunScheduleFlags& f, const Schedule& s,
                          const std::vector<Step>& steps, const Played* played) {
  std::string out = fmt::format("{} schedule for {} ({} stages), {}\n\n", s.method,
                                printable(s.gpu), s.stages.size(),
                                played ? fmt::format("played on GPU {} holding each instruction "
                                                     "{:g} ms",
                                                     f.gpu, f.hold_ms)
                                       : std::string("dry run: nothing applied"));
  std::vector<std::string> header = {
      "stage", "#", "instr", "MHz", "action", "execution", "partitions (slot/SMs)"};
  if (played) header.insert(header.begin() + 5, "observed MHz");
  TextTable table(header);
  for (const Step& st : steps) {
    const auto& in = *st.instruction;
    // The partitions cell folds onto rows of its own, the recomputed ones on their own line, so
    // the table keeps within kLineWidth whatever the number of partitions.
    std::string parts = wrap(launches(in.partitions), kPartitionsWidth);
    if (!in.recompute_partitions.empty())
      parts += wrap("recompute " + launches(in.recompute_partitions), kPartitionsWidth);
    std::vector<std::string> lines;
    for (std::size_t begin = 0, end; begin < parts.size(); begin = end + 1) {
      end = parts.find('\n', begin);
      lines.push_back(parts.substr(begin, end - begin));
    }
    std::vector<std::string> row = {
        std::to_string(st.stage),
        std::to_string(st.index),
        fmt::format("{}{}", in.direction == "forward" ? "F" : "B", in.microbatch),
        fmt::format("{:g}", in.clock.value()),
        st.change ? "set" : "keep",
        in.execution,
        lines.empty() ? "" : lines.front()};
    if (played) row.insert(row.begin() + 5, fmt::format("{:g}", st.observed_mhz));
    table.add_row(std::move(row));
    for (std::size_t k = 1; k < lines.size(); ++k) {
      std::vector<std::string> more(header.size());
      more.back() = lines[k];
      table.add_row(std::move(more));
    }
  }
  out += table.render();
  if (played) {
    out += fmt::format("\n{} clock changes, {} skipped; {:.3f} s, {:.2f} J on GPU {}\n",
                       played->stats.clock_changes, played->stats.skipped,
                       played->measurement.time.value(), played->measurement.total_energy.value(),
                       f.gpu);
    if (!played->record.empty())
      out += fmt::format("measurement record: {}\n", played->record.string());
  }
  return out;
}

Json report_json(const RunScheduleFlags& f, const Schedule& s, const std::vector<Step>& steps,
                 const Played* played) {
  Json instructions = Json::array();
  for (const Step& st : steps) {
    const auto& in = *st.instruction;
    Json j = {{"stage", st.stage},
              {"index", st.index},
              {"microbatch", in.microbatch},
              {"direction", in.direction},
              {"clock_mhz", in.clock.value()},
              {"change", st.change},
              {"execution", in.execution},
              {"partitions", launches_json(in.partitions)},
              {"recompute_partitions", launches_json(in.recompute_partitions)}};
    if (played) j["observed_clock_mhz"] = st.observed_mhz;
    instructions.push_back(std::move(j));
  }
  Json doc = {{"schedule", f.schedule},
              {"method", s.method},
              {"gpu", s.gpu},
              {"dry_run", played == nullptr},
              {"instructions", std::move(instructions)}};
  if (played) {
    doc["played"] = {{"gpu", f.gpu},
                     {"hold_s", f.hold_ms * 1e-3},
                     {"clock_changes", played->stats.clock_changes},
                     {"skipped", played->stats.skipped},
                     {"time_s", played->measurement.time.value()},
                     {"energy_j", played->measurement.total_energy.value()}};
    if (!played->record.empty()) doc["played"]["record"] = played->record.string();
  }
  return doc;
}

void run(const RunScheduleFlags& f) {
  require(f.hold_ms >= 0 && f.hold_ms <= kMaxWaitMilliseconds, "run-schedule", "--hold-ms",
          format_number(f.hold_ms),
          fmt::format("must be from 0 to {:.0f} ms", kMaxWaitMilliseconds));
  const Schedule s = load_schedule(f.schedule);
  if (f.stage >= static_cast<int>(s.stages.size())) {
    throw Error::invalid("run-schedule", "--stage", std::to_string(f.stage),
                         fmt::format("the schedule has stages 0..{}", s.stages.size() - 1));
  }
  RunScheduleFlags flags = f;
  if (!f.dry_run && flags.stage < 0) {
    require(s.stages.size() == 1, "run-schedule", "--stage", "(unset)",
            "choose the stage to play on this GPU (the schedule has several)");
    flags.stage = 0;
  }
  require(flags.iterations >= 1, "run-schedule", "--iterations", std::to_string(flags.iterations),
          "must be >= 1");
  require(flags.rank >= 0, "run-schedule", "--rank", std::to_string(flags.rank), "must be >= 0");
  require(!f.dry_run || f.record.empty(), "run-schedule", "--record", f.record,
          "a dry run measures nothing; drop --dry-run to record");
  std::vector<Step> steps = steps_of(s, flags.stage);
  Played played;
  if (!f.dry_run) play(flags, s, steps, played);
  const Played* result = f.dry_run ? nullptr : &played;
  const std::string text = f.json ? report_json(flags, s, steps, result).dump(2) + "\n"
                                  : format_report(flags, s, steps, result);
  std::cout << text;
}

}  // namespace

void register_run_schedule_command(CLI::App& app) {
  auto flags = std::make_shared<RunScheduleFlags>();
  CLI::App* cmd = app.add_subcommand(
      "run-schedule",
      "Show (--dry-run) or play one iteration of a schedule's per-instruction SM clocks");
  cmd->add_option("--schedule", flags->schedule, "Schedule JSON from kareus plan")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag("--dry-run", flags->dry_run, "Print what would be applied; touch no GPU");
  cmd->add_option("--stage", flags->stage,
                  "Pipeline stage to show or play (default: all for --dry-run)")
      ->check(non_negative_number());
  // --device, not --gpu: everywhere else --gpu is a GPU type (docs/cli.md).
  auto* device = cmd->add_option("--device", flags->gpu, "NVML index of the GPU to play on")
                     ->capture_default_str();
  add_deprecated_alias(cmd, device, "--gpu", flags->gpu);
  cmd->add_option("--hold-ms", flags->hold_ms, "How long each instruction holds its clock")
      ->capture_default_str();
  cmd->add_option("--daemon", flags->daemon,
                  "Change clocks through kareusd at this socket instead of NVML directly")
      ->envname("KAREUSD_SOCKET");
  add_json_flag(*cmd, flags->json, "One JSON document on stdout");
  cmd->add_option("--iterations", flags->iterations, "Iterations of the schedule to play")
      ->capture_default_str();
  cmd->add_option("--record", flags->record,
                  "Write a measurement record of every instruction and iteration to this file "
                  "(docs/measurement-format.md); {rank} in it becomes --rank");
  cmd->add_option("--rank", flags->rank, "This process's rank, for the record")
      ->capture_default_str();
  cmd->callback([flags] { run(*flags); });
}

}  // namespace kareus::cli
