// Internal: the loss shared by the closed-form fit and symbolic regression. Each scale group's
// positive multiplier is solved in closed form for the current model values (variable
// projection); at that optimum dL/ds = 0, so the gradient needs no ds/dparam term.
#pragma once

#include <Eigen/Dense>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "kareus/energylens/dataset.hpp"
#include "kareus/energylens/fit.hpp"

namespace kareus::energylens::detail {

struct ScaleGroups {
  std::vector<std::size_t> of_row;
  std::vector<std::string> names;
  // The rows laid out group after group, each group's in row order, so that the loss gathers
  // every group's values into one buffer: group g holds [start[g], start[g + 1]), and row i sits
  // at slot[i].
  std::vector<std::size_t> start;
  std::vector<std::size_t> slot;

  ScaleGroups(const std::vector<Sample>& rows, const std::vector<std::string>& scale_by)
      : ScaleGroups(rows, [&](const Sample& s) { return scale_group_key(s, scale_by); }) {}

  template <class Key>
  ScaleGroups(const std::vector<Sample>& rows, Key key) {
    std::map<std::string, std::size_t> index;
    for (const Sample& s : rows) {
      auto [it, inserted] = index.emplace(key(s), names.size());
      if (inserted) names.push_back(it->first);
      of_row.push_back(it->second);
    }
    start.assign(names.size() + 1, 0);
    for (std::size_t g : of_row) ++start[g + 1];
    for (std::size_t g = 0; g < names.size(); ++g) start[g + 1] += start[g];
    std::vector<std::size_t> next(start.begin(), start.end() - 1);
    for (std::size_t g : of_row) slot.push_back(next[g]++);
  }
};

// Partial pooling of the multipliers: each group's log multiplier m_g is the regression
// design_g . beta plus an effect, and the loss adds weight x sum_g (m_g - design_g . beta)^2 +
// ridge x weight / (1 + weight) x |beta without the intercept|^2 (the ridge in one-row groups'
// worth), in the rows' loss units. With the loss ~ the squared log
// error, weight = sigma^2 / tau^2 (row noise over group-effect variance) makes this the
// random-effects likelihood. The multipliers and beta are solved for every model value vector
// (still variable projection), so the gradient keeps its form.
struct Pooling {
  double weight = 0.0;     // 0: every group's multiplier is free
  Eigen::MatrixXd design;  // groups x coefficients, intercept first (standardised_design)
  double ridge = 0.0;
};

// f: model values per row; df (optional): row-major n x k derivatives of f; grad gets k values.
// huber_threshold (log units) is used by Loss::kHuber only; pooling (optional) with weight > 0
// pools the multipliers.
double scaled_loss(Loss loss, const std::vector<double>& f, const std::vector<double>& energy,
                   const ScaleGroups& groups, const std::vector<double>* df, std::size_t k,
                   std::vector<double>* grad, std::vector<double>* scales_out,
                   double huber_threshold = 0.0, const Pooling* pooling = nullptr);

// Huber's location estimate: the m minimising sum_i rho(m - d_i) with threshold `delta`.
double huber_location(std::span<const double> d, double delta);

}  // namespace kareus::energylens::detail
