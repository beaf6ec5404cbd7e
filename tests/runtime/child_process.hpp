// SPDX-License-Identifier: Apache-2.0
// A child process with its stdout on a pipe, for tests that must kill or signal the process that
// holds a clock (the frequency controller, a kareusd client, kareusd itself).
#pragma once

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace kareus::testing {

class ChildProcess {
 public:
  explicit ChildProcess(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    out_ = fds[0];
    if (rc != 0) throw std::runtime_error("posix_spawn failed for " + argv[0]);
  }
  ~ChildProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      wait();
    }
    close(out_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The next line of the child's stdout without its newline; "" on end of file or after 20 s.
  std::string read_line() {
    std::string line;
    for (;;) {
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 20000) <= 0) return line;
      char c = 0;
      if (read(out_, &c, 1) != 1 || c == '\n') return line;
      line += c;
    }
  }
  void signal(int signo) { kill(pid_, signo); }
  // The raw wait status; a child still running after 30 s is killed so that a test fails
  // instead of hanging.
  int wait() {
    int status = 0;
    for (int i = 0; i < 3000 && waitpid(pid_, &status, WNOHANG) == 0; ++i) usleep(10000);
    if (kill(pid_, 0) == 0 && waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    pid_ = -1;
    return status;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
};

}  // namespace kareus::testing
