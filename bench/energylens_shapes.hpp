// SPDX-License-Identifier: Apache-2.0
// bench_energylens --shapes: the fitted shape parameters over the evaluation's random 50-row
// splits, for the fit to all training rows and for the bag's resampled fits: their median, 10th to
// 90th percentile, and how often they sit on a fitting bound, i.e. how far the rows leave them to
// wander under the shape prior (docs/benchmarks/energylens.md).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "energylens_splits.hpp"
#include "kareus/core/statistics.hpp"
#include "kareus/core/table.hpp"
#include "kareus/energylens/evaluate.hpp"
#include "kareus/energylens/fit.hpp"

namespace shapes {

namespace el = kareus::energylens;

// The fits to all training rows of each split, and the bag's resampled fits.
struct Fits {
  std::vector<el::Params> full, members;
};

inline Fits fits_of(const el::Dataset& d, const el::EvaluateOptions& o) {
  Fits out;
  splits::for_each_random_split(d, o, [&](const el::EnergyModel& m, const auto&) {
    out.full.push_back(m.params);
    for (int b = 0; b + 1 < m.bags; ++b) out.members.push_back(m.replicates[b].params);
  });
  return out;
}

// One row per shape parameter: the offsets in log10, the others as fitted.
inline void add_rows(kareus::TextTable& table, const std::string& which,
                     const std::vector<el::Params>& fits) {
  for (const el::ShapePrior& s : el::shape_priors()) {
    const el::ParamInfo& info = el::parameter_info()[s.param];
    std::vector<double> v;
    int at_bound = 0;
    for (const el::Params& p : fits) {
      const double x = p[s.param];
      const double tol = 1e-3 * std::max(1.0, std::fabs(x));
      at_bound += x - info.lower <= tol || info.upper - x <= tol ? 1 : 0;
      v.push_back(s.log_scale ? std::log10(x) : x);
    }
    table.add_row(
        {which, fmt::format("{}{}", s.log_scale ? "log10 " : "", info.name),
         fmt::format("{:.2f}", kareus::quantile(v, 0.5)),
         fmt::format("{:.2f} .. {:.2f}", kareus::quantile(v, 0.1), kareus::quantile(v, 0.9)),
         fmt::format("{:.0f}", 100.0 * at_bound / static_cast<double>(fits.size()))});
  }
}

inline std::string table(const el::Dataset& d, const el::EvaluateOptions& o) {
  kareus::TextTable t({"fits", "parameter", "median", "10th .. 90th percentile", "at a bound %"});
  const Fits f = fits_of(d, o);
  add_rows(t, fmt::format("fit to all rows of {} splits", f.full.size()), f.full);
  add_rows(t, fmt::format("{} resampled fits of the bags", f.members.size()), f.members);
  return t.render_markdown();
}

}  // namespace shapes
