// SPDX-License-Identifier: Apache-2.0
// The synchronous 1F1B pipeline schedule of one training iteration as a DAG of instructions: one
// forward and one backward per (stage, microbatch), a per-stage chain in 1F1B execution order and
// the activation/gradient dependencies between neighbouring stages. The emulator replays it and the
// frontier module's time-energy solver optimises over it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kareus::workload {

enum class Direction { kForward, kBackward };
const char* to_string(Direction d);  // "forward" | "backward"

struct Instruction {
  int stage = 0;
  int microbatch = 0;
  Direction direction = Direction::kForward;
};

struct PipelineDag {
  int stages = 0;
  int microbatches = 0;
  std::vector<Instruction> nodes;             // every (stage, microbatch, direction) exactly once
  std::vector<std::vector<int>> stage_order;  // per stage: node ids in 1F1B execution order
  // (from, to) dependencies: the per-stage chain, F(s,m) -> F(s+1,m), B(s+1,m) -> B(s,m). The last
  // stage's F(m) -> B(m) is always a chain edge there (1F1B has no warm-up on the last stage), so
  // it is not listed twice.
  std::vector<std::pair<int, int>> edges;

  // Throws kareus::Error when the instruction is outside the pipeline.
  int node_id(int stage, int microbatch, Direction d) const;
  // Node ids such that every edge points forward; throws kareus::Error if the edges have a cycle.
  std::vector<int> topological_order() const;
};

// Throws kareus::Error naming `where` and `field` (the microbatch count as the user gave it)
// unless microbatches >= 1 and 2 x stages x microbatches is at most kMaxInstructions
// (kareus/core/limits.hpp).
void require_instruction_count(int stages, int microbatches, std::string_view where,
                               std::string_view field);

// Throws kareus::Error on stages < 1, microbatches < 1 or more than kMaxInstructions instructions.
PipelineDag build_1f1b(int stages, int microbatches);

// "F3" / "B0": the microbatch and direction, as Perseus names instructions within a stage.
std::string instruction_name(const Instruction& instruction);

}  // namespace kareus::workload
