// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"

namespace kareus {
namespace {

TEST(Csv, ParsesQuotedFieldsAndLineNumbers) {
  auto t = CsvTable::parse("a,b\n1,\"x, \"\"y\"\"\"\n\n2,z\n", "t.csv");
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.row(0).text("b"), "x, \"y\"");
  EXPECT_EQ(t.row(1).line(), 4u);
  EXPECT_DOUBLE_EQ(t.row(1).number("a"), 2.0);
}

TEST(Csv, RejectsBadCellsWithLineAndColumn) {
  auto t = CsvTable::parse("time,energy\n0.1,-3\nabc,1\n", "p.csv");
  try {
    t.row(0).positive_number("energy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "p.csv:2: column 'energy' = -3: expected a positive number");
  }
  EXPECT_THROW(t.row(1).number("time"), Error);
  EXPECT_THROW(t.require_columns({"time", "stage"}), Error);
}

TEST(Csv, RejectsRaggedRows) {
  EXPECT_THROW(CsvTable::parse("a,b\n1\n", "r.csv"), Error);
}

TEST(Csv, EscapeRoundTrips) {
  const std::string field = "a,\"b\"";
  auto fields = split_csv_record(csv_escape(field) + ",c");
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0], field);
}

}  // namespace
}  // namespace kareus
