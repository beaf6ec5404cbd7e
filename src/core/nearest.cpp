// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/nearest.hpp"

#include <algorithm>
#include <numeric>

namespace kareus {
namespace {

std::string_view without_dashes(std::string_view s) {
  return s.substr(std::min(s.find_first_not_of('-'), s.size()));
}

}  // namespace

// Written here because none of the Debian libraries Kareus links offers it, and it is a dozen
// lines of the textbook recurrence.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  std::iota(d[0].begin(), d[0].end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::string nearest_name(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::string_view word = without_dashes(typed);
  const std::size_t allowed = std::max<std::size_t>(1, word.size() / 3);
  std::string best;
  std::size_t best_distance = allowed + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, without_dashes(c));
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace kareus
