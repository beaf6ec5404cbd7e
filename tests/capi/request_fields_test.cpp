// SPDX-License-Identifier: Apache-2.0
// Every field of the planner's request is reachable from the C API: each set away from its default
// in kareus_plan_options shows in the request the plan ran (kareus_plan_request). The fields come
// from PlanRequest::fields, so a field the request gains and the options lack fails here.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kareus/core/json.hpp"
#include "kareus/kareus.h"
#include "kareus/planner/request.hpp"

namespace kareus::planner {
namespace {

// The request a plan of a small job with `options` ran, as JSON.
Json planned_request(const kareus_plan_options& options) {
  kareus_workload w;
  kareus_workload_init(&w);
  w.model = "qwen3-1.7b";
  w.gpu = "a100-sxm4-40gb";
  w.pp = 2;
  w.microbatches = 4;
  w.sequence_length = 2048;
  kareus_plan* plan = nullptr;
  if (kareus_plan_create(&w, &options, &plan) != KAREUS_OK) {
    ADD_FAILURE() << kareus_last_error();
    return {};
  }
  char* text = nullptr;
  EXPECT_EQ(kareus_plan_request(plan, &text), KAREUS_OK);
  Json request = Json::parse(text);
  kareus_string_free(text);
  kareus_plan_free(plan);
  return request;
}

TEST(CapiRequest, EveryFieldOfThePlanRequestIsReachable) {
  const Json defaults = PlanRequest{}.to_json();
  std::set<std::string> reached;
  const auto collect = [&](const Json& request) {
    for (const auto& [field, value] : request.items())
      if (!defaults.contains(field) || defaults.at(field) != value) reached.insert(field);
  };
  kareus_plan_options o;
  kareus_plan_options_init(&o);
  o.methods = "megatron";
  o.strategy = "paper";
  o.seed = 7;
  o.noise_sigma = 0.01;
  o.unit_time_s = 0.002;
  o.clock_granularity = "partition";
  o.switch_latency_s = 0.002;
  o.selection = KAREUS_SELECT_DEADLINE;
  o.bound = 1000;
  o.milp_nodes = 1;
  o.enforceable = "clocks";
  collect(planned_request(o));
  o.selection = KAREUS_SELECT_ENERGY_BUDGET;
  o.bound = 1e9;
  o.milp_nodes = 0;
  collect(planned_request(o));
  const auto& fields = PlanRequest::fields();
  EXPECT_EQ(reached, std::set<std::string>(fields.begin(), fields.end()));
}

}  // namespace
}  // namespace kareus::planner
