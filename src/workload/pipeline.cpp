// SPDX-License-Identifier: Apache-2.0
#include "kareus/workload/pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "kareus/core/error.hpp"
#include "kareus/core/limits.hpp"

namespace kareus::workload {

const char* to_string(Direction d) {
  return d == Direction::kForward ? "forward" : "backward";
}

int PipelineDag::node_id(int stage, int microbatch, Direction d) const {
  if (stage < 0 || stage >= stages || microbatch < 0 || microbatch >= microbatches) {
    throw Error::invalid(
        "pipeline", "instruction", fmt::format("stage {} microbatch {}", stage, microbatch),
        fmt::format("stage in [0, {}), microbatch in [0, {})", stages, microbatches));
  }
  return (stage * microbatches + microbatch) * 2 + (d == Direction::kBackward ? 1 : 0);
}

std::vector<int> PipelineDag::topological_order() const {
  const int n = static_cast<int>(nodes.size());
  std::vector<std::vector<int>> successors(n);
  std::vector<int> in_degree(n, 0);
  for (const auto& [from, to] : edges) {
    successors[from].push_back(to);
    ++in_degree[to];
  }
  std::vector<int> order;
  order.reserve(n);
  for (int v = 0; v < n; ++v)
    if (in_degree[v] == 0) order.push_back(v);
  for (std::size_t head = 0; head < order.size(); ++head) {
    for (int w : successors[order[head]])
      if (--in_degree[w] == 0) order.push_back(w);
  }
  if (static_cast<int>(order.size()) != n)
    throw Error("pipeline: the dependency edges contain a cycle");
  return order;
}

void require_instruction_count(int stages, int microbatches, std::string_view where,
                               std::string_view field) {
  require(microbatches >= 1, where, field, std::to_string(microbatches), "must be at least 1");
  const std::int64_t instructions = std::int64_t{2} * stages * microbatches;
  require(instructions <= kMaxInstructions, where, field, std::to_string(microbatches),
          fmt::format("2 x {} stages x {} microbatches = {} instructions per iteration; at most "
                      "{} ({} microbatches with {} stages)",
                      stages, microbatches, instructions, kMaxInstructions,
                      kMaxInstructions / (std::int64_t{2} * std::max(stages, 1)), stages));
}

PipelineDag build_1f1b(int stages, int microbatches) {
  require(stages >= 1, "pipeline", "stages", std::to_string(stages), "must be at least 1");
  require_instruction_count(stages, microbatches, "pipeline", "microbatches");
  PipelineDag dag;
  dag.stages = stages;
  dag.microbatches = microbatches;
  dag.nodes.resize(static_cast<std::size_t>(2 * stages * microbatches));
  for (int s = 0; s < stages; ++s) {
    for (int m = 0; m < microbatches; ++m) {
      for (Direction d : {Direction::kForward, Direction::kBackward})
        dag.nodes[dag.node_id(s, m, d)] = Instruction{s, m, d};
    }
  }
  dag.stage_order.resize(stages);
  for (int s = 0; s < stages; ++s) {
    auto& order = dag.stage_order[s];
    const int warmup = std::min(stages - s - 1, microbatches);
    for (int m = 0; m < warmup; ++m) order.push_back(dag.node_id(s, m, Direction::kForward));
    for (int i = 0; i + warmup < microbatches; ++i) {
      order.push_back(dag.node_id(s, warmup + i, Direction::kForward));
      order.push_back(dag.node_id(s, i, Direction::kBackward));
    }
    for (int m = microbatches - warmup; m < microbatches; ++m)
      order.push_back(dag.node_id(s, m, Direction::kBackward));
    for (std::size_t i = 1; i < order.size(); ++i) dag.edges.emplace_back(order[i - 1], order[i]);
  }
  for (int s = 0; s + 1 < stages; ++s) {
    for (int m = 0; m < microbatches; ++m) {
      dag.edges.emplace_back(dag.node_id(s, m, Direction::kForward),
                             dag.node_id(s + 1, m, Direction::kForward));
      dag.edges.emplace_back(dag.node_id(s + 1, m, Direction::kBackward),
                             dag.node_id(s, m, Direction::kBackward));
    }
  }
  return dag;
}

std::string instruction_name(const Instruction& instruction) {
  return fmt::format("{}{}", instruction.direction == Direction::kForward ? 'F' : 'B',
                     instruction.microbatch);
}

}  // namespace kareus::workload
