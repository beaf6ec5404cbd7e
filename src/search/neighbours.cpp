#include "neighbours.hpp"

#include <algorithm>
#include <cstdlib>

namespace kareus::search {

std::vector<std::vector<std::size_t>> raw_neighbours(const Problem& problem) {
  const std::size_t n = problem.size();
  std::vector<std::vector<double>> rows(n);
  for (std::size_t id = 0; id < n; ++id) rows[id] = problem.raw_features(id);
  const std::size_t columns = n == 0 ? 0 : rows.front().size();

  // Rank of each value among its column's distinct values, so "one step" is a rank difference of 1.
  std::vector<std::vector<long>> rank(n, std::vector<long>(columns));
  for (std::size_t c = 0; c < columns; ++c) {
    std::vector<double> values;
    for (const auto& row : rows) values.push_back(row[c]);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    for (std::size_t id = 0; id < n; ++id) {
      rank[id][c] = std::lower_bound(values.begin(), values.end(), rows[id][c]) - values.begin();
    }
  }
  std::vector<std::vector<std::size_t>> out(n);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = a + 1; b < n; ++b) {
      std::size_t differing = 0;
      bool adjacent = true;
      for (std::size_t c = 0; c < columns && adjacent && differing <= 2; ++c) {
        const long step = std::labs(rank[a][c] - rank[b][c]);
        if (step == 0) continue;
        ++differing;
        adjacent = step == 1;
      }
      if (adjacent && differing > 0 && differing <= 2) {
        out[a].push_back(b);
        out[b].push_back(a);
      }
    }
  }
  return out;
}

}  // namespace kareus::search
