// What the pool's participants hold (CpuThreadPool.cpp, the runtime entry
// points of CpuHooks.cpp and the cooperative launches of
// CpuCooperativeLaunch.cpp): a participant's buffers, the launch's failure
// record and the grid barrier of a cooperative launch. Private to the
// runtime.
#ifndef TIDAL_RUNTIME_CPUPARTICIPANT_H
#define TIDAL_RUNTIME_CPUPARTICIPANT_H

#include "CpuThreadPool.h"

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <string>
#include <mutex>
#include <cstdlib>
#include <limits>
#include <sys/mman.h>
#include <unistd.h>

namespace tidal::runtime {

constexpr size_t SharedMemoryAlignment = 64;

// The blocks of a launch; throws RuntimeError for an invalid configuration.
uint64_t countBlocks(const Dim3 &Grid, const Dim3 &Block);

// "(x, y, z)", as errors name a block or a thread.
std::string describeDims(const Dim3 &D);

// Records the launch's first failure; later ones are dropped. Make runs
// under the failure's lock, inside a runtime call (CpuHooks.cpp).
void recordKernelFailure(TidalBlockContext *Context, const std::function<KernelError()> &Make);

// Shared memory (and the threads' frames) of one participant: 64-byte
// aligned, never null, grown on demand, reused across launches, not zeroed.
// Its own mapping, between two unmapped guard regions, with its end at the
// second: a kernel's store past a shared array (a wrong index, without
// debug=True) is a fault the pool recovers from, where in the malloc heap
// it corrupted the allocator's records and the process aborted later
// (docs/cpu-target.md, "Faults and interrupts").
class SharedMemoryBuffer {
public:
  // Unmapped address space on each side (no memory: PROT_NONE, reserved).
  static constexpr size_t GuardBytes = size_t(16) << 20;

  SharedMemoryBuffer() = default;
  SharedMemoryBuffer(const SharedMemoryBuffer &) = delete;
  SharedMemoryBuffer &operator=(const SharedMemoryBuffer &) = delete;
  ~SharedMemoryBuffer() { release(); }

  void *data() const { return Storage; }

  void reserve(size_t Bytes) {
    if (Storage && Bytes <= Capacity)
      return;
    const size_t Page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    if (Bytes > std::numeric_limits<size_t>::max() / 2 - 2 * GuardBytes)
      throw RuntimeError("shared memory of " + std::to_string(Bytes) + " bytes is too large");
    const size_t Rounded =
        (std::max(Bytes, SharedMemoryAlignment) + SharedMemoryAlignment - 1) /
        SharedMemoryAlignment * SharedMemoryAlignment;
    const size_t Pages = (Rounded + Page - 1) / Page * Page;
    const size_t Total = GuardBytes + Pages + GuardBytes;
    void *Base = mmap(nullptr, Total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
    if (Base == MAP_FAILED)
      throw RuntimeError("cannot reserve " + std::to_string(Total) +
                         " bytes of address space for shared memory");
    char *Usable = static_cast<char *>(Base) + GuardBytes;
    if (mprotect(Usable, Pages, PROT_READ | PROT_WRITE) != 0) {
      munmap(Base, Total);
      throw RuntimeError("cannot allocate " + std::to_string(Bytes) +
                         " bytes of shared memory");
    }
    release();
    Mapping = Base;
    MappingBytes = Total;
    Storage = Usable + (Pages - Rounded); // its end at the second guard
    Capacity = Rounded;
  }

private:
  void release() {
    if (Mapping)
      munmap(Mapping, MappingBytes);
    Mapping = Storage = nullptr;
    MappingBytes = Capacity = 0;
  }

  void *Mapping = nullptr;
  size_t MappingBytes = 0;
  void *Storage = nullptr;
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
  PrivateCopies Private;            // of a privatised launch's arrays
  CpuThreadPool::LaunchFailure *Failure = nullptr;
  // A cooperative launch's grid barrier (CpuCooperativeLaunch.cpp); null
  // in other launches.
  CpuGridBarrier *Grid = nullptr;
  // While a coarsened block function runs: the blocks it was given (from
  // Context.block_idx), which a fault report names; 0 otherwise.
  uint32_t CoarseBlocks = 0;
};

} // namespace tidal::runtime

#endif
