// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "kareus/core/error.hpp"
#include "transport.hpp"

#ifdef KAREUS_WITH_MPI
#include <mpi.h>
#endif

namespace kareus::scaleout::transport {

#ifdef KAREUS_WITH_MPI

namespace {

// Small against a batch piece (16 emulated configurations take milliseconds, real ones minutes).
constexpr std::chrono::microseconds kMaxPause(200);
// A rank that has waited kLongWait is idle (the coordinator is solving, or has no work for it)
// and looks less often, so that it leaves the core to the ranks that work.
constexpr std::chrono::microseconds kLongWait(50000);
constexpr std::chrono::microseconds kIdlePause(2000);

bool g_broken = false;

void check(int code, std::string_view what, int peer) {
  if (code == MPI_SUCCESS) return;
  g_broken = true;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(
      fmt::format("MPI {} {} failed: {}", what,
                  peer < 0 ? std::string("with any rank") : fmt::format("with rank {}", peer),
                  std::string_view(text, static_cast<std::size_t>(length))));
}

}  // namespace

bool available() {
  return true;
}

void init() {
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) MPI_Init(nullptr, nullptr);
  // The default handler aborts the whole job on the first failed call; returning the error lets
  // the coordinator say which rank it was talking to.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

void finalize() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void send(int dest, Tag tag, std::string_view bytes) {
  check(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD),
        "send", dest);
}

bool broken() {
  return g_broken;
}

std::optional<Message> receive(int source, bool (*abandon)()) {
  MPI_Status status;
  const int from = source < 0 ? MPI_ANY_SOURCE : source;
  // A blocking MPI_Probe spins a core at full speed while it waits; a waiting rank shares its
  // cores with the ranks that work (oversubscribed nodes, the coordinator's serial solver), so it
  // polls and sleeps instead, at most kMaxPause between looks.
  std::chrono::microseconds pause(10);
  std::chrono::microseconds waited(0);
  for (int arrived = 0;;) {
    check(MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &status), "receive", source);
    if (arrived) break;
    if (abandon && abandon()) return std::nullopt;
    std::this_thread::sleep_for(pause);
    waited += pause;
    pause = std::min(pause * 2, waited < kLongWait ? kMaxPause : kIdlePause);
  }
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Message m{status.MPI_SOURCE, status.MPI_TAG, std::string(static_cast<std::size_t>(count), '\0')};
  check(MPI_Recv(m.bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE),
        "receive", status.MPI_SOURCE);
  return m;
}

#else

namespace {

[[noreturn]] void unavailable() {
  throw Error("this kareus was built without MPI; install libopenmpi-dev and rebuild");
}

}  // namespace

bool available() {
  return false;
}
void init() {
  unavailable();
}
void finalize() {}
int rank() {
  return 0;
}
int size() {
  return 1;
}
void send(int, Tag, std::string_view) {
  unavailable();
}
std::optional<Message> receive(int, bool (*)()) {
  unavailable();
}
bool broken() {
  return false;
}

#endif

}  // namespace kareus::scaleout::transport
