// SPDX-License-Identifier: Apache-2.0
// Runs the built kareus binary in a test and captures exit code, stdout and stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace kareus::testing {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `args` is appended to the binary path as shell words.
inline CliRun run_cli(const std::string& binary, const std::string& args) {
  static int counter = 0;
  const auto err_path =
      std::filesystem::temp_directory_path() /
      ("kareus_cli_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  const std::string command = binary + " " + args + " 2>" + err_path.string();
  CliRun r;
  FILE* pipe = ::popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe))
    r.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  r.err.assign(std::istreambuf_iterator<char>(err), {});
  std::filesystem::remove(err_path);
  return r;
}

// A command line the CLI must refuse, and a fragment its one-line error must contain.
struct BadInput {
  std::string args;
  std::string message;
};

// The bad-input contract of every subcommand: exit code 2, one line on stderr naming the
// problem, nothing on stdout.
inline void expect_rejected(const std::string& binary, const BadInput& c) {
  SCOPED_TRACE(c.args);
  const CliRun r = run_cli(binary, c.args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << "no partial output: " << r.out;
  EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace kareus::testing
