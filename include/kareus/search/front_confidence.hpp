// SPDX-License-Identifier: Apache-2.0
// How far measurement noise leaves a per-clock front undecided. With noise, whether one measured
// configuration dominates another is only known when their difference exceeds a few standard
// errors of the readings' means; the `kareus` strategy repeats a measurement only where such a
// decision on a per-clock (time, dynamic energy) front is still open, and reports the share of
// front points whose every decision is settled.
#pragma once

#include <cstddef>
#include <vector>

#include "kareus/search/hypervolume.hpp"

namespace kareus::search {

// The mean of a configuration's readings and how many there are.
struct SampledPoint {
  Point2 mean;
  std::size_t samples = 1;
};

// Relative noise (standard deviation / mean) of each objective, pooled over every configuration
// read more than once: sum of squared relative deviations from each one's mean over the degrees of
// freedom (readings - 1 per configuration). Zero when nothing was repeated or repeats agree.
// `readings[i]` are configuration i's readings.
Point2 pooled_relative_sigma(const std::vector<std::vector<Point2>>& readings);

// Standard errors by which q dominates p: the largest over both objectives of
// (q/p - 1) / (sigma x sqrt(1/n_q + 1/n_p)). Negative when q dominates p as measured; without
// noise in an objective its term is +infinity or -infinity by the sign of the difference (a tie
// does not dominate).
double dominance_margin(const SampledPoint& q, const SampledPoint& p, Point2 sigma);

// Decisions are open within this many standard errors.
constexpr double kDecidedMargin = 2.0;

// A front decision still open: front point `front` and point `other` of the same set, where q
// dominating p (either way) is within kDecidedMargin standard errors.
struct OpenDecision {
  std::size_t front = 0;
  std::size_t other = 0;
  double margin = 0.0;  // the smaller |dominance_margin| of the two directions
};

// Open decisions of the Pareto front of `points` (one clock's points), closest first.
std::vector<OpenDecision> open_decisions(const std::vector<SampledPoint>& points, Point2 sigma);

// A point of one of several sets (e.g. one set per clock).
struct SetIndex {
  std::size_t set = 0;
  std::size_t index = 0;
  bool operator==(const SetIndex&) const = default;
};

// Up to `count` points worth reading again, closest open decision of any set first: of each open
// decision's two points the one read fewer times (the front point on a tie), never one already
// read `max_samples` times, each point once.
std::vector<SetIndex> points_to_repeat(const std::vector<std::vector<SampledPoint>>& sets,
                                       Point2 sigma, std::size_t max_samples, std::size_t count);

// Share of front points (of every set in `sets`, e.g. one set per clock) with no open decision;
// 1 when there is no front point.
double front_confidence(const std::vector<std::vector<SampledPoint>>& sets, Point2 sigma);

}  // namespace kareus::search
