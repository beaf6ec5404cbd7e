// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdlib>

#include "kareus/core/error.hpp"
#include "kareus/scaleout/launch.hpp"

namespace kareus::scaleout {
namespace {

// Clears every launcher variable for the test and restores nothing: ctest runs each test in its
// own process.
void clear_launcher_env() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE", "PMI_RANK",
                           "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "PMIX_RANK", "SLURM_NTASKS"})
    ::unsetenv(name);
}

TEST(Launch, WithoutALauncherIsOneRank) {
  clear_launcher_env();
  const Launch l = detect_launch();
  EXPECT_EQ(l.size, 1);
  EXPECT_EQ(l.rank, 0);
}

TEST(Launch, ReadsOpenMpiSlurmAndPmiVariables) {
  clear_launcher_env();
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  Launch l = detect_launch();
  EXPECT_EQ(l.size, 4);
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.evidence, "OMPI_COMM_WORLD_SIZE=4");

  clear_launcher_env();
  ::setenv("SLURM_STEP_NUM_TASKS", "16", 1);
  ::setenv("SLURM_PROCID", "5", 1);
  l = detect_launch();
  EXPECT_EQ(l.size, 16);
  EXPECT_EQ(l.rank, 5);

  clear_launcher_env();
  ::setenv("PMI_SIZE", "2", 1);
  EXPECT_EQ(detect_launch().size, 2);

  clear_launcher_env();
  ::setenv("PMIX_RANK", "2", 1);
  EXPECT_GE(detect_launch().size, 3);
}

// An sbatch script runs kareus as one process with the job's task count in SLURM_NTASKS.
TEST(Launch, SlurmJobTaskCountAloneIsNotALaunch) {
  clear_launcher_env();
  ::setenv("SLURM_NTASKS", "8", 1);
  EXPECT_EQ(detect_launch().size, 1);
}

TEST(Launch, MalformedSizeIsIgnored) {
  clear_launcher_env();
  ::setenv("OMPI_COMM_WORLD_SIZE", "two", 1);
  EXPECT_EQ(detect_launch().size, 1);
}

TEST(Launch, MultiRankLaunchOfABuildWithoutMpiIsRefusedNamingTheVariable) {
  const Launch two{2, 1, "OMPI_COMM_WORLD_SIZE=2"};
  try {
    require_mpi_for(two, false);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("OMPI_COMM_WORLD_SIZE=2"), std::string::npos) << what;
    EXPECT_NE(what.find("built without MPI"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(require_mpi_for(two, true));
  EXPECT_NO_THROW(require_mpi_for(Launch{}, false));
}

}  // namespace
}  // namespace kareus::scaleout
