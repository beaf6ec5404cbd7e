// SPDX-License-Identifier: Apache-2.0
// A method's frontier plans, chosen by the planner on one GPU and valued on another. Planning a
// workload searches (Kareus's Bayesian search over partition configurations, the pipeline
// solver's min-cut steps) and takes minutes; valuing the plans it chose takes an emulator run per
// chosen instruction option. A fit moves the constants many times, so it values the plans of a
// reference GPU and plans again only between fits (calibration/fit.hpp).
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "kareus/planner/planner.hpp"

namespace kareus::calibration {

class PlannedFrontier {
 public:
  // Of the frontier plans of `method` (planned on `w`), those a reading of the frontier at
  // `positions` needs: the fastest, the slowest, and at each position (a share of the way from
  // the fastest time to the slowest, in [0, 1]) the two plans on either side of it.
  // Throws Error for plans this cannot value again: the default governor's, or clocks that change
  // within an instruction.
  PlannedFrontier(const workload::Workload& w, const planner::MethodResult& method,
                  const std::vector<double>& positions);

  // The kept plans' whole-job iteration times and dynamic energies on `gpu`, each instruction at
  // the option the planner chose for it, Pareto-pruned, by increasing time. On the GPU they were
  // planned on, these are the planner's points; read at the positions by linear interpolation,
  // they give what the whole frontier gives.
  std::vector<planner::IterationPoint> on(const GpuSpec& gpu) const;

 private:
  struct Option {
    std::size_t set = 0;  // index into the option sets: 2 * stage + (backward)
    std::size_t index = 0;
  };
  workload::Workload workload_;
  frontier::PipelineProblem problem_;
  std::vector<planner::OptionSet> option_sets_;
  std::vector<Option> chosen_;  // the options some frontier plan runs
  // Kareus: the partition readings the chosen options are composed from, and nothing else.
  planner::KeyFrontiers keys_;
  std::vector<std::uint32_t> plans_;
  std::vector<std::vector<int>> assignments_;  // per plan, per DAG node
};

}  // namespace kareus::calibration
