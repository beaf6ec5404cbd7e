// kareusd: the Kareus clock daemon. Run it as root (or with CAP_SYS_ADMIN) next to the training
// job; the job's frequency controller then changes clocks through it (KAREUSD_SOCKET).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "kareus/core/error.hpp"
#include "kareus/nvml/nvml.hpp"
#include "kareus/runtime/daemon.hpp"

int main(int argc, char** argv) {
  kareus::runtime::DaemonOptions options;
  options.socket_path = kareus::runtime::default_daemon_socket();
  std::string mode = "0666";
  CLI::App app{
      "kareusd: serves SM clock changes to Kareus frequency controllers over a Unix socket"};
  app.add_option("--socket", options.socket_path,
                 "Unix socket to listen on (default: "
                 "$KAREUSD_SOCKET or /run/kareus/kareusd.sock)");
  app.add_option("--state-file", options.state_file,
                 "Where the locked GPUs are recorded, so a restarted daemon resets them")
      ->capture_default_str();
  app.add_option("--socket-mode", mode, "Permissions of the socket, octal")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    std::size_t used = 0;
    options.socket_mode = static_cast<unsigned>(std::stoul(mode, &used, 8));
    kareus::require(used == mode.size() && options.socket_mode <= 0777, "kareusd", "--socket-mode",
                    mode, "expected octal permissions such as 0660");
    auto nvml = std::make_shared<const kareus::nvml::Nvml>();
    kareus::runtime::Daemon daemon(nvml, options);
    std::printf("kareusd: listening on %s\n", options.socket_path.c_str());
    std::fflush(stdout);
    daemon.run();
  } catch (const std::logic_error&) {
    std::fprintf(stderr, "kareusd: --socket-mode = %s: expected octal permissions\n", mode.c_str());
    return 2;
  } catch (const kareus::Error& e) {
    std::fprintf(stderr, "kareusd: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    // Caught so that the stack unwinds: the Daemon destructor resets every GPU still locked.
    std::fprintf(stderr, "kareusd: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
