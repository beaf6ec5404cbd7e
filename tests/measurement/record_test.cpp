// SPDX-License-Identifier: Apache-2.0
#include "kareus/measurement/record.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "common/error_of.hpp"
#include "common/scratch_dir.hpp"
#include "kareus/core/error.hpp"

namespace kareus::measurement {
namespace {

using kareus::testing::error_of;

Schedule fixture() {
  return load_schedule(std::string(KAREUS_TEST_DATA_DIR) + "/runtime/two_stages.json");
}

RecordHeader header() {
  RecordHeader h;
  h.rank = 3;
  h.stage = 1;
  h.boundaries = Boundaries::kGpu;
  h.gpu = {2, "GPU-1234", "NVIDIA A100-SXM4-40GB", "535.129.03", Watts(400)};
  h.started_utc = "2025-01-02T03:04:05Z";
  h.schedule = fixture();
  return h;
}

InstructionSpan span(std::size_t index) {
  const Schedule schedule = fixture();
  const auto& in = schedule.stages[1].instructions[index];
  InstructionSpan s;
  s.iteration = 0;
  s.index = index;
  s.microbatch = in.microbatch;
  s.direction = in.direction;
  s.clock = in.clock;
  s.observed_clock = in.clock - MHz(15);
  s.start = Seconds(0.5 * static_cast<double>(index));
  s.time = Seconds(0.25);
  s.energy = Joules(70.5);
  s.ended = true;
  s.predicted_time = Seconds(0.24);
  return s;
}

std::string valid_text() {
  IterationSpan it;
  it.time = Seconds(2.5);
  it.energy = Joules(900);
  it.power_limit = Watts(400);
  it.predicted_time = Seconds(2.75);
  return header_line(header()) + to_line(span(0)) +
         to_line(ClockChange{0, 1, MHz(900), Seconds(0.01), Seconds(0.002)}) + to_line(span(1)) +
         to_line(it) + end_line();
}

class RecordFile : public ::testing::Test {
 protected:
  kareus::testing::ScratchDir dir_{"record"};
  std::filesystem::path write(const std::string& text) {
    const auto p = dir_.path() / "run.jsonl";
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::string error_reading(const std::string& text) {
    const auto p = write(text);
    return error_of([&] { read_record(p); });
  }
};

TEST_F(RecordFile, RoundTripsEveryLine) {
  const Record r = read_record(write(valid_text()));
  EXPECT_EQ(r.header.rank, 3);
  EXPECT_EQ(r.header.stage, 1);
  EXPECT_EQ(r.header.boundaries, Boundaries::kGpu);
  EXPECT_EQ(r.header.gpu.uuid, "GPU-1234");
  EXPECT_EQ(r.header.gpu.driver, "535.129.03");
  EXPECT_EQ(r.header.schedule, fixture());
  ASSERT_EQ(r.instructions.size(), 2u);
  EXPECT_EQ(r.instructions[1].index, 1u);
  EXPECT_EQ(r.instructions[1].observed_clock, span(1).observed_clock);
  EXPECT_DOUBLE_EQ(r.instructions[0].energy.value(), 70.5);
  EXPECT_EQ(r.instructions[0].line, 2);
  EXPECT_TRUE(r.instructions[0].ended);
  ASSERT_TRUE(r.instructions[0].predicted_time);
  EXPECT_FALSE(r.instructions[0].predicted_energy);
  ASSERT_EQ(r.clocks.size(), 1u);
  EXPECT_EQ(r.clocks[0].clock, MHz(900));
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_DOUBLE_EQ(r.iterations[0].energy.value(), 900);
  EXPECT_TRUE(r.ended);
  EXPECT_EQ(r.unfinished_instructions(), 0u);
}

TEST_F(RecordFile, AKilledJobLeavesAReadableRecord) {
  // Header, one finished iteration, then two spans of an iteration that never ended.
  std::string text = valid_text();
  text.erase(text.size() - end_line().size());
  InstructionSpan late = span(0);
  late.iteration = 1;
  text += to_line(late);
  late.index = 1;
  late.microbatch = span(1).microbatch;
  late.direction = span(1).direction;
  text += to_line(late);
  const Record r = read_record(write(text));
  EXPECT_FALSE(r.ended);
  EXPECT_EQ(r.iterations.size(), 1u);
  EXPECT_EQ(r.unfinished_instructions(), 2u);
}

TEST_F(RecordFile, ACutLastLineIsReportedWithItsRecordNumber) {
  std::string text = valid_text();
  text.resize(text.size() - 10);  // the end line, cut after 5 of its 15 bytes
  const std::string e = error_reading(text);
  EXPECT_NE(e.find("run.jsonl record 6: cut short"), std::string::npos) << e;
  EXPECT_NE(e.find("5 records before it"), std::string::npos) << e;
}

TEST_F(RecordFile, EveryBadValueNamesFileRecordAndField) {
  const std::string base = header_line(header());
  const auto with = [&](const std::function<void(Json&)>& edit) {
    Json j = Json::parse(to_line(span(0)));
    edit(j);
    return base + j.dump() + "\n";
  };
  EXPECT_NE(error_reading(with([](Json& j) {
              j["energy_j"] = -1;
            })).find("run.jsonl record 2: /energy_j = -1"),
            std::string::npos);
  // A writer that printed NaN wrote no JSON.
  std::string nan_line = to_line(span(0));
  nan_line.replace(nan_line.find("70.5"), 4, "NaN");
  EXPECT_NE(error_reading(base + nan_line).find("run.jsonl record 2: malformed JSON"),
            std::string::npos);
  EXPECT_NE(error_reading(with([](Json& j) { j["index"] = 99; })).find("/index = 99"),
            std::string::npos);
  EXPECT_NE(error_reading(with([](Json& j) { j["direction"] = "backward"; })).find("/index = 0"),
            std::string::npos);
  EXPECT_NE(error_reading(with([](Json& j) { j["type"] = "kernel"; })).find("/type = \"kernel\""),
            std::string::npos);
  EXPECT_NE(error_reading(with([](Json& j) {
              j["observed_clock_mhz"] = 0;
            })).find("/observed_clock_mhz = 0"),
            std::string::npos);
  EXPECT_NE(error_reading(with([](Json& j) { j["time_s"] = "fast"; })).find("/time_s"),
            std::string::npos);
}

TEST_F(RecordFile, TheHeaderComesFirstAndNothingAfterTheEnd) {
  EXPECT_NE(error_reading(to_line(span(0))).find("record 1"), std::string::npos);
  EXPECT_NE(error_reading("").find("empty"), std::string::npos);
  EXPECT_NE(error_reading(valid_text() + to_line(span(0))).find("record 7: a record after the end"),
            std::string::npos);
  Json h = Json::parse(header_line(header()));
  h["kareus_measurement"] = 2;
  EXPECT_NE(error_reading(h.dump() + "\n").find("/kareus_measurement = 2"), std::string::npos);
  h = Json::parse(header_line(header()));
  h["stage"] = 2;
  EXPECT_NE(error_reading(h.dump() + "\n").find("/stage = 2"), std::string::npos);
}

TEST(RecordPrediction, IterationEnergyIsTheJobsPerGpu) {
  Schedule s = fixture();
  EXPECT_FALSE(predicted_energy_per_gpu(s));  // the fixture's echo has no GPU count
  s.workload["gpus"] = 16;
  EXPECT_DOUBLE_EQ(predicted_energy_per_gpu(s)->value(), 9800.5 / 16);
}

}  // namespace
}  // namespace kareus::measurement
