// The pool that runs a cpu-target launch: persistent workers plus the
// launching thread take runs of consecutive blocks from an atomic counter
// over the linear block index (x fastest). Private to the runtime; the tests use it directly to
// pin the participant count.
#ifndef TIDAL_RUNTIME_CPUTHREADPOOL_H
#define TIDAL_RUNTIME_CPUTHREADPOOL_H

#include "CpuFaults.h"
#include "CpuPrivateAtomics.h"
#include "tidal/runtime/CpuTarget.h"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tidal::runtime {

class CpuThreadPool {
public:
  // ParticipantCount threads run blocks: the thread that calls launch() and
  // ParticipantCount - 1 workers. 1 runs every block in order on the caller.
  explicit CpuThreadPool(unsigned ParticipantCount);
  ~CpuThreadPool();
  CpuThreadPool(const CpuThreadPool &) = delete;
  CpuThreadPool &operator=(const CpuThreadPool &) = delete;

  // The pool launchOnCpu uses, created on first use with
  // cpuThreadCountFromEnvironment() participants.
  static CpuThreadPool &process();

  // Runs Fn for every block of Grid; returns when all have finished.
  // Launches from several threads are serialised.
  void launch(TidalBlockFunction Fn, Dim3 Grid, Dim3 Block, void **Params,
              size_t DynamicSharedBytes);

  // A cooperative launch (a kernel with grid.sync(); CpuCooperativeLaunch.cpp):
  // every block on its own host thread, all at once, so that a grid barrier
  // can complete. Throws CudaDriverError (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)
  // above maxCooperativeBlocks().
  void launchCooperative(TidalBlockFunction Fn, Dim3 Grid, Dim3 Block, void **Params,
                         size_t DynamicSharedBytes);

  unsigned participantCount() const { return ParticipantCount; }

  // Launches of Fn run every block on the launching thread, which Fn is
  // told (TIDAL_CONTEXT_ALONE): for kernels dominated by global atomics.
  void setRunsAlone(TidalBlockFunction Fn, bool Alone);

  // Launches of Fn run the runs of consecutive blocks of a grid row that
  // they take through Coarse (HostABI.h; null: none), one block at a time
  // only those that Coarse leaves.
  void setCoarse(TidalBlockFunction Fn, TidalCoarseBlockFunction Coarse);
  // Launches of Fn (which runs alone) whose arrays qualify for Plan run on
  // every participant, each with private copies of Plan's arrays
  // (CpuPrivateAtomics.h); nothing: forget Fn.
  void setPrivatised(TidalBlockFunction Fn, std::optional<CpuPrivatePlan> Plan);

  // Launches of Fn (a debug-mode kernel) are watched: when one has not
  // finished after watchdogSeconds(), a report on stderr names the kernel
  // and the blocks still running on each host thread (docs/cpu-target.md).
  void setWatched(TidalBlockFunction Fn, bool Watched);

  // The first failure of the launch in progress (runtime entry points of
  // HostABI.h record it; launch() throws it). Defined in the .cpp.
  struct LaunchFailure;
  struct Participant;

private:
  std::unique_ptr<LaunchFailure> Failure;
  void throwIfFailed();

  void stopWorkers();
  void workerMain(Participant &Self);
  uint64_t waitForNextLaunch(uint32_t SeenGeneration);
  bool tryJoin(uint64_t ObservedState);
  void leave();
  void wakeWorkers(uint64_t SpareBlocks);
  void waitForWorkersToLeave();
  void runBlocks(Participant &Self);
  // runBlocks with the participant armed for faults and interrupts: a
  // fault in a block function is recorded as the launch's failure.
  void runBlocksGuarded(Participant &Self);
  // After Self's last block of a privatised launch: its copies into the
  // arrays (CpuPrivateAtomics.h).
  void combinePrivateCopies(Participant &Self);
  void watchdogMain();
  void reportSlowLaunch(double Seconds);

  // Cooperative launches: a participant per block (kept for the next one)
  // and their fault recoveries (the SIGINT handler's list meanwhile).
  std::vector<std::unique_ptr<Participant>> CooperativeParticipants;
  std::vector<FaultRecovery *> CooperativeRecoveries;
  bool LaunchCooperative = false;

  const unsigned ParticipantCount;
  // Participants[0] belongs to whichever thread is launching.
  std::unique_ptr<Participant[]> Participants;
  std::unique_ptr<FaultRecovery *[]> Recoveries; // of Participants, for SIGINT
  InterruptTarget Interrupt;
  std::vector<std::thread> Workers;

  std::mutex LaunchMutex; // one launch at a time

  // The launch being run; written by the launching thread before it
  // publishes State, read by workers after they have joined.
  TidalBlockFunction LaunchFunction = nullptr;
  Dim3 LaunchGrid{};
  Dim3 LaunchBlock{};
  void **LaunchParams = nullptr;
  size_t LaunchSharedBytes = 0;
  std::vector<TidalBlockFunction> AloneFunctions; // under LaunchMutex
  std::vector<TidalBlockFunction> WatchedFunctions; // under LaunchMutex
  std::vector<std::pair<TidalBlockFunction, TidalCoarseBlockFunction>>
      CoarseFunctions; // under LaunchMutex
  TidalCoarseBlockFunction LaunchCoarse = nullptr; // of LaunchFunction
  std::vector<std::pair<TidalBlockFunction, CpuPrivatePlan>> PrivateFunctions; // under LaunchMutex
  bool LaunchPrivatised = false; // participants use private copies (LaunchPrivate)
  PrivateLaunch LaunchPrivate;
  // The watchdog thread (started with the first watched launch) and the
  // watched launch in progress (0: none), under WatchMutex.
  std::thread Watchdog;
  std::mutex WatchMutex;
  std::condition_variable WatchCondition;
  uint64_t WatchedLaunch = 0;
  uint64_t WatchedLaunchCount = 0;
  bool LaunchAlone = false; // one host thread runs every block (TIDAL_CONTEXT_ALONE)
  uint64_t LaunchBlockCount = 0;
  uint32_t LaunchGeneration = 0;

  // Bits 63..32: generation of the latest launch; bit 31: the launch still
  // admits workers; bits 30..0: workers inside it.
  alignas(64) std::atomic<uint64_t> State{0};
  alignas(64) std::atomic<uint64_t> NextBlock{0};

  // Workers that found no launch while spinning sleep on WakeCondition.
  alignas(64) std::atomic<unsigned> SleepingWorkers{0};
  std::atomic<bool> Stopping{false};
  std::mutex WakeMutex;
  std::condition_variable WakeCondition;

  // The launching thread sleeps here when the last blocks run long.
  std::mutex LeaveMutex;
  std::condition_variable LeaveCondition;
};

// The kernel name of a block function, for fault reports (CpuModule
// registers every block function it compiles, and removes it when freed).
void setBlockFunctionName(TidalBlockFunction Fn, const std::string &KernelName);
void forgetBlockFunctionName(TidalBlockFunction Fn);
std::string blockFunctionName(TidalBlockFunction Fn);

// TIDAL_CPU_WATCHDOG_SECONDS when set to a positive number, else 10.
double watchdogSeconds();

// A TIDAL_CPU_THREADS value: an integer in [1, MaxCpuThreads], else nothing.
constexpr unsigned MaxCpuThreads = 1024;
std::optional<unsigned> parseCpuThreadCount(const char *Value);

// TIDAL_CPU_THREADS when set and valid (an invalid value is reported on
// stderr), else std::thread::hardware_concurrency().
unsigned cpuThreadCountFromEnvironment();

} // namespace tidal::runtime

#endif
