// SPDX-License-Identifier: Apache-2.0
#include "kareus/workload/pipeline.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "kareus/core/error.hpp"

namespace kareus::workload {
namespace {

std::vector<std::string> stage_names(const PipelineDag& dag, int stage) {
  std::vector<std::string> names;
  for (int id : dag.stage_order[stage]) names.push_back(instruction_name(dag.nodes[id]));
  return names;
}

using Names = std::vector<std::string>;

TEST(Pipeline1F1B, TwoStagesEightMicrobatchesMatchTextbookOrder) {
  const auto dag = build_1f1b(2, 8);
  EXPECT_EQ(stage_names(dag, 0), (Names{"F0", "F1", "B0", "F2", "B1", "F3", "B2", "F4", "B3", "F5",
                                        "B4", "F6", "B5", "F7", "B6", "B7"}));
  EXPECT_EQ(stage_names(dag, 1), (Names{"F0", "B0", "F1", "B1", "F2", "B2", "F3", "B3", "F4", "B4",
                                        "F5", "B5", "F6", "B6", "F7", "B7"}));
}

TEST(Pipeline1F1B, FourStagesSixMicrobatchesMatchTextbookOrder) {
  const auto dag = build_1f1b(4, 6);
  EXPECT_EQ(stage_names(dag, 0),
            (Names{"F0", "F1", "F2", "F3", "B0", "F4", "B1", "F5", "B2", "B3", "B4", "B5"}));
  EXPECT_EQ(stage_names(dag, 1),
            (Names{"F0", "F1", "F2", "B0", "F3", "B1", "F4", "B2", "F5", "B3", "B4", "B5"}));
  EXPECT_EQ(stage_names(dag, 2),
            (Names{"F0", "F1", "B0", "F2", "B1", "F3", "B2", "F4", "B3", "F5", "B4", "B5"}));
  EXPECT_EQ(stage_names(dag, 3),
            (Names{"F0", "B0", "F1", "B1", "F2", "B2", "F3", "B3", "F4", "B4", "F5", "B5"}));
}

TEST(Pipeline1F1B, FewerMicrobatchesThanStagesRunAllForwardsFirst) {
  const auto dag = build_1f1b(4, 2);
  EXPECT_EQ(stage_names(dag, 0), (Names{"F0", "F1", "B0", "B1"}));
  EXPECT_EQ(stage_names(dag, 2), (Names{"F0", "F1", "B0", "B1"}));
  EXPECT_EQ(stage_names(dag, 3), (Names{"F0", "B0", "F1", "B1"}));
  EXPECT_EQ(dag.topological_order().size(), dag.nodes.size());
}

TEST(Pipeline1F1B, EveryInstructionAppearsOnceAndIdsRoundTrip) {
  for (int stages : {1, 2, 3, 5}) {
    for (int microbatches : {1, 2, 4, 7}) {
      const auto dag = build_1f1b(stages, microbatches);
      ASSERT_EQ(dag.nodes.size(), static_cast<std::size_t>(2 * stages * microbatches));
      std::set<int> seen;
      for (int s = 0; s < stages; ++s) {
        ASSERT_EQ(dag.stage_order[s].size(), static_cast<std::size_t>(2 * microbatches));
        for (int id : dag.stage_order[s]) {
          EXPECT_EQ(dag.nodes[id].stage, s);
          EXPECT_TRUE(seen.insert(id).second) << "node " << id << " scheduled twice";
          const auto& ins = dag.nodes[id];
          EXPECT_EQ(dag.node_id(ins.stage, ins.microbatch, ins.direction), id);
        }
      }
      EXPECT_EQ(seen.size(), dag.nodes.size());
    }
  }
}

TEST(Pipeline1F1B, EdgesAreAcyclicAndRespectDependencies) {
  const auto dag = build_1f1b(4, 9);
  const auto order = dag.topological_order();
  ASSERT_EQ(order.size(), dag.nodes.size());
  std::vector<int> position(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
  for (const auto& [from, to] : dag.edges) EXPECT_LT(position[from], position[to]);
  const std::set<std::pair<int, int>> edges(dag.edges.begin(), dag.edges.end());
  EXPECT_EQ(edges.size(), dag.edges.size()) << "duplicate edges";
  for (int m = 0; m < 9; ++m) {
    for (int s = 0; s + 1 < 4; ++s) {
      EXPECT_TRUE(edges.count(
          {dag.node_id(s, m, Direction::kForward), dag.node_id(s + 1, m, Direction::kForward)}));
      EXPECT_TRUE(edges.count(
          {dag.node_id(s + 1, m, Direction::kBackward), dag.node_id(s, m, Direction::kBackward)}));
    }
    EXPECT_TRUE(edges.count(
        {dag.node_id(3, m, Direction::kForward), dag.node_id(3, m, Direction::kBackward)}));
  }
  // Chain edges (3 stages x 17) plus two cross-stage edges per microbatch and stage boundary.
  EXPECT_EQ(dag.edges.size(), static_cast<std::size_t>(4 * 17 + 2 * 3 * 9));
}

TEST(Pipeline1F1B, CycleIsReported) {
  auto dag = build_1f1b(2, 2);
  dag.edges.emplace_back(dag.stage_order[0].back(), dag.stage_order[0].front());
  EXPECT_THROW(dag.topological_order(), Error);
}

TEST(Pipeline1F1B, RejectsEmptyPipelines) {
  EXPECT_THROW(build_1f1b(0, 4), Error);
  EXPECT_THROW(build_1f1b(2, 0), Error);
  const auto dag = build_1f1b(2, 2);
  EXPECT_THROW(dag.node_id(2, 0, Direction::kForward), Error);
  EXPECT_THROW(dag.node_id(0, -1, Direction::kForward), Error);
}

}  // namespace
}  // namespace kareus::workload
