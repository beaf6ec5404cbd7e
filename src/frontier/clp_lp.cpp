#include "clp_lp.hpp"

#include <CoinPackedMatrix.hpp>

namespace kareus::frontier {

void ClpLp::load(const std::vector<int>& rows, const std::vector<int>& columns,
                 const std::vector<double>& values, const std::vector<double>& column_lower,
                 const std::vector<double>& column_upper, const std::vector<double>& objective,
                 const std::vector<double>& row_lower, const std::vector<double>& row_upper) {
  solver.messageHandler()->setLogLevel(0);
  solver.getModelPtr()->setLogLevel(0);
  const CoinPackedMatrix matrix(false, rows.data(), columns.data(), values.data(),
                                static_cast<CoinBigIndex>(values.size()));
  solver.loadProblem(matrix, column_lower.data(), column_upper.data(), objective.data(),
                     row_lower.data(), row_upper.data());
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
