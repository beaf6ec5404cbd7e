// SPDX-License-Identifier: Apache-2.0
// What calibration refuses before it fits anything: records of another GPU model than the one
// calibrated, of several models mixed, too few spans, spans at one clock only, spans whose end
// was never reported. Each refusal names the file and the record.
#include <gtest/gtest.h>

#include "common/error_of.hpp"
#include "kareus/calibration/measurements.hpp"
#include "sweep_schedule.hpp"

namespace kareus::calibration {
namespace {

using kareus::testing::error_of;

workload::Workload llama() {
  workload::WorkloadRequest r;
  r.model = "llama3.2-3b";
  r.gpu = "a100-sxm4-40gb";
  r.parallelism = {8, 1, 2, 1, 4, 4096, 4, workload::Recompute::kFull, {}, 8};
  return workload::make_workload(r);
}

// A record of stage 0 at `clock`, every instruction once with its predicted time and energy.
measurement::Record record_at(double clock, const std::string& gpu_name, const std::string& path,
                              bool ended = true) {
  measurement::Record r;
  r.path = path;
  r.header.gpu.name = gpu_name;
  r.header.schedule = kareus::testing::sweep_schedule(llama(), MHz(clock));
  const auto& ins = r.header.schedule.stages[0].instructions;
  for (std::size_t i = 0; i < ins.size(); ++i) {
    measurement::InstructionSpan s;
    s.index = i;
    s.microbatch = ins[i].microbatch;
    s.direction = ins[i].direction;
    s.clock = ins[i].clock;
    s.observed_clock = ins[i].clock;
    s.time = *ins[i].predicted_time;
    s.energy = *ins[i].predicted_energy;
    s.ended = ended;
    s.line = static_cast<int>(i) + 2;
    r.instructions.push_back(s);
  }
  return r;
}

const std::string kA100 = "NVIDIA A100-SXM4-40GB";

const GpuSpec& a100() {
  static const GpuSpec g = load_gpu("a100-sxm4-40gb");
  return g;
}

TEST(SpanMeasurements, PredictsItsOwnSchedulesPredictions) {
  const SpanMeasurements m({record_at(1410, kA100, "a.jsonl"), record_at(1005, kA100, "b.jsonl")},
                           a100());
  EXPECT_EQ(m.groups(), 2u);
  EXPECT_EQ(m.observations(), 2u * 16);
  const Residuals r = m.residuals(a100(), {0, 1});
  ASSERT_EQ(r.log_ratio.size(), 32u);
  for (double x : r.log_ratio) EXPECT_NEAR(x, 0, 1e-9);
  EXPECT_EQ(m.residuals(a100(), {1}).log_ratio.size(), 16u);
}

// What two records, a.jsonl and b.jsonl, at these clocks and on these GPUs are refused with.
std::string refusal(double clock_a, const std::string& gpu_a, double clock_b,
                    const std::string& gpu_b) {
  return error_of([&] {
    SpanMeasurements({record_at(clock_a, gpu_a, "a.jsonl"), record_at(clock_b, gpu_b, "b.jsonl")},
                     a100());
  });
}

TEST(SpanMeasurements, RefusesAnotherGpuModelThanTheOneCalibrated) {
  const std::string h100 = "NVIDIA H100 80GB HBM3";
  const std::string e = refusal(1410, h100, 1005, h100);
  EXPECT_NE(e.find("a.jsonl record 1: gpu.name = NVIDIA H100 80GB HBM3: measured on another GPU "
                   "model than gpu a100-sxm4-40gb"),
            std::string::npos)
      << e;
}

TEST(SpanMeasurements, RefusesRecordsOfSeveralModels) {
  const std::string e = refusal(1410, kA100, 1005, "NVIDIA A100-SXM4-80GB");
  EXPECT_NE(e.find("b.jsonl record 1: gpu.name = NVIDIA A100-SXM4-80GB: the records mix GPU "
                   "models"),
            std::string::npos)
      << e;
}

TEST(SpanMeasurements, RefusesSpansAtOneClock) {
  const std::string e = refusal(1410, kA100, 1410, kA100);
  EXPECT_NE(e.find("a.jsonl record 2: clock_mhz = 1410 for every span"), std::string::npos) << e;
}

TEST(SpanMeasurements, RefusesTooFewSpans) {
  auto a = record_at(1410, kA100, "a.jsonl");
  auto b = record_at(900, kA100, "b.jsonl");
  a.instructions.resize(2);
  b.instructions.resize(2);
  const std::string e = error_of([&] { SpanMeasurements({a, b}, a100()); });
  EXPECT_NE(e.find("a.jsonl record 2: instruction spans = 4: too few"), std::string::npos) << e;
}

TEST(SpanMeasurements, RefusesRecordsWithoutEndedSpans) {
  const std::string e =
      error_of([] { SpanMeasurements({record_at(1410, kA100, "a.jsonl", false)}, a100()); });
  EXPECT_NE(e.find("a.jsonl record 1: instructions = no span with its end reported"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace kareus::calibration
