// Cooperative launches on the cpu target (docs/cpu-target.md, "Grid
// barriers"): a kernel that uses cuda.cg.this_grid() runs every block of
// its launch at once, each on its own host thread with its own frame and
// shared memory, so that grid.sync() (__tidal_cpu_grid_sync, called by the
// block function once all its threads reached the barrier) can wait for
// every other block. The grid is limited to cpuMaxCooperativeBlocks.
#include "CpuParticipant.h"
#include "CpuThreadPool.h"

#include "tidal/runtime/CudaDriver.h"

#include <chrono>
#include <functional>
#include <string>
#include <system_error>
#include <thread>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace tidal::runtime {

namespace {

// CUDA threads of a cooperative launch's blocks together, at most: each
// block is a host thread (8 MiB of stack reserved, touched only as used)
// with a frame per thread; about what a large GPU keeps resident
// (132 SMs x 2048 threads is 270k), scaled down for a host.
constexpr uint64_t MaxCooperativeThreads = 65536;
// Host threads of one cooperative launch, at most.
constexpr uint64_t MaxCooperativeHostThreads = 1024;

// How often a block waiting at a grid barrier checks for a failure or an
// interrupt elsewhere in the launch.
constexpr std::chrono::milliseconds PollInterval(5);

std::string dimsText(const Dim3 &D) {
  return "(" + std::to_string(D[0]) + ", " + std::to_string(D[1]) + ", " +
         std::to_string(D[2]) + ")";
}

CpuThreadPool::Participant &participantOf(TidalBlockContext *Context) {
  return *static_cast<CpuThreadPool::Participant *>(Context->runtime);
}

Dim3 blockOf(const TidalBlockContext *Context) {
  return {Context->block_idx[0], Context->block_idx[1], Context->block_idx[2]};
}

// The failure of a grid barrier that can never complete: Finished blocks
// returned without reaching it while Waiting blocks wait there.
void recordBrokenBarrier(TidalBlockContext *Context, const std::string &Kernel,
                         uint64_t Waiting, uint64_t Finished) {
  recordKernelFailure(Context, [&] {
    const Dim3 Block = blockOf(Context);
    std::string Detail = "grid.sync() in kernel '" + Kernel + "' cannot complete: " +
                         std::to_string(Finished) + " block(s) finished without reaching it " +
                         "while " + std::to_string(Waiting) + " wait there";
    return KernelError(KernelError::Kind::Barrier,
                       Detail + " (block " + dimsText(Block) +
                           " saw it); every block of a cooperative launch must reach "
                           "each grid.sync()",
                       Detail, Block, Dim3{0, 0, 0});
  });
}

enum class GridWait { Released, Stop, Broken };

} // namespace

uint64_t cpuMaxCooperativeBlocks(uint64_t ThreadsPerBlock) {
  ThreadsPerBlock = std::max<uint64_t>(ThreadsPerBlock, 1);
  return std::clamp<uint64_t>(MaxCooperativeThreads / ThreadsPerBlock, 1,
                              MaxCooperativeHostThreads);
}

void CpuGridBarrier::blockFinished(TidalBlockContext *Context) {
  uint64_t NowWaiting = 0, NowFinished = 0;
  bool NowBroken = false;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    ++Finished;
    if (Waiting && !Broken && Waiting + Finished == Blocks) {
      Broken = NowBroken = true;
      NowWaiting = Waiting;
      NowFinished = Finished;
    }
  }
  Condition.notify_all();
  if (NowBroken)
    recordBrokenBarrier(Context, KernelName, NowWaiting, NowFinished);
}

void CpuThreadPool::launchCooperative(TidalBlockFunction Fn, Dim3 Grid, Dim3 Block,
                                      void **Params, size_t DynamicSharedBytes) {
  if (!Fn)
    throw RuntimeError("launch of a null block function");
  const uint64_t BlockCount = countBlocks(Grid, Block);
  const uint64_t Threads = uint64_t(Block[0]) * Block[1] * Block[2];
  const uint64_t Most = cpuMaxCooperativeBlocks(Threads);
  const std::string Kernel = blockFunctionName(Fn);
  if (BlockCount > Most)
    throw CudaDriverError(
        "cuLaunchCooperativeKernel failed: CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE (too many "
        "blocks in cooperative launch): kernel '" +
            Kernel + "', griddim " + dimsText(Grid) + " has " + std::to_string(BlockCount) +
            " blocks; the cpu target runs at most " + std::to_string(Most) + " blocks of " +
            std::to_string(Threads) + " threads at once (kernel.max_cooperative_grid_blocks)",
        "cuLaunchCooperativeKernel", 720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE");

  std::lock_guard<std::mutex> Lock(LaunchMutex);
  CpuGridBarrier Barrier;
  Barrier.Blocks = BlockCount;
  Barrier.KernelName = Kernel;
  Barrier.Failed = &Failure->Failed;
  Barrier.Interrupted = &Interrupt.Interrupted;
  while (CooperativeParticipants.size() < BlockCount) {
    auto Added = std::make_unique<Participant>();
    Added->Failure = Failure.get();
    Added->Context.runtime = Added.get();
    CooperativeParticipants.push_back(std::move(Added));
  }
  CooperativeRecoveries.clear();
  for (uint64_t I = 0; I < BlockCount; ++I) {
    Participant &P = *CooperativeParticipants[I];
    P.DynamicShared.reserve(DynamicSharedBytes);
    P.Grid = &Barrier;
    CooperativeRecoveries.push_back(&P.Recovery);
  }

  LaunchFunction = Fn;
  LaunchGrid = Grid;
  LaunchBlock = Block;
  LaunchParams = Params;
  LaunchSharedBytes = DynamicSharedBytes;
  LaunchBlockCount = BlockCount;
  LaunchAlone = false;
  LaunchPrivatised = false;
  LaunchCooperative = true;
  NextBlock.store(0, std::memory_order_relaxed);
  // SIGINT reaches the launch's block threads (CpuFaults.h) while it runs.
  FaultRecovery *const *PoolRecoveries = Interrupt.Recoveries;
  const unsigned PoolRecoveryCount = Interrupt.RecoveryCount;
  Interrupt.Recoveries = CooperativeRecoveries.data();
  Interrupt.RecoveryCount = static_cast<unsigned>(BlockCount);
  Interrupt.Interrupted.store(false, std::memory_order_relaxed);
  Interrupt.LaunchInProgress.store(true);

  std::vector<std::thread> BlockThreads;
  std::string StartProblem;
  try {
    BlockThreads.reserve(BlockCount - 1);
    for (uint64_t I = 1; I < BlockCount; ++I)
      BlockThreads.emplace_back([this, I] {
#if defined(__linux__)
        pthread_setname_np(pthread_self(), ("tidal-grid-" + std::to_string(I)).c_str());
#endif
        runBlocksGuarded(*CooperativeParticipants[I]);
      });
  } catch (const std::system_error &E) {
    // The started blocks would wait for the others forever: fail the launch
    // (they see the failure at their next grid barrier, or before a block).
    StartProblem = E.what();
    std::lock_guard<std::mutex> FailureLock(Failure->Mutex);
    if (!Failure->Failed.load()) {
      const std::string Message = "cannot start the " + std::to_string(BlockCount) +
                                  " host threads of a cooperative launch of kernel '" +
                                  Kernel + "': " + StartProblem;
      Failure->Error = std::make_unique<KernelError>(KernelError::Kind::Barrier, Message,
                                                     Message, Dim3{0, 0, 0}, Dim3{0, 0, 0});
      Failure->Failed.store(true, std::memory_order_release);
    }
  }
  runBlocksGuarded(*CooperativeParticipants[0]);
  for (std::thread &Thread : BlockThreads)
    Thread.join();

  Interrupt.LaunchInProgress.store(false);
  Interrupt.Recoveries = PoolRecoveries;
  Interrupt.RecoveryCount = PoolRecoveryCount;
  LaunchCooperative = false;
  for (uint64_t I = 0; I < BlockCount; ++I)
    CooperativeParticipants[I]->Grid = nullptr;
  throwIfFailed();
}

void launchCooperativeOnCpu(TidalBlockFunction Fn, Dim3 Grid, Dim3 Block, void **Params,
                            size_t DynamicSharedBytes) {
  CpuThreadPool::process().launchCooperative(Fn, Grid, Block, Params, DynamicSharedBytes);
}

} // namespace tidal::runtime

using namespace tidal::runtime;

extern "C" int32_t __tidal_cpu_grid_sync(TidalBlockContext *Context) {
  CpuThreadPool::Participant &Self = participantOf(Context);
  CpuGridBarrier *Grid = Self.Grid;
  if (!Grid) {
    // A launch that is not cooperative: one block has no one to wait for.
    if (Context->grid_dim[0] == 1 && Context->grid_dim[1] == 1 && Context->grid_dim[2] == 1)
      return 0;
    recordKernelFailure(Context, [&] {
      const Dim3 Block = blockOf(Context);
      std::string Detail = "grid.sync() in a launch that is not cooperative (griddim " +
                           dimsText({Context->grid_dim[0], Context->grid_dim[1],
                                     Context->grid_dim[2]}) +
                           "); launch the kernel through its dispatcher, which launches "
                           "kernels that use cuda.cg.this_grid() cooperatively";
      return KernelError(KernelError::Kind::Barrier, Detail + " (block " + dimsText(Block) + ")",
                         Detail, Block, Dim3{0, 0, 0});
    });
    return 1;
  }
  GridWait Outcome = GridWait::Stop;
  uint64_t Waiting = 0, Finished = 0;
  {
    // Holds a lock: an interrupt waits for the call to return (it polls).
    RuntimeCallScope InRuntime(Self.Recovery);
    {
      std::unique_lock<std::mutex> Lock(Grid->Mutex);
      auto MustStop = [&] {
        return Grid->Broken || Grid->Failed->load(std::memory_order_relaxed) ||
               Grid->Interrupted->load(std::memory_order_relaxed);
      };
      if (!MustStop()) {
        const uint64_t Generation = Grid->Generation;
        if (++Grid->Waiting + Grid->Finished == Grid->Blocks) {
          if (Grid->Finished) {
            Grid->Broken = true;
            Outcome = GridWait::Broken;
            Waiting = Grid->Waiting;
            Finished = Grid->Finished;
          } else {
            Grid->Waiting = 0;
            ++Grid->Generation;
            Outcome = GridWait::Released;
          }
          Lock.unlock();
          Grid->Condition.notify_all();
        } else {
          while (Grid->Generation == Generation && !MustStop())
            Grid->Condition.wait_for(Lock, PollInterval);
          Outcome = Grid->Generation != Generation ? GridWait::Released : GridWait::Stop;
        }
      }
    }
  }
  if (Outcome == GridWait::Broken)
    recordBrokenBarrier(Context, Grid->KernelName, Waiting, Finished);
  return Outcome == GridWait::Released ? 0 : 1;
}
