// SPDX-License-Identifier: Apache-2.0
// Subcommands of the kareus CLI, one file each. A subcommand throws kareus::Error on bad input;
// main() prints it as one line on stderr and exits with 2. Output is built fully before it is
// printed, so an error never leaves partial output behind.
#pragma once

#include <CLI/CLI.hpp>

namespace kareus::cli {

void register_energylens_command(CLI::App& app);
void register_kernel_dvfs_command(CLI::App& app);
void register_gpus_command(CLI::App& app);
void register_models_command(CLI::App& app);
void register_simulate_command(CLI::App& app);
void register_search_command(CLI::App& app);
void register_plan_command(CLI::App& app);
void register_pipeline_solve_command(CLI::App& app);
void register_run_schedule_command(CLI::App& app);
void register_overlap_command(CLI::App& app);
void register_devices_command(CLI::App& app);
void register_report_command(CLI::App& app);
void register_compare_command(CLI::App& app);
void register_calibrate_command(CLI::App& app);

}  // namespace kareus::cli
