// SPDX-License-Identifier: Apache-2.0
// A CLP linear program loaded once and then re-solved from its previous basis as bounds change:
// what DeadlineModel and FastEndLp each keep across deadlines.
#pragma once

#include <OsiClpSolverInterface.hpp>

#include <vector>

namespace kareus::frontier {

struct ClpLp {
  OsiClpSolverInterface solver;
  bool solved_once = false;

  // Coefficients as (row, column, value) triplets, packed in one go: appending row by row to a
  // CoinPackedMatrix reallocates it each time (quadratic; 40 s at 8,000 instructions).
  void load(const std::vector<int>& rows, const std::vector<int>& columns,
            const std::vector<double>& values, const std::vector<double>& column_lower,
            const std::vector<double>& column_upper, const std::vector<double>& objective,
            const std::vector<double>& row_lower, const std::vector<double>& row_upper);
  // For a caller whose results do not depend on which optimal vertex CLP returns (FastEndLp's
  // earliest optimal times): the first solve by CLP's interior point method, crossed over to an
  // optimal basis that the warm-started resolves start from, instead of dual simplex from the
  // slack basis, and the resolves' dual simplex pricing rows by Dantzig's rule instead of
  // steepest edge. Both take fewer pivots and end at other vertices. Call after load().
  void any_optimal_vertex_will_do();
  // The first solve from scratch, later ones warm-started; true when optimal.
  bool solve();
};

}  // namespace kareus::frontier
