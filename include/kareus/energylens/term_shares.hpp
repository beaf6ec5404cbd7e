// SPDX-License-Identifier: Apache-2.0
// Which terms of the closed form carry a fit's energy on a set of rows, and so which of its shape
// parameters those rows pin down: a term fitted to next to nothing leaves its exponents and
// offset free, and their values (and bootstrap intervals) then mean nothing.
#pragma once

#include <array>
#include <vector>

#include "kareus/energylens/fit.hpp"

namespace kareus::energylens {

// A term carrying less than this share of every row's energy moves the loss by orders of
// magnitude less than the rows' noise (log sd about 0.1 on the shipped datasets), so nothing in
// the rows constrains the parameters that only shape it.
inline constexpr double kMinIdentifiedShare = 1e-3;

struct TermShares {
  // Each linear parameter's term over the row's closed-form value, averaged over the rows; 0 for
  // the shape parameters.
  Params mean_share{};
  // Whether the rows constrain the parameter: a linear one always; a shape parameter when a term
  // it shapes carries at least kMinIdentifiedShare of some row's energy; tau_r when some row was
  // metered from its run's start.
  std::array<bool, kParams> identified{};
};

TermShares term_shares(const EnergyModel& model, const std::vector<Sample>& rows);

}  // namespace kareus::energylens
