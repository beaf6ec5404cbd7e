// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/request.hpp"

#include <gtest/gtest.h>

#include "common/error_of.hpp"
#include "common/workloads.hpp"

namespace kareus::planner {
namespace {

using kareus::testing::error_of;

const workload::Workload& llama() {
  static const auto w = kareus::testing::llama3b(8, 1);
  return w;
}

TEST(PlanRequest, DefaultsPass) {
  EXPECT_EQ(error_of([] { PlanRequest{}.check(llama()); }), "");
}

TEST(PlanRequest, EachFieldIsRefusedWithTheLibrarysName) {
  const auto refused = [](auto edit) {
    PlanRequest r;
    edit(r);
    return error_of([&] { r.check(llama()); });
  };
  EXPECT_EQ(refused([](PlanRequest& r) { r.noise_sigma = 0.5; }),
            "plan request: noise_sigma = 0.5: must be in [0, 0.5)");
  EXPECT_EQ(refused([](PlanRequest& r) { r.methods.clear(); }),
            "plan request: methods = (empty): give at least one method");
  EXPECT_EQ(refused([](PlanRequest& r) { r.unit_time = Seconds(0); }),
            "plan request: unit_time_s = 0: must be positive");
  EXPECT_EQ(refused([](PlanRequest& r) { r.switch_latency = Seconds(-0.25); }),
            "plan request: switch_latency_s = -0.25: must be a duration from 0 to one minute");
  EXPECT_EQ(refused([](PlanRequest& r) { r.switch_latency = Seconds(1e300); }),
            "plan request: switch_latency_s = 1e+300: must be a duration from 0 to one minute");
  EXPECT_EQ(refused([](PlanRequest& r) {
              r.selection = {SelectionRule::kDeadline, -1};
            }),
            "plan request: deadline_s = -1: must be a positive number of seconds");
  EXPECT_EQ(refused([](PlanRequest& r) {
              r.selection = {SelectionRule::kEnergyBudget, 0};
            }),
            "plan request: energy_budget_j = 0: must be a positive number of joules");
}

// A front end's spelling and unit: the CLI's --switch-latency-ms is in milliseconds.
TEST(PlanRequest, FrontEndsSpellFieldsInTheirOwnNamesAndUnits) {
  PlanRequest r;
  r.where = "command line";
  r.spellings = {{"switch_latency_s", {"--switch-latency-ms", 1e3}}, {"noise_sigma", {"--noise"}}};
  r.switch_latency = Seconds(-0.001);
  EXPECT_EQ(error_of([&] { r.check(llama()); }),
            "command line: --switch-latency-ms = -1: must be a duration from 0 to one minute");
  r.switch_latency = Seconds(0);
  r.noise_sigma = -0.1;
  EXPECT_EQ(error_of([&] { r.check(llama()); }),
            "command line: --noise = -0.1: must be in [0, 0.5)");
}

// plan() checks its options itself, so a caller that skips PlanRequest is held to the same rules.
TEST(PlanRequest, PlanChecksOptionsBuiltByHand) {
  PlanOptions o;
  o.methods = {Method::kMegatron};
  o.noise_sigma = 0.7;
  EXPECT_EQ(error_of([&] { plan(llama(), o); }),
            "plan options: noise_sigma = 0.7: must be in [0, 0.5)");
}

TEST(PlanRequest, JsonRoundTripsEveryField) {
  PlanRequest r;
  r.methods = {Method::kPerseus, Method::kKareus};
  r.strategy = search::Strategy::kPaper;
  r.seed = 42;
  r.noise_sigma = 0.03;
  r.unit_time = milliseconds(2);
  r.clock_granularity = ClockGranularity::kPartition;
  r.switch_latency = milliseconds(5);
  r.selection = {SelectionRule::kDeadline, 5.5};
  r.enforceable = Enforceable::kClocks;
  const auto doc = JsonDocument::parse(r.to_json().dump(), "request.json");
  const PlanRequest back = PlanRequest::from_json(doc.root());
  EXPECT_EQ(back.to_json(), r.to_json());
  EXPECT_EQ(back.selection.rule, SelectionRule::kDeadline);
  EXPECT_EQ(back.selection.describe(), "deadline 5.5 s");
  EXPECT_EQ(back.where, "request.json");
}

TEST(PlanRequest, JsonRefusesUnknownFieldsAndTwoBounds) {
  const auto doc = JsonDocument::parse(R"({"noise": 0.1})", "request.json");
  EXPECT_NE(error_of([&] { PlanRequest::from_json(doc.root()); }).find("request.json: /noise"),
            std::string::npos);
  const auto both =
      JsonDocument::parse(R"({"deadline_s": 5, "energy_budget_j": 9000})", "request.json");
  EXPECT_NE(error_of([&] { PlanRequest::from_json(both.root()); }).find("not both"),
            std::string::npos);
}

TEST(PlanRequest, ParseMethodsSkipsEmptyItemsAndRefusesUnknownOnes) {
  EXPECT_EQ(parse_methods("megatron,,kareus,"),
            (std::vector<Method>{Method::kMegatron, Method::kKareus}));
  EXPECT_TRUE(parse_methods("").empty());
  EXPECT_NE(error_of([] { parse_methods("megatron,warp"); }).find("warp"), std::string::npos);
}

}  // namespace
}  // namespace kareus::planner
