#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace kareus {

// The median of `values` (the mean of the middle two for an even count); NaN when empty.
inline double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  const auto mid = values.begin() + static_cast<long>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  if (values.size() % 2 == 1) return *mid;
  return 0.5 * (*mid + *std::max_element(values.begin(), mid));
}

}  // namespace kareus
