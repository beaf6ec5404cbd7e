// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "cli_messages.hpp"
#include "commands.hpp"
#include "field_spelling.hpp"
#include "flag_checks.hpp"
#include "help_format.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/printable.hpp"
#include "kareus/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "Kareus: energy-optimal GPU execution plans for LLM training and inference.\n"
      "Runs on a calibrated GPU emulator by default."};
  // Before the subcommands, which take the formatter they are created with.
  app.formatter(std::make_shared<kareus::cli::WrappingFormatter>());
  app.set_version_flag("--version", std::string("kareus ") + kareus::kVersion);
  app.require_subcommand(1);
  kareus::cli::register_gpus_command(app);
  kareus::cli::register_models_command(app);
  kareus::cli::register_devices_command(app);
  kareus::cli::register_simulate_command(app);
  kareus::cli::register_overlap_command(app);
  kareus::cli::register_search_command(app);
  kareus::cli::register_plan_command(app);
  kareus::cli::register_report_command(app);
  kareus::cli::register_compare_command(app);
  kareus::cli::register_calibrate_command(app);
  kareus::cli::register_energylens_command(app);
  kareus::cli::register_kernel_dvfs_command(app);
  kareus::cli::register_pipeline_solve_command(app);
  kareus::cli::register_run_schedule_command(app);
  kareus::cli::check_numeric_flags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s\n", kareus::cli::parse_error_message(app, e).c_str());
    return 2;
  } catch (const kareus::Error& e) {
    const std::string message = e.message(kareus::cli::field_speller(app));
    std::fprintf(stderr, "kareus: %s\n", kareus::printable(message).c_str());
    return kareus::exit_code(e.kind());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kareus: internal error: %s\n", kareus::printable(e.what()).c_str());
    return 3;
  }
  return 0;
}
