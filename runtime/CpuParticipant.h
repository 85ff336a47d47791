// What the pool's participants hold (CpuThreadPool.cpp and the cooperative
// launches of CpuCooperativeLaunch.cpp): a participant's buffers, the
// launch's failure record and the grid barrier of a cooperative launch.
// Private to the runtime.
#ifndef TIDAL_RUNTIME_CPUPARTICIPANT_H
#define TIDAL_RUNTIME_CPUPARTICIPANT_H

#include "CpuThreadPool.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <cstdlib>
#include <limits>

namespace tidal::runtime {

constexpr size_t SharedMemoryAlignment = 64;

// The blocks of a launch; throws RuntimeError for an invalid configuration.
uint64_t countBlocks(const Dim3 &Grid, const Dim3 &Block);

// Dynamic shared memory of one participant: 64-byte aligned, never null,
// grown on demand, reused across launches, not zeroed.
class SharedMemoryBuffer {
public:
  void *data() const { return Storage.get(); }

  void reserve(size_t Bytes) {
    if (Storage && Bytes <= Capacity)
      return;
    if (Bytes > std::numeric_limits<size_t>::max() - SharedMemoryAlignment)
      throw RuntimeError("dynamic shared memory of " + std::to_string(Bytes) +
                         " bytes is too large");
    const size_t Rounded =
        (std::max(Bytes, SharedMemoryAlignment) + SharedMemoryAlignment - 1) /
        SharedMemoryAlignment * SharedMemoryAlignment;
    void *Memory = std::aligned_alloc(SharedMemoryAlignment, Rounded);
    if (!Memory)
      throw RuntimeError("cannot allocate " + std::to_string(Bytes) +
                         " bytes of dynamic shared memory");
    Storage.reset(Memory);
    Capacity = Rounded;
  }

private:
  struct Free {
    void operator()(void *Memory) const { std::free(Memory); }
  };
  std::unique_ptr<void, Free> Storage;
  size_t Capacity = 0;
};

// A cooperative launch's grid barrier: every block waits in
// __tidal_cpu_grid_sync until all blocks of the launch are at a grid.sync()
// (or the launch fails, is interrupted, or a block finished without it).
struct CpuGridBarrier {
  std::mutex Mutex;
  std::condition_variable Condition;
  uint64_t Blocks = 0;     // of the launch
  uint64_t Waiting = 0;    // at the current barrier
  uint64_t Finished = 0;   // returned from the block function
  uint64_t Generation = 0; // barriers completed
  bool Broken = false;     // a block finished while others wait: never completes
  std::string KernelName;
  const std::atomic<bool> *Failed = nullptr;
  const std::atomic<bool> *Interrupted = nullptr;

  // A block of the launch returned from its block function.
  void blockFinished(TidalBlockContext *Context);
};

struct CpuThreadPool::LaunchFailure {
  std::atomic<bool> Failed{false};
  std::mutex Mutex;
  std::unique_ptr<KernelError> Error; // set once Failed, under Mutex
};

// What the runtime entry points reach through TidalBlockContext::runtime.
struct alignas(64) CpuThreadPool::Participant {
  TidalBlockContext Context{};
  FaultRecovery Recovery;
  SharedMemoryBuffer DynamicShared; // ctx->dynamic_shared
  SharedMemoryBuffer Shared;        // __tidal_cpu_shared
  SharedMemoryBuffer Frame;         // __tidal_cpu_frame
  CpuThreadPool::LaunchFailure *Failure = nullptr;
  // A cooperative launch's grid barrier (CpuCooperativeLaunch.cpp); null
  // in other launches.
  CpuGridBarrier *Grid = nullptr;
};

} // namespace tidal::runtime

#endif
