// SPDX-License-Identifier: Apache-2.0
// Symbolic regression by genetic programming over expression trees (+, -, *, /, pow, log,
// constants and the row's variables), to discover a closed form from measurements. Fitness is
// the mean squared relative error, with each scale group's multiplier solved in closed form (as
// in fit.hpp), plus a complexity penalty. The result is the loss-complexity Pareto front, each
// member's constants refitted with L-BFGS-B.
//
// Hand-written because none of the project's libraries does tree-based GP (Pagmo evolves
// fixed-length real vectors, not expression structures).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kareus/energylens/dataset.hpp"

namespace kareus::energylens {

// The row's configuration, and (with DiscoverOptions::descriptors) its model and GPU
// descriptors as in Sample::descriptors.
enum class Var : std::uint8_t {
  kTp,
  kPp,
  kBatch,
  kInputTokens,
  kOutputTokens,
  kParamsB,
  kActiveParamsB,
  kKvMbPerToken,
  kWPerGbps
};
std::string_view var_name(Var v);

struct ExprNode {
  enum class Op : std::uint8_t { kConstant, kVariable, kAdd, kSub, kMul, kDiv, kPow, kLog } op;
  double value = 0.0;  // for constant
  Var var = Var::kTp;  // for variable
};

// A tree in prefix order.
struct Expression {
  std::vector<ExprNode> nodes;
  std::size_t complexity() const { return nodes.size(); }
  // NaN where the expression is undefined (division by ~0, log or pow of a non-positive base).
  double evaluate(const Sample& s) const;
  std::string to_string() const;
};

struct DiscoverOptions {
  std::size_t population = 500;
  int generations = 100;
  int islands = 4;  // independent populations sharing one Pareto archive
  std::size_t max_complexity = 25;
  double parsimony = 1e-4;  // added to the loss per node when selecting parents
  std::uint64_t seed = 1;
  std::vector<std::string> scale_by;  // as FitOptions::scale_by
  // Search over the model and GPU descriptors too (needs every row's model and GPU in the
  // catalogues). Only useful with scale groups coarser than model and GPU (e.g. none), since a
  // group's multiplier absorbs anything constant within it.
  bool descriptors = false;
  bool progress = false;
};

struct FrontMember {
  Expression expression;
  double loss = 0.0;   // mean squared relative error with optimal group multipliers
  double scale = 1.0;  // geometric mean of the group multipliers, so E ~ scale * expr
  std::size_t complexity = 0;
};

// Whether the front recovers the hand-written closed form (recovery.hpp says how it is judged).
struct RecoveryVerdict {
  bool recovered = false;
  // RMS relative error (square root of the MSRE) with optimal group multipliers.
  double closed_form_rms = 0.0;
  double expression_rms = 0.0;
  // RMS relative difference between the two fits' predictions on the rows.
  double disagreement = 0.0;
  // Index into the front of the member compared: the simplest one that matches, else the
  // best-fitting one.
  std::size_t member = 0;
  std::string line;  // the one-line verdict
};

struct DiscoverResult {
  std::vector<FrontMember> front;  // increasing complexity, strictly decreasing loss
  std::vector<Var> variables;
  RecoveryVerdict recovery;
};

DiscoverResult discover(const Dataset& data, const DiscoverOptions& options);

// Loss of `e` on `rows` with the optimal multiplier per scale group; +inf where undefined.
double expression_loss(const Expression& e, const std::vector<Sample>& rows,
                       const std::vector<std::string>& scale_by, double* scale = nullptr);

}  // namespace kareus::energylens
