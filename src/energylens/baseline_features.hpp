// SPDX-License-Identifier: Apache-2.0
// What the baselines learn to read from a row beyond tp, pp, batch, tokens and the scale group:
// the run's drain (max_output_tokens, requests) and the workload, each only where the training
// rows carry it, so that the baselines see what EnergyLens sees on any dataset.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kareus/energylens/dataset.hpp"

namespace kareus::energylens {

struct BaselineColumns {
  // Every training row gives the drain (a dataset has it on every row or none).
  bool drain = false;
  // Workload -> index, in order of first appearance; empty without a workload column.
  std::map<std::string, std::size_t> workloads;

  static BaselineColumns of(const std::vector<Sample>& train) {
    BaselineColumns c;
    c.drain = !train.empty();
    for (const Sample& s : train) {
      c.drain = c.drain && s.max_output_tokens && s.requests;
      if (!s.workload.empty()) c.workloads.emplace(s.workload, c.workloads.size());
    }
    return c;
  }
};

}  // namespace kareus::energylens
