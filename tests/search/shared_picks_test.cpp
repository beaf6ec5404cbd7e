// SPDX-License-Identifier: Apache-2.0
// The keys of a plan share the `kareus` strategy's model-guided picks (shared_picks.hpp).
#include "kareus/search/shared_picks.hpp"

#include <gtest/gtest.h>

#include <random>

#include "kareus/core/error.hpp"

namespace kareus::search {
namespace {

SharedPicks::Key key(std::size_t cap, std::size_t model, bool covers, int uses) {
  return {{cap, model, covers}, uses};
}

// A key used once gives its model share; a key that covers every clock and stops early returns
// what it left; the capped key used twice spends both, and the plan stays within its keys' caps.
TEST(SharedPicks, AnEarlyStoppingKeysLeftoverIsSpentByACappedKey) {
  SharedPicks shared({key(56, 0, false, 2), key(100, 0, true, 2), key(56, 8, false, 1)});
  EXPECT_EQ(shared.order(), (std::vector<std::size_t>{2, 1, 0}));
  EXPECT_EQ(shared.total(), 212u);
  EXPECT_EQ(shared.draw(2), 0u);  // the giver keeps no model-guided picks
  shared.record(2, 48);
  EXPECT_EQ(shared.draw(1), 0u);  // covers every clock: neither gives nor draws
  shared.record(1, 90);           // stopped 10 under its cap
  EXPECT_EQ(shared.pool(), 18u);
  EXPECT_EQ(shared.draw(0), 18u);  // the capped key takes the giver's 8 and the leftover 10
  shared.record(0, 74);
  EXPECT_EQ(48u + 90u + 74u, shared.total());
}

// Drawers split the pool by their caps; the last one takes what is left, so nothing is lost.
TEST(SharedPicks, DrawersSplitThePoolByTheirCaps) {
  SharedPicks shared(
      {key(42, 6, false, 1), key(56, 8, false, 1), key(112, 16, false, 2), key(56, 8, false, 2)});
  EXPECT_EQ(shared.order(), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(shared.pool(), 14u);
  shared.draw(0);
  shared.record(0, 36);
  shared.draw(1);
  shared.record(1, 48);
  EXPECT_EQ(shared.draw(2), 16u + 14u * 112u / 168u);
  shared.record(2, 112 + 9);
  EXPECT_EQ(shared.draw(3), 8u + 5u);
}

// Where every key is used as often (no recomputation), nothing is given.
TEST(SharedPicks, KeysUsedAsOftenKeepTheirShares) {
  SharedPicks shared({key(56, 8, false, 1), key(112, 16, false, 1)});
  EXPECT_EQ(shared.pool(), 0u);
  EXPECT_EQ(shared.draw(0), 8u);
  shared.record(0, 56);
  EXPECT_EQ(shared.draw(1), 16u);
}

// Whatever the keys and however much each spends of what it was allotted, the readings of the
// plan never exceed its keys' caps together.
TEST(SharedPicks, ThePlanNeverExceedsItsKeysCaps) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<SharedPicks::Key> keys;
    const std::size_t n = 1 + rng() % 12;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t cap = 1 + rng() % 120;
      // One draw per statement: the order of a call's arguments differs between compilers.
      const std::size_t model = rng() % (cap / 4 + 1);
      const bool covers = rng() % 3 == 0;
      const int uses = 1 + static_cast<int>(rng() % 2);
      keys.push_back(key(cap, model, covers, uses));
    }
    SharedPicks shared(keys);
    std::size_t spent = 0;
    for (std::size_t i : shared.order()) {
      const std::size_t allotted = keys[i].budget.cap - keys[i].budget.model + shared.draw(i);
      // A giver may take its share back (under noise).
      const std::size_t took = rng() % 4 == 0   ? allotted - rng() % (allotted + 1)
                               : rng() % 3 == 0 ? keys[i].budget.cap
                                                : allotted;
      spent += took;
      shared.record(i, took);
    }
    EXPECT_LE(spent, shared.total()) << "trial " << trial;
  }
}

// Under noise a giver takes its share back for its coverage, and the drawers get less.
TEST(SharedPicks, AGiverTakingItsShareBackLeavesItOutOfThePool) {
  SharedPicks shared({key(56, 8, false, 1), key(56, 8, false, 2)});
  EXPECT_EQ(shared.draw(0), 0u);
  shared.record(0, 56);
  EXPECT_EQ(shared.pool(), 0u);
  EXPECT_EQ(shared.draw(1), 8u);
  EXPECT_THROW(shared.record(1, 57), Error);  // over its allotment, with nothing in the pool
}

TEST(SharedPicks, EachKeyIsDrawnAndRecordedOnce) {
  SharedPicks shared({key(56, 8, false, 1)});
  EXPECT_THROW(shared.record(0, 1), Error);
  shared.draw(0);
  EXPECT_THROW(shared.draw(0), Error);
  shared.record(0, 1);
  EXPECT_THROW(shared.record(0, 1), Error);
}

}  // namespace
}  // namespace kareus::search
