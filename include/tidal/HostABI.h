// The calling convention between host-lowered kernels (tidal-lower-host) and
// the cpu runtime. Plain C so that hand-written IR and C++ agree on it; the
// plugin builds the same struct type in IR (see docs/cpu-target.md).
#ifndef TIDAL_HOSTABI_H
#define TIDAL_HOSTABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// One per block being run; the runtime fills it before calling the block
// function. Field order is part of the ABI: the IR reads fields by index.
//   field 0: blockDim  (x, y, z)   -> tidal.ntid.*
//   field 1: gridDim   (x, y, z)   -> tidal.nctaid.*
//   field 2: blockIdx  (x, y, z)   -> tidal.ctaid.*
//   field 3: flags: TIDAL_CONTEXT_ALONE when no other host thread runs a
//            block of this launch, or when the kernel's global atomics go
//            to this host thread's private copies of their arrays (they
//            may then be plain read-modify-writes)
//   field 4: dynamic shared memory of this block (sized at launch)
//   field 5: its size in bytes
//   field 6: the runtime's own state for this block (opaque to kernels); the
//            runtime entry points below find the launch through it
typedef struct TidalBlockContext {
  uint32_t block_dim[3];
  uint32_t grid_dim[3];
  uint32_t block_idx[3];
  uint32_t flags;
  void *dynamic_shared;
  uint64_t dynamic_shared_bytes;
  void *runtime;
} TidalBlockContext;

// The entry that tidal-lower-host creates for each kernel K, named
// TIDAL_BLOCK_PREFIX "K". It runs every thread of one block.
// `params` is laid out as cuLaunchKernel's kernelParams: params[i] points at
// the value of the i-th (flattened) kernel parameter.
typedef void (*TidalBlockFunction)(void **params, TidalBlockContext *ctx);

#define TIDAL_BLOCK_PREFIX "__tidal_block_"

// The same entry for blocks that pass some of K's checks by their shape,
// built at the first launch that can use it (a module of its own that calls
// TIDAL_BLOCK_PREFIX "K" for the other blocks; docs/cpu-target.md).
#define TIDAL_FITTED_BLOCK_PREFIX "__tidal_fitted_block_"
// Beside it, for a kernel without sync points that indexes x only through
// cuda.grid: runs the blocks ctx->block_idx.x .. + count - 1 of one row of
// the grid (same y and z) as one block count times as wide, the leading
// ones that pass the fitted function's conditions; returns how many it ran
// (0: none; the caller runs the rest one by one; docs/cpu-target.md).
typedef uint32_t (*TidalCoarseBlockFunction)(void **params, TidalBlockContext *ctx,
                                             uint32_t count);
#define TIDAL_COARSE_BLOCK_PREFIX "__tidal_coarse_block_"

// For each kernel K, tidal-lower-host also defines the constant
// `i64 TIDAL_STATIC_SHARED_PREFIX "K"`: the bytes of static shared memory of
// a block (its shared arrays, aligned), which the launch checks the dynamic
// shared memory against (TIDAL_MAX_SHARED_BYTES_PER_BLOCK_OPTIN).
#define TIDAL_STATIC_SHARED_PREFIX "__tidal_static_shared_"

// TidalBlockContext.flags bits.
#define TIDAL_CONTEXT_ALONE 1u

// The cpu runtime's entry points that host-lowered code calls (defined in
// runtime/CpuHooks.cpp, given to the JIT by name; docs/cpu-target.md).
//   The block's shared memory: StaticBytes (a multiple of 64) of static
//   shared arrays, then the launch's dynamic shared memory; 64-byte aligned,
//   filled with 0xFF bytes when Poison (debug mode).
void *__tidal_cpu_shared(TidalBlockContext *ctx, uint64_t static_bytes,
                         int32_t poison);
//   The frame of the block's threads (values kept across barriers).
void *__tidal_cpu_frame(TidalBlockContext *ctx, uint64_t bytes);
//   Failures: record the launch's first one, which launchOnCpu throws as
//   tidal::runtime::KernelError; the calling thread then stops.
void __tidal_cpu_bounds_error(TidalBlockContext *ctx, const char *where,
                              int64_t index, int64_t extent, int32_t axis,
                              int32_t tid_x, int32_t tid_y, int32_t tid_z);
void __tidal_cpu_assert_fail(TidalBlockContext *ctx, const char *message,
                             int32_t tid_x, int32_t tid_y, int32_t tid_z);
//   Threads of a block at different sync points: states[t] is the sync point
//   linear thread t reached (names[state]) or -1 if it finished.
void __tidal_cpu_barrier_error(TidalBlockContext *ctx, const char *kernel,
                               const int32_t *states, uint32_t thread_count,
                               const char *const *names, uint32_t name_count);
//   print(): C printf, one call = one line, written and flushed atomically.
void __tidal_cpu_print(const char *format, ...);
//   Warp rounds (kernels with warp collectives; docs/cpu-target.md): after
//   the runnable lanes of one warp ran up to their next sync point,
//   states[l] (l < lanes) is the sync point lane l reached (or -1 finished,
//   -2 failed) and kinds[point] says what that point is (TIDAL_SYNC_*).
//   Completes one group (the lowest such point): the lanes at one warp
//   collective or activemask whose masks' other (existing, unfinished) lanes
//   are all there too. Their states become point + TIDAL_SYNC_RELEASED
//   (resume there) and read[l] their result source: written[l] (the value
//   lane l stored), the group's lanes for activemask; 0 for the lanes
//   outside the group. masks[l] is the mask lane l passed. Returns point + TIDAL_SYNC_RELEASED if it completed
//   the group at that point, TIDAL_WARP_STEP_FAILED if a lane failed,
//   TIDAL_WARP_STEP_EXITED if lanes wait at a TIDAL_SYNC_WARP_CHECKED point
//   whose mask names a lane that finished (debug mode's syncwarp), 0 if
//   none can be completed (every lane at a block barrier, or finished, or
//   waiting for lanes that will never come: the block's consistency check
//   then reports them).
int32_t __tidal_cpu_warp_step(int32_t *states, uint32_t lanes,
                              const uint32_t *masks, const uint64_t *written,
                              uint64_t *read, const uint8_t *kinds);
//   After __tidal_cpu_warp_step returned TIDAL_WARP_STEP_EXITED for the warp
//   whose first thread is warp_base (states, masks and kinds as there):
//   records the failure, naming the waiting lanes, their syncwarp
//   (names[point]) and the finished lanes its mask names.
void __tidal_cpu_warp_exit_error(TidalBlockContext *ctx, const char *kernel,
                                 const int32_t *states, uint32_t lanes,
                                 uint32_t warp_base, const uint32_t *masks,
                                 const uint8_t *kinds, const char *const *names,
                                 uint32_t name_count);
//   grid.sync() (cooperative launches; docs/cpu-target.md): every thread of
//   the block is at the grid barrier; waits until every block of the launch
//   is at one. Returns 0 then, non-zero when the block must leave instead
//   (the launch failed or was interrupted, a block finished without
//   reaching the barrier, or the launch is not cooperative; recorded).
int32_t __tidal_cpu_grid_sync(TidalBlockContext *ctx);

// Kinds of sync points for __tidal_cpu_warp_step, and the state bit of a
// lane that may resume.
#define TIDAL_SYNC_BLOCK 0u
#define TIDAL_SYNC_WARP 1u
#define TIDAL_SYNC_ACTIVEMASK 2u
// syncwarp in debug mode: a finished lane that its mask names is reported
// (without debug mode it is TIDAL_SYNC_WARP: finished lanes do not hold it up).
#define TIDAL_SYNC_WARP_CHECKED 3u
#define TIDAL_SYNC_RELEASED (1 << 24)
// __tidal_cpu_warp_step's results besides a released point.
#define TIDAL_WARP_STEP_FAILED 2
#define TIDAL_WARP_STEP_EXITED 3

// CUDA's launch limits, which the cpu runtime enforces as a GPU would, so
// that the host lowering may tell LLVM the ranges of the context fields.
#define TIDAL_MAX_THREADS_PER_BLOCK 1024u
#define TIDAL_MAX_BLOCK_DIM_X 1024u
#define TIDAL_MAX_BLOCK_DIM_Y 1024u
#define TIDAL_MAX_BLOCK_DIM_Z 64u
#define TIDAL_MAX_GRID_DIM_X 2147483647u
#define TIDAL_MAX_GRID_DIM_Y 65535u
#define TIDAL_MAX_GRID_DIM_Z 65535u
// Static shared memory of a block (all its shared arrays together) and local
// memory of a thread (its local arrays): CUDA's limits, checked at compile
// time on both targets (llvm-plugin/CheckMarkerArguments.cpp); the cpu
// runtime sizes its worker stacks for the local limit.
#define TIDAL_MAX_STATIC_SHARED_BYTES 49152u
#define TIDAL_MAX_LOCAL_BYTES_PER_THREAD 524288u
// Shared memory of a block, static and dynamic together, as an sm_90 GPU
// allows it: 48 KiB without opting in, 227 KiB with (a launch asking for
// more dynamic shared memory opts in, as on the cuda target). The cpu target
// reports these as its device's attributes and checks launches against them.
#define TIDAL_MAX_SHARED_BYTES_PER_BLOCK 49152u
#define TIDAL_MAX_SHARED_BYTES_PER_BLOCK_OPTIN 232448u

// What K.thread returns besides a sync point number (1, 2, ...), and the
// state of a lane in __tidal_cpu_warp_step's `states`: the thread finished,
// or it failed (a bounds error or a failed assert, already recorded).
#define TIDAL_THREAD_FINISHED (-1)
#define TIDAL_THREAD_FAILED (-2)

#ifdef __cplusplus
}
#endif

#endif
