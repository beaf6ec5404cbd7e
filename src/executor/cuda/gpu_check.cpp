// SPDX-License-Identifier: Apache-2.0
#include "kareus/executor/gpu_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"

namespace kareus::executor {
namespace {

std::vector<int> default_sms(const workload::Kernel& collective) {
  const std::vector<int> range = partition::comm_sm_counts(collective);
  std::vector<int> out{range.front(), range[range.size() / 2], range.back()};
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

std::vector<GpuCheckCase> plan_gpu_check(const workload::Workload& w, MHz clock,
                                         const GpuCheckOptions& options) {
  for (int sms : options.comm_sms) {
    require(sms >= 1, "gpu check", "comm_sms", std::to_string(sms), "must be >= 1");
  }
  std::vector<GpuCheckCase> cases;
  for (partition::Partition& p : partition::representative_partitions(w)) {
    const std::vector<int> sms = options.comm_sms.empty() ? default_sms(*p.comm) : options.comm_sms;
    std::size_t slots = p.launch_options.size();
    if (options.slots_per_key > 0) slots = std::min(slots, options.slots_per_key);
    GpuCheckCase c;
    for (std::size_t s = 0; s < slots; ++s) {
      for (int n : sms) c.configs.push_back({p.launch_options[s].name, n, clock});
    }
    c.partition = std::move(p);
    cases.push_back(std::move(c));
  }
  if (cases.empty()) {
    throw Error::device(
        fmt::format("gpu check: the workload has no partition with a collective to "
                    "overlap (tp = {}, cp = {}); use tp >= 2 or cp >= 2",
                    w.parallelism.tp, w.parallelism.cp));
  }
  return cases;
}

RankAgreement rank_agreement(const std::vector<double>& reference,
                             const std::vector<double>& measured, double tolerance) {
  require(reference.size() == measured.size(), "rank agreement", "values",
          fmt::format("{} reference, {} measured", reference.size(), measured.size()),
          "one measured value per reference value");
  RankAgreement out;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    for (std::size_t j = i + 1; j < reference.size(); ++j) {
      const double gap = reference[i] - reference[j];
      if (std::abs(gap) <= tolerance * std::max(std::abs(reference[i]), std::abs(reference[j])))
        continue;
      ++out.pairs;
      if ((gap < 0) == (measured[i] < measured[j]) && measured[i] != measured[j]) ++out.agreeing;
    }
  }
  return out;
}

}  // namespace kareus::executor
