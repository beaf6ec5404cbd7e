// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "common/error_of.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"

#include <limits>

namespace kareus {
namespace {

using testing::error_of;

TEST(Json, ReportsFileAndPointerOfMissingField) {
  auto doc = JsonDocument::parse(R"({"parallelism": {"pp": 2}})", "w.json");
  const auto msg = error_of([&] { doc.root().at("parallelism").integer("tp"); });
  EXPECT_EQ(msg, "w.json: /parallelism/tp: required field is missing");
}

TEST(Json, ReportsWrongType) {
  auto doc = JsonDocument::parse(R"({"tp": "eight", "n": -1, "x": [1, 2.5]})", "w.json");
  EXPECT_EQ(error_of([&] { doc.root().integer("tp"); }),
            "w.json: /tp = \"eight\": expected an integer");
  EXPECT_EQ(error_of([&] { doc.root().positive_integer("n"); }),
            "w.json: /n = -1: expected a positive integer");
  EXPECT_EQ(error_of([&] { doc.root().at("x").at(1).as_integer(); }),
            "w.json: /x/1 = 2.5: expected an integer");
  EXPECT_EQ(doc.root().at("x").at(0).as_integer(), 1);
}

TEST(Json, MalformedTextNamesTheFile) {
  const auto msg = error_of([] { JsonDocument::parse("{\"a\": ", "bad.json"); });
  EXPECT_NE(msg.find("bad.json: malformed JSON"), std::string::npos) << msg;
}

TEST(Json, OverflowAndDeepNestingAreMalformedTextNotCrashes) {
  EXPECT_EQ(error_of([] { JsonDocument::parse(R"({"t": 1e400})", "big.json"); }),
            "big.json: malformed JSON: number overflow parsing '1e400' (numbers must fit in a "
            "double)");
  EXPECT_EQ(error_of([] { JsonDocument::parse(std::string(100000, '['), "deep.json"); }),
            "deep.json: malformed JSON at byte 257: nested deeper than 256 levels");
  // Brackets inside strings, escaped quotes included, are not nesting.
  const std::string brackets = "[\"\\\"" + std::string(300, '[') + "\"]";
  EXPECT_EQ(JsonDocument::parse(brackets, "s.json").root().at(0).as_string().size(), 301u);
}

TEST(Json, AValueOutlivesItsDocument) {
  // The document is a temporary that ends with the statement; the value must keep its tree
  // (a use after free here is caught by `make sanitize`, which runs this test under ASan).
  const JsonValue root = JsonDocument::parse(R"({"a": 7, "b": [1, 2]})", "t.json").root();
  EXPECT_EQ(root.integer("a"), 7);
  EXPECT_EQ(root.source(), "t.json");
  EXPECT_THROW(root.integer("c"), Error);
}

TEST(Json, IntegersBeyondInt64AreRefusedNotWrapped) {
  const auto doc =
      JsonDocument::parse(R"({"n": 18446744073709551615, "m": 9223372036854775807})", "big.json");
  EXPECT_EQ(error_of([&] { doc.root().integer("n"); }),
            "big.json: /n = 18446744073709551615: expected an integer <= 9223372036854775807");
  EXPECT_EQ(doc.root().integer("m"), std::numeric_limits<std::int64_t>::max());
}

TEST(Json, DefaultsApplyOnlyWhenAbsent) {
  auto doc = JsonDocument::parse(R"({"a": 3})", "d.json");
  EXPECT_EQ(doc.root().integer_or("a", 7), 3);
  EXPECT_EQ(doc.root().integer_or("b", 7), 7);
}

}  // namespace
}  // namespace kareus
