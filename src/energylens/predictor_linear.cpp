// SPDX-License-Identifier: Apache-2.0
#include <Eigen/Dense>
#include <cmath>
#include <map>

#include "baseline_features.hpp"
#include "kareus/energylens/predictors.hpp"

namespace kareus::energylens {
namespace {

class PerBatchLinear final : public Predictor {
 public:
  explicit PerBatchLinear(std::vector<std::string> scale_by) : scale_by_(std::move(scale_by)) {}
  std::string name() const override { return "linear"; }

  void fit(const std::vector<Sample>& train) override {
    groups_.clear();
    for (const Sample& s : train) groups_.emplace(scale_group_key(s, scale_by_), groups_.size());
    columns_ = BaselineColumns::of(train);
    std::map<double, std::vector<const Sample*>> by_batch;
    for (const Sample& s : train) by_batch[s.batch].push_back(&s);
    weights_.clear();
    for (const auto& [batch, rows] : by_batch) {
      Eigen::MatrixXd A(static_cast<Eigen::Index>(rows.size()), columns());
      Eigen::VectorXd y(static_cast<Eigen::Index>(rows.size()));
      for (std::size_t i = 0; i < rows.size(); ++i) {
        A.row(static_cast<Eigen::Index>(i)) = row(*rows[i]).transpose();
        y(static_cast<Eigen::Index>(i)) = std::log(rows[i]->energy->value());
      }
      // Ridge keeps the fit defined when a batch size has fewer rows than features.
      const double lambda = 1e-3;
      const Eigen::MatrixXd AtA =
          A.transpose() * A + lambda * Eigen::MatrixXd::Identity(columns(), columns());
      weights_[std::log(batch)] = AtA.ldlt().solve(A.transpose() * y);
    }
  }

  std::vector<double> predict(const std::vector<Sample>& rows) const override {
    std::vector<double> out;
    for (const Sample& s : rows) {
      const double lb = std::log(s.batch);
      auto it = weights_.lower_bound(lb);
      if (it == weights_.end() ||
          (it != weights_.begin() && lb - std::prev(it)->first < it->first - lb))
        it = std::prev(it);
      out.push_back(std::exp(row(s).dot(it->second)));
    }
    return out;
  }

 private:
  // Intercept, log TP, PP, output and input tokens; log cap and requests with the drain; one
  // indicator per workload and per scale group seen in training.
  Eigen::Index drain_columns() const { return columns_.drain ? 2 : 0; }
  Eigen::Index first_workload() const { return 5 + drain_columns(); }
  Eigen::Index first_group() const {
    return first_workload() + static_cast<Eigen::Index>(columns_.workloads.size());
  }
  Eigen::Index columns() const { return first_group() + static_cast<Eigen::Index>(groups_.size()); }

  Eigen::VectorXd row(const Sample& s) const {
    Eigen::VectorXd r = Eigen::VectorXd::Zero(columns());
    r(0) = 1.0;
    r(1) = std::log(s.tp);
    r(2) = std::log(s.pp);
    r(3) = std::log(s.output_tokens);
    r(4) = std::log(s.input_tokens.value_or(1.0));
    if (columns_.drain) {
      // A row without the columns is read as one wave capped at its own output: no drain, as
      // the closed form reads it.
      r(5) = std::log(s.max_output_tokens.value_or(s.output_tokens));
      r(6) = std::log(s.requests.value_or(s.batch * s.dp));
    }
    if (const auto w = columns_.workloads.find(s.workload); w != columns_.workloads.end())
      r(first_workload() + static_cast<Eigen::Index>(w->second)) = 1.0;
    const auto g = groups_.find(scale_group_key(s, scale_by_));
    if (g != groups_.end()) r(first_group() + static_cast<Eigen::Index>(g->second)) = 1.0;
    return r;
  }

  std::vector<std::string> scale_by_;
  std::map<std::string, std::size_t> groups_;
  BaselineColumns columns_;
  std::map<double, Eigen::VectorXd> weights_;
};

}  // namespace

std::unique_ptr<Predictor> make_per_batch_linear(std::vector<std::string> scale_by) {
  return std::make_unique<PerBatchLinear>(std::move(scale_by));
}

}  // namespace kareus::energylens
