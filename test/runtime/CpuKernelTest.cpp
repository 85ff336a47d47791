// Marker IR (docs/markers.md) lowered in-process with tidal::runHostPipeline,
// compiled by CpuModule and launched with launchOnCpu: the cpu target's
// semantics of barriers, shared/local/constant memory and atomics
// (docs/cpu-target.md). Warp collectives, math, print and debug-mode
// failures: CpuKernelWarpTest.cpp. Last, the timing of barrier kernels
// against plain loops (prints only).
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

// out[block] = sum of x[block * ntid .. + ntid): tree reduction in static
// shared memory, syncthreads inside the loop.
constexpr const char *ReduceKernel = R"(
define void @reduce(ptr %out, ptr %x) {
entry:
  %sh = call ptr @tidal.shared.array(i64 4096, i64 4)
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %bdim = call i32 @tidal.ntid.x()
  %t64 = zext i32 %tid to i64
  %b64 = zext i32 %bid to i64
  %d64 = zext i32 %bdim to i64
  %base = mul i64 %b64, %d64
  %i = add i64 %base, %t64
  %xp = getelementptr float, ptr %x, i64 %i
  %xv = load float, ptr %xp
  %sp = getelementptr float, ptr %sh, i64 %t64
  store float %xv, ptr %sp
  call void @tidal.syncthreads()
  %half0 = lshr i32 %bdim, 1
  br label %loop
loop:
  %s = phi i32 [ %half0, %entry ], [ %s.next, %sync ]
  %more = icmp ugt i32 %s, 0
  br i1 %more, label %body, label %exit
body:
  %active = icmp ult i32 %tid, %s
  br i1 %active, label %add, label %sync
add:
  %s64 = zext i32 %s to i64
  %o = add i64 %t64, %s64
  %op = getelementptr float, ptr %sh, i64 %o
  %ov = load float, ptr %op
  %mv = load float, ptr %sp
  %sum = fadd float %mv, %ov
  store float %sum, ptr %sp
  br label %sync
sync:
  call void @tidal.syncthreads()
  %s.next = lshr i32 %s, 1
  br label %loop
exit:
  %is0 = icmp eq i32 %tid, 0
  br i1 %is0, label %write, label %done
write:
  %r = load float, ptr %sh
  %outp = getelementptr float, ptr %out, i64 %b64
  store float %r, ptr %outp
  br label %done
done:
  ret void
}
!tidal.kernels = !{!0}
!0 = !{ptr @reduce}
)";

// C = A * B for n x n float32 (n a multiple of 16), 16 x 16 tiles in
// shared memory, two barriers per tile.
constexpr const char *MatmulKernel = R"(
define void @matmul(ptr %c, ptr %a, ptr %b, i64 %n) {
entry:
  %sa = call ptr @tidal.shared.array(i64 1024, i64 4)
  %sb = call ptr @tidal.shared.array(i64 1024, i64 4)
  %tx32 = call i32 @tidal.tid.x()
  %ty32 = call i32 @tidal.tid.y()
  %bx32 = call i32 @tidal.ctaid.x()
  %by32 = call i32 @tidal.ctaid.y()
  %tx = zext i32 %tx32 to i64
  %ty = zext i32 %ty32 to i64
  %bx = zext i32 %bx32 to i64
  %by = zext i32 %by32 to i64
  %by16 = mul i64 %by, 16
  %row = add i64 %by16, %ty
  %bx16 = mul i64 %bx, 16
  %col = add i64 %bx16, %tx
  %tiles = udiv i64 %n, 16
  %ty16 = mul i64 %ty, 16
  %sidx = add i64 %ty16, %tx
  %rown = mul i64 %row, %n
  br label %tile
tile:
  %t = phi i64 [ 0, %entry ], [ %t.next, %after ]
  %acc = phi float [ 0.0, %entry ], [ %acc.k, %after ]
  %more = icmp ult i64 %t, %tiles
  br i1 %more, label %load, label %exit
load:
  %t16 = mul i64 %t, 16
  %acol = add i64 %t16, %tx
  %aidx = add i64 %rown, %acol
  %ap = getelementptr float, ptr %a, i64 %aidx
  %av = load float, ptr %ap
  %sap = getelementptr float, ptr %sa, i64 %sidx
  store float %av, ptr %sap
  %brow = add i64 %t16, %ty
  %brown = mul i64 %brow, %n
  %bidx = add i64 %brown, %col
  %bp = getelementptr float, ptr %b, i64 %bidx
  %bv = load float, ptr %bp
  %sbp = getelementptr float, ptr %sb, i64 %sidx
  store float %bv, ptr %sbp
  call void @tidal.syncthreads()
  br label %k.loop
k.loop:
  %k = phi i64 [ 0, %load ], [ %k.next, %k.loop ]
  %acc.in = phi float [ %acc, %load ], [ %acc.k, %k.loop ]
  %ai = add i64 %ty16, %k
  %aip = getelementptr float, ptr %sa, i64 %ai
  %aiv = load float, ptr %aip
  %k16 = mul i64 %k, 16
  %bi = add i64 %k16, %tx
  %bip = getelementptr float, ptr %sb, i64 %bi
  %biv = load float, ptr %bip
  %prod = fmul float %aiv, %biv
  %acc.k = fadd float %acc.in, %prod
  %k.next = add i64 %k, 1
  %k.more = icmp ult i64 %k.next, 16
  br i1 %k.more, label %k.loop, label %after.k
after.k:
  call void @tidal.syncthreads()
  br label %after
after:
  %t.next = add i64 %t, 1
  br label %tile
exit:
  %cidx = add i64 %rown, %col
  %cp = getelementptr float, ptr %c, i64 %cidx
  store float %acc, ptr %cp
  ret void
}
!tidal.kernels = !{!0}
!0 = !{ptr @matmul}
)";

// Per-block shared-memory histogram (shared atomics), merged into the
// global histogram with global atomics: hist[x[i] & 255] += 1.
constexpr const char *HistogramKernel = R"(
define void @histogram(ptr %hist, ptr %x, i64 %n) {
entry:
  %local = call ptr @tidal.shared.array(i64 1024, i64 4)
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %bdim = call i32 @tidal.ntid.x()
  %gdim = call i32 @tidal.nctaid.x()
  %t64 = zext i32 %tid to i64
  %clear.p = getelementptr i32, ptr %local, i64 %t64
  store i32 0, ptr %clear.p
  call void @tidal.syncthreads()
  %b64 = zext i32 %bid to i64
  %d64 = zext i32 %bdim to i64
  %g64 = zext i32 %gdim to i64
  %base = mul i64 %b64, %d64
  %first = add i64 %base, %t64
  %stride = mul i64 %g64, %d64
  br label %loop
loop:
  %i = phi i64 [ %first, %entry ], [ %i.next, %body ]
  %in = icmp ult i64 %i, %n
  br i1 %in, label %body, label %merge
body:
  %xp = getelementptr i32, ptr %x, i64 %i
  %xv = load i32, ptr %xp
  %bin = and i32 %xv, 255
  %bin64 = zext i32 %bin to i64
  %hp = getelementptr i32, ptr %local, i64 %bin64
  %old = call i32 @tidal.atomic.add.i32(ptr %hp, i32 1)
  %i.next = add i64 %i, %stride
  br label %loop
merge:
  call void @tidal.syncthreads()
  %mine = load i32, ptr %clear.p
  %gp = getelementptr i32, ptr %hist, i64 %t64
  %gold = call i32 @tidal.atomic.add.i32(ptr %gp, i32 %mine)
  ret void
}
!tidal.kernels = !{!0}
!0 = !{ptr @histogram}
)";

std::vector<float> randomFloats(size_t N, unsigned Seed) {
  std::vector<float> Values(N);
  uint32_t State = Seed;
  for (float &V : Values) {
    State = State * 1664525u + 1013904223u;
    V = float(int(State >> 24) % 17 - 8); // small integers: exact sums
  }
  return Values;
}

TEST(CpuKernel, ReductionWithSyncthreadsInALoop) {
  std::unique_ptr<CpuModule> Module = compileMarkers(ReduceKernel, "reduce");
  ASSERT_TRUE(Module);
  for (uint32_t BlockSize : {256u, 1024u, 32u}) {
    const uint32_t Blocks = 37;
    std::vector<float> X = randomFloats(size_t(BlockSize) * Blocks, BlockSize);
    std::vector<float> Out(Blocks, -1.0f);
    float *OutData = Out.data(), *XData = X.data();
    void *Params[] = {&OutData, &XData};
    launchOnCpu(Module->blockFunction("reduce"), {Blocks, 1, 1},
                {BlockSize, 1, 1}, Params, 0);
    for (uint32_t B = 0; B < Blocks; ++B) {
      float Expected = 0;
      for (uint32_t T = 0; T < BlockSize; ++T)
        Expected += X[size_t(B) * BlockSize + T];
      ASSERT_EQ(Out[B], Expected) << "block " << B << " of " << BlockSize;
    }
  }
}

// Values live across barriers: %half, %s and %acc are the same in every
// thread (one scalar of the block); %pick (a phi after a branch on the
// thread index) and %k (from a loop whose trip count depends on the thread
// index) only look uniform and must stay per thread.
constexpr const char *LiveAcrossBarriersKernel = R"(
define void @live(ptr %out, i32 %n) {
entry:
  %t = call i32 @tidal.tid.x()
  %half = lshr i32 %n, 1
  %small = icmp ult i32 %t, 5
  br i1 %small, label %few, label %many
few:
  br label %join
many:
  br label %join
join:
  %pick = phi i32 [ 1, %few ], [ 2, %many ]
  %m = urem i32 %t, 3
  br label %count
count:
  %i = phi i32 [ 0, %join ], [ %i.next, %count ]
  %k = phi i32 [ %half, %join ], [ %k.next, %count ]
  %i.next = add i32 %i, 1
  %k.next = add i32 %k, 3
  %more = icmp ule i32 %i.next, %m
  br i1 %more, label %count, label %after
after:
  call void @tidal.syncthreads()
  br label %head
head:
  %s = phi i32 [ %half, %after ], [ %s.next, %body ]
  %acc = phi i32 [ 0, %after ], [ %acc.next, %body ]
  %go = icmp ugt i32 %s, 0
  br i1 %go, label %body, label %exit
body:
  call void @tidal.syncthreads()
  %acc.next = add i32 %acc, %s
  %s.next = lshr i32 %s, 1
  br label %head
exit:
  call void @tidal.syncthreads()
  %b = call i32 @tidal.ctaid.x()
  %d = call i32 @tidal.ntid.x()
  %g = mul i32 %b, %d
  %gt = add i32 %g, %t
  %base = mul i32 %gt, 3
  %base64 = zext i32 %base to i64
  %p0 = getelementptr i32, ptr %out, i64 %base64
  store i32 %pick, ptr %p0
  %p1 = getelementptr i32, ptr %p0, i64 1
  store i32 %k.next, ptr %p1
  %p2 = getelementptr i32, ptr %p0, i64 2
  store i32 %acc, ptr %p2
  ret void
}
!tidal.kernels = !{!0}
!0 = !{ptr @live}
)";

TEST(CpuKernel, UniformAndPerThreadValuesAcrossBarriers) {
  std::unique_ptr<CpuModule> Module = compileMarkers(LiveAcrossBarriersKernel, "live");
  ASSERT_TRUE(Module);
  for (uint32_t BlockSize : {64u, 7u}) {
    const uint32_t Blocks = 3;
    std::vector<int32_t> Out(size_t(3) * Blocks * BlockSize, -1);
    int32_t *OutData = Out.data();
    int32_t N = 100; // half = 50: acc = 50 + 25 + 12 + 6 + 3 + 1
    void *Params[] = {&OutData, &N};
    launchOnCpu(Module->blockFunction("live"), {Blocks, 1, 1}, {BlockSize, 1, 1},
                Params, 0);
    for (uint32_t G = 0; G < Blocks * BlockSize; ++G) {
      uint32_t T = G % BlockSize;
      ASSERT_EQ(Out[3 * G], T < 5 ? 1 : 2) << "thread " << G;
      ASSERT_EQ(Out[3 * G + 1], int32_t(50 + 3 * (T % 3 + 1))) << "thread " << G;
      ASSERT_EQ(Out[3 * G + 2], 97) << "thread " << G;
    }
  }
}

TEST(CpuKernel, TiledMatmulInSharedMemory) {
  std::unique_ptr<CpuModule> Module = compileMarkers(MatmulKernel, "matmul");
  ASSERT_TRUE(Module);
  const int64_t N = 64;
  std::vector<float> A = randomFloats(N * N, 1), B = randomFloats(N * N, 2),
                     C(N * N, -1.0f);
  float *CData = C.data(), *AData = A.data(), *BData = B.data();
  int64_t Size = N;
  void *Params[] = {&CData, &AData, &BData, &Size};
  launchOnCpu(Module->blockFunction("matmul"), {N / 16, N / 16, 1}, {16, 16, 1},
              Params, 0);
  for (int64_t I = 0; I < N; ++I)
    for (int64_t J = 0; J < N; ++J) {
      float Expected = 0;
      for (int64_t K = 0; K < N; ++K)
        Expected += A[I * N + K] * B[K * N + J];
      ASSERT_EQ(C[I * N + J], Expected) << I << ", " << J;
    }
}

TEST(CpuKernel, SharedAndGlobalAtomicsHistogram) {
  std::unique_ptr<CpuModule> Module =
      compileMarkers(HistogramKernel, "histogram");
  ASSERT_TRUE(Module);
  const int64_t N = 100003;
  std::vector<int32_t> X(N), Hist(256, 0), Expected(256, 0);
  for (int64_t I = 0; I < N; ++I) {
    X[I] = int32_t((I * 2654435761u) >> 7);
    ++Expected[X[I] & 255];
  }
  int32_t *HistData = Hist.data(), *XData = X.data();
  int64_t Count = N;
  void *Params[] = {&HistData, &XData, &Count};
  launchOnCpu(Module->blockFunction("histogram"), {64, 1, 1}, {256, 1, 1},
              Params, 0);
  EXPECT_EQ(Hist, Expected);
}

// Every thread of many blocks takes a ticket with atomic.add on one
// counter (old values must be a permutation of 0..total-1), raises a
// maximum, counts with a wrapping inc, adds 0.5f, and claims a slot by cas.
constexpr const char *TicketKernel = R"(
define void @tickets(ptr %counter, ptr %seen, ptr %maximum, ptr %wrap, ptr %fsum, ptr %claims) {
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %bdim = call i32 @tidal.ntid.x()
  %base = mul i32 %bid, %bdim
  %g = add i32 %base, %tid
  %ticket = call i32 @tidal.atomic.add.i32(ptr %counter, i32 1)
  %t64 = sext i32 %ticket to i64
  %sp = getelementptr i32, ptr %seen, i64 %t64
  %prev = load i32, ptr %sp
  %inc = add i32 %prev, 1
  store i32 %inc, ptr %sp
  %m = call i32 @tidal.atomic.max.i32(ptr %maximum, i32 %g)
  %w = call i32 @tidal.atomic.inc.u32(ptr %wrap, i32 9)
  %f = call float @tidal.atomic.add.f32(ptr %fsum, float 0.5)
  %slot = and i32 %g, 63
  %s64 = zext i32 %slot to i64
  %cp = getelementptr i32, ptr %claims, i64 %s64
  %won = call i32 @tidal.atomic.cas.i32(ptr %cp, i32 -1, i32 %g)
  ret void
}
!tidal.kernels = !{!0}
!0 = !{ptr @tickets}
)";

TEST(CpuKernel, ContendedAtomicsReturnOldValues) {
  std::unique_ptr<CpuModule> Module = compileMarkers(TicketKernel, "tickets");
  ASSERT_TRUE(Module);
  const uint32_t Blocks = 2000, BlockSize = 64, Total = Blocks * BlockSize;
  int32_t Counter = 0, Maximum = -1, Wrap = 0;
  float FloatSum = 0;
  std::vector<int32_t> Seen(Total, 0), Claims(64, -1);
  int32_t *CounterP = &Counter, *SeenP = Seen.data(), *MaxP = &Maximum,
          *WrapP = &Wrap, *ClaimsP = Claims.data();
  float *FloatP = &FloatSum;
  void *Params[] = {&CounterP, &SeenP, &MaxP, &WrapP, &FloatP, &ClaimsP};
  launchOnCpu(Module->blockFunction("tickets"), {Blocks, 1, 1},
              {BlockSize, 1, 1}, Params, 0);
  EXPECT_EQ(Counter, int32_t(Total));
  for (uint32_t I = 0; I < Total; ++I)
    ASSERT_EQ(Seen[I], 1) << "ticket " << I;
  EXPECT_EQ(Maximum, int32_t(Total - 1));
  EXPECT_EQ(Wrap, int32_t(Total % 10)); // inc wraps to 0 after 9
  EXPECT_EQ(FloatSum, 0.5f * Total);
  for (int32_t Slot = 0; Slot < 64; ++Slot)
    ASSERT_EQ(Claims[Slot] & 63, Slot) << "slot " << Slot;
}

// out[g] = 1 + linear global index of the thread, 3-D grid of 3-D blocks.
constexpr const char *GridKernel = R"(
define void @grid3(ptr %out, ptr %shape) {
  %tx = call i32 @tidal.tid.x()
  %ty = call i32 @tidal.tid.y()
  %tz = call i32 @tidal.tid.z()
  %nx = call i32 @tidal.ntid.x()
  %ny = call i32 @tidal.ntid.y()
  %nz = call i32 @tidal.ntid.z()
  %bx = call i32 @tidal.ctaid.x()
  %by = call i32 @tidal.ctaid.y()
  %bz = call i32 @tidal.ctaid.z()
  %gx = call i32 @tidal.nctaid.x()
  %gy = call i32 @tidal.nctaid.y()
  %x0 = mul i32 %bx, %nx
  %x = add i32 %x0, %tx
  %y0 = mul i32 %by, %ny
  %y = add i32 %y0, %ty
  %z0 = mul i32 %bz, %nz
  %z = add i32 %z0, %tz
  %w = mul i32 %gx, %nx
  %h = mul i32 %gy, %ny
  %zh = mul i32 %z, %h
  %zhy = add i32 %zh, %y
  %l0 = mul i32 %zhy, %w
  %l = add i32 %l0, %x
  %l64 = zext i32 %l to i64
  %p = getelementptr i32, ptr %out, i64 %l64
  %v = add i32 %l, 1
  store i32 %v, ptr %p
  ret void
}
!tidal.kernels = !{!0}
!0 = !{ptr @grid3}
)";

TEST(CpuKernel, ThreeDimensionalGrid) {
  std::unique_ptr<CpuModule> Module = compileMarkers(GridKernel, "grid3");
  ASSERT_TRUE(Module);
  const Dim3 Grid = {3, 4, 5}, Block = {2, 3, 7};
  const size_t Total = 3 * 4 * 5 * 2 * 3 * 7;
  std::vector<int32_t> Out(Total, 0);
  int32_t *OutP = Out.data();
  void *Shape = nullptr;
  void *Params[] = {&OutP, &Shape};
  launchOnCpu(Module->blockFunction("grid3"), Grid, Block, Params, 0);
  for (size_t I = 0; I < Total; ++I)
    ASSERT_EQ(Out[I], int32_t(I + 1)) << I;
}

// Static and dynamic shared memory, a local array kept across a barrier
// and a constant array: out[g] = dyn[ntid-1-t] + static[t] + local sum +
// table[t & 3], where dyn holds in[], static holds 1000 * t.
constexpr const char *MemoryKernel = R"(
@table = private constant [4 x i32] [i32 10, i32 20, i32 30, i32 40]
define void @memory(ptr %out, ptr %in) {
  %dyn = call ptr @tidal.shared.dynamic()
  %st = call ptr @tidal.shared.array(i64 4096, i64 16)
  %loc = call ptr @tidal.local.array(i64 16, i64 4)
  %tab = call ptr @tidal.const.array(ptr @table)
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %bdim = call i32 @tidal.ntid.x()
  %t64 = zext i32 %tid to i64
  %base = mul i32 %bid, %bdim
  %g = add i32 %base, %tid
  %g64 = zext i32 %g to i64
  %inp = getelementptr i32, ptr %in, i64 %g64
  %inv = load i32, ptr %inp
  %dp = getelementptr i32, ptr %dyn, i64 %t64
  store i32 %inv, ptr %dp
  %sv = mul i32 %tid, 1000
  %sp = getelementptr i32, ptr %st, i64 %t64
  store i32 %sv, ptr %sp
  store i32 %tid, ptr %loc
  %l1 = getelementptr i32, ptr %loc, i64 1
  store i32 %bid, ptr %l1
  call void @tidal.syncthreads()
  %last = sub i32 %bdim, 1
  %mirror = sub i32 %last, %tid
  %m64 = zext i32 %mirror to i64
  %mp = getelementptr i32, ptr %dyn, i64 %m64
  %mv = load i32, ptr %mp
  %sv2 = load i32, ptr %sp
  %lv0 = load i32, ptr %loc
  %lv1 = load i32, ptr %l1
  %q = and i64 %t64, 3
  %tp = getelementptr i32, ptr %tab, i64 %q
  %tv = load i32, ptr %tp
  %r1 = add i32 %mv, %sv2
  %r2 = add i32 %r1, %lv0
  %r3 = add i32 %r2, %lv1
  %r4 = add i32 %r3, %tv
  %op = getelementptr i32, ptr %out, i64 %g64
  store i32 %r4, ptr %op
  ret void
}
!tidal.kernels = !{!0}
!0 = !{ptr @memory}
)";

TEST(CpuKernel, StaticDynamicLocalAndConstantMemory) {
  std::unique_ptr<CpuModule> Module = compileMarkers(MemoryKernel, "memory");
  ASSERT_TRUE(Module);
  const uint32_t Blocks = 9, BlockSize = 100;
  std::vector<int32_t> In(Blocks * BlockSize), Out(In.size(), 0);
  for (size_t I = 0; I < In.size(); ++I)
    In[I] = int32_t(I * 7 + 3);
  int32_t *OutP = Out.data(), *InP = In.data();
  void *Params[] = {&OutP, &InP};
  launchOnCpu(Module->blockFunction("memory"), {Blocks, 1, 1},
              {BlockSize, 1, 1}, Params, BlockSize * sizeof(int32_t));
  const int32_t Table[4] = {10, 20, 30, 40};
  for (uint32_t B = 0; B < Blocks; ++B)
    for (uint32_t T = 0; T < BlockSize; ++T)
      ASSERT_EQ(Out[B * BlockSize + T],
                In[B * BlockSize + BlockSize - 1 - T] + int32_t(1000 * T) +
                    int32_t(T) + int32_t(B) + Table[T & 3])
          << "block " << B << " thread " << T;
}

// count / and / or of predicates over the block.
constexpr const char *CountKernel = R"(
define void @counts(ptr %out) {
  %tid = call i32 @tidal.tid.x()
  %bid = call i32 @tidal.ctaid.x()
  %r3 = urem i32 %tid, 3
  %p1 = icmp eq i32 %r3, 0
  %p1i = zext i1 %p1 to i32
  %count = call i32 @tidal.syncthreads.count(i32 %p1i)
  %p2 = icmp ult i32 %tid, 1000
  %p2i = zext i1 %p2 to i32
  %all = call i32 @tidal.syncthreads.and(i32 %p2i)
  %p3 = icmp eq i32 %tid, 5
  %p3i = zext i1 %p3 to i32
  %any = call i32 @tidal.syncthreads.or(i32 %p3i)
  %none = call i32 @tidal.syncthreads.or(i32 0)
  %b4 = mul i32 %bid, 4
  %i0 = zext i32 %b4 to i64
  %o0 = getelementptr i32, ptr %out, i64 %i0
  %is0 = icmp eq i32 %tid, 7
  br i1 %is0, label %write, label %done
write:
  store i32 %count, ptr %o0
  %o1 = getelementptr i32, ptr %o0, i64 1
  store i32 %all, ptr %o1
  %o2 = getelementptr i32, ptr %o0, i64 2
  store i32 %any, ptr %o2
  %o3 = getelementptr i32, ptr %o0, i64 3
  store i32 %none, ptr %o3
  br label %done
done:
  ret void
}
!tidal.kernels = !{!0}
!0 = !{ptr @counts}
)";

TEST(CpuKernel, SyncthreadsCountAndOr) {
  std::unique_ptr<CpuModule> Module = compileMarkers(CountKernel, "counts");
  ASSERT_TRUE(Module);
  for (uint32_t BlockSize : {64u, 1024u, 100u}) {
    std::vector<int32_t> Out(4 * 3, -1);
    int32_t *OutP = Out.data();
    void *Params[] = {&OutP};
    launchOnCpu(Module->blockFunction("counts"), {3, 1, 1}, {BlockSize, 1, 1},
                Params, 0);
    for (int B = 0; B < 3; ++B) {
      EXPECT_EQ(Out[B * 4 + 0], int32_t((BlockSize + 2) / 3)) << BlockSize;
      EXPECT_EQ(Out[B * 4 + 1], BlockSize <= 1000 ? 1 : 0) << BlockSize;
      EXPECT_EQ(Out[B * 4 + 2], 1) << BlockSize;
      EXPECT_EQ(Out[B * 4 + 3], 0) << BlockSize;
    }
  }
}
// Prints, never asserts: ns per element of the lowered kernels against a
// plain C++ loop doing the same work on one thread.
TEST(CpuTiming, BarrierKernelsAgainstPlainLoops) {
  using Clock = std::chrono::steady_clock;
  auto Seconds = [](Clock::duration D) {
    return std::chrono::duration<double>(D).count();
  };
  auto Best = [&](auto &&Run, int Repeats) {
    double Min = 1e30;
    for (int I = 0; I < Repeats; ++I) {
      auto Start = Clock::now();
      Run();
      Min = std::min(Min, Seconds(Clock::now() - Start));
    }
    return Min;
  };
  {
    std::unique_ptr<CpuModule> Module = compileMarkers(MatmulKernel, "matmul");
    ASSERT_TRUE(Module);
    const int64_t N = 256;
    std::vector<float> A = randomFloats(N * N, 1), B = randomFloats(N * N, 2),
                       C(N * N), Reference(N * N);
    float *CData = C.data(), *AData = A.data(), *BData = B.data();
    int64_t Size = N;
    void *Params[] = {&CData, &AData, &BData, &Size};
    TidalBlockFunction Fn = Module->blockFunction("matmul");
    double Kernel = Best([&] {
      launchOnCpu(Fn, {N / 16, N / 16, 1}, {16, 16, 1}, Params, 0);
    }, 5);
    double Plain = Best([&] {
      for (int64_t I = 0; I < N; ++I) {
        float *Row = Reference.data() + I * N;
        std::fill(Row, Row + N, 0.0f);
        for (int64_t K = 0; K < N; ++K) {
          float AIK = A[I * N + K];
          for (int64_t J = 0; J < N; ++J)
            Row[J] += AIK * B[K * N + J];
        }
      }
    }, 5);
    EXPECT_EQ(C, Reference);
    std::cout << "[ timing   ] matmul 256x256 f32, 16x16 tiles: " << Kernel * 1e3
              << " ms (" << Kernel * 1e9 / (N * N) << " ns/element), plain C++ "
              << "loop on one thread: " << Plain * 1e3 << " ms, "
              << cpuWorkerCount() << " pool threads\n";
  }
  {
    std::unique_ptr<CpuModule> Module = compileMarkers(ReduceKernel, "reduce");
    ASSERT_TRUE(Module);
    const uint32_t N = 1 << 20, BlockSize = 256;
    std::vector<float> X = randomFloats(N, 3), Out(N / BlockSize);
    float *OutData = Out.data(), *XData = X.data();
    void *Params[] = {&OutData, &XData};
    TidalBlockFunction Fn = Module->blockFunction("reduce");
    double Kernel = Best([&] {
      launchOnCpu(Fn, {N / BlockSize, 1, 1}, {BlockSize, 1, 1}, Params, 0);
    }, 10);
    volatile float Sink = 0;
    double Plain = Best([&] {
      float Sum = 0;
      for (uint32_t I = 0; I < N; ++I)
        Sum += X[I];
      Sink = Sum;
    }, 10);
    std::cout << "[ timing   ] block reduction of 2^20 f32 (256 threads): "
              << Kernel * 1e9 / N << " ns/element, plain C++ loop: "
              << Plain * 1e9 / N << " ns/element\n";
  }
  {
    std::unique_ptr<CpuModule> Module =
        compileMarkers(HistogramKernel, "histogram");
    ASSERT_TRUE(Module);
    const int64_t N = 1 << 20;
    std::vector<int32_t> X(N), Hist(256), Reference(256);
    for (int64_t I = 0; I < N; ++I)
      X[I] = int32_t((I * 2654435761u) >> 7);
    int32_t *HistData = Hist.data(), *XData = X.data();
    int64_t Count = N;
    void *Params[] = {&HistData, &XData, &Count};
    TidalBlockFunction Fn = Module->blockFunction("histogram");
    double Kernel = Best([&] {
      launchOnCpu(Fn, {64, 1, 1}, {256, 1, 1}, Params, 0);
    }, 10);
    double Plain = Best([&] {
      std::fill(Reference.begin(), Reference.end(), 0);
      for (int64_t I = 0; I < N; ++I)
        ++Reference[X[I] & 255];
    }, 10);
    std::cout << "[ timing   ] shared-memory histogram of 2^20 i32, 256 bins: "
              << Kernel * 1e9 / N << " ns/element, plain C++ loop: "
              << Plain * 1e9 / N << " ns/element\n";
  }
}

} // namespace
