// Internal: the loss shared by the closed-form fit and symbolic regression. Each scale group's
// positive multiplier is solved in closed form for the current model values (variable
// projection); at that optimum dL/ds = 0, so the gradient needs no ds/dparam term.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kareus/energylens/dataset.hpp"
#include "kareus/energylens/fit.hpp"

namespace kareus::energylens::detail {

struct ScaleGroups {
  std::vector<std::size_t> of_row;
  std::vector<std::string> names;

  ScaleGroups(const std::vector<Sample>& rows, const std::vector<std::string>& scale_by) {
    std::map<std::string, std::size_t> index;
    for (const Sample& s : rows) {
      auto [it, inserted] = index.emplace(scale_group_key(s, scale_by), names.size());
      if (inserted) names.push_back(it->first);
      of_row.push_back(it->second);
    }
  }
};

// f: model values per row; df (optional): row-major n x k derivatives of f; grad gets k values.
// huber_threshold (log units) is used by Loss::kHuber only.
double scaled_loss(Loss loss, const std::vector<double>& f, const std::vector<double>& energy,
                   const ScaleGroups& groups, const std::vector<double>* df, std::size_t k,
                   std::vector<double>* grad, std::vector<double>* scales_out,
                   double huber_threshold = 0.0);

// Huber's location estimate: the m minimising sum_i rho(m - d_i) with threshold `delta`.
double huber_location(const std::vector<double>& d, double delta);

}  // namespace kareus::energylens::detail
