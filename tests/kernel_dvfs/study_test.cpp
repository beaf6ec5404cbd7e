// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <set>

#include "kareus/core/error.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/kernel_dvfs/profile_csv.hpp"
#include "kareus/kernel_dvfs/study.hpp"

namespace kareus::kernel_dvfs {
namespace {

// Compute-bound kernels slow down as 1/f, memory-bound ones barely; power grows with the clock.
KernelSequence random_sequence(Rng& rng, std::size_t kernels) {
  KernelSequence seq;
  seq.source = "random";
  for (double f : {900.0, 1100.0, 1250.0, 1410.0}) seq.clocks.push_back(MHz(f));
  for (std::size_t k = 0; k < kernels; ++k) {
    KernelProfile kp{"k" + std::to_string(k),
                     k < kernels / 2 ? Direction::kForward : Direction::kBackward,
                     {},
                     {}};
    const double base = rng.uniform(0.05e-3, 4e-3);
    const double bound = rng.uniform(0, 1);
    for (MHz f : seq.clocks) {
      const double ratio = 1410.0 / f.value();
      const Seconds t(base * (bound * ratio + (1 - bound) * (1 + 0.05 * (ratio - 1))));
      const Watts p(60 + 250 * (0.3 + 0.7 * bound) * std::pow(f.value() / 1410.0, 2.2));
      kp.time.push_back(t);
      kp.energy.push_back(p * t);
    }
    seq.kernels.push_back(std::move(kp));
  }
  return seq;
}

TEST(Study, NeverExceedsTheSlowdownBoundAndIsMonotone) {
  Rng rng(21);
  for (int trial = 0; trial < 20; ++trial) {
    const auto seq = random_sequence(rng, 30);
    StudyOptions options;
    options.slowdowns = {0.05, 0.0, 0.006, 0.01, 0.02};
    options.ideal = trial % 2 == 0;
    options.switching = frontier::uniform_switch_cost(seq.clocks.size(),
                                                      microseconds(rng.uniform(0, 300)), Watts(80));
    options.time_bins = 500;
    const StudyResult result = run_study(seq, options);
    ASSERT_EQ(result.bounds.size(), options.slowdowns.size());
    for (const auto& b : result.bounds) {
      for (const Outcome* o : {&b.kernel_level, &b.pass_level}) {
        ASSERT_TRUE(o->feasible);
        EXPECT_LE(o->cost.time.value(), b.time_budget.value() * (1 + 1e-12));
        EXPECT_LE(o->slowdown, b.bound + 1e-9);
        EXPECT_GE(o->energy_saving, -1e-12);  // the max clock itself is always within the bound
      }
      if (b.kernel_ideal) {
        EXPECT_GE(b.kernel_ideal->energy_saving, b.kernel_level.energy_saving - 1e-12);
      }
      for (const auto& looser : result.bounds) {
        if (looser.bound < b.bound) continue;
        EXPECT_GE(looser.kernel_level.energy_saving, b.kernel_level.energy_saving - 1e-12);
        EXPECT_GE(looser.pass_level.energy_saving, b.pass_level.energy_saving - 1e-12);
      }
    }
  }
}

TEST(Study, PassLevelUsesOneClockPerPass) {
  Rng rng(4);
  const auto seq = random_sequence(rng, 16);
  StudyOptions options;
  options.ideal = true;
  options.slowdowns = {0.03};
  const auto result = run_study(seq, options);
  std::set<std::size_t> forward, backward;
  const auto& clocks = result.bounds[0].pass_level.kernel_clock;
  for (std::size_t k = 0; k < seq.kernels.size(); ++k)
    (seq.kernels[k].pass == Direction::kForward ? forward : backward).insert(clocks[k]);
  EXPECT_EQ(forward.size(), 1u);
  EXPECT_EQ(backward.size(), 1u);
  EXPECT_GE(result.bounds[0].kernel_level.energy_saving,
            result.bounds[0].pass_level.energy_saving - 1e-12);
}

TEST(Study, LongSwitchLatencyLeavesOneClock) {
  Rng rng(8);
  const auto seq = random_sequence(rng, 20);
  StudyOptions options;
  options.slowdowns = {0.01};
  options.switching = frontier::uniform_switch_cost(seq.clocks.size(), milliseconds(25), Watts(80));
  const auto result = run_study(seq, options);
  EXPECT_EQ(result.bounds[0].kernel_level.cost.switches, 0u);
  ASSERT_TRUE(result.bounds[0].kernel_ideal);
  EXPECT_GT(result.bounds[0].kernel_ideal->cost.switches, 0u);
}

TEST(Study, MinimumDwellGroupsKernelsIntoPhases) {
  Rng rng(2);
  const auto seq = random_sequence(rng, 24);
  const Seconds dwell = milliseconds(5);
  const auto phases = dwell_phases(seq, dwell);
  ASSERT_LT(phases.size(), seq.kernels.size());
  EXPECT_EQ(phases.front().first, 0u);
  EXPECT_EQ(phases.back().end, seq.kernels.size());
  for (std::size_t p = 0; p < phases.size(); ++p) {
    if (p > 0) {
      EXPECT_EQ(phases[p].first, phases[p - 1].end);
    }
    Seconds t{0};
    for (std::size_t k = phases[p].first; k < phases[p].end; ++k)
      t += seq.kernels[k].time[seq.max_clock()];
    if (phases.size() > 1) {
      EXPECT_GE(t, dwell);
    }
  }
  StudyOptions options;
  options.ideal = true;
  options.min_dwell = dwell;
  options.slowdowns = {0.02};
  const auto result = run_study(seq, options);
  EXPECT_EQ(result.bounds[0].phases, phases.size());
  EXPECT_LE(result.bounds[0].kernel_level.cost.switches, phases.size() - 1);
}

TEST(Study, GovernorBaselineNeedsAPowerLimit) {
  Rng rng(6);
  const auto seq = random_sequence(rng, 8);
  StudyOptions options;
  options.reference = Reference::kGovernor;
  EXPECT_THROW(run_study(seq, options), Error);
  options.power_limit = Watts(150);
  const auto result = run_study(seq, options);
  ASSERT_TRUE(result.governor);
  for (std::size_t k = 0; k < seq.kernels.size(); ++k) {
    const std::size_t c = result.governor->kernel_clock[k];
    const auto& kernel = seq.kernels[k];
    if (c > 0) {
      EXPECT_LE((kernel.energy[c] / kernel.time[c]).value(), 150.0);
    }
    if (c < seq.max_clock()) {
      EXPECT_GT((kernel.energy[c + 1] / kernel.time[c + 1]).value(), 150.0);
    }
  }
  EXPECT_EQ(result.reference_time, result.governor->cost.time);
}

TEST(Study, JsonHasTheFirstBoundAtTheTop) {
  const auto seq =
      load_profile_csv(KAREUS_TEST_DATA_DIR "/kernel_dvfs/small_profile.csv", std::nullopt);
  StudyOptions options;
  options.ideal = true;
  options.slowdowns = {0.006, 0.05};
  const auto result = run_study(seq, options);
  const Json doc = study_json(seq, options, result, true);
  EXPECT_EQ(doc["energy_saving"], doc["results"][0]["energy_saving"]);
  EXPECT_EQ(doc["baselines"]["pass_level"]["energy_saving"],
            doc["results"][0]["baselines"]["pass_level"]["energy_saving"]);
  EXPECT_EQ(doc["results"].size(), 2u);
  EXPECT_EQ(doc["results"][1]["plan"].size(), seq.kernels.size());
  EXPECT_GT(doc["results"][1]["energy_saving"].get<double>(), 0.0);
}

TEST(Study, RejectsNegativeSlowdown) {
  Rng rng(1);
  StudyOptions options;
  options.slowdowns = {-0.01};
  EXPECT_THROW(run_study(random_sequence(rng, 4), options), Error);
}

}  // namespace
}  // namespace kareus::kernel_dvfs
