// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/hypervolume.hpp"

#include <algorithm>
#include <numeric>

namespace kareus::search {

std::vector<std::size_t> pareto_indices(const std::vector<Point2>& points) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].x != points[b].x) return points[a].x < points[b].x;
    return points[a].y < points[b].y;
  });
  std::vector<std::size_t> front;
  for (std::size_t i : order) {
    if (front.empty() || points[i].y < points[front.back()].y) front.push_back(i);
  }
  return front;
}

double hypervolume_2d(const std::vector<Point2>& points, Point2 reference) {
  return Front2(points, reference).hypervolume();
}

Front2::Front2(const std::vector<Point2>& points, Point2 reference) : reference_(reference) {
  std::vector<Point2> inside;
  for (const Point2& p : points) {
    if (p.x < reference.x && p.y < reference.y) inside.push_back(p);
  }
  for (std::size_t i : pareto_indices(inside)) front_.push_back(inside[i]);
  double previous_y = reference.y;
  for (const Point2& p : front_) {
    hypervolume_ += (reference.x - p.x) * (previous_y - p.y);
    previous_y = p.y;
  }
}

double Front2::improvement(Point2 p) const {
  if (p.x >= reference_.x || p.y >= reference_.y) return 0.0;
  // The new point dominates the box [p, reference] minus what the front already covers there.
  // Walking the front (x increasing, y decreasing), the covered part of that box is a staircase.
  double covered = 0.0;
  double previous_y = reference_.y;
  for (const Point2& q : front_) {
    const double y_low = std::max(q.y, p.y);
    covered += (reference_.x - std::max(q.x, p.x)) * (previous_y - y_low);
    previous_y = y_low;
    if (q.y <= p.y) break;
  }
  return (reference_.x - p.x) * (reference_.y - p.y) - covered;
}

}  // namespace kareus::search
