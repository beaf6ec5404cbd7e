// SPDX-License-Identifier: Apache-2.0
// Which candidate configurations to measure: a greedy D-optimal design on the fit's own parameters.
//
// The fit (fit.hpp) learns the closed form's free parameters and one log multiplier per scale
// group from the rows it is given. A row tells it the most about them where the prediction is most
// sensitive to them in a direction the rows already chosen do not cover. D-optimality makes that
// exact: it picks the rows whose Jacobian J (d log predicted energy / d parameters) maximises
// log det(J^T J), the volume of the parameters' confidence ellipsoid shrunk. The Jacobian is taken
// at a point no measurement enters (design_point), so the design never reads an energy: it can be
// run on configurations not yet measured.
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "kareus/energylens/closed_form.hpp"
#include "kareus/energylens/dataset.hpp"
#include "kareus/energylens/fit.hpp"

namespace kareus::energylens {

// How evaluate() chooses the training rows: at random, or by design_measurements from a pool.
enum class Design { kRandom, kDOptimal };
Design parse_design(std::string_view text);  // "random" or "d-optimal"
std::string_view design_name(Design design);

struct DesignPick {
  std::size_t row = 0;  // index into the candidates
  double gain = 0.0;    // increase of log det(ridge I + J^T J) the pick brought, nats
};

// The information matrix starts at this multiple of the identity. With no row chosen J^T J is
// singular and every row's gain infinite; the ridge is a prior precision that makes the first
// picks defined. The columns are log-energy changes per unit of a parameter (order 1), so 1e-4
// says each parameter is known only to +-100 of its units before any measurement: vague enough
// that once a direction has been measured the ridge changes its gains by about 1e-4 of a row's
// information, and large enough for Sherman-Morrison's downdates to keep 1e-12 of precision.
inline constexpr double kDesignRidge = 1e-4;

// The generic core: `budget` rows of `jacobian` (one row per candidate, one column per parameter)
// chosen greedily, each the one that raises log det(ridge I + J_S^T J_S) most: by the matrix
// determinant lemma row j adds log(1 + j^T M^-1 j), and M^-1 follows by Sherman-Morrison. Ties go
// to the lowest row index. Every row at most once; budget must be at most the row count.
// `on_pick` (optional) hears the number of rows picked so far, for progress.
using PickCallback = std::function<void(std::size_t)>;
std::vector<DesignPick> greedy_d_optimal(const Eigen::MatrixXd& jacobian, std::size_t budget,
                                         double ridge = kDesignRidge,
                                         const PickCallback& on_pick = {});
// The same from the prior precision diag(`precision`), one per column, in place of ridge I.
std::vector<DesignPick> greedy_d_optimal(const Eigen::MatrixXd& jacobian, std::size_t budget,
                                         const Eigen::VectorXd& precision,
                                         const PickCallback& on_pick = {});

// The label-free point the Jacobian is taken at: the shape parameters at the shape prior's centre
// (fit.hpp, ShapePrior), tau_r at the fit's start, and each free linear
// coefficient such that its term is 1 at the candidates' geometric mean (every term an equal share
// of a typical row): the energies are not read.
Params design_point(const std::vector<Features>& x, const std::vector<std::size_t>& free);

// d log(predicted energy) / d parameter for each candidate at design_point: the fit's free
// parameters (free_parameters(), the linear ones and the positive offsets and tau_r by their
// logarithm), then one column per scale group (its log multiplier).
// The candidates' energy, time and power are not read.
Eigen::MatrixXd design_jacobian(const std::vector<Sample>& candidates, const FitOptions& fit);

// The `budget` candidates to measure, in pick order. budget 0 or above the candidate count is an
// Error; with fit.descriptors, so is a candidate whose model or GPU the catalogues do not know.
// `group_precision` replaces the ridge on the group multipliers' columns: the precision of a
// prior on their logarithms in rows' worth (the ridge: free, as the fit leaves them; larger: known
// from the scale term, so that covering a new group is worth less than a second row in one).
std::vector<DesignPick> design_measurements(const std::vector<Sample>& candidates,
                                            std::size_t budget, const FitOptions& fit,
                                            const PickCallback& on_pick = {},
                                            double group_precision = kDesignRidge);

}  // namespace kareus::energylens
