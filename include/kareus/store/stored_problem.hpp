// SPDX-License-Identifier: Apache-2.0
// A Problem that answers from the measurement store and measures only what is missing.
// The search sees the same values in the same order whether they come from the store or from a
// fresh measurement, so a resumed search makes the same decisions as an uninterrupted one.
#pragma once

#include "kareus/search/problem.hpp"
#include "kareus/store/store.hpp"

namespace kareus::store {

class StoredProblem : public search::Problem {
 public:
  StoredProblem(search::Problem& inner, Store& store, Scope scope);

  std::size_t size() const override { return inner_.size(); }
  std::string key(std::size_t id) const override { return inner_.key(id); }
  std::vector<double> raw_features(std::size_t id) const override {
    return inner_.raw_features(id);
  }
  std::vector<double> physical_features(std::size_t id) const override {
    return inner_.physical_features(id);
  }
  Watts static_power() const override { return inner_.static_power(); }
  std::size_t compute_ops() const override { return inner_.compute_ops(); }
  // Stored configs come back marked reused; the missing ones are measured by the inner problem
  // as one batch and stored in one transaction before this returns.
  std::vector<search::Measurement> measure(const std::vector<std::size_t>& ids) override;
  // The same for a repeat; its readings are stored under the config key plus "#repeat", so a
  // resumed search reads each sample back in place.
  std::vector<search::Measurement> measure_repeat(const std::vector<std::size_t>& ids,
                                                  std::size_t repeat) override;

  std::size_t reused() const { return reused_; }
  std::size_t taken() const { return taken_; }

 private:
  search::Problem& inner_;
  Store& store_;
  Scope scope_;
  std::size_t reused_ = 0;
  std::size_t taken_ = 0;
};

}  // namespace kareus::store
