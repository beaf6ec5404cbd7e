// SPDX-License-Identifier: Apache-2.0
// wrap(): lines within the width, broken at spaces, indents on the first and later lines.
#include "kareus/core/wrap.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace kareus {
namespace {

TEST(Wrap, BreaksAtTheLastSpaceThatFits) {
  EXPECT_EQ(wrap("aaa bbb ccc", 7), "aaa bbb\nccc\n");
  EXPECT_EQ(wrap("aaa bbb ccc", 6), "aaa\nbbb\nccc\n");
  EXPECT_EQ(wrap("aaa bbb ccc", 11), "aaa bbb ccc\n");
}

TEST(Wrap, IndentsTheFirstAndTheFollowingLines) {
  EXPECT_EQ(wrap("aaa bbb ccc", 9, "- ", "  "), "- aaa bbb\n  ccc\n");
}

TEST(Wrap, KeepsTheSpacingWithinALineAndDropsItAtABreak) {
  EXPECT_EQ(wrap("best:  a  b", 20), "best:  a  b\n");
  EXPECT_EQ(wrap("best:  aaaa   bbbb", 12, "", "       "), "best:  aaaa\n       bbbb\n");
}

TEST(Wrap, AWordWiderThanTheLineStandsAlone) {
  EXPECT_EQ(wrap("a bbbbbbbbbb c", 4), "a\nbbbbbbbbbb\nc\n");
}

TEST(Wrap, CountsCodePointsNotBytes) {
  EXPECT_EQ(display_width("13.8 ± 2.3"), 10u);
  // Twelve columns in thirteen bytes fit a width of 12.
  EXPECT_EQ(wrap("13.8 ± 2.3 %", 12), "13.8 ± 2.3 %\n");
}

TEST(Wrap, NoLineOfALongParagraphPassesTheWidth) {
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += std::string(static_cast<std::size_t>(i % 13 + 1), 'x') + " ";
  std::istringstream lines(wrap(text, 40, "note: ", "  "));
  std::string line;
  std::size_t count = 0;
  while (std::getline(lines, line)) {
    EXPECT_LE(display_width(line), 40u) << line;
    ++count;
  }
  EXPECT_GT(count, 10u);
}

}  // namespace
}  // namespace kareus
