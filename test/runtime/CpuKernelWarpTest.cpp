// Marker IR lowered and launched on the cpu target as in CpuKernelTest.cpp:
// warp collectives (shuffles, votes, matches, warp rounds), debug-mode
// failures (bounds, assert, divergent barriers, poisoned shared memory),
// math and print (docs/cpu-target.md).
#include "CpuKernelTesting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

using namespace tidal::runtime;
using tidal::runtime::testkit::compileMarkers;

namespace {

// Warp collectives: sum[warp] by a shfl.down reduction loop; rev[g] =
// shfl.idx of lane 31 - lane; bfly[g] = xor-butterfly sum (f32); ballot,
// any, all per warp; match.any of (lane & 3).
constexpr const char *WarpKernel = R"(
define void @warp(ptr %sum, ptr %rev, ptr %bfly, ptr %votes, ptr %matches) {
entry:
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %bdim = call i32 @tidal.ntid.x()
  %lane = call i32 @tidal.laneid()
  %base = mul i32 %bid, %bdim
  %g = add i32 %base, %tid
  %g64 = zext i32 %g to i64
  %v0 = add i32 %g, 1
  br label %loop
loop:
  %off = phi i32 [ 16, %entry ], [ %off.next, %loop ]
  %v = phi i32 [ %v0, %entry ], [ %v.next, %loop ]
  %other = call i32 @tidal.shfl.down.i32(i32 -1, i32 %v, i32 %off)
  %v.next = add i32 %v, %other
  %off.next = lshr i32 %off, 1
  %again = icmp ne i32 %off.next, 0
  br i1 %again, label %loop, label %after
after:
  %src = sub i32 31, %lane
  %r = call i32 @tidal.shfl.idx.i32(i32 -1, i32 %g, i32 %src)
  %rp = getelementptr i32, ptr %rev, i64 %g64
  store i32 %r, ptr %rp
  %f0 = uitofp i32 %lane to float
  %f1x = call float @tidal.shfl.xor.f32(i32 -1, float %f0, i32 1)
  %f1 = fadd float %f0, %f1x
  %f2x = call float @tidal.shfl.xor.f32(i32 -1, float %f1, i32 2)
  %f2 = fadd float %f1, %f2x
  %fp = getelementptr float, ptr %bfly, i64 %g64
  store float %f2, ptr %fp
  %r3 = urem i32 %g, 3
  %p = icmp eq i32 %r3, 0
  %ballot = call i32 @tidal.vote.ballot(i32 -1, i1 %p)
  %any = call i1 @tidal.vote.any(i32 -1, i1 %p)
  %big = icmp ult i32 %lane, 40
  %all = call i1 @tidal.vote.all(i32 -1, i1 %big)
  %key = and i32 %lane, 3
  %m = call i32 @tidal.match.any.i32(i32 -1, i32 %key)
  %mp = getelementptr i32, ptr %matches, i64 %g64
  store i32 %m, ptr %mp
  %is0 = icmp eq i32 %lane, 0
  br i1 %is0, label %write, label %done
write:
  %w = lshr i32 %g, 5
  %w64 = zext i32 %w to i64
  %sp = getelementptr i32, ptr %sum, i64 %w64
  store i32 %v.next, ptr %sp
  %w3 = mul i64 %w64, 3
  %vp = getelementptr i32, ptr %votes, i64 %w3
  store i32 %ballot, ptr %vp
  %anyi = zext i1 %any to i32
  %vp1 = getelementptr i32, ptr %vp, i64 1
  store i32 %anyi, ptr %vp1
  %alli = zext i1 %all to i32
  %vp2 = getelementptr i32, ptr %vp, i64 2
  store i32 %alli, ptr %vp2
  br label %done
done:
  ret void
}
!tidal.kernels = !{!0}
!0 = !{ptr @warp}
)";

TEST(CpuKernel, WarpShuffleReductionAndVotes) {
  std::unique_ptr<CpuModule> Module = compileMarkers(WarpKernel, "warp");
  ASSERT_TRUE(Module);
  const uint32_t Blocks = 3, BlockSize = 128, Total = Blocks * BlockSize;
  std::vector<int32_t> Sum(Total / 32, 0), Rev(Total, 0), Votes(Total / 32 * 3, 0),
      Matches(Total, 0);
  std::vector<float> Bfly(Total, 0);
  int32_t *SumP = Sum.data(), *RevP = Rev.data(), *VotesP = Votes.data(),
          *MatchesP = Matches.data();
  float *BflyP = Bfly.data();
  void *Params[] = {&SumP, &RevP, &BflyP, &VotesP, &MatchesP};
  launchOnCpu(Module->blockFunction("warp"), {Blocks, 1, 1}, {BlockSize, 1, 1},
              Params, 0);
  for (uint32_t W = 0; W < Total / 32; ++W) {
    // shfl.down from lanes past 31 returns the lane's own value, as CUDA.
    std::vector<int32_t> V(32);
    for (int L = 0; L < 32; ++L)
      V[L] = int32_t(W * 32 + L + 1);
    for (int Off = 16; Off > 0; Off /= 2) {
      std::vector<int32_t> Next(V);
      for (int L = 0; L < 32; ++L)
        Next[L] = V[L] + (L + Off < 32 ? V[L + Off] : V[L]);
      V = Next;
    }
    EXPECT_EQ(Sum[W], V[0]) << "warp " << W;
    uint32_t Ballot = 0;
    for (int L = 0; L < 32; ++L)
      if ((W * 32 + L) % 3 == 0)
        Ballot |= 1u << L;
    EXPECT_EQ(uint32_t(Votes[W * 3]), Ballot) << "warp " << W;
    EXPECT_EQ(Votes[W * 3 + 1], 1);
    EXPECT_EQ(Votes[W * 3 + 2], 1);
  }
  for (uint32_t G = 0; G < Total; ++G) {
    uint32_t Lane = G % 32;
    ASSERT_EQ(Rev[G], int32_t(G - Lane + 31 - Lane)) << G;
    ASSERT_EQ(Bfly[G], float((Lane & ~3u) * 4 + 6)) << G;
    ASSERT_EQ(uint32_t(Matches[G]), 0x11111111u << (Lane & 3)) << G;
  }
}

// Warp rounds: a shared-memory stage, syncthreads and syncthreads.count for
// the whole block, then a shfl.down reduction in the first warp only (valid
// CUDA: the other warps do not take part) on a 2-D block of 32 x 4; then
// activemask inside `laneid < 16` (the 16 lanes that took the branch) and a
// syncwarp of every warp. Also a collective that waits for a lane stopped at
// syncthreads, which is reported.
constexpr const char *LastWarpKernel = R"(
define void @lastwarp(ptr %out, ptr %counts, ptr %x, ptr %masks) {
entry:
  %sh = call ptr @tidal.shared.array(i64 512, i64 4)
  %tx = call i32 @tidal.tid.x()
  %ty = call i32 @tidal.tid.y()
  %dx = call i32 @tidal.ntid.x()
  %dy = call i32 @tidal.ntid.y()
  %bid = call i32 @tidal.ctaid.x()
  %row = mul i32 %ty, %dx
  %t = add i32 %row, %tx
  %n = mul i32 %dx, %dy
  %base = mul i32 %bid, %n
  %g = add i32 %base, %t
  %g64 = zext i32 %g to i64
  %t64 = zext i32 %t to i64
  %xp = getelementptr float, ptr %x, i64 %g64
  %xv = load float, ptr %xp
  %sp = getelementptr float, ptr %sh, i64 %t64
  store float %xv, ptr %sp
  call void @tidal.syncthreads()
  %few = icmp ult i32 %t, 40
  %fewi = zext i1 %few to i32
  %count = call i32 @tidal.syncthreads.count(i32 %fewi)
  %first = icmp ult i32 %t, 32
  br i1 %first, label %warp, label %rest
warp:
  %p1 = getelementptr float, ptr %sp, i64 32
  %p2 = getelementptr float, ptr %sp, i64 64
  %p3 = getelementptr float, ptr %sp, i64 96
  %s0 = load float, ptr %sp
  %s1 = load float, ptr %p1
  %s2 = load float, ptr %p2
  %s3 = load float, ptr %p3
  %a = fadd float %s0, %s1
  %b = fadd float %s2, %s3
  %v0 = fadd float %a, %b
  br label %loop
loop:
  %off = phi i32 [ 16, %warp ], [ %off.next, %loop ]
  %v = phi float [ %v0, %warp ], [ %v.next, %loop ]
  %vi = bitcast float %v to i32
  %oi = call i32 @tidal.shfl.down.i32(i32 -1, i32 %vi, i32 %off)
  %o = bitcast i32 %oi to float
  %v.next = fadd float %v, %o
  %off.next = lshr i32 %off, 1
  %again = icmp ne i32 %off.next, 0
  br i1 %again, label %loop, label %reduced
reduced:
  %t0 = icmp eq i32 %t, 0
  br i1 %t0, label %write, label %rest
write:
  %bid64 = zext i32 %bid to i64
  %op = getelementptr float, ptr %out, i64 %bid64
  store float %v.next, ptr %op
  %cp = getelementptr i32, ptr %counts, i64 %bid64
  store i32 %count, ptr %cp
  br label %rest
rest:
  %lane = call i32 @tidal.laneid()
  %low = icmp ult i32 %lane, 16
  br i1 %low, label %masked, label %after
masked:
  %m = call i32 @tidal.activemask()
  %mp = getelementptr i32, ptr %masks, i64 %g64
  store i32 %m, ptr %mp
  br label %after
after:
  call void @tidal.syncwarp(i32 -1)
  ret void
}
define void @waits(ptr %out) {
entry:
  %lane = call i32 @tidal.laneid()
  %five = icmp eq i32 %lane, 5
  br i1 %five, label %sync, label %vote
sync:
  call void @tidal.syncthreads()
  br label %done
vote:
  %big = icmp ugt i32 %lane, 3
  %b = call i32 @tidal.vote.ballot(i32 -1, i1 %big)
  store i32 %b, ptr %out
  br label %done
done:
  ret void
}
!tidal.kernels = !{!0, !1}
!0 = !{ptr @lastwarp}
!1 = !{ptr @waits}
)";

TEST(CpuKernel, WarpCollectivesInSomeWarpsOnly) {
  std::unique_ptr<CpuModule> Module = compileMarkers(LastWarpKernel, "lastwarp");
  ASSERT_TRUE(Module);
  const uint32_t Blocks = 5, Threads = 128, Total = Blocks * Threads;
  std::vector<float> X(Total), Out(Blocks, -1);
  std::vector<int32_t> Counts(Blocks, -1), Masks(Total, 0);
  for (uint32_t I = 0; I < Total; ++I)
    X[I] = float(I % 7); // sums stay exact
  float *OutP = Out.data(), *XP = X.data();
  int32_t *CountsP = Counts.data(), *MasksP = Masks.data();
  void *Params[] = {&OutP, &CountsP, &XP, &MasksP};
  launchOnCpu(Module->blockFunction("lastwarp"), {Blocks, 1, 1}, {32, 4, 1},
              Params, 0);
  for (uint32_t B = 0; B < Blocks; ++B) {
    float Sum = 0;
    for (uint32_t T = 0; T < Threads; ++T)
      Sum += X[B * Threads + T];
    EXPECT_EQ(Out[B], Sum) << "block " << B;
    EXPECT_EQ(Counts[B], 40) << "block " << B;
  }
  for (uint32_t G = 0; G < Total; ++G)
    ASSERT_EQ(uint32_t(Masks[G]), G % 32 < 16 ? 0xFFFFu : 0u) << G;

  void *Params2[] = {&OutP};
  try {
    launchOnCpu(Module->blockFunction("waits"), {1, 1, 1}, {32, 1, 1}, Params2, 0);
    FAIL() << "no KernelError";
  } catch (const KernelError &E) {
    EXPECT_EQ(E.kind(), KernelError::Kind::Barrier);
    std::string Message = E.what();
    EXPECT_NE(Message.find("threads (0, 0, 0)..(4, 0, 0) at vote_ballot"),
              std::string::npos)
        << Message;
    EXPECT_NE(Message.find("thread (5, 0, 0) at syncthreads"), std::string::npos)
        << Message;
  }
}

// Debug-mode failures: a bounds check (as the frontend emits it), an
// assert, a divergent barrier, and shared memory poisoned at block start.
constexpr const char *FailingKernels = R"(
@where = private constant [38 x i8] c"kernel 'k' at file.py:7, array 'x'\00\00\00\00"
@message = private constant [24 x i8] c"assert x > 0 at f.py:3\00\00"
define void @bounds(ptr %x, i64 %n) {
entry:
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %b8 = mul i32 %bid, 8
  %i32 = add i32 %b8, %tid
  %i = zext i32 %i32 to i64
  %ok = icmp ult i64 %i, %n
  br i1 %ok, label %store, label %fail
fail:
  call void @tidal.bounds.error(ptr @where, i64 %i, i64 %n, i32 0)
  unreachable
store:
  %p = getelementptr i32, ptr %x, i64 %i
  store i32 1, ptr %p
  ret void
}
define void @asserts(ptr %x) {
entry:
  %tid = call i32 @tidal.tid.x()
  %bad = icmp eq i32 %tid, 3
  br i1 %bad, label %fail, label %ok
fail:
  call void @tidal.assert.fail(ptr @message)
  br label %ok
ok:
  ret void
}
define void @divergent(ptr %x) {
entry:
  %tid = call i32 @tidal.tid.x()
  %low = icmp ult i32 %tid, 16
  br i1 %low, label %sync, label %other
sync:
  call void @tidal.syncthreads()
  br label %done
other:
  %middle = icmp ult i32 %tid, 32
  br i1 %middle, label %sync2, label %done
sync2:
  call void @tidal.syncthreads()
  br label %done
done:
  ret void
}
define void @poisoned(ptr %out) {
  %sh = call ptr @tidal.shared.array(i64 64, i64 4)
  %dyn = call ptr @tidal.shared.dynamic()
  %tid = call i32 @tidal.tid.x()
  %t64 = zext i32 %tid to i64
  %p = getelementptr i32, ptr %sh, i64 %t64
  %v = load i32, ptr %p
  %o = getelementptr i32, ptr %out, i64 %t64
  store i32 %v, ptr %o
  %f = load float, ptr %dyn
  %isnan = fcmp uno float %f, 0.0
  %n = zext i1 %isnan to i32
  %o2 = getelementptr i32, ptr %out, i64 16
  store i32 %n, ptr %o2
  ret void
}
!tidal.kernels = !{!0, !1, !2, !3}
!0 = !{ptr @bounds}
!1 = !{ptr @asserts}
!2 = !{ptr @divergent}
!3 = !{ptr @poisoned}
)";

TEST(CpuKernel, BoundsErrorIsReportedWithThreadAndBlock) {
  std::unique_ptr<CpuModule> Module =
      compileMarkers(FailingKernels, "failing", /*Debug=*/true);
  ASSERT_TRUE(Module);
  std::vector<int32_t> X(10, 0);
  int32_t *XP = X.data();
  int64_t N = 10;
  void *Params[] = {&XP, &N};
  try {
    launchOnCpu(Module->blockFunction("bounds"), {2, 1, 1}, {8, 1, 1}, Params, 0);
    FAIL() << "no KernelError";
  } catch (const KernelError &E) {
    EXPECT_EQ(E.kind(), KernelError::Kind::Bounds);
    EXPECT_STREQ(E.what(),
                 "index 10 is out of bounds for axis 0 with size 10 in kernel "
                 "'k' at file.py:7, array 'x', thread (2, 0, 0) of block (1, 0, 0)");
    EXPECT_EQ(E.thread(), (Dim3{2, 0, 0}));
    EXPECT_EQ(E.block(), (Dim3{1, 0, 0}));
  }
  for (int I = 0; I < 8; ++I)
    EXPECT_EQ(X[I], 1) << I; // block 0 ran fully
  // The pool is usable after a failure, and the failure is not sticky.
  N = 16;
  std::vector<int32_t> Y(16, 0);
  int32_t *YP = Y.data();
  void *Params2[] = {&YP, &N};
  launchOnCpu(Module->blockFunction("bounds"), {2, 1, 1}, {8, 1, 1}, Params2, 0);
  EXPECT_EQ(std::count(Y.begin(), Y.end(), 1), 16);
}

TEST(CpuKernel, AssertFailureIsReported) {
  std::unique_ptr<CpuModule> Module =
      compileMarkers(FailingKernels, "failing", /*Debug=*/true);
  ASSERT_TRUE(Module);
  void *X = nullptr;
  void *Params[] = {&X};
  try {
    launchOnCpu(Module->blockFunction("asserts"), {1, 1, 1}, {8, 1, 1}, Params, 0);
    FAIL() << "no KernelError";
  } catch (const KernelError &E) {
    EXPECT_EQ(E.kind(), KernelError::Kind::Assert);
    EXPECT_EQ(E.detail(), "assert x > 0 at f.py:3");
    EXPECT_STREQ(E.what(),
                 "assert x > 0 at f.py:3 (thread (3, 0, 0) of block (0, 0, 0))");
  }
}

TEST(CpuKernel, DivergentBarrierIsReportedNotHung) {
  std::unique_ptr<CpuModule> Module = compileMarkers(FailingKernels, "failing");
  ASSERT_TRUE(Module);
  void *X = nullptr;
  void *Params[] = {&X};
  try {
    launchOnCpu(Module->blockFunction("divergent"), {4, 1, 1}, {48, 1, 1},
                Params, 0);
    FAIL() << "no KernelError";
  } catch (const KernelError &E) {
    EXPECT_EQ(E.kind(), KernelError::Kind::Barrier);
    std::string Message = E.what();
    // Two different syncthreads; the threads that finished count as arrived.
    EXPECT_NE(Message.find("threads (0, 0, 0)..(15, 0, 0) at syncthreads"),
              std::string::npos)
        << Message;
    EXPECT_NE(Message.find("threads (16, 0, 0)..(31, 0, 0) at syncthreads"),
              std::string::npos)
        << Message;
    EXPECT_NE(Message.find("threads (32, 0, 0)..(47, 0, 0) finished"),
              std::string::npos)
        << Message;
    EXPECT_NE(Message.find("kernel 'divergent'"), std::string::npos) << Message;
  }
}

TEST(CpuKernel, DebugModePoisonsSharedMemory) {
  std::unique_ptr<CpuModule> Module =
      compileMarkers(FailingKernels, "failing", /*Debug=*/true);
  ASSERT_TRUE(Module);
  std::vector<int32_t> Out(17, 0);
  int32_t *OutP = Out.data();
  void *Params[] = {&OutP};
  launchOnCpu(Module->blockFunction("poisoned"), {1, 1, 1}, {16, 1, 1}, Params, 64);
  for (int I = 0; I < 16; ++I)
    EXPECT_EQ(Out[I], -1) << I;
  EXPECT_EQ(Out[16], 1) << "dynamic shared memory reads as NaN";
}

constexpr const char *MathPrintKernel = R"(
@format = private constant [24 x i8] c"thread %d: %.2f %s %ld\0A\00"
@word = private constant [3 x i8] c"ok\00"
define void @mathprint(ptr %f, ptr %d) {
  %tid = call i32 @tidal.tid.x()
  %t64 = zext i32 %tid to i64
  %x = uitofp i32 %tid to float
  %s = call float @tidal.math.sin.f32(float %x)
  %t = call float @tidal.math.tan.f32(float %x)
  %st = fadd float %s, %t
  %fp = getelementptr float, ptr %f, i64 %t64
  store float %st, ptr %fp
  %xd = uitofp i32 %tid to double
  %p = call double @tidal.math.pow.f64(double %xd, double 1.5)
  %xd1 = fadd double %xd, 1.0
  %r = call double @tidal.math.rsqrt.f64(double %xd1)
  %pr = fadd double %p, %r
  %dp = getelementptr double, ptr %d, i64 %t64
  store double %pr, ptr %dp
  call void @tidal.threadfence()
  %big = mul i64 %t64, 10000000000
  call void (ptr, ...) @tidal.print(ptr @format, i32 %tid, double %xd, ptr @word, i64 %big)
  ret void
}
!tidal.kernels = !{!0}
!0 = !{ptr @mathprint}
)";

TEST(CpuKernel, MathAndPrint) {
  std::unique_ptr<CpuModule> Module = compileMarkers(MathPrintKernel, "math");
  ASSERT_TRUE(Module);
  std::vector<float> F(4);
  std::vector<double> D(4);
  float *FP = F.data();
  double *DP = D.data();
  void *Params[] = {&FP, &DP};
  testing::internal::CaptureStdout();
  launchOnCpu(Module->blockFunction("mathprint"), {1, 1, 1}, {4, 1, 1}, Params, 0);
  std::string Output = testing::internal::GetCapturedStdout();
  for (int I = 0; I < 4; ++I) {
    EXPECT_FLOAT_EQ(F[I], std::sin(float(I)) + std::tan(float(I))) << I;
    EXPECT_DOUBLE_EQ(D[I], std::pow(double(I), 1.5) + 1.0 / std::sqrt(I + 1.0)) << I;
  }
  EXPECT_EQ(Output, "thread 0: 0.00 ok 0\nthread 1: 1.00 ok 10000000000\n"
                    "thread 2: 2.00 ok 20000000000\nthread 3: 3.00 ok 30000000000\n");
}

} // namespace
