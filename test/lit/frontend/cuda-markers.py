# Every CUDA name of the language as the frontend emits it: the marker (or
# the target-neutral LLVM intrinsic) of docs/markers.md, version 2.
# RUN: %tidalc %s --kernel barriers --sig 'void(int32[::1])' --emit=markers | FileCheck %s --check-prefix=BARRIERS
# RUN: %tidalc %s --kernel memory --sig 'void(float32[:, ::1])' --emit=markers | FileCheck %s --check-prefix=MEMORY
# RUN: %tidalc %s --kernel atomics --sig 'void(uint32[::1], float64[::1], int64[:, ::1])' --emit=markers | FileCheck %s --check-prefix=ATOMICS
# RUN: %tidalc %s --kernel warp --sig 'void(float64[::1], int32[::1])' --emit=markers | FileCheck %s --check-prefix=WARP
# RUN: %tidalc %s --kernel bits --sig 'void(uint32[::1], float32[::1])' --emit=markers | FileCheck %s --check-prefix=BITS
# RUN: %tidalc %s --kernel maths --sig 'void(float32[::1], float64[::1])' --emit=markers | FileCheck %s --check-prefix=MATH
# RUN: %tidalc %s --kernel printing --sig 'void(float32[::1])' --emit=markers | FileCheck %s --check-prefix=PRINT

import math

import numpy as np

from tidal import cuda, float32, int32


@cuda.jit
def barriers(out):
    i = cuda.grid(1)
    cuda.syncthreads()
    n = cuda.syncthreads_count(i > 3)
    a = cuda.syncthreads_and(i)
    o = cuda.syncthreads_or(i < 2)
    cuda.syncwarp()
    cuda.syncwarp(0xff)
    cuda.threadfence_block()
    cuda.threadfence()
    cuda.threadfence_system()
    out[i] = n + a + o + cuda.laneid + cuda.warpsize

# BARRIERS-LABEL: define void @barriers(
# BARRIERS: call void @tidal.syncthreads()
# BARRIERS: call i32 @tidal.syncthreads.count(i32 %{{.*}})
# BARRIERS: call i32 @tidal.syncthreads.and(i32 %{{.*}})
# BARRIERS: call i32 @tidal.syncthreads.or(i32 %{{.*}})
# BARRIERS: call void @tidal.syncwarp(i32 -1)
# BARRIERS: call void @tidal.syncwarp(i32 255)
# BARRIERS: call void @tidal.threadfence.block()
# BARRIERS: call void @tidal.threadfence()
# BARRIERS: call void @tidal.threadfence.system()
# BARRIERS-DAG: call i32 @tidal.laneid()
# BARRIERS-DAG: call i32 @tidal.warpsize()

TILE = 16
TABLE = np.arange(8, dtype=np.float32)


@cuda.jit
def memory(out):
    tile = cuda.shared.array(shape=(TILE, TILE), dtype=float32)
    dyn = cuda.shared.array(0, dtype=np.float32)
    scratch = cuda.local.array(4, int32)
    table = cuda.const.array_like(TABLE)
    x, y = cuda.grid(2)
    tile[x % TILE, y % TILE] = 1.0
    scratch[0] = 2
    dyn[x] = table[x % 8] + scratch[0]
    out[x, y] = tile[y % TILE, x % TILE] + dyn[x]

# One static shared array per call site: bytes and alignment of the dtype.
# MEMORY: @[[TABLE:.*]] = private unnamed_addr constant [32 x i8]
# MEMORY-LABEL: define void @memory(
# MEMORY: call ptr @tidal.shared.array(i64 1024, i64 4)
# MEMORY: call ptr @tidal.shared.dynamic()
# MEMORY: call ptr @tidal.local.array(i64 16, i64 4)
# MEMORY: call ptr @tidal.const.array(ptr @[[TABLE]])


@cuda.jit
def atomics(bins, total, grid):
    i = cuda.grid(1)
    old = cuda.atomic.add(bins, i % 16, 1)
    cuda.atomic.inc(bins, 0, 100)
    cuda.atomic.dec(bins, 1, 100)
    cuda.atomic.max(total, 0, 2.5)
    cuda.atomic.sub(total, 1, i)
    cuda.atomic.and_(grid, (i, 0), 3)
    cuda.atomic.or_(grid, (i, 1), 3)
    cuda.atomic.xor(grid, (i, 2), 3)
    cuda.atomic.min(grid, (i, 3), -4)
    cuda.atomic.exch(grid, (0, 0), old)
    cuda.atomic.cas(grid, (1, 1), 0, 7)
    cuda.atomic.compare_and_swap(bins, 0, 1)

# ATOMICS-LABEL: define void @atomics(
# ATOMICS: call i32 @tidal.atomic.add.u32(ptr %{{.*}}, i32 1)
# ATOMICS: call i32 @tidal.atomic.inc.u32(ptr %{{.*}}, i32 100)
# ATOMICS: call i32 @tidal.atomic.dec.u32(ptr %{{.*}}, i32 100)
# ATOMICS: call double @tidal.atomic.max.f64(ptr %{{.*}}, double 2.500000e+00)
# ATOMICS: call double @tidal.atomic.sub.f64(ptr
# ATOMICS: call i64 @tidal.atomic.and.i64(ptr %{{.*}}, i64 3)
# ATOMICS: call i64 @tidal.atomic.or.i64(
# ATOMICS: call i64 @tidal.atomic.xor.i64(
# ATOMICS: call i64 @tidal.atomic.min.i64(ptr %{{.*}}, i64 -4)
# ATOMICS: call i64 @tidal.atomic.exch.i64(
# ATOMICS: call i64 @tidal.atomic.cas.i64(ptr %{{.*}}, i64 0, i64 7)
# ATOMICS: call i32 @tidal.atomic.cas.u32(ptr %{{.*}}, i32 0, i32 1)


@cuda.jit
def warp(x, out):
    i = cuda.grid(1)
    v = x[i]
    v += cuda.shfl_down_sync(0xffffffff, v, 16)
    v += cuda.shfl_up_sync(0xffffffff, v, 1)
    v += cuda.shfl_xor_sync(0xffffffff, v, 2)
    v += cuda.shfl_sync(0xffffffff, v, 0)
    n = cuda.shfl_sync(0xffffffff, i, 3)
    b = cuda.ballot_sync(0xffffffff, v > 0)
    ok = cuda.all_sync(0xffffffff, v > 0) and cuda.any_sync(0xffffffff, v < 0)
    same = cuda.eq_sync(0xffffffff, n)
    peers = cuda.match_any_sync(0xffffffff, n)
    mask, all_same = cuda.match_all_sync(0xffffffff, n)
    out[i] = b + ok + same + peers + mask + all_same + cuda.activemask() + cuda.lanemask_lt()
    x[i] = v

# WARP-LABEL: define void @warp(
# WARP: call double @tidal.shfl.down.f64(i32 -1, double %{{.*}}, i32 16)
# WARP: call double @tidal.shfl.up.f64(i32 -1, double %{{.*}}, i32 1)
# WARP: call double @tidal.shfl.xor.f64(i32 -1, double %{{.*}}, i32 2)
# WARP: call double @tidal.shfl.idx.f64(i32 -1, double %{{.*}}, i32 0)
# WARP: call i64 @tidal.shfl.idx.i64(i32 -1, i64 %{{.*}}, i32 3)
# (`and` evaluates its right side in a block placed later in the text.)
# WARP-DAG: call i32 @tidal.vote.ballot(i32 -1, i1 %{{.*}})
# WARP-DAG: call i1 @tidal.vote.all(i32 -1, i1
# WARP-DAG: call i1 @tidal.vote.any(i32 -1, i1
# WARP-DAG: call i1 @tidal.vote.uni(i32 -1, i1
# WARP-DAG: call i32 @tidal.match.any.i64(i32 -1, i64
# WARP-DAG: call { i32, i1 } @tidal.match.all.i64(i32 -1, i64
# WARP-DAG: call i32 @tidal.activemask()
# WARP-DAG: call i32 @tidal.lanemask.lt()


@cuda.jit
def bits(x, y):
    i = cuda.grid(1)
    x[i] = cuda.popc(x[i]) + cuda.brev(x[i]) + cuda.clz(x[i]) + cuda.ffs(x[i])
    y[i] = cuda.fma(y[i], y[i], float32(1.0)) + cuda.cbrt(y[i]) + cuda.selp(i > 2, y[i], float32(0))

# Bit operations and fma are LLVM's own intrinsics: no marker.
# BITS-LABEL: define void @bits(
# BITS: call i32 @llvm.ctpop.i32(
# BITS: call i32 @llvm.bitreverse.i32(
# BITS: call i32 @llvm.ctlz.i32(i32 %{{.*}}, i1 false)
# BITS: call i32 @llvm.cttz.i32(i32 %{{.*}}, i1 true)
# BITS: call float @llvm.fma.f32(
# BITS: call float @tidal.math.cbrt.f32(


@cuda.jit
def maths(x, y):
    i = cuda.grid(1)
    x[i] = math.sin(x[i]) + math.atan2(x[i], x[i]) + x[i] ** x[i] + math.floor(x[i])
    y[i] = math.exp(y[i]) + math.log(y[i], 2.0) + math.gamma(y[i]) + math.isnan(y[i]) + math.radians(y[i]) + math.pi

# float32 stays float32; float64 stays float64; ** is math.pow; gamma is
# tgamma; floor returns int64 (Python 3).
# MATH-LABEL: define void @maths(
# MATH: call float @tidal.math.sin.f32(float
# MATH: call float @tidal.math.atan2.f32(float
# MATH: call float @tidal.math.pow.f32(float
# MATH: call float @tidal.math.floor.f32(float
# MATH: fptosi float %{{.*}} to i64
# MATH: call double @tidal.math.exp.f64(double
# MATH: call double @tidal.math.log.f64(double
# MATH: call double @tidal.math.tgamma.f64(double
# MATH: fcmp uno double
# MATH: fmul double %{{.*}}, 0x3F91DF46A2529D39
# MATH: fadd double %{{.*}}, 0x400921FB54442D18


@cuda.jit
def printing(x):
    i = cuda.grid(1)
    print("x[", i, "] =", x[i], "100%", i < 2)

# Numba's format: integers %lld, floats %f (as double), bools True/False.
# PRINT: @print.format = private unnamed_addr constant [{{[0-9]+}} x i8] c"x[ %lld ] = %f 100%% %s\0A\00"
# PRINT-LABEL: define void @printing(
# PRINT: call void (ptr, ...) @tidal.print(ptr @print.format, i64 %{{.*}}, double %{{.*}}, ptr %{{.*}})
