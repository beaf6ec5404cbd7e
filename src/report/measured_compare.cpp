// SPDX-License-Identifier: Apache-2.0
#include "kareus/report/measured_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "kareus/core/error.hpp"
#include "kareus/core/table.hpp"
#include "kareus/core/wrap.hpp"
#include "kareus/measurement/record.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::report {

namespace {

// A rank is named when it sits this far from the job's typical rank: its clocks 2 % lower (more
// than one 15 MHz step at an A100's top clock), its instructions 5 % slower against the plan.
constexpr double kThrottled = 0.98;
constexpr double kStraggler = 1.05;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

std::string kind_of(const ScheduleInstruction& in) {
  return in.direction + " " + in.execution;
}

int echo_int(const Json& workload, const char* section, const char* key, int fallback) {
  const Json* at = &workload;
  if (section) {
    const auto it = workload.find(section);
    if (it == workload.end()) return fallback;
    at = &*it;
  }
  const auto v = at->find(key);
  return v != at->end() && v->is_number_integer() ? v->get<int>() : fallback;
}

std::string workload_line(const Schedule& s) {
  const Json& w = s.workload;
  return fmt::format("{} on {} (TP{} CP{} PP{} DP{})", w.value("model", std::string("?")), s.gpu,
                     echo_int(w, "parallelism", "tp", 1), echo_int(w, "parallelism", "cp", 1),
                     s.stages.size(), echo_int(w, "parallelism", "dp", 1));
}

std::string percent(double x) {
  return fmt::format("{:+.1f} %", 100 * x);
}

std::string joules(double j) {
  return std::fabs(j) >= 1000 ? fmt::format("{:+.2f} kJ", j / 1000) : fmt::format("{:+.0f} J", j);
}

struct Rank {
  const measurement::Record* record = nullptr;
  const StageSchedule* stage = nullptr;
  std::set<int> complete;  // iterations with their line
  double time_ratio = 0;   // median measured / predicted instruction time
  double clock_ratio = 0;  // median observed / scheduled clock
  bool outlier = false;
};

// Spans of a rank whose end was reported, or all of them when none was.
std::vector<const measurement::InstructionSpan*> usable(const measurement::Record& r,
                                                        bool& includes_waits) {
  std::vector<const measurement::InstructionSpan*> ended, all;
  for (const auto& s : r.instructions) {
    all.push_back(&s);
    if (s.ended) ended.push_back(&s);
  }
  includes_waits = ended.empty();
  return ended.empty() ? all : ended;
}

void find_outliers(std::vector<Rank>& ranks, MeasuredComparison& c) {
  if (ranks.size() < 2) return;
  std::vector<double> times, clocks, limits;
  for (const Rank& r : ranks) {
    times.push_back(r.time_ratio);
    clocks.push_back(r.clock_ratio);
    limits.push_back(r.record->header.gpu.power_limit.value());
  }
  const double typical_time = median(times), typical_clock = median(clocks);
  const double typical_limit = median(limits);
  for (Rank& r : ranks) {
    const auto& h = r.record->header;
    const auto add = [&](const char* what, std::string detail) {
      c.outliers.push_back({h.rank, h.stage, h.gpu.uuid, what, std::move(detail)});
      r.outlier = true;
    };
    if (r.clock_ratio < kThrottled * typical_clock)
      add("throttled", fmt::format("its SM clock ran at {:.1f} % of the schedule's, the job's "
                                   "typical rank at {:.1f} %",
                                   100 * r.clock_ratio, 100 * typical_clock));
    if (r.time_ratio > kStraggler * typical_time)
      add("straggler", fmt::format("its instructions took {:.1f} % of their predicted time, the "
                                   "job's typical rank {:.1f} %",
                                   100 * r.time_ratio, 100 * typical_time));
    if (h.gpu.power_limit.value() < typical_limit)
      add("power limit", fmt::format("its power limit is {:g} W, the others' {:g} W",
                                     h.gpu.power_limit.value(), typical_limit));
  }
}

}  // namespace

MeasuredComparison compare_measured(const plan_dir::PlanFiles& plan,
                                    const std::vector<std::string>& files) {
  const Schedule schedule =
      parse_schedule(plan.text(plan_dir::kSchedule, "give " + field_ref("plan_dir")),
                     plan.source(plan_dir::kSchedule));
  std::vector<measurement::Record> records;
  for (const auto& f : files) records.push_back(measurement::read_record(f));

  MeasuredComparison c;
  c.workload = workload_line(schedule);
  c.method = schedule.method;
  c.files = files;
  const int stages = static_cast<int>(schedule.stages.size());
  c.job_gpus = echo_int(schedule.workload, nullptr, "gpus", 0);
  std::vector<Rank> ranks;
  std::set<int> seen;
  for (const auto& r : records) {
    const std::string where = fmt::format("{} record 1", r.path.string());
    if (!(r.header.schedule == schedule))
      throw Error::invalid(where, "schedule", "(the record's)",
                           fmt::format("was not recorded with {}: measure the plan you compare",
                                       plan.source(plan_dir::kSchedule)));
    if (!seen.insert(r.header.rank).second)
      throw Error::invalid(where, "rank", std::to_string(r.header.rank),
                           "another record has the same rank; give one record per rank");
    Rank rank;
    rank.record = &r;
    rank.stage = &schedule.stages[static_cast<std::size_t>(r.header.stage)];
    for (const auto& it : r.iterations) rank.complete.insert(it.iteration);
    bool waits = false;
    std::vector<double> time_ratios, clock_ratios;
    for (const auto* s : usable(r, waits)) {
      if (s->predicted_time) time_ratios.push_back(s->time / *s->predicted_time);
      clock_ratios.push_back(s->observed_clock / s->clock);
    }
    rank.time_ratio = median(time_ratios);
    rank.clock_ratio = median(clock_ratios);
    if (!r.ended)
      c.notes.push_back(
          fmt::format("{} has no end line: the job stopped without closing it; its "
                      "{} complete iterations are used",
                      r.path.string(), r.iterations.size()));
    ranks.push_back(std::move(rank));
  }
  c.ranks = static_cast<int>(ranks.size());
  find_outliers(ranks, c);

  // Iterations every rank completed.
  std::set<int> common = ranks.front().complete;
  for (const Rank& r : ranks) {
    std::set<int> both;
    std::set_intersection(common.begin(), common.end(), r.complete.begin(), r.complete.end(),
                          std::inserter(both, both.begin()));
    common = both;
  }
  c.iterations = static_cast<int>(common.size());

  // Per stage and kind, outliers kept out.
  std::map<std::pair<int, std::string>, std::vector<double>> t_ratio, e_ratio, t_pred, e_pred;
  std::map<std::pair<int, std::string>, bool> waits_in;
  for (const Rank& r : ranks) {
    if (r.outlier) continue;
    bool waits = false;
    for (const auto* s : usable(*r.record, waits)) {
      const ScheduleInstruction& in = r.stage->instructions[s->index];
      const auto key = std::make_pair(r.record->header.stage, kind_of(in));
      waits_in[key] = waits;
      if (s->predicted_time) {
        t_ratio[key].push_back(s->time / *s->predicted_time);
        t_pred[key].push_back(s->predicted_time->value());
      }
      if (s->predicted_energy) {
        e_ratio[key].push_back(s->energy / *s->predicted_energy);
        e_pred[key].push_back(s->predicted_energy->value());
      }
    }
  }
  for (const auto& [key, ratios] : t_ratio) {
    KindRow row{key.first, key.second, ratios.size(), {}, std::nullopt, waits_in[key]};
    const double p = mean(t_pred[key]);
    row.time = {p, p * median(ratios)};
    if (e_ratio.count(key)) {
      const double pe = mean(e_pred[key]);
      row.energy = Versus{pe, pe * median(e_ratio[key])};
    }
    c.kinds.push_back(row);
  }

  // Whole iterations: the slowest rank's time; each stage's recorded ranks scaled to its GPUs.
  std::map<int, int> recorded_per_stage;
  for (const Rank& r : ranks) ++recorded_per_stage[r.record->header.stage];
  const bool every_stage = static_cast<int>(recorded_per_stage.size()) == stages;
  const int stage_gpus = c.job_gpus > 0 ? c.job_gpus / stages : 0;
  if (!every_stage)
    c.notes.push_back(fmt::format("{} of {} stages recorded: the job's energy is not compared",
                                  recorded_per_stage.size(), stages));
  else if (c.ranks < c.job_gpus)
    c.notes.push_back(
        fmt::format("{} of the job's {} GPUs recorded: each stage's energy is its "
                    "recorded ranks' scaled to its {} GPUs",
                    c.ranks, c.job_gpus, stage_gpus));
  bool all_predicted = true;
  double predicted_instructions = 0;  // J per iteration, every GPU
  for (const auto& st : schedule.stages)
    for (const auto& in : st.instructions) {
      if (!in.predicted_energy)
        all_predicted = false;
      else
        predicted_instructions += in.predicted_energy->value() * stage_gpus;
    }
  std::vector<double> job_time, job_energy, job_instr;
  for (int it : common) {
    double t = 0, e = 0, ei = 0;
    for (const Rank& r : ranks) {
      const double scale = stage_gpus > 0 ? static_cast<double>(stage_gpus) /
                                                recorded_per_stage[r.record->header.stage]
                                          : 0;
      for (const auto& span : r.record->iterations)
        if (span.iteration == it) {
          t = std::max(t, span.time.value());
          e += scale * span.energy.value();
        }
      for (const auto& s : r.record->instructions)
        if (s.iteration == it) ei += scale * s.energy.value();
    }
    job_time.push_back(t);
    job_energy.push_back(e);
    job_instr.push_back(ei);
  }
  c.iteration_time = {schedule.predicted.iteration_time.value(), median(job_time)};
  if (every_stage && stage_gpus > 0 && !common.empty()) {
    c.job_energy = Versus{schedule.predicted.energy.value(), median(job_energy)};
    if (all_predicted) {
      c.energy_error_instructions = median(job_instr) - predicted_instructions;
      c.energy_error_outside =
          (c.job_energy->measured - c.job_energy->predicted) - *c.energy_error_instructions;
    }
  }

  for (const Rank& r : ranks) {
    double busy_pred = 0, energy_pred = 0;
    bool energies = true;
    for (const auto& in : r.stage->instructions) {
      busy_pred += in.predicted_time ? in.predicted_time->value() : 0;
      if (in.predicted_energy)
        energy_pred += in.predicted_energy->value();
      else
        energies = false;
    }
    std::vector<double> busy, rest, busy_e;
    for (const auto& span : r.record->iterations) {
      double b = 0, be = 0;
      for (const auto& s : r.record->instructions)
        if (s.iteration == span.iteration) {
          b += s.time.value();
          be += s.energy.value();
        }
      busy.push_back(b);
      rest.push_back(span.time.value() - b);
      busy_e.push_back(be);
    }
    RankSplit split{r.record->header.rank,
                    r.record->header.stage,
                    {busy_pred, median(busy)},
                    {schedule.predicted.iteration_time.value() - busy_pred, median(rest)},
                    std::nullopt};
    if (energies) split.busy_energy = Versus{energy_pred, median(busy_e)};
    c.ranks_split.push_back(split);
  }
  if (!c.outliers.empty())
    c.notes.push_back("ranks named as outliers are left out of the per-kind figures");
  return c;
}

std::string MeasuredComparison::explanation() const {
  std::string out =
      fmt::format("measured vs planned: iteration {} time", percent(iteration_time.error()));
  if (job_energy) out += fmt::format(", {} energy", percent(job_energy->error()));
  if (energy_error_instructions && energy_error_outside)
    out += fmt::format(" ({} in the instructions, {} outside them)",
                       joules(*energy_error_instructions), joules(*energy_error_outside));
  const KindRow* worst = nullptr;
  for (const auto& k : kinds)
    if (!worst || std::fabs(k.time.error()) > std::fabs(worst->time.error())) worst = &k;
  if (worst)
    out += fmt::format("; furthest off: stage {} {}, {} time", worst->stage, worst->kind,
                       percent(worst->time.error()));
  for (const auto& o : outliers) out += fmt::format("; rank {} {}", o.rank, o.what);
  return out;
}

std::string render_text(const MeasuredComparison& c) {
  // Prose folds at kLineWidth like the rest of the command line's output.
  std::string out = wrap(fmt::format("{}, {} schedule; {} rank(s) recorded of {} GPUs, {} "
                                     "complete iteration(s)",
                                     c.workload, c.method, c.ranks, c.job_gpus, c.iterations)) +
                    wrap(c.explanation()) + "\n";
  TextTable it({"per iteration", "planned", "measured", "error"});
  it.add_row({"time s", fmt::format("{:.3f}", c.iteration_time.predicted),
              fmt::format("{:.3f}", c.iteration_time.measured), percent(c.iteration_time.error())});
  if (c.job_energy)
    it.add_row({"energy J, all GPUs", fmt::format("{:.0f}", c.job_energy->predicted),
                fmt::format("{:.0f}", c.job_energy->measured), percent(c.job_energy->error())});
  if (c.energy_error_instructions)
    it.add_row({"  of which in the instructions", "", "", joules(*c.energy_error_instructions)});
  if (c.energy_error_outside)
    it.add_row(
        {"  of which outside them (waits, optimizer)", "", "", joules(*c.energy_error_outside)});
  out += it.render() + "\n";
  TextTable k({"stage", "instruction kind", "spans", "time s planned", "measured", "error",
               "energy J planned", "measured", "error"});
  for (const auto& row : c.kinds) {
    std::vector<std::string> cells = {std::to_string(row.stage),
                                      row.kind + (row.includes_waits ? " (waits included)" : ""),
                                      std::to_string(row.spans),
                                      fmt::format("{:.4f}", row.time.predicted),
                                      fmt::format("{:.4f}", row.time.measured),
                                      percent(row.time.error())};
    if (row.energy) {
      cells.push_back(fmt::format("{:.1f}", row.energy->predicted));
      cells.push_back(fmt::format("{:.1f}", row.energy->measured));
      cells.push_back(percent(row.energy->error()));
    } else {
      cells.insert(cells.end(), {"-", "-", "-"});
    }
    k.add_row(cells);
  }
  out += k.render() + "\n";
  TextTable r({"rank", "stage", "in instructions s planned", "measured", "outside s planned",
               "measured", "instruction energy J planned", "measured"});
  for (const auto& s : c.ranks_split)
    r.add_row({std::to_string(s.rank), std::to_string(s.stage),
               fmt::format("{:.3f}", s.busy.predicted), fmt::format("{:.3f}", s.busy.measured),
               fmt::format("{:.3f}", s.rest.predicted), fmt::format("{:.3f}", s.rest.measured),
               s.busy_energy ? fmt::format("{:.0f}", s.busy_energy->predicted) : "-",
               s.busy_energy ? fmt::format("{:.0f}", s.busy_energy->measured) : "-"});
  out += r.render();
  for (const auto& o : c.outliers)
    out += wrap(fmt::format("outlier: rank {} (stage {}, {}) {}: {}", o.rank, o.stage, o.gpu_uuid,
                            o.what, o.detail),
                kLineWidth, "", "  ");
  for (const auto& n : c.notes) out += wrap("note: " + n, kLineWidth, "", "  ");
  return out;
}

Json to_json(const MeasuredComparison& c) {
  const auto versus = [](const Versus& v) {
    return Json{{"planned", v.predicted}, {"measured", v.measured}, {"error", v.error()}};
  };
  Json kinds = Json::array();
  for (const auto& k : c.kinds) {
    Json row = {{"stage", k.stage},
                {"kind", k.kind},
                {"spans", k.spans},
                {"time_s", versus(k.time)},
                {"includes_waits", k.includes_waits}};
    if (k.energy) row["energy_j"] = versus(*k.energy);
    kinds.push_back(row);
  }
  Json ranks = Json::array();
  for (const auto& s : c.ranks_split) {
    Json row = {{"rank", s.rank},
                {"stage", s.stage},
                {"in_instructions_s", versus(s.busy)},
                {"outside_s", versus(s.rest)}};
    if (s.busy_energy) row["instruction_energy_j"] = versus(*s.busy_energy);
    ranks.push_back(row);
  }
  Json outliers = Json::array();
  for (const auto& o : c.outliers)
    outliers.push_back({{"rank", o.rank},
                        {"stage", o.stage},
                        {"gpu_uuid", o.gpu_uuid},
                        {"what", o.what},
                        {"detail", o.detail}});
  Json out = {{"workload", c.workload},
              {"method", c.method},
              {"records", c.files},
              {"job_gpus", c.job_gpus},
              {"ranks", c.ranks},
              {"iterations", c.iterations},
              {"explanation", c.explanation()},
              {"iteration_time_s", versus(c.iteration_time)},
              {"kinds", kinds},
              {"ranks_split", ranks},
              {"outliers", outliers},
              {"notes", c.notes}};
  if (c.job_energy) out["job_energy_j"] = versus(*c.job_energy);
  if (c.energy_error_instructions)
    out["energy_error_j"] = {{"instructions", *c.energy_error_instructions},
                             {"outside", *c.energy_error_outside}};
  return out;
}

}  // namespace kareus::report
