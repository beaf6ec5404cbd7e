#include "kareus/schedule/schedule.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "common/error_of.hpp"
#include "kareus/core/error.hpp"

namespace kareus {
namespace {

using kareus::testing::error_of;

const std::string kFixture = std::string(KAREUS_TEST_DATA_DIR) + "/runtime/two_stages.json";

// The fixture with one edit applied, parsed under the name "s.json".
std::string error_after(const std::function<void(Json&)>& edit) {
  Json doc = JsonDocument::load_file(kFixture).raw();
  edit(doc);
  return error_of([&] { parse_schedule(doc.dump(), "s.json"); });
}

TEST(Schedule, LoadsEveryField) {
  const Schedule s = load_schedule(kFixture);
  EXPECT_EQ(s.format_version, 1);
  EXPECT_EQ(s.method, "kareus");
  EXPECT_EQ(s.gpu, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(s.workload.at("parallelism").at("tp"), 8);
  EXPECT_DOUBLE_EQ(s.predicted.iteration_time.value(), 2.75);
  EXPECT_DOUBLE_EQ(s.predicted.energy.value(), 9800.5);
  EXPECT_DOUBLE_EQ(s.predicted.dynamic_energy.value(), 5120.25);
  ASSERT_EQ(s.stages.size(), 2u);
  ASSERT_EQ(s.stages[0].instructions.size(), 6u);
  const ScheduleInstruction& b0 = s.stages[0].instructions[2];
  EXPECT_EQ(b0.microbatch, 0);
  EXPECT_EQ(b0.direction, "backward");
  EXPECT_EQ(b0.clock, MHz(900));
  EXPECT_EQ(b0.execution, "nanobatch");
  EXPECT_EQ(b0.partitions.at("bwd_attn"), (PartitionLaunch{"rope_0", 30}));
  EXPECT_EQ(b0.recompute_partitions.at("fwd_attn"), (PartitionLaunch{"attn_0", 21}));
}

TEST(Schedule, RoundTripsThroughJson) {
  const Schedule s = load_schedule(kFixture);
  const std::string text = to_json(s);
  EXPECT_EQ(parse_schedule(text, "again.json"), s);
  EXPECT_EQ(to_json(parse_schedule(text, "again.json")), text);
}

TEST(Schedule, PredictedEnergyRoundTripsAndMustBePositive) {
  Schedule s = load_schedule(kFixture);
  s.stages[0].instructions[1].predicted_energy = Joules(61.5);
  const std::string text = to_json(s);
  EXPECT_NE(text.find("\"predicted_energy_j\": 61.5"), std::string::npos);
  EXPECT_EQ(parse_schedule(text, "again.json"), s);
  EXPECT_NE(error_after([](Json& d) {
              d["stages"][0]["instructions"][0]["predicted_energy_j"] = -3;
            }).find("/stages/0/instructions/0/predicted_energy_j = -3"),
            std::string::npos);
}

TEST(Schedule, SequentialInstructionsRoundTripWithoutPartitions) {
  Schedule s = load_schedule(kFixture);
  s.method = "perseus";
  for (auto& stage : s.stages) {
    for (auto& in : stage.instructions) {
      in.execution = "sequential";
      in.partitions.clear();
      in.recompute_partitions.clear();
    }
  }
  const std::string text = to_json(s);
  EXPECT_EQ(text.find("partitions"), std::string::npos);
  EXPECT_EQ(parse_schedule(text, "seq.json"), s);
}

TEST(Schedule, StepClocksRoundTripAndAreOptional) {
  Schedule s = load_schedule(kFixture);
  auto& in = s.stages[0].instructions[0];
  in.step_clocks = {in.clock, MHz(1200), MHz(1200), in.clock};
  const std::string text = to_json(s);
  EXPECT_NE(text.find("\"step_clocks_mhz\""), std::string::npos);
  EXPECT_EQ(parse_schedule(text, "steps.json"), s);
  EXPECT_EQ(to_json(parse_schedule(text, "steps.json")), text);
  // A schedule without the field (every schedule before it existed) reads as before.
  EXPECT_TRUE(load_schedule(kFixture).stages[0].instructions[0].step_clocks.empty());
}

TEST(Schedule, StepClocksAreChecked) {
  EXPECT_NE(error_after([](Json& d) {
              d["stages"][0]["instructions"][0]["step_clocks_mhz"] = Json::array({1200, 930});
            }).find("/stages/0/instructions/0/step_clocks_mhz/0 = 1200: expected clock_mhz (930)"),
            std::string::npos);
  EXPECT_NE(error_after([](Json& d) {
              d["stages"][0]["instructions"][0]["step_clocks_mhz"] = Json::array();
            }).find("step_clocks_mhz = []: expected a non-empty array"),
            std::string::npos);
  EXPECT_NE(error_after([](Json& d) {
              d["stages"][0]["instructions"][0]["step_clocks_mhz"] = Json::array({930, 0});
            }).find("step_clocks_mhz/1 = 0"),
            std::string::npos);
  EXPECT_NE(error_after([](Json& d) {
              auto& in = d["stages"][0]["instructions"][0];
              in["execution"] = "sequential";
              in.erase("partitions");
              in["step_clocks_mhz"] = Json::array({930});
            }).find("only a nanobatch instruction has steps"),
            std::string::npos);
}

TEST(Schedule, FieldErrorsNameFileAndPointer) {
  EXPECT_EQ(error_after([](Json& d) { d["format_version"] = 2; }),
            "s.json: /format_version = 2: this Kareus reads format_version 1");
  EXPECT_EQ(error_after([](Json& d) { d["method"] = "zeus"; }),
            "s.json: /method = \"zeus\": expected one of: kareus, perseus, nanobatch-perseus, "
            "megatron");
  EXPECT_EQ(error_after([](Json& d) { d["predicted"].erase("energy_j"); }),
            "s.json: /predicted/energy_j: required field is missing");
  EXPECT_EQ(error_after([](Json& d) { d["predicted"]["dynamic_energy_j"] = 1e6; }),
            "s.json: /predicted/dynamic_energy_j = 1000000.0: must not exceed energy_j");
  EXPECT_EQ(error_after([](Json& d) { d["stages"][1]["instructions"][0]["clock_mhz"] = 1200.5; }),
            "s.json: /stages/1/instructions/0/clock_mhz = 1200.5: expected an integer");
  EXPECT_EQ(error_after([](Json& d) { d["stages"][0]["instructions"][1]["direction"] = "fwd"; }),
            "s.json: /stages/0/instructions/1/direction = \"fwd\": expected one of: forward, "
            "backward");
  EXPECT_EQ(error_after([](Json& d) {
              d["stages"][0]["instructions"][0]["partitions"]["fwd_attn"]["sms"] = 0;
            }),
            "s.json: /stages/0/instructions/0/partitions/fwd_attn/sms = 0: expected an integer in "
            "[1, 1000000]");
  EXPECT_EQ(error_after([](Json& d) { d["stages"][0]["instructions"][0]["clokc_mhz"] = 900; }),
            "s.json: /stages/0/instructions/0/clokc_mhz = 900: unknown field \"clokc_mhz\"; "
            "allowed: microbatch, direction, clock_mhz, execution, partitions, "
            "recompute_partitions, step_clocks_mhz, predicted_time_s, predicted_energy_j");
  EXPECT_EQ(error_after([](Json& d) { d["stages"][1]["stage"] = 0; }),
            "s.json: /stages/1/stage = 0: expected 1 (stages in order)");
}

TEST(Schedule, PartitionsMustMatchTheExecutionMode) {
  EXPECT_NE(error_after([](Json& d) {
              d["stages"][0]["instructions"][0]["execution"] = "sequential";
            }).find("/stages/0/instructions/0 = {"),
            std::string::npos);
  EXPECT_NE(error_after([](Json& d) {
              d["stages"][0]["instructions"][0].erase("partitions");
            }).find("a nanobatch instruction needs \"partitions\""),
            std::string::npos);
  EXPECT_NE(error_after([](Json& d) {
              d["stages"][0]["instructions"][0]["recompute_partitions"] = Json::object();
            }).find("/stages/0/instructions/0/recompute_partitions = {}: only a backward"),
            std::string::npos);
}

TEST(Schedule, OrderErrorsPointAtTheInstruction) {
  // Stage 1 runs F0 B0 F1 B1 F2 B2; swapping F0 and B0 runs a backward before its forward.
  EXPECT_EQ(error_after([](Json& d) {
              std::swap(d["stages"][1]["instructions"][0], d["stages"][1]["instructions"][1]);
            }).rfind("s.json: /stages/1/instructions/0 = ", 0),
            0u);
  EXPECT_NE(error_after([](Json& d) {
              std::swap(d["stages"][1]["instructions"][0], d["stages"][1]["instructions"][1]);
            }).find(": backward of microbatch 0 before its forward"),
            std::string::npos);
  EXPECT_NE(error_after([](Json& d) {
              d["stages"][0]["instructions"][3]["microbatch"] = 1;
            }).find("/stages/0/instructions/3 = {"),
            std::string::npos);
  EXPECT_NE(error_after([](Json& d) {
              d["stages"][1]["instructions"].erase(5);
            }).find("/stages/1/instructions = [{"),
            std::string::npos);
  const std::string fewer = error_after([](Json& d) {
    for (int i = 0; i < 2; ++i) d["stages"][1]["instructions"].erase(4);
  });
  EXPECT_NE(fewer.find("2 microbatches, but stage 0 runs 3"), std::string::npos) << fewer;
}

TEST(Schedule, ValidatesSchedulesBuiltInMemory) {
  Schedule s = load_schedule(kFixture);
  EXPECT_NO_THROW(validate_schedule(s, "planner"));
  s.stages[0].instructions[0].partitions["fwd_attn"].slot = "";
  EXPECT_EQ(error_of([&] { validate_schedule(s, "planner"); }),
            "planner: /stages/0/instructions/0/partitions/fwd_attn/slot = \"\": expected a launch "
            "slot name such as \"norm_0\"");
}

TEST(Schedule, MissingFileIsAnError) {
  EXPECT_EQ(error_of([] { load_schedule("/nonexistent/s.json"); }),
            "/nonexistent/s.json: cannot open file for reading (No such file or directory)");
}

}  // namespace
}  // namespace kareus
