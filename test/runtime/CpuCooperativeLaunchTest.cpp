// Cooperative launches on the cpu target (runtime/CpuCooperativeLaunch.cpp,
// docs/cpu-target.md "Grid barriers"): marker IR with tidal.grid.sync
// lowered for the host and launched with launchCooperativeOnCpu; the limit
// and its driver error; a grid barrier that cannot complete; grid.sync in a
// launch that is not cooperative.
#include "CpuKernelTesting.h"

#include "tidal/runtime/CudaDriver.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace tidal::runtime;
using tidal::runtime::testkit::compileMarkers;

namespace {

// a[g] = g + 1; grid barrier; out[g] = a[(g + ntid) % n]: a value that a
// thread of the next block wrote. Blocks whose index equals %skip return
// before the barrier.
constexpr const char *NeighbourKernel = R"(
declare void @tidal.grid.sync()

define void @neighbours(ptr %a, ptr %out, i32 %n, i32 %skip) {
entry:
  %tid = call i32 @tidal.tid.x()
  %ntid = call i32 @tidal.ntid.x()
  %block = call i32 @tidal.ctaid.x()
  %base = mul i32 %block, %ntid
  %g = add i32 %base, %tid
  %g64 = zext i32 %g to i64
  %value = add i32 %g, 1
  %slot = getelementptr i32, ptr %a, i64 %g64
  store i32 %value, ptr %slot
  %skips = icmp eq i32 %block, %skip
  br i1 %skips, label %exit, label %sync

sync:
  call void @tidal.grid.sync()
  %next = add i32 %g, %ntid
  %wrapped = urem i32 %next, %n
  %from = getelementptr i32, ptr %a, i64 0
  %w64 = zext i32 %wrapped to i64
  %src = getelementptr i32, ptr %from, i64 %w64
  %read = load i32, ptr %src
  %dst = getelementptr i32, ptr %out, i64 %g64
  store i32 %read, ptr %dst
  br label %exit

exit:
  ret void
}

!tidal.kernels = !{!0}
!0 = !{ptr @neighbours}
)";

struct Launch {
  std::vector<int32_t> A, Out;
  int32_t *AData, *OutData;
  int32_t N, Skip;
  void *Params[4];
  Launch(uint32_t Blocks, uint32_t Threads, int32_t SkipBlock)
      : A(size_t(Blocks) * Threads, 0), Out(A.size(), -1), AData(A.data()),
        OutData(Out.data()), N(int32_t(A.size())), Skip(SkipBlock),
        Params{&AData, &OutData, &N, &Skip} {}
};

TEST(CpuCooperativeLaunch, GridBarrierLetsBlocksReadEachOthersWrites) {
  std::unique_ptr<CpuModule> Module = compileMarkers(NeighbourKernel, "neighbours");
  ASSERT_TRUE(Module);
  for (uint32_t Threads : {1u, 32u, 100u}) {
    const uint32_t Blocks = 9;
    Launch L(Blocks, Threads, -1);
    launchCooperativeOnCpu(Module->blockFunction("neighbours"), {Blocks, 1, 1},
                           {Threads, 1, 1}, L.Params, 0);
    for (int32_t G = 0; G < L.N; ++G)
      ASSERT_EQ(L.Out[G], (G + int32_t(Threads)) % L.N + 1) << "thread " << G;
  }
}

TEST(CpuCooperativeLaunch, TooManyBlocksIsTheDriversError) {
  std::unique_ptr<CpuModule> Module = compileMarkers(NeighbourKernel, "neighbours");
  ASSERT_TRUE(Module);
  EXPECT_EQ(cpuMaxCooperativeBlocks(256), 256u);
  EXPECT_EQ(cpuMaxCooperativeBlocks(1), 1024u);
  EXPECT_EQ(cpuMaxCooperativeBlocks(1024), 64u);
  Launch L(65, 1024, -1);
  try {
    launchCooperativeOnCpu(Module->blockFunction("neighbours"), {65, 1, 1}, {1024, 1, 1},
                           L.Params, 0);
    FAIL() << "65 blocks of 1024 threads launched cooperatively";
  } catch (const CudaDriverError &E) {
    EXPECT_EQ(E.result(), 720);
    EXPECT_EQ(E.errorName(), "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE");
    EXPECT_EQ(E.call(), "cuLaunchCooperativeKernel");
    EXPECT_NE(std::string(E.what()).find("at most 64 blocks of 1024 threads"),
              std::string::npos)
        << E.what();
  }
}

TEST(CpuCooperativeLaunch, BlockThatSkipsTheBarrierIsReported) {
  std::unique_ptr<CpuModule> Module = compileMarkers(NeighbourKernel, "neighbours");
  ASSERT_TRUE(Module);
  Launch L(4, 8, 2);
  try {
    launchCooperativeOnCpu(Module->blockFunction("neighbours"), {4, 1, 1}, {8, 1, 1},
                           L.Params, 0);
    FAIL() << "a grid barrier that block 2 skips completed";
  } catch (const KernelError &E) {
    EXPECT_EQ(E.kind(), KernelError::Kind::Barrier);
    EXPECT_NE(std::string(E.what()).find("cannot complete: 1 block(s) finished without "
                                         "reaching it while 3 wait there"),
              std::string::npos)
        << E.what();
  }
  // The pool runs the next launch.
  Launch Again(4, 8, -1);
  launchCooperativeOnCpu(Module->blockFunction("neighbours"), {4, 1, 1}, {8, 1, 1},
                         Again.Params, 0);
  EXPECT_EQ(Again.Out[0], 9);
}

TEST(CpuCooperativeLaunch, GridSyncOutsideACooperativeLaunch) {
  std::unique_ptr<CpuModule> Module = compileMarkers(NeighbourKernel, "neighbours");
  ASSERT_TRUE(Module);
  // One block: nothing to wait for.
  Launch One(1, 16, -1);
  launchOnCpu(Module->blockFunction("neighbours"), {1, 1, 1}, {16, 1, 1}, One.Params, 0);
  EXPECT_EQ(One.Out[0], 1);
  Launch Two(2, 16, -1);
  try {
    launchOnCpu(Module->blockFunction("neighbours"), {2, 1, 1}, {16, 1, 1}, Two.Params, 0);
    FAIL() << "grid.sync() ran in a launch that is not cooperative";
  } catch (const KernelError &E) {
    EXPECT_EQ(E.kind(), KernelError::Kind::Barrier);
    EXPECT_NE(std::string(E.what()).find("launch that is not cooperative"), std::string::npos)
        << E.what();
  }
}

} // namespace
