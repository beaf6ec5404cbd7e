// SPDX-License-Identifier: Apache-2.0
// kareusd as its own process, as in production, against the fake NVML: the fixture and helpers
// the daemon tests share.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "fake_nvml/fake_nvml_fixture.hpp"
#include "kareus/core/json.hpp"
#include "raw_client.hpp"

namespace kareus::testing {

using Lines = std::vector<std::string>;

inline const Lines kLockedThenReset = {"nvmlDeviceSetGpuLockedClocks 0 1200 1200",
                                       "nvmlDeviceResetGpuLockedClocks 0"};

// Waits up to 10 s for another process to write the expected log (the daemon reacts
// asynchronously).
inline Lines wait_for_log(const FakeNvml& fake, std::size_t lines) {
  for (int i = 0; i < 1000 && fake.log().size() < lines; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return fake.log();
}

inline Json state_of(const FakeNvml& fake) {
  std::ifstream in(fake.dir() / "state.json");
  return Json::parse(in);
}

// The locked GPUs in kareusd's state file once they equal `expected`, or after 10 s: the daemon
// saves its state after the NVML reset, so the log can show the reset before the file does.
inline Json wait_for_locked_gpus(const FakeNvml& fake, const Json& expected) {
  Json locked = state_of(fake).at("locked_gpus");
  for (int i = 0; i < 1000 && locked != expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    locked = state_of(fake).at("locked_gpus");
  }
  return locked;
}

// {"ok": ...} of a reply line; false for no reply.
inline bool ok(const std::optional<std::string>& reply) {
  return reply && Json::parse(*reply).at("ok").get<bool>();
}

class DaemonProcess : public ::testing::Test {
 protected:
  std::vector<std::string> daemon_argv(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> argv = {KAREUSD_PATH, "--socket", socket_.string(), "--state-file",
                                     (fake_.dir() / "state.json").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  std::unique_ptr<ChildProcess> start_daemon(const std::vector<std::string>& extra = {}) {
    auto d = std::make_unique<ChildProcess>(daemon_argv(extra));
    EXPECT_EQ(d->read_line(), "kareusd: listening on " + socket_.string());
    return d;
  }
  // A runtime_child client holding `gpu` at 1200 MHz, under `as` = {uid, gid} when given.
  std::unique_ptr<ChildProcess> spawn_client(const std::vector<std::string>& as = {},
                                             const std::string& gpu = "0") {
    std::vector<std::string> argv = {KAREUS_RUNTIME_CHILD_PATH};
    if (!as.empty()) argv.insert(argv.end(), {"as", as[0], as[1]});
    argv.insert(argv.end(), {"client", socket_.string(), gpu, "1200"});
    return std::make_unique<ChildProcess>(argv);
  }
  std::unique_ptr<ChildProcess> start_client() {
    auto c = spawn_client();
    EXPECT_EQ(c->read_line(), "ready");
    return c;
  }

  FakeNvml fake_;
  std::filesystem::path socket_ = fake_.dir() / "kareusd.sock";
};

}  // namespace kareus::testing
