// SPDX-License-Identifier: Apache-2.0
// Pieces of the multi-pass acquisition: min-max normalisation of the objectives with the
// artifact's reference point, hypervolume-improvement scores of predicted points, and the
// pass-by-pass batch selection.
#pragma once

#include <string>
#include <vector>

#include "kareus/search/hypervolume.hpp"

namespace kareus::search {

// Maps raw (time, energy) onto [0, 1] by the observed minima and maxima; the reference point is
// 1.1 x the observed maxima in raw units, normalised the same way.
class Normaliser2 {
 public:
  explicit Normaliser2(const std::vector<Point2>& observed);
  Point2 operator()(Point2 raw) const;
  std::vector<Point2> operator()(const std::vector<Point2>& raw) const;
  Point2 reference() const { return (*this)(raw_reference_); }

 private:
  Point2 min_;
  Point2 span_;
  Point2 raw_reference_;
};

// HV(observed + p) - HV(observed) for every predicted point p, all in normalised coordinates.
std::vector<double> hypervolume_improvements(const std::vector<Point2>& observed,
                                             const std::vector<Point2>& predicted);

struct CandidateScores {
  std::vector<double> hvi_total;
  std::vector<double> hvi_dynamic;
  std::vector<double> predicted_time;
  std::vector<double> uncertainty;
};

// How many of a batch of k each pass picks: round(0.4k) by total-energy HVI, round(0.2k) by
// dynamic-energy HVI, round(0.2k) fastest predicted, the rest by uncertainty (Appendix C).
struct PassQuota {
  std::size_t hvi_total = 0;
  std::size_t hvi_dynamic = 0;
  std::size_t fastest = 0;
  std::size_t uncertainty = 0;
};
PassQuota paper_quota(std::size_t k);

struct Pick {
  std::size_t candidate = 0;  // index into the score vectors
  std::string pass;           // "hvi_total", "hvi_dynamic", "fastest", "uncertainty" or "fill"
};

// Runs the passes in order, each excluding what earlier passes picked. The HVI passes take only
// candidates with a positive improvement; what they leave unfilled goes to the best
// max(HVI_dynamic, HVI_total) among the rest ("fill"). Ties go to the lower index.
std::vector<Pick> select_multi_pass(const CandidateScores& scores, const PassQuota& quota);

}  // namespace kareus::search
