// SPDX-License-Identifier: Apache-2.0
#include "kareus/scaleout/launch.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

#include "kareus/core/error.hpp"

namespace kareus::scaleout {
namespace {

// A positive integer from the environment, or 0 when unset or malformed.
int env_int(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return (*end == '\0' && v >= 0 && v < (1L << 30)) ? static_cast<int>(v) : 0;
}

}  // namespace

Launch detect_launch() {
  struct Source {
    const char* size;
    const char* rank;
  };
  for (const Source& s :
       {Source{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}, Source{"PMI_SIZE", "PMI_RANK"},
        Source{"SLURM_STEP_NUM_TASKS", "SLURM_PROCID"}}) {
    if (const int size = env_int(s.size); size > 0)
      return {size, env_int(s.rank), fmt::format("{}={}", s.size, size)};
  }
  // PMIx publishes the rank but not the size in the environment; a non-zero rank proves there
  // are at least two.
  if (const int rank = env_int("PMIX_RANK"); rank > 0)
    return {rank + 1, rank, fmt::format("PMIX_RANK={}", rank)};
  return {};
}

void require_mpi_for(const Launch& launch, bool built_with_mpi) {
  if (launch.size > 1 && !built_with_mpi)
    throw Error(fmt::format(
        "launched as {} ranks ({}), but this kareus was built without MPI: install an MPI "
        "(libopenmpi-dev, in scripts/setup.sh) and rebuild, or run one process without mpirun",
        launch.size, launch.evidence));
}

}  // namespace kareus::scaleout
