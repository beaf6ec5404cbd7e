// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/nearest.hpp"

#include <gtest/gtest.h>

namespace kareus {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("plan", "plan"), 0u);
  EXPECT_EQ(edit_distance("microbatchs", "microbatches"), 1u);  // an insertion
  EXPECT_EQ(edit_distance("plna", "plan"), 1u);                 // a swap of neighbours
  EXPECT_EQ(edit_distance("tp", "pp"), 1u);                     // a substitution
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);            // the textbook pair
  EXPECT_EQ(edit_distance("abc", ""), 3u);
}

TEST(NearestName, SuggestsOnlyASlipOfTheKeyboard) {
  const std::vector<std::string> flags{"--help", "--microbatches", "--mbs", "--tp", "--pp"};
  EXPECT_EQ(nearest_name("--microbatchs", flags), "--microbatches");
  EXPECT_EQ(nearest_name("-microbatches", flags), "--microbatches");
  EXPECT_EQ(nearest_name("--tpp", flags), "--tp");
  EXPECT_EQ(nearest_name("--zzzzzzzz", flags), "");
  // At most a third of the typed length (2 edits for "methods"): every flag here is further.
  EXPECT_EQ(nearest_name("--methods", flags), "");
  EXPECT_EQ(nearest_name("x", std::vector<std::string>{}), "");
}

TEST(NearestName, FirstOfEquallyNearWins) {
  EXPECT_EQ(nearest_name("--tq", {"--tp", "--tq2"}), "--tp");
  EXPECT_EQ(nearest_name("--xp", {"--tp", "--pp"}), "--tp");
}

}  // namespace
}  // namespace kareus
