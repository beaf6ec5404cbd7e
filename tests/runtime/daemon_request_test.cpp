// SPDX-License-Identifier: Apache-2.0
// The request line parser on its own: what it accepts, and that each refusal names the field.
// The daemon's own checks (who registered a GPU, its clocks) are in daemon_test.cpp.
#include "kareus/runtime/daemon_request.hpp"

#include <gtest/gtest.h>

#include <string>

#include "kareus/core/error.hpp"

namespace kareus::runtime {
namespace {

std::string refusal(const std::string& line) {
  try {
    parse_daemon_request(line, 2);
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(DaemonRequestLine, ParsesEachOp) {
  const auto reg = parse_daemon_request(R"({"op": "register", "gpus": [1, 0]})", 2);
  EXPECT_EQ(reg.op, DaemonOp::kRegister);
  EXPECT_EQ(reg.gpus, (std::vector<unsigned>{1, 0}));
  const auto set =
      parse_daemon_request(R"({"op": "set_sm_clock", "gpu": 1, "clock_mhz": 1200})", 2);
  EXPECT_EQ(set.op, DaemonOp::kSetSmClock);
  EXPECT_EQ(set.gpu, 1u);
  EXPECT_EQ(set.clock_mhz, 1200);
  EXPECT_EQ(parse_daemon_request(R"({"op": "reset_sm_clock", "gpu": 1})", 2).op,
            DaemonOp::kResetSmClock);
  const auto energy = parse_daemon_request(R"({"op": "read_energy", "gpu": 1})", 2);
  EXPECT_EQ(energy.op, DaemonOp::kReadEnergy);
  EXPECT_EQ(energy.gpu, 1u);
}

TEST(DaemonRequestLine, RefusalsNameTheField) {
  EXPECT_EQ(refusal(R"({"op": "register", "gpus": [0, 2]})"),
            "request: /gpus/1 = 2: this machine has GPUs 0..1");
  EXPECT_EQ(refusal(R"({"op": "register", "gpus": []})"),
            "request: /gpus = []: expected a non-empty array of GPU indices");
  EXPECT_EQ(refusal(R"({"op": "read_energy", "gpu": -1})"),
            "request: /gpu = -1: this machine has GPUs 0..1");
  EXPECT_EQ(refusal(R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 1.5})"),
            "request: /clock_mhz = 1.5: expected an integer");
  EXPECT_EQ(refusal(R"({"op": "set_sm_clock", "gpu": 0})"),
            "request: /clock_mhz: required field is missing");
  EXPECT_EQ(refusal(R"({"op": "reset"})"),
            "request: /op = \"reset\": expected register, set_sm_clock, reset_sm_clock or "
            "read_energy");
  // No GPU at all (kareusd on a machine whose driver lists none): every index is refused.
  EXPECT_THROW(parse_daemon_request(R"({"op": "read_energy", "gpu": 0})", 0), Error);
}

}  // namespace
}  // namespace kareus::runtime
