// SPDX-License-Identifier: Apache-2.0
// The few point-to-point operations scale-out needs, over MPI_COMM_WORLD. Kept apart so that the
// rest of scaleout compiles the same with and without MPI; without it, only init() is callable
// and says so.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kareus::scaleout::transport {

enum Tag : int {
  kTask = 1,     // coordinator -> worker: a piece of a batch to measure
  kResult = 2,   // worker -> coordinator: its readings, in the order of the task
  kFailure = 3,  // worker -> coordinator: why the task could not be measured
  kStop = 4,     // coordinator -> worker: no more work
};

struct Message {
  int source = -1;
  int tag = 0;
  std::string bytes;
};

// Whether this build has MPI.
bool available();
// MPI_Init with errors returned rather than aborting, so a failed call can name its peer rank.
void init();
void finalize();
int rank();
int size();
void send(int dest, Tag tag, std::string_view bytes);
// Waits for the next message from `source` (-1: any rank); nullopt as soon as `abandon` (when
// given) returns true.
std::optional<Message> receive(int source, bool (*abandon)() = nullptr);
// Whether an MPI call has failed: then MPI_Finalize would wait for a rank that is gone.
bool broken();

}  // namespace kareus::scaleout::transport
