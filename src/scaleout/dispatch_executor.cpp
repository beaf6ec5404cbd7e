#include "dispatch_executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "kareus/core/error.hpp"
#include "termination_notice.hpp"
#include "transport.hpp"
#include "wire.hpp"

namespace kareus::scaleout {

DispatchExecutor::DispatchExecutor(int ranks, std::size_t workload_index,
                                   std::unique_ptr<executor::Executor> local, MeasuredSink sink)
    : ranks_(ranks),
      workload_index_(workload_index),
      local_(std::move(local)),
      sink_(std::move(sink)) {}

std::vector<executor::Measurement> DispatchExecutor::measure(
    const partition::Partition& p, const std::vector<partition::ExecConfig>& configs) {
  // Contiguous runs of the clock-sorted batch, so each rank changes its clock as rarely as the
  // single process does; sizes differ by at most one, the extra ones going to the lowest ranks.
  std::vector<std::size_t> order(configs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return configs[a].clock > configs[b].clock;
  });
  const auto ranks = static_cast<std::size_t>(ranks_);
  std::vector<std::vector<std::size_t>> pieces(ranks);
  std::vector<std::vector<partition::ExecConfig>> piece_configs(ranks);
  for (std::size_t r = 0, at = 0; r < ranks; ++r) {
    const std::size_t length = order.size() / ranks + (r < order.size() % ranks ? 1 : 0);
    for (std::size_t k = at; k < at + length; ++k) {
      pieces[r].push_back(order[k]);
      piece_configs[r].push_back(configs[order[k]]);
    }
    at += length;
  }

  std::vector<int> pending;
  for (std::size_t r = 1; r < ranks; ++r) {
    if (pieces[r].empty()) continue;
    transport::send(static_cast<int>(r), transport::kTask,
                    wire::encode(wire::Task{workload_index_, p.key, piece_configs[r]}));
    pending.push_back(static_cast<int>(r));
  }

  // Every reply is drained before an error is raised, so no worker is left blocked on a send.
  std::vector<executor::Measurement> out(configs.size());
  std::string first_error;
  const auto place = [&](std::size_t r, const std::vector<executor::Measurement>& readings) {
    for (std::size_t i = 0; i < readings.size(); ++i) out[pieces[r][i]] = readings[i];
    if (sink_) sink_(*local_, p, piece_configs[r], readings);
  };
  try {
    if (!pieces[0].empty()) place(0, local_->measure(p, piece_configs[0]));
  } catch (const std::exception& e) {
    first_error = fmt::format("rank 0: {}", e.what());
  }
  while (!pending.empty()) {
    const std::string waiting = fmt::format("{}", fmt::join(pending, ", "));
    const std::string resume = sink_ ? "; every measurement received before is in the store, "
                                       "rerun the same command to resume"
                                     : "";
    set_termination_notice(fmt::format(
        "kareus: rank 0 was terminated while waiting for measurements of partition {} from "
        "rank(s) {}{}\n",
        p.key, waiting, resume));
    transport::Message m;
    try {
      m = transport::receive(-1);
    } catch (const Error& e) {
      set_termination_notice("");
      throw Error(fmt::format("{} while waiting for partition {} from rank(s) {}{}", e.what(),
                              p.key, waiting, resume));
    }
    const auto it = std::find(pending.begin(), pending.end(), m.source);
    if (it == pending.end()) {
      first_error = fmt::format("rank {} sent an unexpected message (tag {})", m.source, m.tag);
      continue;
    }
    pending.erase(it);
    try {
      if (m.tag == transport::kFailure) throw Error(m.bytes);
      const auto r = static_cast<std::size_t>(m.source);
      place(r, wire::decode_readings(m.bytes, pieces[r].size(), m.source));
    } catch (const std::exception& e) {
      if (first_error.empty()) first_error = fmt::format("rank {}: {}", m.source, e.what());
    }
  }
  set_termination_notice("");
  if (!first_error.empty())
    throw Error(fmt::format("measuring partition {}: {}", p.key, first_error));
  return out;
}

}  // namespace kareus::scaleout
