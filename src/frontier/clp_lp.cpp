// SPDX-License-Identifier: Apache-2.0
#include "clp_lp.hpp"

#include <ClpDualRowDantzig.hpp>
#include <ClpSolve.hpp>
#include <CoinPackedMatrix.hpp>

namespace kareus::frontier {

namespace {

// CLP's initial solve otherwise installs a SIGINT handler of its own and puts the previous one
// back afterwards, which is not thread-safe: two LPs solved side by side (kareus plan solves its
// methods in parallel) can leave CLP's handler installed for good, and then Ctrl-C stops nothing
// (Python never raises KeyboardInterrupt). Special option 2 = 1 is CLP's switch for threaded use;
// it changes no pivot. It also keeps the interior point method from registering its model for
// that handler in a static.
ClpSolve threaded_options() {
  ClpSolve options;
  options.setSpecialOption(2, 1);
  return options;
}

}  // namespace

void ClpLp::load(const std::vector<int>& rows, const std::vector<int>& columns,
                 const std::vector<double>& values, const std::vector<double>& column_lower,
                 const std::vector<double>& column_upper, const std::vector<double>& objective,
                 const std::vector<double>& row_lower, const std::vector<double>& row_upper) {
  solver.messageHandler()->setLogLevel(0);
  solver.getModelPtr()->setLogLevel(0);
  solver.setSolveOptions(threaded_options());
  const CoinPackedMatrix matrix(false, rows.data(), columns.data(), values.data(),
                                static_cast<CoinBigIndex>(values.size()));
  solver.loadProblem(matrix, column_lower.data(), column_upper.data(), objective.data(),
                     row_lower.data(), row_upper.data());
}

void ClpLp::any_optimal_vertex_will_do() {
  ClpSolve options = threaded_options();
  options.setSolveType(ClpSolve::useBarrier);  // with crossover: the resolves need a basis
  solver.setSolveOptions(options);
  // Each resolve starts its steepest-edge weights afresh, and takes a few dozen pivots.
  ClpDualRowDantzig dantzig;
  solver.getModelPtr()->setDualRowPivotAlgorithm(dantzig);
}

bool ClpLp::solve() {
  if (solved_once) {
    solver.resolve();
  } else {
    solver.initialSolve();
    solved_once = true;
  }
  return solver.isProvenOptimal();
}

}  // namespace kareus::frontier
