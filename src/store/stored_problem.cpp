// SPDX-License-Identifier: Apache-2.0
#include "kareus/store/stored_problem.hpp"

#include <fmt/format.h>

#include "kareus/core/error.hpp"

namespace kareus::store {
namespace {

// Repeat 0 is stored under the bare config key, as before repeats existed.
std::string sample_key(const std::string& config_key, std::size_t repeat) {
  return repeat == 0 ? config_key : fmt::format("{}#{}", config_key, repeat);
}

}  // namespace

StoredProblem::StoredProblem(search::Problem& inner, Store& store, Scope scope)
    : inner_(inner), store_(store), scope_(std::move(scope)) {}

std::vector<search::Measurement> StoredProblem::measure(const std::vector<std::size_t>& ids) {
  return measure_repeat(ids, 0);
}

std::vector<search::Measurement> StoredProblem::measure_repeat(const std::vector<std::size_t>& ids,
                                                               std::size_t repeat) {
  std::vector<search::Measurement> out(ids.size());
  std::vector<std::size_t> missing_ids;
  std::vector<std::size_t> missing_slots;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (auto stored = store_.lookup(scope_, sample_key(inner_.key(ids[i]), repeat))) {
      out[i] = *stored;
      ++reused_;
    } else {
      missing_ids.push_back(ids[i]);
      missing_slots.push_back(i);
    }
  }
  if (missing_ids.empty()) return out;
  const std::vector<search::Measurement> fresh = inner_.measure_repeat(missing_ids, repeat);
  if (fresh.size() != missing_ids.size()) {
    throw Error(fmt::format("measurement of partition {}: {} results for {} configs",
                            scope_.partition_key, fresh.size(), missing_ids.size()),
                ErrorKind::kInternal);
  }
  std::vector<Record> records;
  for (std::size_t j = 0; j < fresh.size(); ++j) {
    records.push_back({sample_key(inner_.key(missing_ids[j]), repeat), fresh[j]});
    out[missing_slots[j]] = fresh[j];
    out[missing_slots[j]].reused = false;
  }
  store_.put_batch(scope_, records);
  taken_ += fresh.size();
  return out;
}

}  // namespace kareus::store
