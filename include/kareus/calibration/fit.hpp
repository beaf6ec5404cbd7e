// SPDX-License-Identifier: Apache-2.0
// Fits a GPU file's free constants (free_constants.hpp) to measurements with Ceres, a nonlinear
// least-squares solver, on log(predicted / measured) of every time and energy, each constant kept
// inside its physical bounds. Before fitting, the measurements' sensitivity to each constant is
// read from finite differences: a constant they do not move, move only together with another, or
// that the linearised measurements determine less well than FitOptions::max_relative_sd, is not
// identified and keeps its value. After fitting, each constant's uncertainty comes from the
// residual variance and the Jacobian; one that stays uncertain is not identified either.
// Predictions that a search makes (a planned frontier) are fitted with the search's choices fixed
// and searched again at the fitted constants, until the constants settle.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "kareus/calibration/free_constants.hpp"
#include "kareus/calibration/measurements.hpp"
#include "kareus/hardware/gpu_file.hpp"

namespace kareus::calibration {

struct FitOptions {
  // Identified: the standard deviation is at most this share of the value (or of its range, for
  // a value near zero).
  double max_relative_sd = 0.1;
  int folds = 5;  // cross-validation; at most one per group
  int max_iterations = 50;
  // Finite-difference step, as a share of each constant's range: wide enough to step over the
  // emulator's 15 MHz throttling steps, which make predictions piecewise constant in some
  // constants.
  double step = 0.01;
  // Where the predictions come from a search (Measurements::search_on): at most this many
  // searches per fit, each followed by a fit with the search's choices fixed, ...
  int max_rounds = 4;
  // ... until a fit moves no constant by more than this share of its range: half the
  // finite-difference step, below which the fit's derivatives do not resolve a move.
  double settled = 0.005;
  // Called with a line after each search and fit, for a user to follow a long calibration.
  std::function<void(const std::string&)> on_progress;
};

struct ConstantFit {
  std::string key;
  double catalogue = 0;
  double value = 0;  // fitted, or the catalogue's when not identified
  double sd = 0;     // standard deviation of the fitted value; 0 when not identified
  bool identified = false;
  std::string reason;  // why not identified, or where it ended
  Bounds bounds;
};

// Mean |predicted / measured - 1| over held-out times and energies.
struct HeldOutError {
  double time = 0;
  double energy = 0;
};

// One fold: the groups held out (Measurements::group_name) and their errors.
struct HeldOutFold {
  std::vector<std::string> held_out;
  HeldOutError calibrated;
  HeldOutError catalogue;
};

struct CrossValidation {
  int folds = 0;
  HeldOutError calibrated;
  HeldOutError catalogue;  // the same held-out spans on the file's own constants
  std::vector<HeldOutFold> per_fold;
};

struct Calibration {
  std::vector<ConstantFit> constants;  // every free constant of the file
  std::size_t residuals = 0;
  double rms_before = 0;  // root mean square of log(predicted / measured), all measurements
  double rms_after = 0;
  HeldOutError fit_error_before, fit_error_after;  // on everything fitted
  CrossValidation cv;
  std::string solver;  // Ceres's one-line report of the final fit

  // The base file with every identified constant replaced and its source saying how it was
  // fitted; a "calibration" object records the provenance. Its name is the base's with a digest
  // of the fitted values, so stored measurements of another calibration are never reused.
  GpuFile calibrated_file(const GpuFile& base, const Measurements& m) const;
};

// `m` is searched again (Measurements::search_on) as the fit goes; its last search is of no
// particular constants when this returns.
Calibration calibrate(const GpuFile& base, Measurements& m, const FitOptions& options = {});

}  // namespace kareus::calibration
