// Launch protocol, in the order the launching thread follows it:
//   1. write the launch fields, reset NextBlock;
//   2. publish State = (generation + 1, admits workers, 0 inside);
//   3. wake sleeping workers (only as many as there are spare blocks);
//   4. take blocks itself until NextBlock runs past the last one;
//   5. clear "admits workers" and wait until no worker is inside.
// A worker joins by incrementing the "inside" count with a CAS that only
// succeeds while the launch it saw still admits workers, so no worker ever
// reads the fields of a launch that has returned. The launching thread can
// always finish alone, so a worker that is late, or missing, costs nothing.
#include "CpuThreadPool.h"
#include "CpuParticipant.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <system_error>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace tidal::runtime {

namespace {

constexpr uint64_t AdmitsWorkers = uint64_t(1) << 31;
constexpr uint64_t WorkersInsideMask = AdmitsWorkers - 1;
constexpr uint64_t MaxBlocksPerLaunch = uint64_t(1) << 62;
// The longest run of consecutive blocks a participant takes at once (the
// runs are also at most an eighth of its share of what is left, below).
// Long runs stream: a coarsened block function's x loop is as long as the
// part of the run in a grid row, and two workers that each read their own
// long run of a 1-D array draw more bandwidth than two that alternate short
// ones. With 64 (1-D blocks of 256 floats, 64 KiB per run), the vs-openmp
// reduction of 2^24 floats took 2.38-2.74 ms on two threads, 2.03-2.08 ms
// with 1,024 (minimum of 60 launches, three turns alternating; 4,096 and
// unbounded: the same as 1,024), and the histogram 3.60-3.77 against
// 3.40-3.42 ms (two turns).
constexpr uint64_t MaxBlocksPerTake = 1024;

// Blocks run by coarsened block functions since the process started.
std::atomic<uint64_t> CoarsenedBlocks{0};

// How long an idle worker, or a launcher waiting for workers, polls before it
// sleeps: long enough to catch launches issued back to back.
constexpr std::chrono::microseconds SpinBeforeSleep(100);

uint32_t generationOf(uint64_t State) { return uint32_t(State >> 32); }

void relaxCpu() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Polls Done() for up to SpinBeforeSleep; true as soon as it holds.
template <typename Predicate> bool spinUntil(Predicate Done) {
  const auto Deadline = std::chrono::steady_clock::now() + SpinBeforeSleep;
  for (unsigned Round = 1;; ++Round) {
    if (Done())
      return true;
    relaxCpu();
    if (Round % 64 == 0 && std::chrono::steady_clock::now() >= Deadline)
      return false;
  }
}

} // namespace

std::string describeDims(const Dim3 &D) {
  return "(" + std::to_string(D[0]) + ", " + std::to_string(D[1]) + ", " +
         std::to_string(D[2]) + ")";
}

uint64_t countBlocks(const Dim3 &Grid, const Dim3 &Block) {
  for (unsigned D = 0; D < 3; ++D)
    if (Grid[D] == 0 || Block[D] == 0)
      throw RuntimeError("invalid launch configuration: grid " +
                         describeDims(Grid) + ", block " + describeDims(Block) +
                         " (every dimension must be at least 1)");
  const Dim3 MaxBlock = {TIDAL_MAX_BLOCK_DIM_X, TIDAL_MAX_BLOCK_DIM_Y, TIDAL_MAX_BLOCK_DIM_Z};
  const Dim3 MaxGrid = {TIDAL_MAX_GRID_DIM_X, TIDAL_MAX_GRID_DIM_Y, TIDAL_MAX_GRID_DIM_Z};
  for (unsigned D = 0; D < 3; ++D)
    if (Block[D] > MaxBlock[D] || Grid[D] > MaxGrid[D])
      throw RuntimeError("invalid launch configuration: grid " + describeDims(Grid) +
                         ", block " + describeDims(Block) + " is beyond CUDA's limits: block " +
                         describeDims(MaxBlock) + ", grid " + describeDims(MaxGrid));
  if (uint64_t(Block[0]) * Block[1] * Block[2] > TIDAL_MAX_THREADS_PER_BLOCK)
    throw RuntimeError("invalid launch configuration: block " + describeDims(Block) +
                       " has more than " + std::to_string(TIDAL_MAX_THREADS_PER_BLOCK) +
                       " threads");
  uint64_t Count = uint64_t(Grid[0]) * Grid[1];
  if (__builtin_mul_overflow(Count, uint64_t(Grid[2]), &Count) ||
      Count > MaxBlocksPerLaunch)
    throw RuntimeError("invalid launch configuration: grid " +
                       describeDims(Grid) + " has too many blocks");
  return Count;
}

CpuThreadPool::CpuThreadPool(unsigned Count)
    : Failure(std::make_unique<LaunchFailure>()),
      ParticipantCount(std::max(Count, 1u)),
      Participants(new Participant[ParticipantCount]),
      Recoveries(new FaultRecovery *[ParticipantCount]) {
  installFaultHandlers();
  for (unsigned I = 0; I < ParticipantCount; ++I) {
    Recoveries[I] = &Participants[I].Recovery;
    Participants[I].DynamicShared.reserve(0);
    Participants[I].Failure = Failure.get();
    Participants[I].Context.runtime = &Participants[I];
  }
  Interrupt.Recoveries = Recoveries.get();
  Interrupt.RecoveryCount = ParticipantCount;
  registerInterruptTarget(&Interrupt);
  try {
    Workers.reserve(ParticipantCount - 1);
    for (unsigned I = 1; I < ParticipantCount; ++I)
      Workers.emplace_back([this, I] {
#if defined(__linux__)
        pthread_setname_np(pthread_self(),
                           ("tidal-cpu-" + std::to_string(I)).c_str());
#endif
        workerMain(Participants[I]);
      });
  } catch (const std::system_error &E) {
    stopWorkers();
    unregisterInterruptTarget(&Interrupt);
    throw RuntimeError("cannot start " + std::to_string(ParticipantCount - 1) +
                       " cpu worker threads: " + E.what());
  }
}

CpuThreadPool::~CpuThreadPool() {
  stopWorkers();
  unregisterInterruptTarget(&Interrupt);
}

void CpuThreadPool::stopWorkers() {
  {
    std::lock_guard<std::mutex> Lock(WakeMutex);
    Stopping.store(true);
  }
  WakeCondition.notify_all();
  {
    std::lock_guard<std::mutex> Lock(WatchMutex);
  }
  WatchCondition.notify_all();
  if (Watchdog.joinable())
    Watchdog.join();
  for (std::thread &Worker : Workers)
    Worker.join();
  Workers.clear();
}

CpuThreadPool &CpuThreadPool::process() {
  // Never destroyed: another thread may still be launching while the
  // process exits (a Python daemon thread, say).
  static CpuThreadPool *const Pool =
      new CpuThreadPool(cpuThreadCountFromEnvironment());
  return *Pool;
}

void CpuThreadPool::launch(TidalBlockFunction Fn, Dim3 Grid, Dim3 Block,
                           void **Params, size_t DynamicSharedBytes) {
  if (!Fn)
    throw RuntimeError("launch of a null block function");
  const uint64_t BlockCount = countBlocks(Grid, Block);

  std::lock_guard<std::mutex> Lock(LaunchMutex);
  for (unsigned I = 0; I < ParticipantCount; ++I)
    Participants[I].DynamicShared.reserve(DynamicSharedBytes);

  LaunchFunction = Fn;
  LaunchCoarse = nullptr;
  for (const auto &[Function, Coarse] : CoarseFunctions)
    if (Function == Fn)
      LaunchCoarse = Coarse;
  LaunchGrid = Grid;
  LaunchBlock = Block;
  LaunchParams = Params;
  LaunchSharedBytes = DynamicSharedBytes;
  LaunchBlockCount = BlockCount;
  NextBlock.store(0, std::memory_order_relaxed);
  // A SIGINT from now on interrupts this launch (CpuFaults.h).
  Interrupt.Interrupted.store(false, std::memory_order_relaxed);
  Interrupt.LaunchInProgress.store(true);
  struct EndOfLaunch {
    InterruptTarget &Target;
    ~EndOfLaunch() { Target.LaunchInProgress.store(false); }
  };

  // Debug-mode kernels are watched (a watchdog thread reports launches that
  // do not finish).
  struct WatchScope {
    CpuThreadPool *Pool = nullptr;
    ~WatchScope() {
      if (!Pool)
        return;
      {
        std::lock_guard<std::mutex> Lock(Pool->WatchMutex);
        Pool->WatchedLaunch = 0;
      }
      Pool->WatchCondition.notify_all();
    }
  } Watch;
  if (!WatchedFunctions.empty() &&
      std::find(WatchedFunctions.begin(), WatchedFunctions.end(), Fn) != WatchedFunctions.end()) {
    {
      std::lock_guard<std::mutex> WatchLock(WatchMutex);
      WatchedLaunch = ++WatchedLaunchCount;
      if (!Watchdog.joinable())
        Watchdog = std::thread([this] { watchdogMain(); });
    }
    WatchCondition.notify_all();
    Watch.Pool = this;
  }

  const uint64_t SpareBlocks = BlockCount - 1;
  LaunchAlone = SpareBlocks == 0 || Workers.empty() ||
                std::find(AloneFunctions.begin(), AloneFunctions.end(), Fn) !=
                    AloneFunctions.end();
  // Global atomics that may go to private copies: every participant runs
  // the plain-atomic block function (CpuPrivateAtomics.h).
  LaunchPrivatised = false;
  if (LaunchAlone && SpareBlocks != 0 && !Workers.empty() && !PrivateFunctions.empty())
    for (const auto &[Function, Plan] : PrivateFunctions)
      if (Function == Fn) {
        LaunchPrivatised = planPrivateLaunch(Plan, Params, LaunchPrivate);
        try {
          for (unsigned I = 0; LaunchPrivatised && I < ParticipantCount; ++I)
            Participants[I].Private.prepare(LaunchPrivate);
        } catch (const RuntimeError &) {
          LaunchPrivatised = false; // no memory for the copies: alone, as before
        }
        LaunchAlone = !LaunchPrivatised;
        if (LaunchPrivatised)
          countPrivatisedLaunch();
        break;
      }
  if (LaunchAlone) {
    {
      EndOfLaunch End{Interrupt};
      runBlocksGuarded(Participants[0]); // in order, on this thread
    }
    throwIfFailed();
    return;
  }

  {
    EndOfLaunch End{Interrupt};
    ++LaunchGeneration;
    State.store(uint64_t(LaunchGeneration) << 32 | AdmitsWorkers);
    wakeWorkers(SpareBlocks);
    runBlocksGuarded(Participants[0]);
    const uint64_t Closed = State.fetch_and(~AdmitsWorkers);
    if (Closed & WorkersInsideMask)
      waitForWorkersToLeave();
  }
  throwIfFailed();
}

void CpuThreadPool::setRunsAlone(TidalBlockFunction Fn, bool Alone) {
  std::lock_guard<std::mutex> Lock(LaunchMutex);
  AloneFunctions.erase(std::remove(AloneFunctions.begin(), AloneFunctions.end(), Fn),
                       AloneFunctions.end());
  if (Alone)
    AloneFunctions.push_back(Fn);
}

uint64_t cpuCoarsenedBlockCount() { return CoarsenedBlocks.load(std::memory_order_relaxed); }

void CpuThreadPool::setCoarse(TidalBlockFunction Fn, TidalCoarseBlockFunction Coarse) {
  std::lock_guard<std::mutex> Lock(LaunchMutex);
  CoarseFunctions.erase(std::remove_if(CoarseFunctions.begin(), CoarseFunctions.end(),
                                       [&](const auto &Entry) { return Entry.first == Fn; }),
                        CoarseFunctions.end());
  if (Coarse)
    CoarseFunctions.emplace_back(Fn, Coarse);
}

void CpuThreadPool::setPrivatised(TidalBlockFunction Fn, std::optional<CpuPrivatePlan> Plan) {
  std::lock_guard<std::mutex> Lock(LaunchMutex);
  PrivateFunctions.erase(std::remove_if(PrivateFunctions.begin(), PrivateFunctions.end(),
                                        [&](const auto &Entry) { return Entry.first == Fn; }),
                         PrivateFunctions.end());
  if (Plan)
    PrivateFunctions.emplace_back(Fn, std::move(*Plan));
}

void CpuThreadPool::setWatched(TidalBlockFunction Fn, bool Watched) {
  std::lock_guard<std::mutex> Lock(LaunchMutex);
  WatchedFunctions.erase(std::remove(WatchedFunctions.begin(), WatchedFunctions.end(), Fn),
                         WatchedFunctions.end());
  if (Watched)
    WatchedFunctions.push_back(Fn);
}

void CpuThreadPool::watchdogMain() {
#if defined(__linux__)
  pthread_setname_np(pthread_self(), "tidal-watchdog");
#endif
  const double Seconds = watchdogSeconds();
  const auto Limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(Seconds));
  std::unique_lock<std::mutex> Lock(WatchMutex);
  for (;;) {
    WatchCondition.wait(Lock, [&] { return WatchedLaunch != 0 || Stopping.load(); });
    if (Stopping.load())
      return;
    const uint64_t Launch = WatchedLaunch;
    const bool Finished = WatchCondition.wait_for(Lock, Limit, [&] {
      return WatchedLaunch != Launch || Stopping.load();
    });
    if (Stopping.load())
      return;
    if (Finished)
      continue;
    // Still running: report once, then wait for this launch to end. The
    // launch's fields are stable while it runs.
    reportSlowLaunch(Seconds);
    WatchCondition.wait(Lock, [&] { return WatchedLaunch != Launch || Stopping.load(); });
  }
}

void CpuThreadPool::reportSlowLaunch(double Seconds) {
  std::string Running;
  unsigned Count = 0;
  for (unsigned I = 0; I < ParticipantCount; ++I) {
    const Participant &P = Participants[I];
    if (!P.Recovery.Armed)
      continue;
    // Read while the block runs (racy, for a report only).
    const volatile uint32_t *Index = P.Context.block_idx;
    const Dim3 Block = {Index[0], Index[1], Index[2]};
    Running += std::string(Count++ ? ", " : "") + "block " + describeDims(Block) + " on " +
               (I == 0 ? std::string("the launching thread")
                       : "worker tidal-cpu-" + std::to_string(I));
  }
  const uint64_t Taken = std::min(NextBlock.load(std::memory_order_relaxed), LaunchBlockCount);
  char Time[32];
  std::snprintf(Time, sizeof Time, "%g", Seconds);
  const std::string Message =
      "tidal: watchdog: kernel '" + blockFunctionName(LaunchFunction) +
      "' has not finished after " + Time + " s (grid " + describeDims(LaunchGrid) + ", block " +
      describeDims(LaunchBlock) + "): " + (Count ? Running : std::string("no block")) +
      (Count == 1 ? " is" : " are") + " not finishing; " +
      std::to_string(LaunchBlockCount - Taken) +
      " blocks not started. On the cpu target a block's threads run one after another up to "
      "each barrier, so a thread that waits for another thread of its block (or a block that "
      "waits for a block not yet running) never finishes (docs/cpu-target.md, \"Progress "
      "guarantees\"). Press Ctrl-C to interrupt the launch.\n";
  std::fwrite(Message.data(), 1, Message.size(), stderr);
  std::fflush(stderr);
}

double watchdogSeconds() {
  const char *Value = std::getenv("TIDAL_CPU_WATCHDOG_SECONDS");
  if (Value && *Value) {
    char *End = nullptr;
    const double Seconds = std::strtod(Value, &End);
    if (End && !*End && Seconds > 0)
      return Seconds;
  }
  return 10;
}

void CpuThreadPool::throwIfFailed() {
  if (Interrupt.Interrupted.exchange(false)) {
    // An interrupt wins over a failure recorded while it stopped the launch.
    {
      std::lock_guard<std::mutex> Lock(Failure->Mutex);
      Failure->Error.reset();
      Failure->Failed.store(false, std::memory_order_relaxed);
    }
    const std::string Message = "launch of kernel '" + blockFunctionName(LaunchFunction) +
                                "' interrupted (SIGINT); the blocks not finished were "
                                "abandoned, the pool is ready for the next launch";
    throw KernelError(KernelError::Kind::Interrupted, Message, Message, Dim3{0, 0, 0},
                      Dim3{0, 0, 0});
  }
  if (!Failure->Failed.load(std::memory_order_acquire))
    return;
  std::unique_ptr<KernelError> Error;
  {
    std::lock_guard<std::mutex> Lock(Failure->Mutex);
    Error = std::move(Failure->Error);
    Failure->Failed.store(false, std::memory_order_relaxed);
  }
  if (Error)
    throw KernelError(*Error);
}

void CpuThreadPool::runBlocks(Participant &Self) {
  TidalBlockContext &Context = Self.Context;
  for (unsigned D = 0; D < 3; ++D) {
    Context.block_dim[D] = LaunchBlock[D];
    Context.grid_dim[D] = LaunchGrid[D];
  }
  Context.flags = LaunchAlone || LaunchPrivatised ? TIDAL_CONTEXT_ALONE : 0;
  Context.dynamic_shared = Self.DynamicShared.data();
  Context.dynamic_shared_bytes = LaunchSharedBytes;

  const TidalBlockFunction Function = LaunchFunction;
  // A cooperative launch runs one block at a time (its grid barriers).
  const TidalCoarseBlockFunction Coarse = LaunchCooperative ? nullptr : LaunchCoarse;
  uint64_t Coarsened = 0;
  struct CountCoarsened {
    const uint64_t &Blocks;
    ~CountCoarsened() {
      if (Blocks)
        CoarsenedBlocks.fetch_add(Blocks, std::memory_order_relaxed);
    }
  } AddCoarsened{Coarsened};
  void **Params = LaunchParams;
  const uint64_t BlockCount = LaunchBlockCount;
  const uint64_t GridX = LaunchGrid[0];
  const uint64_t GridY = LaunchGrid[1];
  const std::atomic<bool> &Failed = Failure->Failed;
  const std::atomic<bool> &Interrupted = Interrupt.Interrupted;
  const uint64_t Participants = ParticipantCount;
  for (;;) {
    // 1. Take the next run of consecutive blocks: about an eighth of each
    //    participant's share of what is left, so that the counter's cache
    //    line moves between cores a few dozen times per launch, not once
    //    per block, while the last runs stay short for the load balance.
    uint64_t First = NextBlock.load(std::memory_order_relaxed);
    uint64_t Count;
    do {
      if (First >= BlockCount)
        return;
      // A cooperative launch has a thread per block: one block at a time.
      Count = LaunchCooperative ? 1
                                : std::clamp<uint64_t>((BlockCount - First) / (8 * Participants),
                                                       1, MaxBlocksPerTake);
    } while (!NextBlock.compare_exchange_weak(First, First + Count,
                                              std::memory_order_relaxed));
    // A privatised launch: at the participant's first block, its copies.
    if (LaunchPrivatised && !Self.Private.active())
      Params = Self.Private.begin(LaunchPrivate, LaunchParams);
    // 2. Run them in order, the block index stepped without divisions; a
    //    kernel with a coarsened block function runs the part of the run in
    //    each grid row through it, as far as it goes, the rest one by one.
    uint64_t X = First % GridX, Y = First / GridX % GridY, Z = First / GridX / GridY;
    for (uint64_t Index = First; Index < First + Count;) {
      if (Failed.load(std::memory_order_relaxed) ||
          Interrupted.load(std::memory_order_relaxed))
        return;
      Context.block_idx[0] = uint32_t(X);
      Context.block_idx[1] = uint32_t(Y);
      Context.block_idx[2] = uint32_t(Z);
      uint64_t Ran = 0;
      if (Coarse) {
        const uint64_t InRow = std::min(GridX - X, First + Count - Index);
        Self.CoarseBlocks = uint32_t(InRow);
        Ran = InRow > 1 ? Coarse(Params, &Context, uint32_t(InRow)) : 0;
        Self.CoarseBlocks = 0;
        Coarsened += Ran;
      }
      if (!Ran) {
        Function(Params, &Context);
        if (Self.Grid)
          Self.Grid->blockFinished(&Context);
        Ran = 1;
      }
      Index += Ran;
      X += Ran;
      if (X == GridX) {
        X = 0;
        if (++Y == GridY) {
          Y = 0;
          ++Z;
        }
      }
    }
  }
}

namespace {

std::mutex BlockFunctionNamesMutex;
std::vector<std::pair<TidalBlockFunction, std::string>> &blockFunctionNames() {
  static auto *Names = new std::vector<std::pair<TidalBlockFunction, std::string>>();
  return *Names; // never destroyed, like the pool
}

std::string describeAddress(const void *Address) {
  char Text[32];
  std::snprintf(Text, sizeof Text, "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(Address)));
  return Text;
}

// The launch's failure for a fault that stopped Self's block: the cpu
// target's CUDA_ERROR_ILLEGAL_ADDRESS (docs/cpu-target.md).
void recordFault(CpuThreadPool::Participant &Self, const std::string &Kernel, int Signal,
                 int Code, const void *Address) {
  recordKernelFailure(&Self.Context, [&] {
    const Dim3 Block = {Self.Context.block_idx[0], Self.Context.block_idx[1],
                        Self.Context.block_idx[2]};
    size_t StackBytes = 0;
    std::string What = describeFaultSignal(Signal, Code);
    if (Signal == SIGSEGV && isStackOverflow(Address, StackBytes))
      What = "stack overflow (the thread's local arrays and variables do not fit the " +
             std::to_string(StackBytes >> 10) + " KiB stack of the cpu worker; SIGSEGV)";
    std::string Detail = "kernel '" + Kernel + "' faulted: " + What + " at address " +
                         describeAddress(Address);
    // In a coarsened block function: one of the blocks it was given.
    const std::string Where =
        Self.CoarseBlocks > 1
            ? "in one of the blocks " + describeDims(Block) + " to " +
                  describeDims({Block[0] + Self.CoarseBlocks - 1, Block[1], Block[2]}) +
                  " (run together as one wider block: the kernel's threads are independent)"
            : "in block " + describeDims(Block);
    return KernelError(KernelError::Kind::Fault,
                       Detail + ", " + Where +
                           " (the thread is not known). The process continues; memory the "
                           "kernel wrote before the fault may hold anything",
                       Detail, Block, Dim3{0, 0, 0});
  });
}

} // namespace

void setBlockFunctionName(TidalBlockFunction Fn, const std::string &KernelName) {
  std::lock_guard<std::mutex> Lock(BlockFunctionNamesMutex);
  blockFunctionNames().emplace_back(Fn, KernelName);
}

void forgetBlockFunctionName(TidalBlockFunction Fn) {
  std::lock_guard<std::mutex> Lock(BlockFunctionNamesMutex);
  auto &Names = blockFunctionNames();
  Names.erase(std::remove_if(Names.begin(), Names.end(),
                             [&](const auto &Entry) { return Entry.first == Fn; }),
              Names.end());
}

std::string blockFunctionName(TidalBlockFunction Fn) {
  std::lock_guard<std::mutex> Lock(BlockFunctionNamesMutex);
  for (const auto &[Function, Name] : blockFunctionNames())
    if (Function == Fn)
      return Name;
  return "<block function at " + describeAddress(reinterpret_cast<const void *>(Fn)) + ">";
}

void CpuThreadPool::runBlocksGuarded(Participant &Self) {
  FaultRecovery &Recovery = Self.Recovery;
  ensureAlternateSignalStack();
  setCurrentRecovery(&Recovery);
  Recovery.Thread = pthread_self();
  // No signal mask saved (that is a system call per launch): the handler's
  // signal, blocked while it runs, is unblocked below after a jump.
  if (sigsetjmp(Recovery.Jump, 0) != 0) {
    Recovery.Armed = 0;
    const int Signal = Recovery.Signal;
    unblockSignal(Signal);
    if (Signal != SIGINT)
      recordFault(Self, blockFunctionName(LaunchFunction), Signal, Recovery.Code,
                  Recovery.Address);
    Self.CoarseBlocks = 0;
    combinePrivateCopies(Self);
    return;
  }
  Recovery.Armed = 1;
  runBlocks(Self);
  Recovery.Armed = 0;
  combinePrivateCopies(Self);
}

// Also after a failure or an interrupt: the arrays then hold what the
// blocks that ran did, as without private copies. SIGINT waits until the
// copies are in (blocked on this thread meanwhile); a fault (an array not in
// memory, where the atomics themselves would have faulted) is the launch's
// failure, and the copies are refilled.
void CpuThreadPool::combinePrivateCopies(Participant &Self) {
  if (!Self.Private.active())
    return;
  FaultRecovery &Recovery = Self.Recovery;
  sigset_t Interrupt, Previous;
  sigemptyset(&Interrupt);
  sigaddset(&Interrupt, SIGINT);
  pthread_sigmask(SIG_BLOCK, &Interrupt, &Previous);
  if (sigsetjmp(Recovery.Jump, 0) != 0) {
    Recovery.Armed = 0;
    unblockSignal(Recovery.Signal);
    recordFault(Self, blockFunctionName(LaunchFunction), Recovery.Signal, Recovery.Code,
                Recovery.Address);
    Self.Private.reset();
    pthread_sigmask(SIG_SETMASK, &Previous, nullptr);
    return;
  }
  Recovery.Armed = 1;
  Self.Private.combine(LaunchPrivate);
  Recovery.Armed = 0;
  pthread_sigmask(SIG_SETMASK, &Previous, nullptr);
}

void CpuThreadPool::wakeWorkers(uint64_t SpareBlocks) {
  // Sequentially consistent with the worker's increment before it re-checks
  // State (waitForNextLaunch): either it sees the launch or we see it asleep.
  if (SleepingWorkers.load() == 0)
    return;
  // A worker about to sleep re-checks State under WakeMutex: passing through
  // it once orders that check after our store. Notifying after unlocking
  // spares the woken worker a wait for the mutex.
  { std::lock_guard<std::mutex> Lock(WakeMutex); }
  if (SpareBlocks >= Workers.size()) {
    WakeCondition.notify_all();
    return;
  }
  for (uint64_t I = 0; I < SpareBlocks; ++I)
    WakeCondition.notify_one();
}

void CpuThreadPool::waitForWorkersToLeave() {
  auto AllLeft = [this] {
    return (State.load(std::memory_order_acquire) & WorkersInsideMask) == 0;
  };
  if (spinUntil(AllLeft))
    return;
  std::unique_lock<std::mutex> Lock(LeaveMutex);
  LeaveCondition.wait(Lock, AllLeft);
}

void CpuThreadPool::workerMain(Participant &Self) {
  uint32_t SeenGeneration = 0;
  for (;;) {
    const uint64_t Observed = waitForNextLaunch(SeenGeneration);
    if (Stopping.load())
      return;
    SeenGeneration = generationOf(Observed);
    if (!tryJoin(Observed))
      continue;
    runBlocksGuarded(Self);
    leave();
  }
}

uint64_t CpuThreadPool::waitForNextLaunch(uint32_t SeenGeneration) {
  uint64_t Observed = 0;
  auto NewLaunchOrStopping = [&] {
    Observed = State.load();
    return generationOf(Observed) != SeenGeneration || Stopping.load();
  };
  if (spinUntil(NewLaunchOrStopping))
    return Observed;
  std::unique_lock<std::mutex> Lock(WakeMutex);
  SleepingWorkers.fetch_add(1);
  WakeCondition.wait(Lock, NewLaunchOrStopping);
  SleepingWorkers.fetch_sub(1);
  return Observed;
}

bool CpuThreadPool::tryJoin(uint64_t Observed) {
  uint64_t Current = Observed;
  while ((Current & AdmitsWorkers) &&
         generationOf(Current) == generationOf(Observed))
    if (State.compare_exchange_weak(Current, Current + 1,
                                    std::memory_order_acquire,
                                    std::memory_order_relaxed))
      return true;
  return false;
}

void CpuThreadPool::leave() {
  // Release: the launching thread reads the blocks' results after it sees
  // the count drop to zero.
  const uint64_t Before = State.fetch_sub(1, std::memory_order_acq_rel);
  if ((Before & WorkersInsideMask) == 1 && !(Before & AdmitsWorkers)) {
    { std::lock_guard<std::mutex> Lock(LeaveMutex); } // as in wakeWorkers
    LeaveCondition.notify_one();
  }
}

std::optional<unsigned> parseCpuThreadCount(const char *Value) {
  if (!Value)
    return std::nullopt;
  const char *End = Value + std::strlen(Value);
  unsigned Count = 0;
  const auto [Stop, Error] = std::from_chars(Value, End, Count);
  if (Error != std::errc() || Stop != End || Count < 1 || Count > MaxCpuThreads)
    return std::nullopt;
  return Count;
}

unsigned cpuThreadCountFromEnvironment() {
  const unsigned Default = std::max(1u, std::thread::hardware_concurrency());
  const char *Value = std::getenv("TIDAL_CPU_THREADS");
  if (!Value || !*Value)
    return Default;
  if (std::optional<unsigned> Count = parseCpuThreadCount(Value))
    return *Count;
  std::fprintf(stderr,
               "tidal: ignoring TIDAL_CPU_THREADS=%s (expected an integer from "
               "1 to %u); using %u threads\n",
               Value, MaxCpuThreads, Default);
  return Default;
}

void launchOnCpu(TidalBlockFunction Fn, Dim3 Grid, Dim3 Block, void **Params,
                 size_t DynamicSharedBytes) {
  CpuThreadPool::process().launch(Fn, Grid, Block, Params, DynamicSharedBytes);
}

unsigned cpuWorkerCount() {
  return CpuThreadPool::process().participantCount();
}

} // namespace tidal::runtime
