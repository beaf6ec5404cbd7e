// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/acquisition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kareus::search {

Normaliser2::Normaliser2(const std::vector<Point2>& observed) {
  const double inf = std::numeric_limits<double>::infinity();
  Point2 lo{inf, inf};
  Point2 hi{-inf, -inf};
  for (const Point2& p : observed) {
    lo = {std::min(lo.x, p.x), std::min(lo.y, p.y)};
    hi = {std::max(hi.x, p.x), std::max(hi.y, p.y)};
  }
  if (observed.empty()) lo = hi = {0.0, 0.0};
  min_ = lo;
  // A constant objective keeps unit scale, so normalisation never divides by zero.
  span_ = {hi.x > lo.x ? hi.x - lo.x : 1.0, hi.y > lo.y ? hi.y - lo.y : 1.0};
  raw_reference_ = {1.1 * hi.x, 1.1 * hi.y};
}

Point2 Normaliser2::operator()(Point2 raw) const {
  return {(raw.x - min_.x) / span_.x, (raw.y - min_.y) / span_.y};
}

std::vector<Point2> Normaliser2::operator()(const std::vector<Point2>& raw) const {
  std::vector<Point2> out;
  out.reserve(raw.size());
  for (const Point2& p : raw) out.push_back((*this)(p));
  return out;
}

std::vector<double> hypervolume_improvements(const std::vector<Point2>& observed,
                                             const std::vector<Point2>& predicted) {
  const Normaliser2 normalise(observed);
  const Front2 front(normalise(observed), normalise.reference());
  std::vector<double> out;
  out.reserve(predicted.size());
  for (const Point2& p : predicted) out.push_back(front.improvement(normalise(p)));
  return out;
}

PassQuota paper_quota(std::size_t k) {
  const auto share = [k](double fraction) {
    return static_cast<std::size_t>(std::lround(fraction * static_cast<double>(k)));
  };
  PassQuota q{share(0.4), share(0.2), share(0.2), 0};
  q.uncertainty = k - std::min(k, q.hvi_total + q.hvi_dynamic + q.fastest);
  return q;
}

namespace {

// Appends up to `count` of the not-yet-taken candidates, best `score` first (higher is better),
// skipping those `eligible` rejects.
template <class Score, class Eligible>
void run_pass(std::size_t count, const char* pass, std::size_t n, Score score, Eligible eligible,
              std::vector<bool>& taken, std::vector<Pick>& picks) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return score(a) > score(b); });
  std::size_t added = 0;
  for (std::size_t i : order) {
    if (added == count) break;
    if (taken[i] || !eligible(i)) continue;
    taken[i] = true;
    picks.push_back({i, pass});
    ++added;
  }
}

}  // namespace

std::vector<Pick> select_multi_pass(const CandidateScores& s, const PassQuota& quota) {
  const std::size_t n = s.hvi_total.size();
  std::vector<bool> taken(n, false);
  std::vector<Pick> picks;
  const auto any = [](std::size_t) { return true; };
  run_pass(
      quota.hvi_total, "hvi_total", n, [&](std::size_t i) { return s.hvi_total[i]; },
      [&](std::size_t i) { return s.hvi_total[i] > 0.0; }, taken, picks);
  run_pass(
      quota.hvi_dynamic, "hvi_dynamic", n, [&](std::size_t i) { return s.hvi_dynamic[i]; },
      [&](std::size_t i) { return s.hvi_dynamic[i] > 0.0; }, taken, picks);
  run_pass(
      quota.fastest, "fastest", n, [&](std::size_t i) { return -s.predicted_time[i]; }, any, taken,
      picks);
  run_pass(
      quota.uncertainty, "uncertainty", n, [&](std::size_t i) { return s.uncertainty[i]; }, any,
      taken, picks);
  const std::size_t k = quota.hvi_total + quota.hvi_dynamic + quota.fastest + quota.uncertainty;
  run_pass(
      k - picks.size(), "fill", n,
      [&](std::size_t i) { return std::max(s.hvi_total[i], s.hvi_dynamic[i]); }, any, taken, picks);
  return picks;
}

}  // namespace kareus::search
