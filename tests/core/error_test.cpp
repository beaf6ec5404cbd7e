// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/error.hpp"

#include <gtest/gtest.h>

namespace kareus {
namespace {

TEST(Error, KindDefaultsToInvalidInputAndFactoriesSetTheirs) {
  EXPECT_EQ(Error("bad").kind(), ErrorKind::kInvalidInput);
  EXPECT_EQ(Error::invalid("f.json", "/tp", "5", "must divide 24").kind(),
            ErrorKind::kInvalidInput);
  EXPECT_EQ(Error::io("disk full").kind(), ErrorKind::kIo);
  EXPECT_EQ(Error::device("kareusd refused").kind(), ErrorKind::kDevice);
  EXPECT_EQ(Error("bug", ErrorKind::kInternal).kind(), ErrorKind::kInternal);
  EXPECT_STREQ(Error::io("disk full").what(), "disk full");
}

// The CLI contract: 2 for anything the user can act on, 3 for a bug.
TEST(Error, ExitCodesAndNames) {
  EXPECT_EQ(exit_code(ErrorKind::kInvalidInput), 2);
  // The machine's to fix, not the command's (docs/cli.md).
  EXPECT_EQ(exit_code(ErrorKind::kIo), 4);
  EXPECT_EQ(exit_code(ErrorKind::kDevice), 4);
  EXPECT_EQ(exit_code(ErrorKind::kInternal), 3);
  EXPECT_EQ(to_string(ErrorKind::kInvalidInput), "invalid input");
  EXPECT_EQ(to_string(ErrorKind::kIo), "I/O error");
  EXPECT_EQ(to_string(ErrorKind::kDevice), "device error");
  EXPECT_EQ(to_string(ErrorKind::kInternal), "internal error");
}

}  // namespace
}  // namespace kareus
