// SPDX-License-Identifier: Apache-2.0
// Export round trips: a frontier point's schedule written and read back by the runtime is the
// same plan, and the artifact's Python files describe the same clocks and configurations.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/workloads.hpp"
#include "kareus/core/json.hpp"
#include "kareus/planner/artifact_export.hpp"
#include "kareus/planner/planner.hpp"
#include "python_literal.hpp"

namespace kareus::planner {
namespace {

namespace fs = std::filesystem;
using testing::PyLiteralParser;
using testing::PyValue;

PlanResult plan_of(const workload::Workload& w) {
  PlanOptions o;
  o.methods = {Method::kMegatron, Method::kPerseus, Method::kNanobatchPerseus,
               Method::kKareusExhaustive};
  return plan(w, o);
}

fs::path fresh_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / fmt::format("kareus_{}_{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Export : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tp8_ = new PlanResult(plan_of(kareus::testing::llama3b(8, 1)));
    cp2_tp4_ = new PlanResult(plan_of(kareus::testing::llama3b(4, 2)));
  }
  static void TearDownTestSuite() {
    delete tp8_;
    delete cp2_tp4_;
  }
  static PlanResult* tp8_;
  static PlanResult* cp2_tp4_;
};
PlanResult* Export::tp8_ = nullptr;
PlanResult* Export::cp2_tp4_ = nullptr;

TEST_F(Export, ScheduleWrittenAndReadBackIsTheSamePlan) {
  const auto dir = fresh_dir("schedule");
  for (const PlanResult* plan : {tp8_, cp2_tp4_}) {
    for (const auto& [method, result] : plan->methods) {
      for (const auto& point : ten_point_frontier(result)) {
        const auto schedule = make_schedule(*plan, method, point);
        const auto path = dir / fmt::format("{}_{}.json", to_string(method), point.plan);
        write_file_atomically(path, to_json(schedule));
        EXPECT_EQ(load_schedule(path), schedule) << path;
      }
    }
  }
  fs::remove_all(dir);
}

TEST_F(Export, ScheduleDescribesThePointItWasMadeFor) {
  const auto& w = tp8_->workload;
  const auto& m = tp8_->methods.at(Method::kKareusExhaustive);
  const auto& point = m.fastest();
  const auto s = make_schedule(*tp8_, Method::kKareusExhaustive, point);
  EXPECT_EQ(s.method, "kareus");  // the runtime knows the execution model, not the search
  EXPECT_EQ(s.predicted.iteration_time, point.time);
  EXPECT_EQ(s.predicted.energy, point.energy);
  ASSERT_EQ(s.stages.size(), 2u);
  const auto clocks = w.gpu.search_clocks();
  int nanobatch = 0;
  for (const auto& stage : s.stages) {
    ASSERT_EQ(stage.instructions.size(), 2u * w.parallelism.microbatches);
    for (const auto& in : stage.instructions) {
      EXPECT_NE(std::find(clocks.begin(), clocks.end(), in.clock), clocks.end());
      if (in.execution != "nanobatch") continue;
      ++nanobatch;
      if (in.direction == "forward") {
        EXPECT_EQ(in.partitions.size(), 2u);
        EXPECT_TRUE(in.partitions.count("fwd_attn") && in.partitions.count("fwd_mlp"));
        EXPECT_TRUE(in.recompute_partitions.empty());
      } else {
        EXPECT_TRUE(in.partitions.count("bwd_attn") && in.partitions.count("bwd_mlp"));
        EXPECT_TRUE(in.recompute_partitions.count("fwd_attn") &&
                    in.recompute_partitions.count("fwd_mlp"));
      }
    }
  }
  // At its fastest point the overlap wins on this workload (Kareus Table 3, TP8).
  EXPECT_GT(nanobatch, 0);
}

// The runtime locks each clock and refuses one the GPU does not support; Megatron's governor
// clocks once came out as averages such as 1346 MHz, which an A100 (15 MHz steps) cannot lock.
TEST_F(Export, EveryMethodsScheduleLocksOnlySupportedClocks) {
  const auto& gpu = tp8_->workload.gpu;
  for (const auto& [method, result] : tp8_->methods) {
    for (const auto& point : ten_point_frontier(result)) {
      const auto s = make_schedule(*tp8_, method, point);
      for (const auto& stage : s.stages)
        for (const auto& in : stage.instructions) {
          EXPECT_TRUE(gpu.supports_clock(in.clock))
              << to_string(method) << " point " << point.plan << ": " << in.clock.value();
          for (MHz f : in.step_clocks) EXPECT_TRUE(gpu.supports_clock(f)) << f.value();
        }
    }
  }
  const auto megatron =
      make_schedule(*tp8_, Method::kMegatron, tp8_->methods.at(Method::kMegatron).fastest());
  EXPECT_EQ(megatron.stages.front().instructions.front().clock, gpu.clock_max);
}

// Checks the two artifact files of one exported point against the schedule of that point:
// one list per stage, one tuple per instruction in 1F1B order, the same clocks and configs.
void check_artifact(const PlanResult& plan, Method method, const fs::path& dir,
                    std::size_t fwd_configs, std::size_t bwd_configs) {
  const auto keys = partition::partition_keys(plan.workload);
  std::vector<std::string> fwd_keys, bwd_keys;
  for (const auto& k : keys) (k.starts_with("fwd_") ? fwd_keys : bwd_keys).push_back(k);
  ASSERT_EQ(fwd_keys.size(), fwd_configs);
  ASSERT_EQ(fwd_keys.size() + bwd_keys.size(), bwd_configs);
  const auto points = ten_point_frontier(plan.methods.at(method));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}),
            static_cast<std::ptrdiff_t>(2 * points.size()));
  for (const auto& point : points) {
    SCOPED_TRACE(point.plan);
    const auto schedule = make_schedule(plan, method, point);
    const auto freqs_text = read(dir / fmt::format("freqs_pipeline_{:05d}.py", point.plan));
    const auto scheds_text = read(dir / fmt::format("scheds_pipeline_{:05d}.py", point.plan));
    const PyValue freqs = PyLiteralParser(freqs_text).parse_document();
    const PyValue scheds = PyLiteralParser(scheds_text).parse_document();
    EXPECT_NE(freqs_text.find(fmt::format("# iteration time (s): {:.4f}", point.time.value())),
              std::string::npos);
    ASSERT_EQ(freqs.kind, PyValue::Kind::kList);
    ASSERT_EQ(freqs.items.size(), schedule.stages.size());
    ASSERT_EQ(scheds.items.size(), schedule.stages.size());
    for (std::size_t s = 0; s < schedule.stages.size(); ++s) {
      const auto& instructions = schedule.stages[s].instructions;
      ASSERT_EQ(freqs.items[s].items.size(), instructions.size());
      ASSERT_EQ(scheds.items[s].items.size(), instructions.size());
      for (std::size_t i = 0; i < instructions.size(); ++i) {
        const auto& in = instructions[i];
        const PyValue& f = freqs.items[s].items[i];
        ASSERT_EQ(f.kind, PyValue::Kind::kTuple);
        ASSERT_EQ(f.items.size(), 2u);
        EXPECT_EQ(f.items[0].text, in.direction);
        EXPECT_EQ(f.items[1].integer, static_cast<std::int64_t>(in.clock.value()));
        const PyValue& c = scheds.items[s].items[i];
        ASSERT_EQ(c.kind, PyValue::Kind::kTuple);
        EXPECT_EQ(c.items[0].text, in.direction);
        const bool fwd = in.direction == "forward";
        ASSERT_EQ(c.items.size(), 1 + (fwd ? fwd_configs : bwd_configs));
        // Expected entries: recompute configs first in a backward, then the instruction's own.
        std::vector<std::string> expected;
        auto add = [&](const std::map<std::string, PartitionLaunch>& cfg,
                       const std::vector<std::string>& order) {
          for (const auto& k : order) {
            const auto it = cfg.find(k);
            expected.push_back(
                it == cfg.end() ? "None"
                                : fmt::format("{}-none-{}-1024", it->second.slot, it->second.sms));
          }
        };
        if (!fwd) add(in.recompute_partitions, fwd_keys);
        add(in.partitions, fwd ? fwd_keys : bwd_keys);
        for (std::size_t k = 0; k < expected.size(); ++k) {
          const PyValue& v = c.items[k + 1];
          EXPECT_EQ(v.kind == PyValue::Kind::kNone ? "None" : v.text, expected[k]);
        }
      }
    }
  }
}

TEST_F(Export, ArtifactFilesParseAsTheArtifactsStructureTp8) {
  const auto dir = fresh_dir("artifact_tp8");
  export_artifact(*tp8_, Method::kKareusExhaustive, dir);
  // The artifact's TP layout: forward (fwd_attn, fwd_mlp); backward 2 recompute + 2.
  check_artifact(*tp8_, Method::kKareusExhaustive, dir, 2, 4);
  fs::remove_all(dir);
}

TEST_F(Export, ArtifactFilesParseAsTheArtifactsStructureCp2Tp4) {
  const auto dir = fresh_dir("artifact_cp");
  export_artifact(*cp2_tp4_, Method::kKareusExhaustive, dir);
  // The artifact's CP layout: forward has 5 configs; backward 5 recompute + 7.
  check_artifact(*cp2_tp4_, Method::kKareusExhaustive, dir, 5, 12);
  fs::remove_all(dir);
}

TEST_F(Export, SequentialBaselineExportsClocksAndNoConfigs) {
  const auto dir = fresh_dir("artifact_perseus");
  export_artifact(*tp8_, Method::kPerseus, dir);
  check_artifact(*tp8_, Method::kPerseus, dir, 2, 4);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kareus::planner
