// SPDX-License-Identifier: Apache-2.0
// A process the runtime tests start and then signal or kill, so that they can check what happens
// to the clocks it held. Prints "ready" once its clock is applied.
//   runtime_child controller <schedule> <stage> signal|exit|chained|nohup
//   runtime_child client <kareusd socket> <gpu> <clock MHz>
//   runtime_child request <kareusd socket> <request line>   (prints the reply line)
//   runtime_child as <uid> <gid> <one of the above>   (started as root; drops to uid and gid)
// A failure is one line "failed: <message>" on stdout and exit code 2.
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "kareus/core/error.hpp"
#include "kareus/nvml/nvml.hpp"
#include "kareus/runtime/daemon_client.hpp"
#include "kareus/runtime/frequency_controller.hpp"
#include "raw_client.hpp"

namespace {

volatile sig_atomic_t interrupted = 0;

void ready() {
  std::printf("ready\n");
  std::fflush(stdout);
}

int run_controller(const std::string& schedule_path, int stage, const std::string& mode) {
  using namespace kareus::runtime;
  using kareus::load_schedule;
  using kareus::Schedule;
  if (mode == "chained") std::signal(SIGINT, [](int) { interrupted = 1; });
  if (mode == "nohup") std::signal(SIGHUP, SIG_IGN);
  auto nvml = std::make_shared<const kareus::nvml::Nvml>();
  const Schedule schedule = load_schedule(schedule_path);
  auto* controller =
      new FrequencyController(schedule, stage, std::make_unique<NvmlClockBackend>(nvml, 0));
  const auto& first = schedule.stages[stage].instructions[0];
  controller->on_instruction_begin(stage, first.microbatch, first.direction);
  controller->wait_until_applied();
  ready();
  // Leaked on purpose: "exit" checks the atexit restore of a controller nobody destroyed.
  if (mode == "exit") std::exit(0);
  // Polled, not pause(): the re-raised signal may run the handler on another thread.
  while (!interrupted) usleep(1000);
  try {
    const auto& second = schedule.stages[stage].instructions[1];
    controller->on_instruction_begin(stage, second.microbatch, second.direction);
    std::printf("accepted\n");
  } catch (const kareus::Error& e) {
    std::printf("refused: %s\n", e.what());
  }
  return 0;
}

// Holds a clock through kareusd until killed.
int run_client(const std::string& socket, unsigned gpu, double clock) {
  kareus::runtime::DaemonClient client(socket);
  client.register_gpus({gpu});
  client.set_sm_clock(gpu, kareus::MHz(clock));
  ready();
  for (;;) pause();
}

// One request line, as any client could send it; prints kareusd's reply.
int run_request(const std::string& socket, const std::string& line) {
  kareus::testing::RawClient client(socket);
  if (!client.send(line + "\n")) throw kareus::Error("kareusd closed the connection");
  const auto reply = client.read_line();
  if (!reply) throw kareus::Error("no reply from kareusd");
  std::printf("%s\n", reply->c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The tests end children with SIGQUIT too: no core files in the build tree.
  const rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  try {
    if (argc > 4 && std::string(argv[1]) == "as") {
      const uid_t uid = static_cast<uid_t>(std::atoi(argv[2]));
      const gid_t gid = static_cast<gid_t>(std::atoi(argv[3]));
      if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) {
        throw kareus::Error("cannot change to uid " + std::string(argv[2]) + " (not root?)");
      }
      argc -= 3;
      argv += 3;
    }
    const std::string role = argc > 1 ? argv[1] : "";
    if (role == "controller" && argc == 5) {
      return run_controller(argv[2], std::atoi(argv[3]), argv[4]);
    }
    if (role == "client" && argc == 5) {
      return run_client(argv[2], static_cast<unsigned>(std::atoi(argv[3])), std::atof(argv[4]));
    }
    if (role == "request" && argc == 4) return run_request(argv[2], argv[3]);
  } catch (const std::exception& e) {
    std::printf("failed: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr,
               "usage: runtime_child controller <schedule> <stage> signal|exit|chained|nohup\n"
               "       runtime_child client <socket> <gpu> <clock_mhz>\n"
               "       runtime_child request <socket> <request line>\n"
               "       runtime_child as <uid> <gid> <one of the above>\n");
  return 2;
}
