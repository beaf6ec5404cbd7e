// SPDX-License-Identifier: Apache-2.0
// How many processes the launcher (mpirun, srun) started, read from the environment it sets, so a
// build without MPI can refuse a multi-rank launch instead of running N copies that race.
#pragma once

#include <string>

namespace kareus::scaleout {

struct Launch {
  int size = 1;  // ranks the launcher started; 1 when not launched by one
  int rank = 0;
  std::string evidence;  // the variable that told, e.g. "OMPI_COMM_WORLD_SIZE=2"
};

// OpenMPI's OMPI_COMM_WORLD_SIZE/RANK, MPICH/Hydra's PMI_SIZE/PMI_RANK, PMIx's PMIX_RANK and
// Slurm's SLURM_STEP_NUM_TASKS/SLURM_PROCID. Slurm's job-wide SLURM_NTASKS is not used: it is also
// set in the batch script itself, where kareus runs as one process before any srun.
Launch detect_launch();

// Throws kareus::Error naming the variable when `launch` has more than one rank and this kareus
// was built without MPI.
void require_mpi_for(const Launch& launch, bool built_with_mpi);

}  // namespace kareus::scaleout
