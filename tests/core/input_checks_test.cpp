// SPDX-License-Identifier: Apache-2.0
// The readers' exact checks: duplicate keys and columns, ints that would wrap, folders given as
// files, byte-order marks, control bytes in messages, unknown fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "common/error_of.hpp"
#include "kareus/core/csv.hpp"
#include "kareus/core/decimal.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/limits.hpp"
#include "kareus/core/printable.hpp"
#include "kareus/core/table.hpp"

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
  EXPECT_EQ(printable("plain ü × ≤ 😀"), "plain ü × ≤ 😀");
  // An OSC sequence that would retitle the terminal, and a newline that would start a new row.
  EXPECT_EQ(printable("\x1b]0;owned\x07gpu\nname\r"), "\\x1b]0;owned\\x07gpu\\x0aname\\x0d");
}

// Characters a terminal acts on beyond ASCII: C1 controls (CSI is U+009B, two bytes in UTF-8), the
// bidirectional overrides that make a name read backwards, the line separators.
TEST(InputChecks, PrintableEscapesC1ControlsAndBidirectionalOverrides) {
  EXPECT_EQ(printable("a\u202Egnp.exe"), "a\\u202egnp.exe");
  EXPECT_EQ(printable("\u2066x\u2069 \u200F \u061C"), "\\u2066x\\u2069 \\u200f \\u061c");
  EXPECT_EQ(printable("\u009B31m \u0085 \u2028"), "\\u009b31m \\u0085 \\u2028");
  // Bytes that are not UTF-8 (a raw 8-bit CSI, a cut sequence, an overlong '/', a surrogate) are
  // written byte by byte.
  EXPECT_EQ(printable("\x9b"
                      "2J"),
            "\\x9b2J");
  EXPECT_EQ(printable("ab\xe2\x80"), "ab\\xe2\\x80");
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
}

TEST(InputChecks, TableCellsAreEscaped) {
  TextTable t({"name", "value"});
  t.add_row({"\x1b[2Jk\u202Eernel", "1"});
  t.add_row({"two\nlines", "2"});
  const std::string text = t.render();
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find("\u202E"), std::string::npos) << text;
  EXPECT_NE(text.find("\\x1b[2Jk\\u202eernel"), std::string::npos) << text;
  // Header, rule and two rows: the newline inside the cell starts no row of its own.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << text;
}

// nlohmann stops at a NUL byte, so everything after one used to be ignored.
TEST(InputChecks, NulByteInJsonIsRefusedNotTheEndOfTheText) {
  const std::string text = std::string(R"({"tp": 8})") + '\0' + R"(, "tp": 4})";
  EXPECT_EQ(error_of([&] { JsonDocument::parse(text, "w.json"); }),
            "w.json: malformed JSON at byte 10: a NUL byte, which JSON text never holds");
  EXPECT_NE(error_of([] {
              JsonDocument::parse(std::string("{\"op\": \"x\0\"}", 12), "request");
            }).find("request: malformed JSON at byte 10: a NUL byte"),
            std::string::npos);
}

// strtod read 0x1p-3 as 0.125, inf and nan as numbers, and " 5" with its blank.
TEST(InputChecks, CsvNumbersAreDecimal) {
  const auto table =
      CsvTable::parse("a\n0x1p-3\n0x10\ninf\n-nan\n1e400\n+-1\n.5\n+2\n-1e-3\n", "t.csv");
  for (std::size_t i = 0; i < 6; ++i) {
    const std::string e = error_of([&] { table.row(i).number("a"); });
    EXPECT_NE(e.find("expected a finite number in decimal"), std::string::npos) << i << ": " << e;
  }
  EXPECT_NE(error_of([&] { table.row(0).number("a"); }).find("t.csv:2: column 'a' = 0x1p-3"),
            std::string::npos);
  EXPECT_EQ(table.row(6).number("a"), 0.5);
  EXPECT_EQ(table.row(7).number("a"), 2.0);
  EXPECT_EQ(table.row(8).number("a"), -1e-3);
  EXPECT_EQ(parse_decimal("6.02e23"), 6.02e23);
  EXPECT_EQ(parse_decimal(" 5"), std::nullopt);
  EXPECT_EQ(parse_decimal("5 "), std::nullopt);
  EXPECT_EQ(parse_decimal("1,5"), std::nullopt);
  EXPECT_EQ(parse_decimal("-"), std::nullopt);
  EXPECT_EQ(parse_decimal("infinity"), std::nullopt);
}

// A file past the bound is refused from its size, before a byte of it is read.
TEST(InputChecks, AFileBeyondOneGibibyteIsRefusedUnread) {
  const auto path = std::filesystem::temp_directory_path() / "kareus_huge_input.json";
  std::ofstream(path) << "";
  std::filesystem::resize_file(path, kMaxInputFileBytes + 1);  // sparse: no disk, no time
  const std::string e = error_of([&] { JsonDocument::load_file(path); });
  std::filesystem::remove(path);
  EXPECT_NE(e.find("kareus_huge_input.json: more than 1073741824 bytes (1 GiB), the most an "
                   "input file may hold"),
            std::string::npos)
      << e;
}

// The duplicate-key check ran as nlohmann's parser callback, which scans the enclosing array
// after every object: 10 times the objects took 70 to 100 times as long. Now 10 times as long;
// the bound of 30 leaves room for a loaded machine: the time is this thread's CPU time, the
// fastest of five runs taken in turns with the other size.
TEST(InputChecks, ParseTimeGrowsLinearlyWithTheNumberOfObjects) {
  const auto array_of = [](int objects) {
    std::string text = "[";
    for (int i = 0; i < objects; ++i)
      text += (i ? ",{\"a\":" : "{\"a\":") + std::to_string(i) + "}";
    return text + "]";
  };
  const auto cpu_seconds = [] {
    timespec now = {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
  };
  const auto parse_seconds = [&](const std::string& text) {
    const double start = cpu_seconds();
    JsonDocument::parse(text, "a.json");
    return cpu_seconds() - start;
  };
  const std::string small_text = array_of(10'000);
  const std::string large_text = array_of(100'000);
  double small = 1e9;
  double large = 1e9;
  for (int run = 0; run < 5; ++run) {
    small = std::min(small, parse_seconds(small_text));
    large = std::min(large, parse_seconds(large_text));
  }
  EXPECT_LT(large / small, 30) << small << " s for 10^4 objects, " << large << " s for 10^5";
}

}  // namespace
}  // namespace kareus
