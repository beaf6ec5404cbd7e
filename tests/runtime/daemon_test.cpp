// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/daemon.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "daemon_process.hpp"
#include "kareus/runtime/daemon_client.hpp"
#include "kareus/runtime/frequency_controller.hpp"

namespace kareus::runtime {
namespace {

using namespace kareus::testing;  // the daemon fixture and helpers (daemon_process.hpp)

class DaemonRequests : public ::testing::Test {
 protected:
  DaemonOptions options() const {
    DaemonOptions o;
    o.socket_path = fake_.dir() / "kareusd.sock";
    o.state_file = fake_.dir() / "state.json";
    return o;
  }
  std::string error(int client, const std::string& line) {
    const Json reply = daemon_.handle(client, line);
    EXPECT_FALSE(reply.at("ok").get<bool>()) << reply.dump();
    return reply.value("error", "");
  }

  FakeNvml fake_;
  Daemon daemon_{std::make_shared<const nvml::Nvml>(), options()};
};

TEST_F(DaemonRequests, AcceptsSupportedClocksOnRegisteredGpus) {
  const Json reg = daemon_.handle(1, R"({"op": "register", "gpus": [0]})");
  ASSERT_TRUE(reg.at("ok").get<bool>()) << reg.dump();
  EXPECT_EQ(reg.at("gpus").at(0).at("name"), "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(reg.at("gpus").at(0).at("supported_sm_clocks_mhz").size(), 81u);
  EXPECT_TRUE(daemon_.handle(1, R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 1200})")
                  .at("ok")
                  .get<bool>());
  EXPECT_EQ(state_of(fake_).at("locked_gpus"), Json::array({0}));
  const Json energy = daemon_.handle(1, R"({"op": "read_energy", "gpu": 0})");
  EXPECT_GE(energy.at("energy_j").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(energy.at("power_w").get<double>(), 52.0 + 0.25 * 1200);
  EXPECT_TRUE(daemon_.handle(1, R"({"op": "reset_sm_clock", "gpu": 0})").at("ok").get<bool>());
  EXPECT_EQ(state_of(fake_).at("locked_gpus"), Json::array());
  EXPECT_EQ(fake_.log(), kLockedThenReset);
}

TEST_F(DaemonRequests, RejectsWhatTheClientMayNotDo) {
  EXPECT_EQ(error(1, R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 1200})"),
            "request: /gpu = 0: this client has not registered that GPU");
  EXPECT_EQ(error(1, R"({"op": "register", "gpus": [2]})"),
            "request: /gpus/0 = 2: this machine has GPUs 0..1");
  ASSERT_TRUE(daemon_.handle(1, R"({"op": "register", "gpus": [0]})").at("ok").get<bool>());
  EXPECT_EQ(error(2, R"({"op": "register", "gpus": [1, 0]})"),
            "request: /gpus/1 = 0: registered by another client");
  EXPECT_EQ(error(1, R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 1405})"),
            "request: /clock_mhz = 1405: gpu 0 supports 210 to 1410 MHz in its listed steps");
  EXPECT_EQ(error(1, R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": "max"})"),
            "request: /clock_mhz = \"max\": expected an integer");
  EXPECT_EQ(error(2, R"({"op": "reset_sm_clock", "gpu": 0})"),
            "request: /gpu = 0: held by another client; only that client or root may change or "
            "release it");
  EXPECT_EQ(error(1, R"({"op": "overclock"})"),
            "request: /op = \"overclock\": expected register, set_sm_clock, reset_sm_clock or "
            "read_energy");
  EXPECT_NE(error(1, "{not json").find("request: malformed JSON"), std::string::npos);
  EXPECT_TRUE(fake_.log().empty());
}

// A GPU held by one member is changed or released only by that client or by root; another
// member is told who holds it. Before, root could not release it either.
TEST_F(DaemonRequests, OnlyTheHolderOrRootChangesOrReleasesAGpu) {
  daemon_.connect(1, {1001, 11});
  daemon_.connect(2, {1002, 22});
  daemon_.connect(3, {0, 33});
  ASSERT_TRUE(daemon_.handle(1, R"({"op": "register", "gpus": [0]})").at("ok").get<bool>());
  ASSERT_TRUE(daemon_.handle(1, R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 1200})")
                  .at("ok")
                  .get<bool>());
  const std::string held =
      "request: /gpu = 0: held by client 1 (uid 1001, pid 11); only that client or root may "
      "change or release it";
  EXPECT_EQ(error(2, R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 900})"), held);
  EXPECT_EQ(error(2, R"({"op": "reset_sm_clock", "gpu": 0})"), held);
  EXPECT_EQ(error(2, R"({"op": "register", "gpus": [0]})"),
            "request: /gpus/0 = 0: registered by client 1 (uid 1001, pid 11)");
  EXPECT_EQ(fake_.log(), Lines{"nvmlDeviceSetGpuLockedClocks 0 1200 1200"});
  // Root changes it, then releases it: the clock is reset and another member may take the GPU.
  EXPECT_TRUE(daemon_.handle(3, R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 900})")
                  .at("ok")
                  .get<bool>());
  EXPECT_TRUE(daemon_.handle(3, R"({"op": "reset_sm_clock", "gpu": 0})").at("ok").get<bool>());
  EXPECT_EQ(state_of(fake_).at("locked_gpus"), Json::array());
  EXPECT_EQ(error(1, R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 1200})"),
            "request: /gpu = 0: this client has not registered that GPU");
  EXPECT_TRUE(daemon_.handle(2, R"({"op": "register", "gpus": [0]})").at("ok").get<bool>());
  EXPECT_EQ(fake_.log(),
            (Lines{"nvmlDeviceSetGpuLockedClocks 0 1200 1200",
                   "nvmlDeviceSetGpuLockedClocks 0 900 900", "nvmlDeviceResetGpuLockedClocks 0"}));
}

// Lines an attacker or a broken client may send; each must get an error reply.
const Lines kMalformed = {
    R"({"op": "read_energy", "gpu": 1e400})",
    "{\"op\": \"read_energy\", \"gpu\": \"\xff\xfe\"}",
    "{\"op\": \"" + std::string(30, '\0') + "\"}",
    R"({"op": ")" + std::string(40, 'x') +
        "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"}",
    std::string(60000, '['),
    R"({"op": 5})",
    R"([1, 2])",
    R"("register")",
    R"({"op": "register", "gpus": {"0": 1}})",
    R"({"op": "register", "gpus": [0.5]})",
    R"({"op": "register", "gpus": [-1]})",
    R"({"op": "register", "gpus": [1e300]})",
    R"({"op": "register", "gpus": [18446744073709551616]})",
    R"({"op": "read_energy", "gpu": 4294967296})",
    R"({"op": "read_energy"})",
    "",
};

TEST_F(DaemonRequests, AnswersEveryMalformedLineWithAnError) {
  for (const std::string& line : kMalformed) {
    const Json reply = Json::parse(Daemon::reply_line(daemon_.handle(1, line)));
    EXPECT_FALSE(reply.at("ok").get<bool>()) << line.substr(0, 80);
    EXPECT_EQ(reply.at("error").get<std::string>().rfind("request: ", 0), 0u) << reply.dump();
  }
  EXPECT_EQ(error(1, R"({"op": "read_energy", "gpu": 1e400})"),
            "request: malformed JSON: number overflow parsing '1e400' (numbers must fit in a "
            "double)");
  EXPECT_EQ(error(1, std::string(100000, '[')),
            "request: malformed JSON at byte 257: nested deeper than 256 levels");
  // nlohmann ends its input at a NUL byte and answered "unexpected end of input".
  EXPECT_EQ(error(1, "{\"op\": \"" + std::string(30, '\0') + "\"}"),
            "request: malformed JSON at byte 9: a NUL byte, which JSON text never holds");
  EXPECT_TRUE(fake_.log().empty());
}

// Mutations of valid requests (a seeded, bounded stand-in for a fuzzer): whatever the bytes, one
// valid JSON reply with "ok", and every GPU a client locked is reset when it leaves.
TEST_F(DaemonRequests, AnswersEveryMutatedRequest) {
  const Lines seeds = {R"({"op": "register", "gpus": [0, 1]})",
                       R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 1200})",
                       R"({"op": "reset_sm_clock", "gpu": 0})",
                       R"({"op": "read_energy", "gpu": 1})"};
  const Lines pieces = {"1e400",   "\xff", "\xc3",     "\x1b[2J", "\\u0000",
                        "\\ud800", "[[[[", "{\"op\":", "-0",      "18446744073709551616",
                        "null",    "\"",   "\x00"};
  std::mt19937 random(15);
  auto below = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string line = seeds[below(seeds.size())];
    for (std::size_t m = 1 + below(3); m > 0; --m) {
      const std::size_t at = below(line.size() + 1);
      switch (below(3)) {
        case 0:
          line.insert(at, pieces[below(pieces.size())]);
          break;
        case 1:
          line.erase(at, below(4));
          break;
        default:
          if (at < line.size()) line[at] = static_cast<char>(random());
      }
    }
    const int client = 1 + static_cast<int>(below(3));
    const Json reply = Json::parse(Daemon::reply_line(daemon_.handle(client, line)));
    ASSERT_TRUE(reply.at("ok").is_boolean()) << line;
    accepted += reply.at("ok").get<bool>() ? 1 : 0;
  }
  EXPECT_GT(accepted, 50);  // the mutations also reach the handlers, not only the parser
  for (int client = 1; client <= 3; ++client) daemon_.disconnect(client);
  EXPECT_EQ(state_of(fake_).at("locked_gpus"), Json::array());
  const Lines log = fake_.log();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back().rfind("nvmlDeviceResetGpuLockedClocks", 0), 0u);
}

TEST_F(DaemonRequests, DisconnectResetsOnlyTheClientsLockedGpus) {
  daemon_.handle(1, R"({"op": "register", "gpus": [0]})");
  daemon_.handle(2, R"({"op": "register", "gpus": [1]})");
  daemon_.handle(1, R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 1200})");
  daemon_.disconnect(2);
  daemon_.disconnect(1);
  EXPECT_EQ(fake_.log(), kLockedThenReset);
  // GPU 0 is free again for another client.
  EXPECT_TRUE(daemon_.handle(3, R"({"op": "register", "gpus": [0]})").at("ok").get<bool>());
}

TEST_F(DaemonProcess, ResetsTheGpuOfAClientKilledWithSigkill) {
  auto daemon = start_daemon();
  auto client = start_client();
  EXPECT_EQ(fake_.log(), Lines{kLockedThenReset[0]});
  client->signal(SIGKILL);
  client->wait();
  EXPECT_EQ(wait_for_log(fake_, 2), kLockedThenReset);
  EXPECT_EQ(wait_for_locked_gpus(fake_, Json::array()), Json::array());
}

TEST_F(DaemonProcess, SurvivesMalformedLinesAndStillResetsTheGpusItLocked) {
  auto daemon = start_daemon();
  auto client = start_client();
  RawClient attacker(socket_);
  for (const std::string& line : kMalformed) {
    const auto refused = attacker.request(line);
    ASSERT_TRUE(refused) << "no reply to " << line.substr(0, 80);
    EXPECT_FALSE(Json::parse(*refused).at("ok").get<bool>()) << *refused;
  }
  client->signal(SIGKILL);
  client->wait();
  EXPECT_EQ(wait_for_log(fake_, 2), kLockedThenReset);
  const auto reply = attacker.request(R"({"op": "register", "gpus": [0]})");
  ASSERT_TRUE(reply);
  EXPECT_TRUE(Json::parse(*reply).at("ok").get<bool>()) << *reply;
}

TEST_F(DaemonProcess, ARestartedDaemonResetsWhatAKilledOneLeftLocked) {
  auto daemon = start_daemon();
  auto client = start_client();
  daemon->signal(SIGKILL);
  daemon->wait();
  EXPECT_EQ(fake_.log(), Lines{kLockedThenReset[0]});
  EXPECT_EQ(state_of(fake_).at("locked_gpus"), Json::array({0}));
  auto again = start_daemon();  // replaces the stale socket file too
  EXPECT_EQ(fake_.log(), kLockedThenReset);
  EXPECT_EQ(state_of(fake_).at("locked_gpus"), Json::array());
}

// A second daemon started by mistake used to reset the running one's GPUs and clear its state
// file before finding the socket taken.
TEST_F(DaemonProcess, ASecondDaemonLeavesTheRunningOnesGpusAndStateAlone) {
  auto daemon = start_daemon();
  auto client = start_client();
  ChildProcess second(daemon_argv());
  const int status = second.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 4) << "a socket already taken is the machine's to fix";
  EXPECT_EQ(fake_.log(), Lines{kLockedThenReset[0]});
  EXPECT_EQ(state_of(fake_).at("locked_gpus"), Json::array({0}));
  EXPECT_TRUE(std::filesystem::exists(socket_));
}

TEST_F(DaemonProcess, TerminatingSignalsResetLockedGpusAndExitCleanly) {
  for (int signo : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
    SCOPED_TRACE(strsignal(signo));
    std::filesystem::remove(fake_.log_path());
    auto daemon = start_daemon();
    auto client = start_client();
    daemon->signal(signo);
    const int status = daemon->wait();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(fake_.log(), kLockedThenReset);
    EXPECT_FALSE(std::filesystem::exists(socket_));
  }
}

TEST_F(DaemonProcess, ControllerThroughTheDaemonRestoresOnDestruction) {
  auto daemon = start_daemon();
  const Schedule s = load_schedule(std::string(KAREUS_TEST_DATA_DIR) + "/runtime/two_stages.json");
  {
    auto client = std::make_shared<DaemonClient>(socket_);
    FrequencyController c(s, 1, std::make_unique<DaemonClockBackend>(client, 0));
    for (const auto& in : s.stages[1].instructions)
      c.on_instruction_begin(1, in.microbatch, in.direction);
    c.on_step_end();
    c.wait_until_applied();
  }
  EXPECT_EQ(fake_.log(), (Lines{"nvmlDeviceSetGpuLockedClocks 0 1200 1200",
                                "nvmlDeviceSetGpuLockedClocks 0 1110 1110",
                                "nvmlDeviceResetGpuLockedClocks 0"}));
}

TEST(DaemonClientErrors, NoDaemonIsOneClearError) {
  try {
    DaemonClient client("/nonexistent/kareusd.sock");
    FAIL() << "connected to nothing";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot connect to kareusd at /nonexistent/kareusd.sock: No such file or directory "
              "(is kareusd running? set KAREUSD_SOCKET to its socket)");
  }
}

TEST(DaemonWithoutDriver, ExitsWithCode4) {
  setenv("KAREUS_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  ChildProcess daemon({KAREUSD_PATH, "--socket", "/tmp/kareus-no-driver.sock", "--state-file",
                       "/tmp/kareus-no-driver-state.json"});
  unsetenv("KAREUS_NVML_LIBRARY");
  const int status = daemon.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 4) << "a missing driver is the machine's to fix";
  EXPECT_FALSE(std::filesystem::exists("/tmp/kareus-no-driver.sock"));
}

}  // namespace
}  // namespace kareus::runtime
