// The block pool with plain C++ block functions: participant counts pinned
// through the private CpuThreadPool, TIDAL_CPU_THREADS through a fresh
// process.
#include "CpuThreadPool.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

using namespace tidal::runtime;

namespace {

using Clock = std::chrono::steady_clock;

uint64_t linearBlockIndex(const TidalBlockContext &Context) {
  return (uint64_t(Context.block_idx[2]) * Context.grid_dim[1] +
          Context.block_idx[1]) *
             Context.grid_dim[0] +
         Context.block_idx[0];
}

// ---- order of blocks -------------------------------------------------------

struct BlockRecord {
  std::array<uint32_t, 3> BlockIndex;
  std::thread::id Thread;
};

// Params[0]: std::vector<BlockRecord> *, appended to without locking (only
// valid when one thread runs every block).
void recordBlock(void **Params, TidalBlockContext *Context) {
  auto &Log = **static_cast<std::vector<BlockRecord> **>(Params[0]);
  Log.push_back(
      {{Context->block_idx[0], Context->block_idx[1], Context->block_idx[2]},
       std::this_thread::get_id()});
}

// Empty when Log holds every block of Grid in linear order (x fastest), each
// run by Caller; else what is wrong.
std::string checkInOrderOnCaller(const std::vector<BlockRecord> &Log, Dim3 Grid,
                                 std::thread::id Caller) {
  size_t Next = 0;
  for (uint32_t Z = 0; Z < Grid[2]; ++Z)
    for (uint32_t Y = 0; Y < Grid[1]; ++Y)
      for (uint32_t X = 0; X < Grid[0]; ++X, ++Next) {
        if (Next >= Log.size())
          return "only " + std::to_string(Log.size()) + " blocks ran";
        if (Log[Next].BlockIndex != std::array<uint32_t, 3>{X, Y, Z})
          return "block " + std::to_string(Next) + " ran out of order";
        if (Log[Next].Thread != Caller)
          return "block " + std::to_string(Next) + " ran on another thread";
      }
  if (Log.size() != Next)
    return std::to_string(Log.size()) + " blocks ran, expected " +
           std::to_string(Next);
  return "";
}

TEST(CpuThreadPool, OneParticipantRunsBlocksInOrderOnTheCaller) {
  CpuThreadPool Pool(1);
  EXPECT_EQ(Pool.participantCount(), 1u);
  const Dim3 Grid{3, 4, 2};
  std::vector<BlockRecord> Log;
  std::vector<BlockRecord> *LogPointer = &Log;
  void *Params[] = {&LogPointer};
  Pool.launch(recordBlock, Grid, {32, 1, 1}, Params, 0);
  EXPECT_EQ(checkInOrderOnCaller(Log, Grid, std::this_thread::get_id()), "");
}

size_t threadsInThisProcess() {
  DIR *Tasks = opendir("/proc/self/task");
  if (!Tasks)
    return 0;
  size_t Count = 0;
  while (dirent *Entry = readdir(Tasks))
    if (Entry->d_name[0] != '.')
      ++Count;
  closedir(Tasks);
  return Count;
}

// Runs in a fresh process (below): TIDAL_CPU_THREADS is read once, when the
// process-wide pool is created.
[[noreturn]] void launchWithTidalCpuThreadsOne() {
  setenv("TIDAL_CPU_THREADS", "1", 1);
  const size_t ThreadsBefore = threadsInThisProcess();
  if (cpuWorkerCount() != 1) {
    std::fprintf(stderr, "cpuWorkerCount() is %u\n", cpuWorkerCount());
    std::exit(1);
  }
  const Dim3 Grid{5, 3, 2};
  std::vector<BlockRecord> Log;
  std::vector<BlockRecord> *LogPointer = &Log;
  void *Params[] = {&LogPointer};
  launchOnCpu(recordBlock, Grid, {8, 8, 1}, Params, 0);
  const std::string Problem =
      checkInOrderOnCaller(Log, Grid, std::this_thread::get_id());
  if (!Problem.empty()) {
    std::fprintf(stderr, "%s\n", Problem.c_str());
    std::exit(1);
  }
  if (threadsInThisProcess() != ThreadsBefore) {
    std::fprintf(stderr, "the pool started threads: %zu before, %zu after\n",
                 ThreadsBefore, threadsInThisProcess());
    std::exit(1);
  }
  std::exit(0);
}

TEST(CpuThreadPoolDeathTest, TidalCpuThreadsOneRunsBlocksInOrderOnTheCaller) {
  // "threadsafe" re-executes this binary for the statement, so the child's
  // process-wide pool is created there, after the setenv.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(launchWithTidalCpuThreadsOne(), testing::ExitedWithCode(0), "");
}

TEST(CpuThreadPool, ParsesTidalCpuThreads) {
  EXPECT_EQ(parseCpuThreadCount("1"), 1u);
  EXPECT_EQ(parseCpuThreadCount("16"), 16u);
  EXPECT_EQ(parseCpuThreadCount("1024"), 1024u);
  EXPECT_EQ(parseCpuThreadCount(nullptr), std::nullopt);
  EXPECT_EQ(parseCpuThreadCount(""), std::nullopt);
  EXPECT_EQ(parseCpuThreadCount("0"), std::nullopt);
  EXPECT_EQ(parseCpuThreadCount("-2"), std::nullopt);
  EXPECT_EQ(parseCpuThreadCount("4x"), std::nullopt);
  EXPECT_EQ(parseCpuThreadCount(" 4"), std::nullopt);
  EXPECT_EQ(parseCpuThreadCount("1025"), std::nullopt);
  EXPECT_EQ(parseCpuThreadCount("99999999999999999999"), std::nullopt);
}

// ---- every block exactly once ----------------------------------------------

// Params[0]: std::atomic<uint32_t> * with one counter per block.
void countBlock(void **Params, TidalBlockContext *Context) {
  auto *Counts = *static_cast<std::atomic<uint32_t> **>(Params[0]);
  Counts[linearBlockIndex(*Context)].fetch_add(1, std::memory_order_relaxed);
}

// Launches countBlock over Grid and checks every counter is exactly 1.
void expectEveryBlockOnce(CpuThreadPool &Pool, Dim3 Grid) {
  const uint64_t BlockCount = uint64_t(Grid[0]) * Grid[1] * Grid[2];
  std::unique_ptr<std::atomic<uint32_t>[]> Counts(
      new std::atomic<uint32_t>[BlockCount]);
  for (uint64_t B = 0; B < BlockCount; ++B)
    Counts[B].store(0);
  std::atomic<uint32_t> *CountsData = Counts.get();
  void *Params[] = {&CountsData};
  Pool.launch(countBlock, Grid, {1, 1, 1}, Params, 0);
  for (uint64_t B = 0; B < BlockCount; ++B)
    ASSERT_EQ(Counts[B].load(), 1u)
        << "block " << B << " of grid (" << Grid[0] << ", " << Grid[1] << ", "
        << Grid[2] << ")";
}

TEST(CpuThreadPool, EveryBlockRunsExactlyOnce) {
  CpuThreadPool Pool(4);
  EXPECT_EQ(Pool.participantCount(), 4u);
  expectEveryBlockOnce(Pool, {101, 99, 10});
  // Back-to-back launches of every size, so workers are caught both spinning
  // and asleep.
  for (uint32_t Blocks = 1; Blocks <= 64; ++Blocks) {
    expectEveryBlockOnce(Pool, {Blocks, 1, 1});
    expectEveryBlockOnce(Pool, {1, Blocks, 2});
    if (Blocks % 16 == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// ---- concurrency and dynamic shared memory ---------------------------------

struct RendezvousState {
  std::atomic<int> Arrived{0};
  std::atomic<bool> TimedOut{false};
  std::atomic<bool> Overwritten{false};
  std::array<void *, 2> Buffers{};
  std::array<uint64_t, 2> BytesSeen{};
};

// Blocks 0 and 1 fill their dynamic shared memory with a pattern of their
// own, wait until both are running, then check that their pattern survived.
// Params[0]: RendezvousState *.
void rendezvousInSharedMemory(void **Params, TidalBlockContext *Context) {
  auto &State = **static_cast<RendezvousState **>(Params[0]);
  const uint64_t Block = linearBlockIndex(*Context);
  if (Block > 1)
    return;
  const auto Pattern = static_cast<unsigned char>(0xA0 + Block);
  auto *Shared = static_cast<unsigned char *>(Context->dynamic_shared);
  State.Buffers[Block] = Shared;
  State.BytesSeen[Block] = Context->dynamic_shared_bytes;
  std::memset(Shared, Pattern, Context->dynamic_shared_bytes);
  State.Arrived.fetch_add(1);
  const auto Deadline = Clock::now() + std::chrono::seconds(10);
  while (State.Arrived.load() < 2) {
    if (Clock::now() > Deadline) {
      State.TimedOut = true;
      return;
    }
    std::this_thread::yield();
  }
  for (uint64_t I = 0; I < Context->dynamic_shared_bytes; ++I)
    if (Shared[I] != Pattern)
      State.Overwritten = true;
}

TEST(CpuThreadPool, ConcurrentBlocksHaveTheirOwnSharedMemory) {
  CpuThreadPool Pool(3);
  constexpr size_t SharedBytes = 1000;
  RendezvousState State;
  RendezvousState *StatePointer = &State;
  void *Params[] = {&StatePointer};
  // The launching thread takes block 0 and waits in it, so block 1 can only
  // run on a worker at the same time.
  Pool.launch(rendezvousInSharedMemory, {8, 1, 1}, {32, 1, 1}, Params,
              SharedBytes);

  ASSERT_FALSE(State.TimedOut) << "blocks 0 and 1 never ran at the same time";
  EXPECT_FALSE(State.Overwritten) << "a block's shared memory was overwritten";
  for (int B = 0; B < 2; ++B) {
    ASSERT_NE(State.Buffers[B], nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(State.Buffers[B]) % 64, 0u);
    EXPECT_EQ(State.BytesSeen[B], SharedBytes);
  }
  auto *First = static_cast<char *>(State.Buffers[0]);
  auto *Second = static_cast<char *>(State.Buffers[1]);
  EXPECT_TRUE(First + SharedBytes <= Second || Second + SharedBytes <= First)
      << "the two buffers overlap";
}

struct SharedMemoryProbe {
  std::atomic<bool> NullBuffer{false};
  std::atomic<bool> Misaligned{false};
  std::atomic<bool> WrongSize{false};
  uint64_t ExpectedBytes = 0;
};

// Writes and reads back every byte of the block's dynamic shared memory.
// Params[0]: SharedMemoryProbe *.
void touchAllSharedMemory(void **Params, TidalBlockContext *Context) {
  auto &Probe = **static_cast<SharedMemoryProbe **>(Params[0]);
  auto *Shared = static_cast<unsigned char *>(Context->dynamic_shared);
  if (!Shared) {
    Probe.NullBuffer = true;
    return;
  }
  if (reinterpret_cast<uintptr_t>(Shared) % 64 != 0)
    Probe.Misaligned = true;
  if (Context->dynamic_shared_bytes != Probe.ExpectedBytes)
    Probe.WrongSize = true;
  for (uint64_t I = 0; I < Context->dynamic_shared_bytes; ++I)
    Shared[I] = static_cast<unsigned char>(I);
  for (uint64_t I = 0; I < Context->dynamic_shared_bytes; ++I)
    if (Shared[I] != static_cast<unsigned char>(I))
      Probe.WrongSize = true;
}

TEST(CpuThreadPool, SharedMemoryGrowsAndIsNeverNull) {
  CpuThreadPool Pool(2);
  for (size_t Bytes : {size_t(0), size_t(16), size_t(1) << 20, size_t(100)}) {
    SharedMemoryProbe Probe;
    Probe.ExpectedBytes = Bytes;
    SharedMemoryProbe *ProbePointer = &Probe;
    void *Params[] = {&ProbePointer};
    Pool.launch(touchAllSharedMemory, {16, 1, 1}, {1, 1, 1}, Params, Bytes);
    EXPECT_FALSE(Probe.NullBuffer) << Bytes << " bytes";
    EXPECT_FALSE(Probe.Misaligned) << Bytes << " bytes";
    EXPECT_FALSE(Probe.WrongSize) << Bytes << " bytes";
  }
}

// ---- completion and concurrent launches ------------------------------------

struct SlowWorkerBlocks {
  std::thread::id Launcher;
  std::atomic<bool> WorkerStarted{false};
  std::atomic<bool> TimedOut{false};
  std::unique_ptr<std::atomic<bool>[]> Finished;
};

// Blocks run by workers take 20 ms; the launcher's first block waits until a
// worker has started one, so the launcher runs out of blocks while workers
// are still busy and has to wait (and sleep) for them.
// Params[0]: SlowWorkerBlocks *.
void finishSlowlyOnWorkers(void **Params, TidalBlockContext *Context) {
  auto &State = **static_cast<SlowWorkerBlocks **>(Params[0]);
  if (std::this_thread::get_id() == State.Launcher) {
    const auto Deadline = Clock::now() + std::chrono::seconds(10);
    while (!State.WorkerStarted.load() && !State.TimedOut.load())
      if (Clock::now() > Deadline)
        State.TimedOut = true;
      else
        std::this_thread::yield();
  } else {
    State.WorkerStarted = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  State.Finished[linearBlockIndex(*Context)].store(true);
}

TEST(CpuThreadPool, LaunchReturnsAfterEveryBlockHasFinished) {
  CpuThreadPool Pool(3);
  constexpr uint32_t Blocks = 12;
  for (int Round = 0; Round < 3; ++Round) {
    SlowWorkerBlocks State;
    State.Launcher = std::this_thread::get_id();
    State.Finished.reset(new std::atomic<bool>[Blocks]);
    for (uint32_t B = 0; B < Blocks; ++B)
      State.Finished[B].store(false);
    SlowWorkerBlocks *StatePointer = &State;
    void *Params[] = {&StatePointer};
    Pool.launch(finishSlowlyOnWorkers, {Blocks, 1, 1}, {1, 1, 1}, Params, 0);
    ASSERT_FALSE(State.TimedOut) << "no worker ever ran a block";
    for (uint32_t B = 0; B < Blocks; ++B)
      ASSERT_TRUE(State.Finished[B].load())
          << "round " << Round << " block " << B << " still running";
  }
}

TEST(CpuThreadPool, LaunchesFromSeveralHostThreadsAtOnce) {
  CpuThreadPool Pool(3);
  constexpr int HostThreads = 4, LaunchesPerThread = 200;
  constexpr uint32_t GridX = 7, GridY = 3;
  std::vector<std::unique_ptr<std::atomic<uint32_t>[]>> Counts;
  for (int T = 0; T < HostThreads; ++T) {
    Counts.emplace_back(new std::atomic<uint32_t>[GridX * GridY]);
    for (uint32_t B = 0; B < GridX * GridY; ++B)
      Counts[T][B].store(0);
  }
  std::vector<std::thread> Launchers;
  for (int T = 0; T < HostThreads; ++T)
    Launchers.emplace_back([&, T] {
      std::atomic<uint32_t> *CountsData = Counts[T].get();
      void *Params[] = {&CountsData};
      for (int L = 0; L < LaunchesPerThread; ++L) {
        Pool.launch(countBlock, {GridX, GridY, 1}, {4, 1, 1}, Params, 64);
        Pool.launch(countBlock, {1, 1, 1}, {32, 1, 1}, Params, 0);
      }
    });
  for (std::thread &Launcher : Launchers)
    Launcher.join();
  for (int T = 0; T < HostThreads; ++T)
    for (uint32_t B = 0; B < GridX * GridY; ++B)
      EXPECT_EQ(Counts[T][B].load(),
                B == 0 ? 2u * LaunchesPerThread : uint32_t(LaunchesPerThread))
          << "host thread " << T << " block " << B;
}

TEST(CpuThreadPool, RejectsInvalidLaunches) {
  CpuThreadPool Pool(2);
  std::atomic<uint32_t> Count{0};
  std::atomic<uint32_t> *CountData = &Count;
  void *Params[] = {&CountData};
  EXPECT_THROW(Pool.launch(countBlock, {1, 0, 1}, {1, 1, 1}, Params, 0),
               RuntimeError);
  EXPECT_THROW(Pool.launch(countBlock, {1, 1, 1}, {1, 1, 0}, Params, 0),
               RuntimeError);
  EXPECT_THROW(Pool.launch(nullptr, {1, 1, 1}, {1, 1, 1}, Params, 0),
               RuntimeError);
  EXPECT_EQ(Count.load(), 0u);
  Pool.launch(countBlock, {1, 1, 1}, {1, 1, 1}, Params, 0); // still usable
  EXPECT_EQ(Count.load(), 1u);
}

// Prints, never asserts: timings depend on the machine and its load.
TEST(CpuTiming, ReportsSmallMultiBlockLaunchCost) {
  CpuThreadPool Pool(std::max(2u, std::thread::hardware_concurrency()));
  std::unique_ptr<std::atomic<uint32_t>[]> Counts(new std::atomic<uint32_t>[8]);
  for (int B = 0; B < 8; ++B)
    Counts[B].store(0);
  std::atomic<uint32_t> *CountsData = Counts.get();
  void *Params[] = {&CountsData};
  constexpr int Launches = 20000;
  const auto Start = Clock::now();
  for (int I = 0; I < Launches; ++I)
    Pool.launch(countBlock, {8, 1, 1}, {32, 1, 1}, Params, 0);
  const double Microseconds =
      std::chrono::duration<double, std::micro>(Clock::now() - Start).count() /
      Launches;
  std::cout << "[ timing   ] back-to-back launch of 8 empty blocks on "
            << Pool.participantCount() << " threads: " << Microseconds
            << " us\n";
}

} // namespace
