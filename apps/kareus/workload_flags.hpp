// SPDX-License-Identifier: Apache-2.0
// The workload flags shared by simulate, search and plan: either --workload FILE.json or
// --model/--gpu/--tp/... on the command line.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "kareus/workload/workload.hpp"

namespace kareus::cli {

// One workload of a what-if sweep and the name its outputs go under.
struct NamedWorkload {
  std::string name;  // the file's stem, or the model name for flags
  workload::Workload workload;
};

struct WorkloadFlags {
  // One file, or for `kareus plan` several and folders of *.json (a what-if sweep).
  std::vector<std::string> workload_files;
  std::string model;
  std::string gpu = "a100-sxm4-40gb";
  int tp = 1, cp = 1, pp = 1, dp = 1;
  int mbs = 1, seq = 4096, microbatches = 1;
  std::string recompute = "full";
  // False for a command that studies a few layers rather than training the whole model.
  bool training_job = true;
  // --tp, --cp, --pp and --dp as registered: a layout none of them names is the default one, which
  // resolve() widens to the smallest that fits when the model does not fit on one GPU.
  std::vector<const CLI::Option*> layout_options;
  // A GPU file to use instead of the catalogue's (a calibrated one, `kareus calibrate`).
  std::string gpu_file;

  void add_to(CLI::App& app);
  // --gpu-file, for the commands that run the emulator on the workload.
  void add_gpu_file_to(CLI::App& app);
  // Validates and loads; throws kareus::Error on bad input or more than one workload.
  workload::Workload resolve() const;
  // Every workload named, folders expanded to their *.json files in name order.
  std::vector<NamedWorkload> resolve_all() const;
};

}  // namespace kareus::cli
