// SPDX-License-Identifier: Apache-2.0
#include "kareus/schedule/schedule.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "common/error_of.hpp"
#include "common/two_stages.hpp"
#include "kareus/core/error.hpp"

namespace kareus {
namespace {

using kareus::testing::error_of;

using kareus::testing::kTwoStagesSchedule;

// The fixture with one edit applied, parsed under the name "s.json".
std::string error_after(const std::function<void(Json&)>& edit) {
  Json doc = JsonDocument::load_file(kTwoStagesSchedule).raw();
  edit(doc);
  return error_of([&] { parse_schedule(doc.dump(), "s.json"); });
}

TEST(Schedule, LoadsEveryField) {
  const Schedule s = load_schedule(kTwoStagesSchedule);
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
  const Schedule s = load_schedule(kTwoStagesSchedule);
  const std::string text = to_json(s);
  EXPECT_EQ(parse_schedule(text, "again.json"), s);
  EXPECT_EQ(to_json(parse_schedule(text, "again.json")), text);
}

TEST(Schedule, PredictedEnergyRoundTripsAndMustBePositive) {
  Schedule s = load_schedule(kareus::testing::kTwoStagesSchedule);
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
  Schedule s = load_schedule(kTwoStagesSchedule);
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
  Schedule s = load_schedule(kTwoStagesSchedule);
  auto& in = s.stages[0].instructions[0];
  in.step_clocks = {in.clock, MHz(1200), MHz(1200), in.clock};
  const std::string text = to_json(s);
  EXPECT_NE(text.find("\"step_clocks_mhz\""), std::string::npos);
  EXPECT_EQ(parse_schedule(text, "steps.json"), s);
  EXPECT_EQ(to_json(parse_schedule(text, "steps.json")), text);
  // A schedule without the field (every schedule before it existed) reads as before.
  EXPECT_TRUE(load_schedule(kTwoStagesSchedule).stages[0].instructions[0].step_clocks.empty());
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
  Schedule s = load_schedule(kTwoStagesSchedule);
  EXPECT_NO_THROW(validate_schedule(s, "planner"));
  s.stages[0].instructions[0].partitions["fwd_attn"].slot = "";
  EXPECT_EQ(error_of([&] { validate_schedule(s, "planner"); }),
            "planner: /stages/0/instructions/0/partitions/fwd_attn/slot = \"\": expected a launch "
            "slot: norm, linear, rope, attn, activation or none, then _ and its index, such as "
            "\"norm_0\"");
}

// A partition is named as the partition module names it, for the instruction's direction; any
// other key (a typo, another direction's partition, escape bytes for a terminal) is refused.
TEST(Schedule, PartitionNamesAndSlotsFollowTheFormat) {
  for (const char* key :
       {"fwd_attn", "fwd_mlp", "bwd_attn", "fwd_qkv_ag", "bwd_ao_rs", "fwd_o_ar", "bwd_a_p2p"})
    EXPECT_TRUE(is_partition_key(key)) << key;
  for (const char* key : {"", "attn", "fwd_", "fwd_attn_ag", "fwd_mlp_ar", "fwd_qkv", "up_attn",
                          "fwd_qkv_xx", "fwd_trail", "fwd_attn\x1b[2J"})
    EXPECT_FALSE(is_partition_key(key)) << key;
  for (const char* slot : {"norm_0", "linear_12", "rope_0", "attn_3", "activation_0", "none_1"})
    EXPECT_TRUE(is_launch_slot(slot)) << slot;
  for (const char* slot :
       {"", "norm", "norm_", "norm_x", "_0", "gemm_0", "norm_1234567", "norm_-1"})
    EXPECT_FALSE(is_launch_slot(slot)) << slot;

  const auto renamed = [](std::string from, std::string to, int instruction,
                          const char* field = "partitions") {
    return [=](Json& d) {
      auto& partitions = d["stages"][0]["instructions"][instruction][field];
      partitions[to] = partitions[from];
      partitions.erase(from);
    };
  };
  EXPECT_EQ(error_after(renamed("fwd_attn", "\x1b]0;owned\x07", 0)),
            "s.json: /stages/0/instructions/0/partitions/\x1b]0;owned\x07 = "
            "{\"slot\":\"norm_0\",\"sms\":12}: not a partition of this instruction: expected "
            "fwd_attn, fwd_mlp, or under context parallelism fwd_qkv, fwd_ao, fwd_o or fwd_a "
            "followed by _ar, _ag, _rs or _p2p");
  EXPECT_NE(error_after(renamed("fwd_attn", "bwd_attn", 0))
                .find("/stages/0/instructions/0/partitions/bwd_attn = "),
            std::string::npos);
  EXPECT_NE(
      error_after(renamed("bwd_attn", "fwd_attn", 2)).find("expected bwd_attn, bwd_mlp, or under"),
      std::string::npos);
  EXPECT_NE(error_after(renamed("fwd_attn", "bwd_attn", 2, "recompute_partitions"))
                .find("/stages/0/instructions/2/recompute_partitions/bwd_attn = "),
            std::string::npos);
  EXPECT_NE(error_after([](Json& d) {
              d["stages"][0]["instructions"][0]["partitions"]["fwd_attn"]["slot"] = "norm_x";
            }).find("/partitions/fwd_attn/slot = \"norm_x\": expected a launch slot"),
            std::string::npos);
}

TEST(Schedule, ClocksAreWholeMegahertzUpToTheBound) {
  EXPECT_EQ(error_after([](Json& d) { d["stages"][0]["instructions"][0]["clock_mhz"] = 20000; }),
            "s.json: /stages/0/instructions/0/clock_mhz = 20000: a whole number of MHz from 1 to "
            "10000");
  EXPECT_NE(error_after([](Json& d) {
              d["stages"][0]["instructions"][0]["step_clocks_mhz"] = Json::array({930, 999999});
            }).find("step_clocks_mhz/1 = 999999: a whole number of MHz from 1 to 10000"),
            std::string::npos);
}

// The bound is checked on the array's length, before any of its instructions is read.
TEST(Schedule, InstructionsAreBoundedBeforeTheyAreRead) {
  std::string many = "[0";
  for (int i = 0; i < 250'000; ++i) many += ",0";
  many += "]";
  const std::string one_stage =
      error_after([&](Json& d) { d["stages"][0]["instructions"] = Json::parse(many); });
  EXPECT_NE(one_stage.find("s.json: /stages/0/instructions = [0,0,0"), std::string::npos)
      << one_stage;
  EXPECT_NE(one_stage.find(": 250001 instructions in stages 0..0; a schedule holds at most 250000 "
                           "in all its stages"),
            std::string::npos)
      << one_stage;
  // Stage 0's six and stage 1's 249,995: one past the bound, named at stage 1.
  std::string rest = "[0";
  for (int i = 0; i < 249'994; ++i) rest += ",0";
  rest += "]";
  const std::string two_stages =
      error_after([&](Json& d) { d["stages"][1]["instructions"] = Json::parse(rest); });
  EXPECT_NE(two_stages.find("/stages/1/instructions = [0,0,0"), std::string::npos) << two_stages;
  EXPECT_NE(two_stages.find("250001 instructions in stages 0..1"), std::string::npos) << two_stages;
}

TEST(Schedule, MissingFileIsAnError) {
  EXPECT_EQ(error_of([] { load_schedule("/nonexistent/s.json"); }),
            "/nonexistent/s.json: cannot open file for reading (No such file or directory)");
}

}  // namespace
}  // namespace kareus
