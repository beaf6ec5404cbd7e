// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/rng.hpp"

#include <algorithm>
#include <numeric>

namespace kareus {

std::vector<std::size_t> Rng::sample_without_replacement(std::size_t n, std::size_t k) {
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  k = std::min(k, n);
  // Partial Fisher-Yates: only the first k positions need to be drawn.
  for (std::size_t i = 0; i < k; ++i) {
    const auto j = static_cast<std::size_t>(
        integer(static_cast<std::int64_t>(i), static_cast<std::int64_t>(n - 1)));
    std::swap(all[i], all[j]);
  }
  all.resize(k);
  return all;
}

}  // namespace kareus
