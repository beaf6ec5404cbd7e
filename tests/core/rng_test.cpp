// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <set>

#include "kareus/core/rng.hpp"

namespace kareus {
namespace {

TEST(Rng, SameSeedSameStream) {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.uniform(), b.uniform());
  EXPECT_NE(Rng(42).uniform(), c.uniform());
}

TEST(Rng, SampleWithoutReplacementIsDistinct) {
  Rng r(1);
  auto s = r.sample_without_replacement(50, 20);
  EXPECT_EQ(s.size(), 20u);
  EXPECT_EQ(std::set<std::size_t>(s.begin(), s.end()).size(), 20u);
  for (auto i : s) EXPECT_LT(i, 50u);
  EXPECT_EQ(r.sample_without_replacement(5, 9).size(), 5u);
}

}  // namespace
}  // namespace kareus
