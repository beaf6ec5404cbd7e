// SPDX-License-Identifier: Apache-2.0
// Readings pooled across clocks (kareus/planner/pooled_readings.hpp), on synthetic shape-by-clock
// grids whose truth is known: untouched without noise, the additive fit's closed-form error under
// noise alone, readings kept where interactions dwarf the noise, and a lucky reading no longer
// reordering two shapes.
#include <gtest/gtest.h>

#include <cmath>

#include "kareus/core/rng.hpp"
#include "kareus/planner/pooled_readings.hpp"

namespace kareus::planner {
namespace {

constexpr std::size_t kShapes = 3;
constexpr std::size_t kClocks = 27;

// Truth on a full grid: shape effect + clock effect + interaction[shape][clock].
std::vector<LogReading> grid(Rng& rng, double interaction, double noise,
                             std::vector<double>& truth) {
  std::vector<LogReading> out;
  truth.clear();
  for (std::size_t s = 0; s < kShapes; ++s) {
    for (std::size_t c = 0; c < kClocks; ++c) {
      const double t = 0.1 * static_cast<double>(s) - 0.02 * static_cast<double>(c) +
                       (interaction > 0 ? rng.normal(0.0, interaction) : 0.0);
      truth.push_back(t);
      out.push_back({s, c, t + (noise > 0 ? rng.normal(0.0, noise) : 0.0), 1});
    }
  }
  return out;
}

double mean_square(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return sum / static_cast<double>(a.size());
}

TEST(PooledReadings, WithoutNoiseEveryReadingIsKept) {
  Rng rng(1);
  std::vector<double> truth;
  const auto readings = grid(rng, 0.05, 0.0, truth);
  const auto pooled = pooled_log_estimates(readings, 0.0);
  for (std::size_t i = 0; i < readings.size(); ++i) EXPECT_EQ(pooled[i], readings[i].value);
}

TEST(PooledReadings, UnderNoiseAloneTheErrorIsTheFitsClosedForm) {
  // Least squares on a full S x C additive design leaves sigma^2 (S + C - 1) / (S C) per cell.
  const double sigma = 0.03;
  Rng rng(2);
  double raw = 0.0, pooled = 0.0;
  const int trials = 200;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> truth;
    const auto readings = grid(rng, 0.0, sigma, truth);
    std::vector<double> values;
    for (const auto& r : readings) values.push_back(r.value);
    raw += mean_square(values, truth) / trials;
    pooled += mean_square(pooled_log_estimates(readings, sigma), truth) / trials;
  }
  const double expected = sigma * sigma * (kShapes + kClocks - 1) / (kShapes * kClocks);
  EXPECT_NEAR(raw, sigma * sigma, 0.1 * sigma * sigma);
  // tau^2 is estimated, so now and then a little of a residual is kept.
  EXPECT_NEAR(pooled, expected, 0.2 * expected);
}

TEST(PooledReadings, InteractionsFarAboveTheNoiseKeepTheReadings) {
  const double sigma = 0.001;
  Rng rng(3);
  std::vector<double> truth;
  const auto readings = grid(rng, 0.05, sigma, truth);
  const auto pooled = pooled_log_estimates(readings, sigma);
  for (std::size_t i = 0; i < readings.size(); ++i)
    EXPECT_NEAR(pooled[i], readings[i].value, 0.1 * sigma);
}

TEST(PooledReadings, ALuckyReadingNoLongerReordersTwoShapes) {
  // Shape 1 is truly 1 % slower than shape 0 at every clock; its reading at clock 5 came out
  // 3 % low (one standard deviation of 3 % noise), every other reading is exact.
  std::vector<LogReading> readings;
  for (std::size_t c = 0; c < kClocks; ++c) {
    const double base = -0.02 * static_cast<double>(c);
    readings.push_back({0, c, base, 1});
    readings.push_back({1, c, base + 0.01 - (c == 5 ? 0.03 : 0.0), 1});
  }
  EXPECT_LT(readings[11].value, readings[10].value);  // as read, shape 1 wins at clock 5
  const auto pooled = pooled_log_estimates(readings, 0.03);
  EXPECT_GT(pooled[11], pooled[10]);
}

// Two SM counts at three clocks, readings with some interaction.
store::PartitionSearchResult small_key() {
  const partition::ConfigSpace space("k", {MHz(1000), MHz(1100), MHz(1200)}, {1, 2}, {"norm_0"});
  store::PartitionSearchResult r{"k", space, {}, {}, {}, {}, 0};
  for (int c = 0; c < 3; ++c) {
    for (int sms = 1; sms <= 2; ++sms) {
      store::PartitionPoint p;
      p.config = {"norm_0", sms, MHz(1000.0 + 100 * c)};
      p.time = Seconds(1.0 + 0.1 * sms + 0.01 * c);
      p.dynamic_energy = Joules(2.0 + 0.3 * sms * c);
      p.total_energy = p.dynamic_energy + Joules(0.5);
      r.measured.push_back(p);
    }
  }
  return r;
}

TEST(PooledReadings, KeysWithoutEstimatedNoiseAreReturnedAsTheyAre) {
  const store::PartitionSearchResult r = small_key();
  KeyFrontiers keys{{"k", r}};
  const auto same = pooled_readings(keys).at("k").measured;
  for (std::size_t i = 0; i < same.size(); ++i) {
    EXPECT_EQ(same[i].time.value(), r.measured[i].time.value());
    EXPECT_EQ(same[i].dynamic_energy.value(), r.measured[i].dynamic_energy.value());
  }
  keys.at("k").summary.noise_time = 0.03;
  keys.at("k").summary.noise_energy = 0.03;
  keys.at("k").summary.repeats = 2;
  const auto pooled = pooled_readings(keys).at("k").measured;
  bool moved = false;
  for (std::size_t i = 0; i < pooled.size(); ++i) {
    moved = moved || pooled[i].time.value() != r.measured[i].time.value();
    // Static energy follows the pooled time.
    const Watts static_power =
        (r.measured[i].total_energy - r.measured[i].dynamic_energy) / r.measured[i].time;
    const Watts pooled_power = (pooled[i].total_energy - pooled[i].dynamic_energy) / pooled[i].time;
    EXPECT_NEAR(pooled_power.value(), static_power.value(), 1e-12);
  }
  EXPECT_TRUE(moved);
}

TEST(PooledReadings, TheNoiseIsEstimatedFromEveryKeysRepeats) {
  // Key "k" was never repeated; key "j" was and estimated the noise, which "k" is pooled with.
  KeyFrontiers keys{{"k", small_key()}, {"j", small_key()}};
  keys.at("j").summary.noise_time = 0.03;
  keys.at("j").summary.repeats = 2;
  const auto pooled = pooled_readings(keys);
  EXPECT_EQ(pooled.at("k").measured[1].time.value(), pooled.at("j").measured[1].time.value());
  EXPECT_NE(pooled.at("k").measured[1].time.value(), keys.at("k").measured[1].time.value());
  // Energy had no noise estimated anywhere: kept.
  EXPECT_EQ(pooled.at("k").measured[1].dynamic_energy.value(),
            keys.at("k").measured[1].dynamic_energy.value());
}

}  // namespace
}  // namespace kareus::planner
