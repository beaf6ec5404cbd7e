// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/error.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

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

// what() names a field by its library name; a front end's speller renames every marked field, in
// the field position and in the prose, and leaves the rest (a file's key, the value) alone.
TEST(Error, FrontEndsSpellTheFieldsAMessageMarks) {
  const Error e = Error::invalid("", field_ref("scale_by"), "colour",
                                 "allowed: model, gpu (or " + field_ref("descriptors") + " off)");
  EXPECT_STREQ(e.what(), "scale_by = colour: allowed: model, gpu (or descriptors off)");
  const auto flags = [](std::string_view field) {
    return field == "scale_by" ? std::string("--scale-by") : "--" + std::string(field);
  };
  EXPECT_EQ(e.message(flags), "--scale-by = colour: allowed: model, gpu (or --descriptors off)");
  EXPECT_EQ(e.where(), "");
  EXPECT_EQ(e.field(), "scale_by");
  EXPECT_EQ(e.value(), "colour");
  EXPECT_EQ(e.allowed(), "allowed: model, gpu (or descriptors off)");

  const Error file = Error::invalid("w.json", "/parallelism/tp", "5", "must divide 24");
  EXPECT_EQ(file.message(flags), "w.json: /parallelism/tp = 5: must divide 24");
  EXPECT_EQ(file.where(), "w.json");
  EXPECT_EQ(file.field(), "/parallelism/tp");

  const Error prose("no home; pass " + field_ref("store_path") + " PATH", ErrorKind::kIo);
  EXPECT_STREQ(prose.what(), "no home; pass store_path PATH");
  EXPECT_EQ(prose.message(flags), "no home; pass --store_path PATH");
  EXPECT_EQ(prose.field(), "");
  EXPECT_EQ(prose.kind(), ErrorKind::kIo);
}

// A marker without its end is text, not a field: a message never loses what follows it.
TEST(Error, AnUnclosedMarkIsKept) {
  const std::string cut = field_ref("db").substr(0, 3);
  EXPECT_EQ(spell_fields("pass " + cut + " now", [](std::string_view) { return "X"; }),
            "pass " + cut + " now");
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
