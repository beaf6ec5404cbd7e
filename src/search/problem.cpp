// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/problem.hpp"

#include "kareus/core/error.hpp"

namespace kareus::search {

SizeClass size_class_of(std::size_t compute_ops) {
  if (compute_ops == 0) {
    throw Error::invalid("partition", "compute_ops", "0",
                         "a partition has at least one compute op");
  }
  if (compute_ops == 1) return SizeClass::kSmall;
  if (compute_ops <= 3) return SizeClass::kMedium;
  return SizeClass::kLarge;
}

const char* to_string(SizeClass size_class) {
  switch (size_class) {
    case SizeClass::kSmall:
      return "small";
    case SizeClass::kMedium:
      return "medium";
    case SizeClass::kLarge:
      return "large";
  }
  return "?";
}

std::vector<double> Problem::physical_features(std::size_t) const {
  return {};
}

std::vector<Measurement> Problem::measure_repeat(const std::vector<std::size_t>& ids, std::size_t) {
  return measure(ids);
}

}  // namespace kareus::search
