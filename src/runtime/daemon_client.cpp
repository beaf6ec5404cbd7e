// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/daemon_client.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

#include "kareus/core/error.hpp"
#include "unix_socket.hpp"

namespace kareus::runtime {

DaemonClient::DaemonClient(const std::filesystem::path& socket_path)
    : socket_path_(socket_path), fd_(connect_unix(socket_path)) {}

DaemonClient::~DaemonClient() {
  close(fd_);
}

Json DaemonClient::request(const Json& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string line;
  // Read even when the send failed: a daemon that refuses a connection says why, then closes.
  const bool sent = send_all(fd_, message.dump() + "\n");
  if (!read_line(fd_, buffer_, line) || (!sent && line.empty())) {
    throw Error::io(fmt::format("kareusd at {} closed the connection", socket_path_.string()));
  }
  const JsonDocument doc = JsonDocument::parse(line, "kareusd response");
  const JsonValue reply = doc.root();
  if (!reply.at("ok").as_bool()) {
    throw Error::device(fmt::format("kareusd: {}", reply.string("error")));
  }
  return reply.raw();
}

std::vector<DaemonGpu> DaemonClient::register_gpus(const std::vector<unsigned>& gpus) {
  const Json reply = request({{"op", "register"}, {"gpus", gpus}});
  std::vector<DaemonGpu> out;
  for (const Json& g : reply.at("gpus")) {
    DaemonGpu gpu;
    gpu.gpu = g.at("gpu").get<unsigned>();
    gpu.name = g.at("name").get<std::string>();
    for (unsigned f : g.at("supported_sm_clocks_mhz")) gpu.supported_sm_clocks.emplace_back(f);
    out.push_back(std::move(gpu));
  }
  return out;
}

void DaemonClient::set_sm_clock(unsigned gpu, MHz clock) {
  request({{"op", "set_sm_clock"}, {"gpu", gpu}, {"clock_mhz", std::lround(clock.value())}});
}

void DaemonClient::reset_sm_clock(unsigned gpu) {
  request({{"op", "reset_sm_clock"}, {"gpu", gpu}});
}

DaemonEnergy DaemonClient::read_energy(unsigned gpu) {
  const Json reply = request({{"op", "read_energy"}, {"gpu", gpu}});
  return {Joules(reply.at("energy_j").get<double>()), Watts(reply.at("power_w").get<double>())};
}

DaemonClockBackend::DaemonClockBackend(std::shared_ptr<DaemonClient> client, unsigned gpu)
    : client_(std::move(client)), gpu_(gpu) {
  const DaemonGpu registered = client_->register_gpus({gpu}).at(0);
  supported_ = registered.supported_sm_clocks;
  name_ = registered.name;
}

void DaemonClockBackend::set_sm_clock(MHz clock) {
  client_->set_sm_clock(gpu_, clock);
}

void DaemonClockBackend::reset_sm_clock() {
  client_->reset_sm_clock(gpu_);
}

std::vector<MHz> DaemonClockBackend::supported_sm_clocks() {
  return supported_;
}

std::string DaemonClockBackend::describe() const {
  return fmt::format("kareusd ({}) gpu {}", client_->socket_path().string(), gpu_);
}

}  // namespace kareus::runtime
