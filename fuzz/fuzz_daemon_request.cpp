// SPDX-License-Identifier: Apache-2.0
#include <cstdlib>
#include <string>

#include "fuzz_main.hpp"
#include "kareus/runtime/daemon.hpp"
#include "kareus/runtime/daemon_request.hpp"

// Eight GPUs, as on a DGX; the request's checks do not depend on the count beyond its range.
void read_input(std::string_view text) {
  try {
    kareus::runtime::parse_daemon_request(text, 8);
  } catch (const kareus::Error& e) {
    // The daemon sends the message back; whatever bytes it quotes, the reply must be one line of
    // valid JSON or the client loses its place in the stream.
    const std::string reply =
        kareus::runtime::Daemon::reply_line({{"ok", false}, {"error", e.what()}});
    if (reply.find('\n') != reply.size() - 1 ||
        !kareus::Json::accept(reply.substr(0, reply.size() - 1)))
      std::abort();
    throw;
  }
}
