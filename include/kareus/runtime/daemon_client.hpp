// SPDX-License-Identifier: Apache-2.0
// A connection to kareusd (docs/runtime.md). Each call is one request and its response; a failed
// request throws Error with the daemon's message.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/core/units.hpp"
#include "kareus/runtime/clock_backend.hpp"

namespace kareus::runtime {

struct DaemonGpu {
  unsigned gpu = 0;
  std::string name;
  std::vector<MHz> supported_sm_clocks;  // highest first
};

struct DaemonEnergy {
  Joules energy;  // cumulative counter
  Watts power;
};

class DaemonClient {
 public:
  explicit DaemonClient(const std::filesystem::path& socket_path);
  ~DaemonClient();
  DaemonClient(const DaemonClient&) = delete;
  DaemonClient& operator=(const DaemonClient&) = delete;

  // Claims the GPUs for this connection; they are reset when it closes.
  std::vector<DaemonGpu> register_gpus(const std::vector<unsigned>& gpus);
  void set_sm_clock(unsigned gpu, MHz clock);
  void reset_sm_clock(unsigned gpu);
  DaemonEnergy read_energy(unsigned gpu);
  const std::filesystem::path& socket_path() const { return socket_path_; }

 private:
  Json request(const Json& message);

  std::filesystem::path socket_path_;
  int fd_;
  std::string buffer_;
  std::mutex mutex_;
};

// The controller's backend through kareusd; registers `gpu` on construction.
class DaemonClockBackend final : public ClockBackend {
 public:
  DaemonClockBackend(std::shared_ptr<DaemonClient> client, unsigned gpu);
  void set_sm_clock(MHz clock) override;
  void reset_sm_clock() override;
  std::vector<MHz> supported_sm_clocks() override;
  std::string describe() const override;
  std::string gpu_name() override { return name_; }

 private:
  std::shared_ptr<DaemonClient> client_;
  unsigned gpu_;
  std::vector<MHz> supported_;
  std::string name_;
};

}  // namespace kareus::runtime
