// SPDX-License-Identifier: Apache-2.0
// Internal: the loss shared by the closed-form fit and symbolic regression. Each scale group's
// positive multiplier is solved in closed form for the current model values (variable
// projection); at that optimum dL/ds = 0, so the gradient needs no ds/dparam term.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kareus/energylens/dataset.hpp"
#include "kareus/energylens/model.hpp"

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

// The mean squared relative error of f times each group's multiplier against `energy`. f: model
// values per row; df (optional): row-major n x k derivatives of f; grad gets k values.
double scaled_loss(const std::vector<double>& f, const std::vector<double>& energy,
                   const ScaleGroups& groups, const std::vector<double>* df, std::size_t k,
                   std::vector<double>* grad, std::vector<double>* scales_out);

}  // namespace kareus::energylens::detail
