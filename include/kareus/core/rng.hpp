// SPDX-License-Identifier: Apache-2.0
// Deterministic random numbers from an explicit seed. Every random choice in Kareus comes from an
// Rng built from a seed in some options struct; there is no global generator.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace kareus {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(engine_); }
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(engine_);
  }
  double normal(double mean, double stddev) {
    return std::normal_distribution<double>(mean, stddev)(engine_);
  }
  // Uniform integer in [lo, hi].
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(engine_);
  }
  // k distinct indices from [0, n) in random order (k is clamped to n).
  std::vector<std::size_t> sample_without_replacement(std::size_t n, std::size_t k);
  // A seed for a child generator, so that sub-tasks get independent, reproducible streams.
  std::uint64_t fork_seed() { return engine_(); }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace kareus
