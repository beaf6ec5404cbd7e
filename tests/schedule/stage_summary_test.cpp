// SPDX-License-Identifier: Apache-2.0
// schedule.json's stage header: written before the instructions, derived from them (clock
// changes, time at each clock), and ignored by the reader, so files without it still load.
#include <gtest/gtest.h>

#include "common/two_stages.hpp"
#include "kareus/core/json.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus {
namespace {

using kareus::testing::kTwoStagesSchedule;

ScheduleInstruction sequential(int mb, const char* direction, double mhz, double seconds) {
  ScheduleInstruction in;
  in.microbatch = mb;
  in.direction = direction;
  in.clock = MHz(mhz);
  in.execution = "sequential";
  in.predicted_time = Seconds(seconds);
  return in;
}

Schedule one_stage(std::vector<ScheduleInstruction> instructions) {
  Schedule s;
  s.workload = Json::object();
  s.method = "perseus";
  s.gpu = "a100-sxm4-40gb";
  s.predicted = {Seconds(1), Joules(100), Joules(40)};
  s.stages.push_back({0, std::move(instructions)});
  return s;
}

TEST(StageSummary, CountsClockChangesAndSumsTimeAtEachClock) {
  // 1410 -> 1200 -> 1200 -> 1410: two changes; 1410 MHz for 0.5 + 0.25 s, 1200 MHz for 0.75 s.
  const Schedule s =
      one_stage({sequential(0, "forward", 1410, 0.5), sequential(1, "forward", 1200, 0.25),
                 sequential(0, "backward", 1200, 0.5), sequential(1, "backward", 1410, 0.25)});
  const Json doc = Json::parse(to_json(s));
  const Json& summary = doc.at("stages").at(0).at("summary");
  EXPECT_EQ(summary.at("instructions"), 4);
  EXPECT_EQ(summary.at("clock_changes"), 2);
  EXPECT_DOUBLE_EQ(summary.at("time_at_clock_s").at("1410").get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(summary.at("time_at_clock_s").at("1200").get<double>(), 0.75);
  // What is read back is the schedule, predicted times included.
  EXPECT_EQ(parse_schedule(to_json(s), "s.json"), s);
}

TEST(StageSummary, HeaderComesBeforeTheInstructions) {
  const std::string text = to_json(
      one_stage({sequential(0, "forward", 1410, 0.5), sequential(0, "backward", 1410, 0.5)}));
  const auto stage = text.find("\"stage\": 0");
  const auto summary = text.find("\"summary\"");
  const auto instructions = text.find("\"instructions\": [");
  ASSERT_NE(instructions, std::string::npos) << text;
  EXPECT_LT(stage, summary);
  EXPECT_LT(summary, instructions);
  // The document's own header too: what it is before the workload echo and the stages.
  EXPECT_LT(text.find("\"method\""), text.find("\"workload\""));
}

TEST(StageSummary, StepsCountAsChangesButHideTheTimePerClock) {
  ScheduleInstruction stepped = sequential(0, "forward", 1410, 0.5);
  stepped.execution = "nanobatch";
  stepped.partitions["fwd_attn"] = {"norm_0", 12};
  stepped.step_clocks = {MHz(1410), MHz(1005), MHz(1410)};
  const Json doc = Json::parse(to_json(one_stage({stepped, sequential(0, "backward", 1410, 0.5)})));
  const Json& summary = doc.at("stages").at(0).at("summary");
  EXPECT_EQ(summary.at("clock_changes"), 2);
  EXPECT_FALSE(summary.contains("time_at_clock_s"));
}

TEST(StageSummary, FilesWithoutSummaryOrTimesStillLoad) {
  const Schedule s = load_schedule(kTwoStagesSchedule);
  for (const auto& stage : s.stages)
    for (const auto& in : stage.instructions) EXPECT_FALSE(in.predicted_time);
  const Json doc = Json::parse(to_json(s));
  EXPECT_FALSE(doc.at("stages").at(0).at("summary").contains("time_at_clock_s"));
  EXPECT_EQ(parse_schedule(to_json(s), "again.json"), s);
}

}  // namespace
}  // namespace kareus
