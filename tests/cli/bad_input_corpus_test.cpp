// SPDX-License-Identifier: Apache-2.0
// The bad-input corpus (tests/data/bad_inputs/cases.json): every subcommand and every file format
// fed inputs a careless user or an attacker would give. Each case must exit 2 with one line on
// stderr that names the file, field or value, print nothing on stdout, echo no control bytes, and
// leave the case's folder exactly as it was (no output, no partial or temporary file).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "common/run_cli.hpp"
#include "kareus/core/json.hpp"

namespace kareus {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string name;
  std::string args;
  std::vector<std::pair<std::string, std::string>> files;  // name in the case folder, content
  std::vector<std::string> expect;                         // fragments stderr must contain
  // gtest would otherwise print the struct's raw bytes into ctest's test names.
  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
};

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

std::string substituted(std::string text, const std::string& value) {
  replace_all(text, "{v}", value);
  replace_all(text, "{data}", KAREUS_TEST_DATA_DIR);
  return text;
}

// A case with "values" stands for one case per value, {v} replaced in args, files and expect.
std::vector<Case> load_cases() {
  const auto doc =
      JsonDocument::load_file(fs::path(KAREUS_TEST_DATA_DIR) / "bad_inputs" / "cases.json");
  std::vector<Case> out;
  const auto cases = doc.root().at("cases");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto c = cases.at(i);
    std::vector<std::string> values{""};
    if (auto v = c.find("values")) {
      values.clear();
      for (std::size_t k = 0; k < v->size(); ++k) values.push_back(v->at(k).as_string());
    }
    for (std::size_t k = 0; k < values.size(); ++k) {
      Case one;
      one.name = c.string("name") + (values.size() > 1 ? "_" + std::to_string(k) : "");
      one.args = substituted(c.string("args"), values[k]);
      if (auto files = c.find("files"))
        for (const auto& key : files->keys())
          one.files.emplace_back(key, substituted(files->string(key), values[k]));
      const auto expect = c.at("expect");
      for (std::size_t e = 0; e < expect.size(); ++e)
        one.expect.push_back(substituted(expect.at(e).as_string(), values[k]));
      out.push_back(std::move(one));
    }
  }
  return out;
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    names.insert(fs::relative(entry.path(), dir).string());
  return names;
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, ExitsTwoWithOneLineAndLeavesNothing) {
  const Case& c = GetParam();
  const fs::path dir = fs::path(KAREUS_TEST_BINARY_DIR) / "bad_inputs" / c.name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& [name, content] : c.files) {
    fs::create_directories((dir / name).parent_path());
    std::ofstream(dir / name, std::ios::binary) << content;
  }
  const auto before = listing(dir);
  std::string args = c.args;
  replace_all(args, "{dir}", dir.string());
  const testing::CliRun r = testing::run_cli(KAREUS_BINARY, args);
  SCOPED_TRACE(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "") << "nothing on stdout";
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(!r.err.empty() && r.err.back() == '\n') << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "no raw escape bytes";
  // Nor a right-to-left override or a C1 CSI, which UTF-8 writes in several bytes.
  EXPECT_EQ(r.err.find("\xe2\x80\xae"), std::string::npos) << "no raw U+202E";
  EXPECT_EQ(r.err.find("\xc2\x9b"), std::string::npos) << "no raw U+009B";
  for (std::string fragment : c.expect) {
    replace_all(fragment, "{dir}", dir.string());
    EXPECT_NE(r.err.find(fragment), std::string::npos)
        << "missing '" << fragment << "' in " << r.err;
  }
  EXPECT_EQ(listing(dir), before) << "the case folder changed";
  fs::remove_all(dir);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.name;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, ::testing::ValuesIn(load_cases()), case_name);

TEST(BadInputCorpus, HasAtLeast150Cases) {
  EXPECT_GE(load_cases().size(), 150u);
}

}  // namespace
}  // namespace kareus
