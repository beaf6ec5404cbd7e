// Runs the built kareus binary in a test and captures exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace kareus::testing
