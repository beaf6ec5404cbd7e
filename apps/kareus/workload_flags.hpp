// The workload flags shared by simulate, search and plan: either --workload FILE.json or
// --model/--gpu/--tp/... on the command line.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "kareus/workload/workload.hpp"

namespace kareus::cli {

struct WorkloadFlags {
  std::string workload_file;
  std::string model;
  std::string gpu = "a100-sxm4-40gb";
  int tp = 1, cp = 1, pp = 1, dp = 1;
  int mbs = 1, seq = 4096, microbatches = 1;
  std::string recompute = "full";

  void add_to(CLI::App& app);
  // Validates and loads; throws kareus::Error on bad input.
  workload::Workload resolve() const;
};

}  // namespace kareus::cli
