// SPDX-License-Identifier: Apache-2.0
#include "dispatch_executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "kareus/core/error.hpp"
#include "termination.hpp"
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

  // From the first task sent until the batch is back, a launcher's SIGTERM must not kill this
  // process before it has committed what it holds.
  const DispatchWindow window;
  std::vector<int> pending;
  for (std::size_t r = 1; r < ranks; ++r) {
    if (pieces[r].empty()) continue;
    transport::send(static_cast<int>(r), transport::kTask,
                    wire::encode(wire::Task{workload_index_, p.key, piece_configs[r]}));
    pending.push_back(static_cast<int>(r));
  }

  // Every reply is drained before an error is raised, so no worker is left blocked on a send.
  std::vector<executor::Measurement> out(configs.size());
  std::vector<std::size_t> received;  // ranks whose readings are in `out`
  std::string first_error;
  const auto place = [&](std::size_t r, const std::vector<executor::Measurement>& readings) {
    for (std::size_t i = 0; i < readings.size(); ++i) out[pieces[r][i]] = readings[i];
    received.push_back(r);
  };
  try {
    if (!pieces[0].empty()) place(0, local_->measure(p, piece_configs[0]));
  } catch (const std::exception& e) {
    first_error = fmt::format("rank 0: {}", e.what());
  }
  // The job is going down: commit what arrived, then say what was lost and how to resume.
  // The launcher's stop ends the process by SIGTERM, as it asked, once the message is out and
  // the readings are committed; an MPI failure is thrown for the CLI to report.
  const auto abandon = [&](const std::string& why, bool stopped) {
    std::size_t kept = 0;
    if (sink_)
      for (std::size_t r : received) kept += pieces[r].size();
    const std::string message = fmt::format(
        "{} while rank 0 waited for measurements of partition {} from rank(s) {}; {} "
        "measurements of this batch {}; rerun the same command to resume",
        why, p.key, fmt::join(pending, ", "), kept,
        sink_ ? "are committed to the store" : "are lost (no store)");
    // Said before the commit: the launcher stops forwarding output soon after it stops a job.
    if (stopped) {
      std::fprintf(stderr, "kareus: %s\n", message.c_str());
      std::fflush(stderr);
    }
    if (sink_) {
      for (std::size_t r : received) {
        std::vector<executor::Measurement> readings;
        for (std::size_t i : pieces[r]) readings.push_back(out[i]);
        sink_(*local_, p, piece_configs[r], readings);
      }
    }
    if (stopped) terminate_now();
    throw Error(message);
  };
  while (!pending.empty()) {
    std::optional<transport::Message> m;
    try {
      m = transport::receive(-1, termination_requested);
    } catch (const Error& e) {
      abandon(e.what(), false);
    }
    if (!m) abandon("the launcher stopped the job (a rank died; its message names the rank)", true);
    const auto it = std::find(pending.begin(), pending.end(), m->source);
    if (it == pending.end()) {
      first_error = fmt::format("rank {} sent an unexpected message (tag {})", m->source, m->tag);
      continue;
    }
    pending.erase(it);
    try {
      if (m->tag == transport::kFailure) throw Error(m->bytes);
      const auto r = static_cast<std::size_t>(m->source);
      place(r, wire::decode_readings(m->bytes, pieces[r].size(), m->source));
    } catch (const std::exception& e) {
      if (first_error.empty()) first_error = fmt::format("rank {}: {}", m->source, e.what());
    }
  }
  if (termination_requested()) abandon("the launcher stopped the job", true);
  if (!first_error.empty())
    throw Error(fmt::format("measuring partition {}: {}", p.key, first_error));
  return out;
}

}  // namespace kareus::scaleout
