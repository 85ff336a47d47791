// Privatised global atomics in the pool (runtime/CpuPrivateAtomics.h) with a
// plain C++ block function, and the launch-time checks of a plan.
#include "CpuPrivateAtomics.h"
#include "CpuThreadPool.h"

#include "tidal/Contract.h"
#include "tidal/runtime/CpuTarget.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace tidal;
using namespace tidal::runtime;

namespace {

// A 1-D array parameter as the frontend flattens it (data, shape, stride).
struct ArrayArgument {
  void *Data;
  int64_t Shape, Stride;
  void *Params[3] = {&Data, &Shape, &Stride};
};

std::mutex ThreadsMutex;
std::set<std::thread::id> Threads;

// bins[(block * threads + thread) % shape] += 1 for every thread: plain
// when the context says so (as the lowering's .alone body), else atomic.
void countingBlock(void **Params, TidalBlockContext *Context) {
  auto *Bins = *static_cast<int64_t **>(Params[0]);
  const int64_t Shape = *static_cast<int64_t *>(Params[1]);
  const int64_t Stride = *static_cast<int64_t *>(Params[2]) / int64_t(sizeof(int64_t));
  for (uint32_t T = 0; T < Context->block_dim[0]; ++T) {
    const int64_t Index = (int64_t(Context->block_idx[0]) * Context->block_dim[0] + T) % Shape;
    if (Context->flags & TIDAL_CONTEXT_ALONE)
      Bins[Index * Stride] += 1;
    else
      __atomic_fetch_add(&Bins[Index * Stride], 1, __ATOMIC_RELAXED);
  }
  std::lock_guard<std::mutex> Lock(ThreadsMutex);
  Threads.insert(std::this_thread::get_id());
}

CpuPrivatePlan oneArrayPlan(uint32_t Combine) {
  return CpuPrivatePlan{3, {CpuPrivateArray{0, 1, Combine, 8}}};
}

TEST(CpuPrivateAtomics, LaunchRunsOnEveryParticipantAndCombines) {
  CpuThreadPool Pool(4);
  Pool.setRunsAlone(countingBlock, true);
  Pool.setPrivatised(countingBlock, oneArrayPlan(TidalCombineAdd));
  std::vector<int64_t> Bins(10, 5);
  ArrayArgument Array{Bins.data(), 10, 8};
  Threads.clear();
  const uint64_t Before = privatisedLaunchCount();
  // At least 20 launches, and more until a worker has taken some blocks
  // beside the launching thread: on a loaded machine (or one core) the
  // launching thread can finish 20 launches before a worker wakes.
  int64_t Launches = 0;
  auto threadCount = [] {
    std::lock_guard<std::mutex> Lock(ThreadsMutex);
    return Threads.size();
  };
  while (Launches < 20 || (threadCount() < 2 && Launches < 5000)) {
    Pool.launch(countingBlock, Dim3{1000, 1, 1}, Dim3{100, 1, 1}, Array.Params, 0);
    ++Launches;
  }
  EXPECT_EQ(privatisedLaunchCount() - Before, uint64_t(Launches));
  for (int64_t Count : Bins)
    EXPECT_EQ(Count, 5 + Launches * 1000 * 100 / 10);
  // Blocks ran on more than the launching thread.
  EXPECT_GT(threadCount(), 1u);

  // Forgotten: the launch runs alone again (one thread), same result.
  Pool.setPrivatised(countingBlock, std::nullopt);
  Threads.clear();
  Pool.launch(countingBlock, Dim3{1000, 1, 1}, Dim3{100, 1, 1}, Array.Params, 0);
  EXPECT_EQ(privatisedLaunchCount() - Before, uint64_t(Launches));
  EXPECT_EQ(threadCount(), 1u);
  EXPECT_EQ(Bins[3], 5 + (Launches + 1) * 1000 * 100 / 10);
  Pool.setRunsAlone(countingBlock, false);
}

TEST(CpuPrivateAtomics, PlanChecksTheArraysAtTheLaunch) {
  std::vector<int64_t> Store(100);
  PrivateLaunch Launch;
  // Reversed view (negative stride): its lowest byte is Low.
  ArrayArgument Reversed{&Store[99], 50, -16};
  ASSERT_TRUE(planPrivateLaunch(oneArrayPlan(TidalCombineAdd), Reversed.Params, Launch));
  ASSERT_EQ(Launch.Targets.size(), 1u);
  EXPECT_EQ(Launch.Targets[0].Low, reinterpret_cast<char *>(&Store[1]));
  EXPECT_EQ(Launch.Targets[0].Bytes, 99u * 8);
  EXPECT_EQ(Launch.Targets[0].DataAt, 98u * 8);
  // Empty, a stride that splits elements, past the limit: not privatised.
  ArrayArgument Empty{Store.data(), 0, 8};
  EXPECT_FALSE(planPrivateLaunch(oneArrayPlan(TidalCombineAdd), Empty.Params, Launch));
  ArrayArgument Split{Store.data(), 10, 12};
  EXPECT_FALSE(planPrivateLaunch(oneArrayPlan(TidalCombineAdd), Split.Params, Launch));
  ArrayArgument Large{Store.data(), int64_t(MaxPrivateBytes / 8) + 1, 8};
  EXPECT_FALSE(planPrivateLaunch(oneArrayPlan(TidalCombineAdd), Large.Params, Launch));

  // Two arrays: the other one may not share a byte with the privatised one.
  CpuPrivatePlan Two{6, {CpuPrivateArray{0, 1, 0, 0}, CpuPrivateArray{3, 1, TidalCombineMax, 8}}};
  auto twoArrays = [&](int64_t OtherStart, int64_t OtherShape) {
    ArrayArgument Other{&Store[OtherStart], OtherShape, 8};
    ArrayArgument Bins{&Store[50], 10, 8};
    void *Params[6] = {Other.Params[0], Other.Params[1], Other.Params[2],
                       Bins.Params[0],  Bins.Params[1],  Bins.Params[2]};
    return planPrivateLaunch(Two, Params, Launch);
  };
  EXPECT_TRUE(twoArrays(0, 50));   // ends where the bins begin
  EXPECT_FALSE(twoArrays(0, 51));  // its last element is the bins' first
  EXPECT_FALSE(twoArrays(59, 10)); // starts at the bins' last
  EXPECT_TRUE(twoArrays(60, 10));
}

TEST(CpuPrivateAtomics, LinesRoundTripAndGarbageIsIgnored) {
  auto Parsed = parsePrivateAtomicsLine("__tidal_block_h 6 0:1:0:0 3:1:1:4");
  ASSERT_TRUE(Parsed);
  EXPECT_EQ(Parsed->first, "__tidal_block_h");
  EXPECT_EQ(Parsed->second.Parameters, 6u);
  ASSERT_EQ(Parsed->second.Arrays.size(), 2u);
  EXPECT_EQ(Parsed->second.Arrays[1].Data, 3u);
  EXPECT_EQ(Parsed->second.Arrays[1].Combine, unsigned(TidalCombineAdd));
  EXPECT_EQ(Parsed->second.Arrays[1].ElementBytes, 4u);
  for (const char *Bad : {"", "__tidal_block_h", "__tidal_block_h 6 0:1:0:0",
                          "__tidal_block_h 6 3:1:1:3", "__tidal_block_h 6 3:1:99:4",
                          "__tidal_block_h 4 3:1:1:4", "__tidal_block_h 6 3;1;1;4"})
    EXPECT_FALSE(parsePrivateAtomicsLine(Bad)) << Bad;
}

} // namespace
