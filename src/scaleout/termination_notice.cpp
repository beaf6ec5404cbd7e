#include "termination_notice.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <csignal>
#include <cstring>

namespace kareus::scaleout {
namespace {

// Two buffers, so a notice is never read by the handler while it is being rewritten.
std::array<std::array<char, 512>, 2> g_notices{};
std::array<std::size_t, 2> g_lengths{};
std::atomic<int> g_current{0};

extern "C" void on_terminate(int sig) {
  const int i = g_current.load();
  if (g_lengths[static_cast<std::size_t>(i)] > 0) {
    const auto written = ::write(2, g_notices[static_cast<std::size_t>(i)].data(),
                                 g_lengths[static_cast<std::size_t>(i)]);
    (void)written;
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void install_termination_notice() {
  static const bool installed = [] {
    std::signal(SIGTERM, on_terminate);
    return true;
  }();
  (void)installed;
}

void set_termination_notice(std::string_view text) {
  const int next = 1 - g_current.load();
  auto& buffer = g_notices[static_cast<std::size_t>(next)];
  const std::size_t n = std::min(text.size(), buffer.size());
  std::memcpy(buffer.data(), text.data(), n);
  g_lengths[static_cast<std::size_t>(next)] = n;
  g_current.store(next);
}

}  // namespace kareus::scaleout
