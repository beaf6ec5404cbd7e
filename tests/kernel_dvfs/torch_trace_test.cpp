#include <gtest/gtest.h>

#include <string>

#include "common/error_of.hpp"
#include "kareus/kernel_dvfs/torch_trace.hpp"

namespace kareus::kernel_dvfs {
namespace {

std::string trace_error(const std::string& json) {
  return kareus::testing::error_of([&] { parse_torch_trace(json, "t.json"); });
}

TEST(TorchTrace, ReadsTheFixtureWithPasses) {
  const auto trace = load_torch_trace(KAREUS_TEST_DATA_DIR "/kernel_dvfs/gpt_layer_trace.json");
  ASSERT_FALSE(trace.kernels.empty());
  EXPECT_EQ(trace.overlapping, 0u);
  std::size_t forward = 0, backward = 0;
  for (std::size_t k = 0; k < trace.kernels.size(); ++k) {
    EXPECT_GT(trace.kernels[k].duration.value(), 0);
    if (k > 0) {
      EXPECT_GE(trace.kernels[k].start, trace.kernels[k - 1].start);
    }
    forward += trace.kernels[k].pass == Direction::kForward;
    backward += trace.kernels[k].pass == Direction::kBackward;
  }
  EXPECT_GT(forward, 0u);
  EXPECT_GT(backward, forward);  // backward runs two GEMMs per forward GEMM
  EXPECT_EQ(forward + backward, trace.kernels.size());
}

TEST(TorchTrace, SortsByStartAndCountsOverlaps) {
  const auto trace = parse_torch_trace(R"([
    {"ph":"X","cat":"kernel","name":"b","ts":10,"dur":5},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","ts":0,"dur":1},
    {"ph":"X","cat":"kernel","name":"a","ts":0,"dur":12}])",
                                       "t.json");
  ASSERT_EQ(trace.kernels.size(), 2u);
  EXPECT_EQ(trace.kernels[0].name, "a");
  EXPECT_EQ(trace.overlapping, 1u);
  EXPECT_EQ(trace.kernels[1].pass, std::nullopt);
}

TEST(TorchTrace, RejectsMissingFields) {
  EXPECT_EQ(trace_error(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"a","ts":1}]})"),
            "t.json: /traceEvents/0/dur: required field is missing");
  EXPECT_EQ(trace_error(R"({"events":[]})"), "t.json: /traceEvents: required field is missing");
}

TEST(TorchTrace, RejectsNegativeDuration) {
  EXPECT_EQ(
      trace_error(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"a","ts":1,"dur":-3}]})"),
      "t.json: /traceEvents/0/dur = -3: a kernel duration must be > 0 microseconds");
}

TEST(TorchTrace, RejectsTracesWithoutKernels) {
  EXPECT_NE(trace_error(R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","ts":1,"dur":3}]})")
                .find("no GPU kernel events"),
            std::string::npos);
  EXPECT_NE(trace_error("{\"traceEvents\": [").find("malformed JSON"), std::string::npos);
  EXPECT_NE(trace_error(R"({"traceEvents":[{"ph":"B","cat":"kernel","name":"a","ts":1,"dur":3}]})")
                .find("expected \"X\""),
            std::string::npos);
}

}  // namespace
}  // namespace kareus::kernel_dvfs
