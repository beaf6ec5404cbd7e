// The readers' exact checks: duplicate keys and columns, ints that would wrap, folders given as
// files, byte-order marks, control bytes in messages, unknown fields.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/error_of.hpp"
#include "kareus/core/csv.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/text_file.hpp"

namespace kareus {
namespace {

using testing::error_of;

TEST(InputChecks, DuplicateJsonKeyIsRefusedAtAnyDepth) {
  EXPECT_NE(error_of([] {
              JsonDocument::parse(R"({"tp": 8, "tp": 4})", "w.json");
            }).find("w.json: key \"tp\" appears twice"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              JsonDocument::parse(R"({"a": [{"x": 1, "x": 1}]})", "w.json");
            }).find("\"x\" appears twice"),
            std::string::npos);
  // The same key in sibling objects is fine.
  EXPECT_EQ(error_of([] { JsonDocument::parse(R"([{"x": 1}, {"x": 2}])", "w.json"); }), "");
}

TEST(InputChecks, PositiveIntRefusesWhatAnIntWouldWrap) {
  const auto doc = JsonDocument::parse(R"({"a": 4294971392, "b": 2147483647, "c": 0})", "f");
  EXPECT_NE(error_of([&] { doc.root().positive_int("a"); }).find("f: /a = 4294971392"),
            std::string::npos);
  EXPECT_EQ(doc.root().positive_int("b"), 2147483647);
  EXPECT_NE(error_of([&] { doc.root().positive_int("c"); }).find("positive"), std::string::npos);
}

TEST(InputChecks, UnknownKeysListTheAllowedOnesAndNotesMayBeAllowed) {
  const auto doc = JsonDocument::parse(R"({"tp": 1, "_source": "x", "tpp": null})", "w.json");
  const std::string e = error_of([&] { doc.root().reject_unknown_keys({"tp"}, true); });
  EXPECT_NE(e.find("w.json: /tpp = null: unknown field \"tpp\"; allowed: tp"), std::string::npos)
      << e;
  const auto notes = JsonDocument::parse(R"({"tp": 1, "_source": "x"})", "w.json");
  EXPECT_EQ(error_of([&] { notes.root().reject_unknown_keys({"tp"}, true); }), "");
  EXPECT_NE(error_of([&] { notes.root().reject_unknown_keys({"tp"}); }).find("_source"),
            std::string::npos);
}

TEST(InputChecks, DuplicateCsvColumnIsRefused) {
  const std::string e = error_of([] { CsvTable::parse("a,b,a\n1,2,3\n", "t.csv"); });
  EXPECT_NE(e.find("t.csv:1: column 'a' appears twice"), std::string::npos) << e;
}

TEST(InputChecks, FolderGivenAsFileIsNamed) {
  const auto dir = std::filesystem::temp_directory_path();
  EXPECT_NE(error_of([&] { JsonDocument::load_file(dir); }).find("is a folder, expected a file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { CsvTable::read_file(dir); }).find("is a folder"), std::string::npos);
}

TEST(InputChecks, ByteOrderMarkIsSkipped) {
  const auto path = std::filesystem::temp_directory_path() / "kareus_bom_test.csv";
  std::ofstream(path, std::ios::binary) << "\xEF\xBB\xBFkernel,clock_mhz\nk,1410\n";
  const auto table = CsvTable::read_file(path);
  EXPECT_TRUE(table.has_column("kernel"));
  std::ofstream(path, std::ios::binary) << "\xEF\xBB\xBF{\"a\": 1}";
  EXPECT_EQ(JsonDocument::load_file(path).root().integer("a"), 1);
  std::filesystem::remove(path);
}

TEST(InputChecks, PrintableEscapesControlBytes) {
  EXPECT_EQ(printable("a\x1b[31mb\tc\x7f"), "a\\x1b[31mb\tc\\x7f");
  EXPECT_EQ(printable("plain ü"), "plain ü");
}

}  // namespace
}  // namespace kareus
