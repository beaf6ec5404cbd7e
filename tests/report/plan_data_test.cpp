// SPDX-License-Identifier: Apache-2.0
// The report's data against the plan directory it reads: `kareus plan --out` writes a plan, and
// every figure `plan_page_data` hands the page must be the one in the files (frontiers, the
// selection and its bound, per-method counts, provenance sums, the timeline of the schedule, the
// measured partition points and which of them the schedule uses). A damaged directory is refused
// naming the file and what disagrees.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "common/error_of.hpp"
#include "common/run_cli.hpp"
#include "common/scratch_dir.hpp"
#include "kareus/core/csv.hpp"
#include "kareus/core/json.hpp"
#include "kareus/plan_dir/plan_files.hpp"
#include "kareus/report/plan_report.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::report {
namespace {

namespace fs = std::filesystem;
using ::kareus::testing::error_of;

const testing::ScratchDir kScratch("kareus_report_plan_data");

Json read_json(const fs::path& p) {
  std::ifstream in(p);
  return Json::parse(in);
}

class PlanData : public ::testing::Test {
 protected:
  // A small plan with every default method and a deadline inside the kareus frontier, so that the
  // selection has a bound and the partitions a searched method.
  static void SetUpTestSuite() {
    const std::string base =
        "plan --model qwen3-1.7b --tp 8 --pp 2 --mbs 8 --seq 4096 --microbatches 4 --quiet --db " +
        (kScratch.path() / "store.sqlite").string();
    const auto probe = testing::run_cli(KAREUS_BINARY, base + " --methods kareus --json");
    ASSERT_EQ(probe.exit_code, 0) << probe.err;
    const auto k = Json::parse(probe.out)["methods"]["kareus"];
    deadline_ =
        (k["max_throughput"]["time_s"].get<double>() + k["min_energy"]["time_s"].get<double>()) / 2;
    const auto r =
        testing::run_cli(KAREUS_BINARY, base + " --deadline " + std::to_string(deadline_) +
                                            " --out " + dir().string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    data_ = new Json(plan_page_data(plan_dir::read_plan_files(dir())));
  }
  static void TearDownTestSuite() { delete data_; }
  static fs::path dir() { return kScratch.path() / "plan"; }
  static const Json& data() { return *data_; }

  // The files of a copy of the plan directory with one file damaged.
  static plan_dir::PlanFiles damaged(const std::string& name, const std::string& file,
                                     const std::function<void(Json&)>& damage) {
    const auto copy = kScratch.path() / name;
    fs::remove_all(copy);
    fs::copy(dir(), copy);
    Json j = read_json(copy / file);
    damage(j);
    std::ofstream(copy / file) << j.dump();
    return plan_dir::read_plan_files(copy);
  }

  static inline double deadline_ = 0;
  static inline Json* data_ = nullptr;
};

TEST_F(PlanData, FrontierIsEveryCsvRowAndTheSelectedPointIsTheSummarys) {
  const Json summary = read_json(dir() / "summary.json");
  std::size_t rows = 0, selected = 0;
  for (const auto& [method, m] : summary["methods"].items()) {
    const auto csv = CsvTable::read_file(dir() / ("frontier_" + method + ".csv"));
    ASSERT_EQ(csv.rows(), m["frontier_size"].get<std::size_t>()) << method;
    std::size_t i = 0;
    for (const auto& row : data()["frontier"]) {
      if (row["method"] != method) continue;
      ASSERT_LT(i, csv.rows()) << method;
      const auto r = csv.row(i++);
      EXPECT_EQ(row["time_s"].get<double>(), r.number("time_s")) << method << " row " << i;
      EXPECT_EQ(row["energy_j"].get<double>(), r.number("energy_j")) << method << " row " << i;
      EXPECT_EQ(row["dynamic_energy_j"].get<double>(), r.number("dynamic_energy_j"));
      EXPECT_EQ(row["plan"].get<long>(), r.integer("plan"));
      if (row["selected"].get<bool>()) {
        ++selected;
        EXPECT_EQ(method, summary["selected"]["method"]);
        EXPECT_EQ(row["plan"], summary["selected"]["point"]["plan"]);
        EXPECT_LE(row["time_s"].get<double>(), deadline_ * (1 + 1e-9));
      }
    }
    EXPECT_EQ(i, csv.rows()) << method;
    rows += i;
  }
  EXPECT_EQ(rows, data()["frontier"].size());
  EXPECT_EQ(selected, 1u);
  EXPECT_EQ(data()["selected"]["method"], "kareus");
  // The bound is the summary's rule, which prints the deadline to 6 significant digits.
  const std::string rule = summary["selected"]["rule"];
  const double bound = data()["selected"]["bound"]["deadline_s"].get<double>();
  EXPECT_EQ(rule, fmt::format("deadline {:g} s", bound));
  EXPECT_NEAR(bound, deadline_, 1e-5 * deadline_);
}

TEST_F(PlanData, MethodsAndProvenanceAreTheSummarysCountsAndTheirSums) {
  const Json summary = read_json(dir() / "summary.json");
  std::int64_t measurements = 0, reused = 0;
  double gpu_hours = 0;
  std::set<std::string> listed;
  for (const auto& m : data()["methods"]) {
    const std::string name = m["method"];
    listed.insert(name);
    const auto& s = summary["methods"][name];
    for (const char* field : {"frontier_size", "measurements", "measurements_reused",
                              "max_throughput", "min_energy", "ten_point_frontier", "metrics"})
      EXPECT_EQ(m[field], s[field]) << name << " " << field;
    EXPECT_DOUBLE_EQ(m["profiling_gpu_hours"].get<double>(),
                     s["profiling_gpu_hours"].get<double>());
    measurements += s["measurements"].get<std::int64_t>();
    reused += s["measurements_reused"].get<std::int64_t>();
    gpu_hours += s["profiling_gpu_hours"].get<double>();
  }
  EXPECT_EQ(listed.size(), summary["methods"].size());
  EXPECT_GT(measurements, 0);
  EXPECT_EQ(data()["provenance"]["measurements"].get<std::int64_t>(), measurements);
  EXPECT_EQ(data()["provenance"]["measurements_reused"].get<std::int64_t>(), reused);
  EXPECT_NEAR(data()["provenance"]["profiling_gpu_hours"].get<double>(), gpu_hours,
              1e-9 * gpu_hours);
  EXPECT_EQ(data()["workload"], summary["workload"]);
  EXPECT_EQ(data()["metrics"], summary["metrics"]);
}

TEST_F(PlanData, TimelineRunsEveryScheduledInstructionInItsStagesOrder) {
  const Schedule s = load_schedule(dir() / "schedule.json");
  const auto& t = data()["timeline"];
  std::map<int, std::vector<const Json*>> by_stage;
  for (const auto& b : t["bars"]) by_stage[b["stage"].get<int>()].push_back(&b);
  ASSERT_EQ(by_stage.size(), s.stages.size());
  double last_end = 0;
  for (const auto& st : s.stages) {
    const auto& bars = by_stage[st.stage];
    ASSERT_EQ(bars.size(), st.instructions.size()) << "stage " << st.stage;
    double free_at = 0;
    for (std::size_t i = 0; i < bars.size(); ++i) {
      const auto& b = *bars[i];
      const auto& in = st.instructions[i];
      EXPECT_EQ(b["microbatch"].get<int>(), in.microbatch);
      EXPECT_EQ(b["direction"], in.direction);
      EXPECT_EQ(b["clock_mhz"].get<double>(), in.clock.value());
      EXPECT_EQ(b["execution"], in.execution);
      EXPECT_GE(b["start_s"].get<double>(), free_at) << "bars of one stage overlap";
      EXPECT_GT(b["end_s"].get<double>(), b["start_s"].get<double>());
      free_at = b["end_s"].get<double>();
    }
    last_end = std::max(last_end, free_at);
  }
  EXPECT_DOUBLE_EQ(t["pipeline_time_s"].get<double>(), last_end);
  EXPECT_DOUBLE_EQ(t["iteration_time_s"].get<double>(),
                   t["pipeline_time_s"].get<double>() + t["tail_s"].get<double>());
  EXPECT_GT(t["tail_s"].get<double>(), 0.0) << "the optimizer step runs after the pipeline";
  EXPECT_EQ(t["predicted_iteration_time_s"].get<double>(), s.predicted.iteration_time.value());
  EXPECT_NEAR(t["iteration_time_s"].get<double>(), s.predicted.iteration_time.value(),
              0.01 * s.predicted.iteration_time.value());
}

TEST_F(PlanData, PartitionPointsAreTheFilesAndChosenIsWhatTheScheduleUses) {
  const Json file = read_json(dir() / "partitions.json");
  const Schedule s = load_schedule(dir() / "schedule.json");
  std::set<std::tuple<std::string, int, std::string, int>> used;
  int uses = 0;
  for (const auto& st : s.stages)
    for (const auto& in : st.instructions)
      for (const auto* m : {&in.partitions, &in.recompute_partitions})
        for (const auto& [key, l] : *m) {
          used.insert({key, static_cast<int>(in.clock.value()), l.slot, l.sms});
          ++uses;
        }
  ASSERT_GT(uses, 0) << "the selected kareus plan runs nanobatches";
  const auto& page = data()["partitions"];
  EXPECT_EQ(page["method"], file["method"]);
  std::size_t i = 0, chosen = 0;
  std::size_t expected = 0;
  for (const auto& [key, list] : file["keys"].items()) {
    expected += list.size();
    for (const auto& p : list) {
      ASSERT_LT(i, page["points"].size());
      const auto& q = page["points"][i++];
      EXPECT_EQ(q["key"], key);
      EXPECT_EQ(q["clock_mhz"], p["clock_mhz"]);
      EXPECT_EQ(q["slot"], p["slot"]);
      EXPECT_EQ(q["sms"], p["sms"]);
      EXPECT_DOUBLE_EQ(q["time_ms"].get<double>(), 1e3 * p["time_s"].get<double>());
      EXPECT_EQ(q["dynamic_energy_j"], p["dynamic_energy_j"]);
      EXPECT_EQ(q["frontier"], p["frontier"]);
      const bool is_used = used.count({key, p["clock_mhz"].get<int>(), p["slot"], p["sms"]}) > 0;
      EXPECT_EQ(q["chosen"].get<bool>(), is_used) << key << " " << p.dump();
      chosen += is_used;
    }
  }
  EXPECT_EQ(page["points"].size(), expected);
  // Every configuration the schedule uses was measured, so each one is marked once.
  EXPECT_EQ(chosen, used.size());
  int counted = 0;
  for (const auto& c : page["choices"]) counted += c["instructions"].get<int>();
  EXPECT_EQ(counted, uses);
}

TEST_F(PlanData, DamagedDirectoriesAreNamed) {
  const auto unknown = error_of([] {
    plan_page_data(damaged("unknown_selected", "summary.json",
                           [](Json& s) { s["selected"]["method"] = "nobody"; }));
  });
  EXPECT_NE(unknown.find("summary.json: /selected/method = nobody: not among /methods"),
            std::string::npos)
      << unknown;
  const auto size = error_of([] {
    plan_page_data(damaged("wrong_size", "summary.json",
                           [](Json& s) { s["methods"]["perseus"]["frontier_size"] = 100000; }));
  });
  EXPECT_NE(size.find("frontier_perseus.csv:"), std::string::npos) << size;
  EXPECT_NE(size.find("but summary.json has frontier_size = 100000 for perseus"), std::string::npos)
      << size;
  const auto microbatches = error_of([] {
    plan_page_data(damaged("fewer_microbatches", "summary.json",
                           [](Json& s) { s["workload"]["parallelism"]["microbatches"] = 2; }));
  });
  EXPECT_NE(microbatches.find("the plan's workload has 2 microbatches"), std::string::npos)
      << microbatches;
}

}  // namespace
}  // namespace kareus::report
