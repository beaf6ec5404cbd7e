// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <random>
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
      "t.json: /traceEvents/0/dur = -3: a kernel duration must be > 0 and at most "
      "3600000000 microseconds (3600 s)");
  EXPECT_EQ(
      trace_error(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"a","ts":1,"dur":1e300}]})"),
      "t.json: /traceEvents/0/dur = 1e+300: a kernel duration must be > 0 and at most "
      "3600000000 microseconds (3600 s)");
  EXPECT_NE(
      trace_error(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"a","ts":1e300,"dur":1}]})")
          .find("/traceEvents/0/ts = 1e+300: a timestamp within"),
      std::string::npos);
}

// Each kernel takes the pass of its innermost enclosing annotation, the first in the file among
// equally long ones: the sweep must agree with trying every annotation for every kernel, on
// random nested, overlapping and tied ranges.
TEST(TorchTrace, PassesMatchTryingEveryAnnotation) {
  std::mt19937 random(44);
  const auto draw = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  for (int round = 0; round < 200; ++round) {
    nlohmann::json events = nlohmann::json::array();
    struct Annotation {
      int begin, end;
      Direction pass;
    };
    std::vector<Annotation> annotations;
    for (int a = draw(8); a > 0; --a) {
      const int begin = draw(40);
      const int end = begin + 1 + draw(30);
      const bool backward = draw(2) == 1;
      annotations.push_back({begin, end, backward ? Direction::kBackward : Direction::kForward});
      events.push_back({{"ph", "X"},
                        {"cat", "gpu_user_annotation"},
                        {"name", backward ? "Backward" : "forward"},
                        {"ts", begin},
                        {"dur", end - begin}});
    }
    const int kernels = 1 + draw(12);
    for (int k = 0; k < kernels; ++k) {
      events.push_back({{"ph", "X"},
                        {"cat", "kernel"},
                        {"name", "k" + std::to_string(k)},
                        {"ts", draw(50)},
                        {"dur", 1 + draw(10)}});
    }
    const TorchTrace trace = parse_torch_trace(events.dump(), "t.json");
    ASSERT_EQ(trace.kernels.size(), static_cast<std::size_t>(kernels));
    for (const TraceKernel& k : trace.kernels) {
      const double begin = k.start.value() * 1e6;
      const double end = begin + k.duration.value() * 1e6;
      std::optional<Direction> expected;
      int narrowest = 0;
      for (const Annotation& a : annotations) {
        if (a.begin <= begin + 1e-6 && end <= a.end + 1e-6 &&
            (!expected || a.end - a.begin < narrowest)) {
          expected = a.pass;
          narrowest = a.end - a.begin;
        }
      }
      EXPECT_EQ(k.pass, expected) << events.dump() << " kernel " << k.name;
    }
  }
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
