// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/front_confidence.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kareus::search {
namespace {

double standard_errors(double q, double p, double sigma, double scale) {
  const double diff = q / p - 1.0;
  if (sigma > 0.0) return diff / (sigma * scale);
  return diff < 0.0 ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
}

std::vector<Point2> means(const std::vector<SampledPoint>& points) {
  std::vector<Point2> out;
  for (const SampledPoint& p : points) out.push_back(p.mean);
  return out;
}

}  // namespace

Point2 pooled_relative_sigma(const std::vector<std::vector<Point2>>& readings) {
  double sx = 0.0;
  double sy = 0.0;
  double dof = 0.0;
  for (const std::vector<Point2>& r : readings) {
    if (r.size() < 2) continue;
    Point2 mean;
    for (const Point2& p : r) mean = {mean.x + p.x, mean.y + p.y};
    mean = {mean.x / static_cast<double>(r.size()), mean.y / static_cast<double>(r.size())};
    for (const Point2& p : r) {
      sx += std::pow(p.x / mean.x - 1.0, 2);
      sy += std::pow(p.y / mean.y - 1.0, 2);
    }
    dof += static_cast<double>(r.size() - 1);
  }
  if (dof == 0.0) return {};
  return {std::sqrt(sx / dof), std::sqrt(sy / dof)};
}

double dominance_margin(const SampledPoint& q, const SampledPoint& p, Point2 sigma) {
  const double scale =
      std::sqrt(1.0 / static_cast<double>(q.samples) + 1.0 / static_cast<double>(p.samples));
  return std::max(standard_errors(q.mean.x, p.mean.x, sigma.x, scale),
                  standard_errors(q.mean.y, p.mean.y, sigma.y, scale));
}

std::vector<OpenDecision> open_decisions(const std::vector<SampledPoint>& points, Point2 sigma) {
  std::vector<OpenDecision> out;
  for (std::size_t f : pareto_indices(means(points))) {
    for (std::size_t o = 0; o < points.size(); ++o) {
      if (o == f) continue;
      const double margin = std::min(std::abs(dominance_margin(points[o], points[f], sigma)),
                                     std::abs(dominance_margin(points[f], points[o], sigma)));
      if (margin < kDecidedMargin) out.push_back({f, o, margin});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const OpenDecision& a, const OpenDecision& b) {
    return a.margin < b.margin;
  });
  return out;
}

std::vector<SetIndex> points_to_repeat(const std::vector<std::vector<SampledPoint>>& sets,
                                       Point2 sigma, std::size_t max_samples, std::size_t count) {
  std::vector<std::pair<double, SetIndex>> open;
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const std::vector<SampledPoint>& points = sets[s];
    for (const OpenDecision& d : open_decisions(points, sigma)) {
      const std::size_t i = points[d.other].samples < points[d.front].samples ? d.other : d.front;
      if (points[i].samples < max_samples) open.push_back({d.margin, {s, i}});
    }
  }
  std::stable_sort(open.begin(), open.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<SetIndex> out;
  for (const auto& [margin, point] : open) {
    if (out.size() == count) break;
    if (std::find(out.begin(), out.end(), point) == out.end()) out.push_back(point);
  }
  return out;
}

double front_confidence(const std::vector<std::vector<SampledPoint>>& sets, Point2 sigma) {
  std::size_t front = 0;
  std::size_t decided = 0;
  for (const std::vector<SampledPoint>& points : sets) {
    const std::vector<std::size_t> on_front = pareto_indices(means(points));
    std::vector<bool> open(points.size(), false);
    for (const OpenDecision& d : open_decisions(points, sigma)) open[d.front] = true;
    front += on_front.size();
    for (std::size_t f : on_front) decided += open[f] ? 0 : 1;
  }
  return front == 0 ? 1.0 : static_cast<double>(decided) / static_cast<double>(front);
}

}  // namespace kareus::search
