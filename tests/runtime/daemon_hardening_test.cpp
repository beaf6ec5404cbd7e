// SPDX-License-Identifier: Apache-2.0
// kareusd under clients that misbehave, users who may not use it, and a state file or socket path
// that is not what it should be. Every wait is bounded, so a daemon that hangs fails the test.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "daemon_process.hpp"
#include "kareus/runtime/daemon.hpp"

namespace kareus::runtime {
namespace {

using namespace kareus::testing;  // the daemon fixture and helpers (daemon_process.hpp)

const std::string kRegister0 = R"({"op": "register", "gpus": [0]})";
const std::string kSet0 = R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 1200})";
const std::string kEnergy1 = R"({"op": "read_energy", "gpu": 1})";

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// CPU seconds a process has used (utime + stime of /proc/PID/stat).
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::stol(field);
  }
  return static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

TEST_F(DaemonProcess, DropsAClientThatNeverReadsWhileServingAnother) {
  auto daemon = start_daemon();
  RawClient hog(socket_);
  ASSERT_TRUE(ok(hog.request(kRegister0)));
  ASSERT_TRUE(ok(hog.request(kSet0)));
  // Requests without reading a reply, until the daemon drops the connection (or, as before the
  // fix, blocks writing to it and stops reading for 5 s).
  std::string burst;
  for (int i = 0; i < 100; ++i) burst += kEnergy1 + "\n";
  for (int i = 0; i < 10000 && hog.send(burst, 5000); ++i) {
  }
  RawClient other(socket_);
  EXPECT_TRUE(ok(other.request(kEnergy1))) << "the daemon froze on a client that does not read";
  EXPECT_TRUE(hog.closed_by_daemon());
  EXPECT_EQ(wait_for_log(fake_, 2), kLockedThenReset);
}

TEST_F(DaemonProcess, ServesTwoHundredConcurrentClientsAndResetsTheirGpus) {
  auto daemon = start_daemon();
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 200; ++i) clients.push_back(std::make_unique<RawClient>(socket_));
  ASSERT_TRUE(clients[0]->send(kRegister0 + "\n" + kSet0 + "\n"));
  for (int i = 1; i < 200; ++i) ASSERT_TRUE(clients[i]->send(kEnergy1 + "\n"));
  EXPECT_TRUE(ok(clients[0]->read_line()));
  for (int i = 0; i < 200; ++i) EXPECT_TRUE(ok(clients[i]->read_line())) << i;
  clients.clear();
  EXPECT_EQ(wait_for_log(fake_, 2), kLockedThenReset);
}

TEST_F(DaemonProcess, ClosesStalledAndIdleConnectionsButNotAnIdleGpuHolder) {
  // Long enough that the holder's register arrives within it even on a loaded machine.
  auto daemon = start_daemon({"--idle-timeout", "2"});
  RawClient holder(socket_);
  ASSERT_TRUE(ok(holder.request(kRegister0)));
  ASSERT_TRUE(ok(holder.request(kSet0)));
  RawClient silent(socket_);
  RawClient halfway(socket_);
  ASSERT_TRUE(halfway.send(R"({"op": "read_)"));
  EXPECT_TRUE(silent.closed_by_daemon());
  EXPECT_TRUE(halfway.closed_by_daemon());
  // Idle longer than the two closed ones, but a running job holding a clock must keep it.
  EXPECT_TRUE(ok(holder.request(kEnergy1)));
  EXPECT_EQ(fake_.log(), Lines{kLockedThenReset[0]});
}

TEST_F(DaemonProcess, AnswersAnOverlongLineThenCloses) {
  auto daemon = start_daemon();
  RawClient client(socket_);
  ASSERT_TRUE(client.send(std::string(70000, 'x')));
  const auto reply = client.read_line();
  ASSERT_TRUE(reply);
  EXPECT_EQ(Json::parse(*reply).at("error"),
            "request: longer than 65536 bytes; closing the connection");
  EXPECT_TRUE(client.closed_by_daemon());
}

// A request of 65,536 bytes before its newline is served; one byte more is refused, also when its
// newline arrives with it (the daemon used to serve lines up to 4 KiB past the bound then).
TEST_F(DaemonProcess, ServesRequestsUpTo64KiBAndNoLonger) {
  auto daemon = start_daemon();
  const auto padded = [](std::size_t bytes) {
    std::string line = kEnergy1;
    line.insert(1, bytes - line.size(), ' ');
    return line;
  };
  RawClient fits(socket_);
  ASSERT_TRUE(fits.send(padded(65536) + "\n"));
  EXPECT_TRUE(ok(fits.read_line()));
  RawClient over(socket_);
  ASSERT_TRUE(over.send(padded(65537) + "\n"));
  const auto reply = over.read_line();
  ASSERT_TRUE(reply);
  EXPECT_EQ(Json::parse(*reply).at("error"),
            "request: longer than 65536 bytes; closing the connection");
  EXPECT_TRUE(over.closed_by_daemon());
}

// A root daemon used to create every missing folder of --socket (it made /nonexistent/dir).
TEST_F(DaemonProcess, RefusesASocketOrStateFileInAFolderThatDoesNotExist) {
  const auto missing = fake_.dir() / "missing" / "dir";
  for (const int flag : {2, 4}) {
    auto argv = daemon_argv();
    argv[flag] = (missing / "kareusd.sock").string();
    // Its stderr on the pipe the test reads.
    argv.insert(argv.begin(), {"/bin/sh", "-c", R"(exec "$0" "$@" 2>&1)"});
    ChildProcess d(argv);
    const std::string line = d.read_line();
    const int status = d.wait();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    EXPECT_EQ(line, "kareusd: " + std::string(flag == 2 ? "--socket" : "--state-file") + " = " +
                        (missing / "kareusd.sock").string() + ": folder " + missing.string() +
                        " does not exist; create it first (kareusd creates only /run/kareus)");
    EXPECT_FALSE(std::filesystem::exists(fake_.dir() / "missing"));
  }
}

// At its file-descriptor limit the daemon leaves further connections waiting, without spinning
// on them (the old loop took a full core on EMFILE), and serves them when others leave.
TEST_F(DaemonProcess, AtTheDescriptorLimitNewClientsWaitWithoutSpinning) {
  rlimit saved = {};
  getrlimit(RLIMIT_NOFILE, &saved);
  rlimit low = saved;
  low.rlim_cur = 48;
  setrlimit(RLIMIT_NOFILE, &low);
  auto daemon = start_daemon();
  setrlimit(RLIMIT_NOFILE, &saved);
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 60; ++i) {
    clients.push_back(std::make_unique<RawClient>(socket_));
    ASSERT_TRUE(clients.back()->send(kEnergy1 + "\n"));
  }
  std::size_t served = 0;
  while (served < clients.size() && ok(clients[served]->read_line(5000))) ++served;
  EXPECT_GE(served, 10u);
  EXPECT_LT(served, clients.size());
  const double cpu_before = cpu_seconds(daemon->pid());
  std::this_thread::sleep_for(std::chrono::seconds(1));  // a window to measure, not a wait
  EXPECT_LT(cpu_seconds(daemon->pid()) - cpu_before, 0.3) << "the daemon spins at its limit";
  // Each client that leaves makes room for one that waits.
  for (std::size_t i = 0; i < served; ++i) clients[i].reset();
  for (std::size_t i = served; i < clients.size(); ++i) {
    EXPECT_TRUE(ok(clients[i]->read_line())) << i;
    clients[i].reset();
  }
}

// CI runs as root; elsewhere these are skipped, visibly.
class DaemonAccess : public DaemonProcess {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to run a client under another uid";
  }
  // The client's one line: "ready" or "failed: ...".
  std::string client_line(const std::vector<std::string>& as) {
    auto client = spawn_client(as);
    return client->read_line();
  }
};

TEST_F(DaemonAccess, AForeignUidIsRefusedByTheSocketModeAndByPeerCredentials) {
  auto daemon = start_daemon();
  EXPECT_EQ(std::filesystem::status(socket_).permissions(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                std::filesystem::perms::group_read | std::filesystem::perms::group_write);
  EXPECT_EQ(client_line({"65534", "65534"}),
            "failed: cannot connect to kareusd at " + socket_.string() +
                ": Permission denied (is kareusd running? set KAREUSD_SOCKET to its socket)");
  // Even with the socket opened to everyone (an administrator's chmod), the daemon refuses.
  chmod(socket_.c_str(), 0666);
  EXPECT_EQ(client_line({"65534", "65534"}),
            "failed: kareusd: uid 65534 may not use kareusd (root, uid 0 and members of its "
            "group may)");
  EXPECT_TRUE(fake_.log().empty());
}

TEST_F(DaemonAccess, MembersOfTheGroupMayUseIt) {
  auto daemon = start_daemon({"--group", "4242"});
  struct stat st = {};
  ASSERT_EQ(stat(socket_.c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 4242u);
  auto client = spawn_client({"65534", "4242"});
  EXPECT_EQ(client->read_line(), "ready");
  client->signal(SIGKILL);
  client->wait();
  EXPECT_EQ(wait_for_log(fake_, 2), kLockedThenReset);
}

// Two members of the group: the one that holds a GPU keeps it; the other is refused with the
// holder named, whatever it asks; root releases it.
TEST_F(DaemonAccess, AnotherMemberMayNotChangeOrReleaseAHeldGpuButRootMay) {
  auto daemon = start_daemon({"--group", "4242"});
  auto holder = spawn_client({"1001", "4242"});
  ASSERT_EQ(holder->read_line(), "ready");
  const auto request_as = [&](const std::vector<std::string>& as, const std::string& line) {
    ChildProcess other(
        {KAREUS_RUNTIME_CHILD_PATH, "as", as[0], as[1], "request", socket_.string(), line});
    const std::string reply = other.read_line();
    other.wait();
    return Json::parse(reply);
  };
  for (const std::string& line :
       {std::string(R"({"op": "set_sm_clock", "gpu": 0, "clock_mhz": 900})"),
        std::string(R"({"op": "reset_sm_clock", "gpu": 0})")}) {
    const Json reply = request_as({"1002", "4242"}, line);
    EXPECT_FALSE(reply.at("ok").get<bool>()) << line;
    const std::string error = reply.at("error");
    EXPECT_EQ(error.rfind("request: /gpu = 0: held by client ", 0), 0u) << error;
    EXPECT_NE(error.find("(uid 1001, pid "), std::string::npos) << error;
    EXPECT_NE(error.find("only that client or root may change or release it"), std::string::npos)
        << error;
  }
  EXPECT_EQ(fake_.log(), Lines{kLockedThenReset[0]});
  EXPECT_TRUE(request_as({"0", "0"}, R"({"op": "reset_sm_clock", "gpu": 0})").at("ok").get<bool>());
  EXPECT_EQ(wait_for_log(fake_, 2), kLockedThenReset);
  holder->signal(SIGKILL);
  holder->wait();
}

TEST_F(DaemonProcess, RefusesASocketPathThatIsNotASocketAndLeavesItAlone) {
  const auto taken = fake_.dir() / "taken";
  std::filesystem::create_directories(taken / "full");
  std::filesystem::create_directories(taken / "empty");
  std::ofstream(taken / "full" / "keep") << "data";
  std::ofstream(taken / "file") << "data";
  std::filesystem::create_symlink(taken / "file", taken / "link");
  for (const char* name : {"full", "empty", "file", "link"}) {
    SCOPED_TRACE(name);
    auto argv = daemon_argv();
    argv[2] = (taken / name).string();
    ChildProcess d(argv);
    const int status = d.wait();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
  }
  EXPECT_EQ(file_text(taken / "full" / "keep"), "data");
  EXPECT_EQ(file_text(taken / "file"), "data");
  EXPECT_TRUE(std::filesystem::is_directory(taken / "empty"));
  EXPECT_TRUE(std::filesystem::is_symlink(taken / "link"));
}

DaemonOptions options_in(const std::filesystem::path& dir) {
  DaemonOptions o;
  o.socket_path = dir / "kareusd.sock";
  o.state_file = dir / "state" / "state.json";
  std::filesystem::create_directories(o.state_file.parent_path());
  return o;
}

TEST(DaemonStateFile, GarbageResetsEveryGpuAndStartsClean) {
  for (const std::string text : {R"({"locked_gpus": [1e400]})", R"({"locked_gpus": [0, "x"]})",
                                 "\xff\xfe", R"({"locked_gpus": [-1]})"}) {
    FakeNvml fake;
    const auto state = options_in(fake.dir()).state_file;
    std::filesystem::create_directories(state.parent_path());
    std::ofstream(state) << text;
    {
      Daemon daemon(std::make_shared<const nvml::Nvml>(), options_in(fake.dir()));
      EXPECT_EQ(fake.log(),
                (Lines{"nvmlDeviceResetGpuLockedClocks 0", "nvmlDeviceResetGpuLockedClocks 1"}))
          << text;
      EXPECT_EQ(Json::parse(file_text(state)).at("locked_gpus"), Json::array());
    }
  }
}

TEST(DaemonStateFile, APlantedSymlinkIsNeverFollowed) {
  FakeNvml fake;
  const auto state = options_in(fake.dir()).state_file;
  std::filesystem::create_directories(state.parent_path());
  std::ofstream(fake.dir() / "victim") << "precious";
  // The old writer went through STATE.tmp; the new one never uses a predictable name.
  std::filesystem::create_symlink(fake.dir() / "victim", state.string() + ".tmp");
  Daemon daemon(std::make_shared<const nvml::Nvml>(), options_in(fake.dir()));
  ASSERT_TRUE(daemon.handle(1, kRegister0).at("ok").get<bool>());
  ASSERT_TRUE(daemon.handle(1, kSet0).at("ok").get<bool>());
  EXPECT_EQ(file_text(fake.dir() / "victim"), "precious");
  EXPECT_EQ(Json::parse(file_text(state)).at("locked_gpus"), Json::array({0}));
}

TEST(DaemonStateFile, AWriteFailureRefusesTheLockButNeverStopsAReset) {
  FakeNvml fake;
  const auto state = options_in(fake.dir()).state_file;
  Daemon daemon(std::make_shared<const nvml::Nvml>(), options_in(fake.dir()));
  ASSERT_TRUE(daemon.handle(1, kRegister0).at("ok").get<bool>());
  ASSERT_TRUE(daemon.handle(1, kSet0).at("ok").get<bool>());
  ASSERT_TRUE(daemon.handle(1, R"({"op": "register", "gpus": [1]})").at("ok").get<bool>());
  // The state directory becomes a file: every later write fails.
  std::filesystem::remove_all(state.parent_path());
  std::ofstream(state.parent_path()) << "";
  const Json refused = daemon.handle(1, R"({"op": "set_sm_clock", "gpu": 1, "clock_mhz": 1500})");
  EXPECT_EQ(refused.at("error"),
            state.string() +
                ": cannot write the state file: Not a directory; the clock of gpu 1 was not "
                "changed");
  daemon.disconnect(1);
  EXPECT_EQ(fake.log(), kLockedThenReset);
}

TEST(DaemonStateFile, AnUnwritableStateFileStopsTheStartAfterTheResets) {
  FakeNvml fake;
  auto options = options_in(fake.dir());
  std::filesystem::create_directories(options.state_file);  // a directory where the file goes
  EXPECT_THROW(Daemon(std::make_shared<const nvml::Nvml>(), options), Error);
  EXPECT_FALSE(std::filesystem::exists(options.socket_path));
}

}  // namespace
}  // namespace kareus::runtime
