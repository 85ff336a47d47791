// The contract between the frontend (which emits marker IR), the plugin
// (which lowers it) and the runtime (which launches the result), in one
// place: every name one side writes and another reads. The C ABI of the cpu
// target (the block context, the runtime's entry points, the thread return
// codes, the launch limits) is HostABI.h, included here. docs/markers.md
// describes each item.
#ifndef TIDAL_CONTRACT_H
#define TIDAL_CONTRACT_H

#include "tidal/HostABI.h"

#include <string>

namespace tidal {

// The version of the marker contract (docs/markers.md, "Versions"); the one
// place it is written.
inline constexpr unsigned MarkerContractVersion = 2;

// Every marker's name starts with this (the table: tidal/Markers.def in
// llvm-plugin/include).
inline constexpr const char *MarkerPrefix = "tidal.";

// Named metadata: the kernels of a module (!{ptr @k} each), and, after the
// host lowering, the block entries of kernels whose launches run on one
// host thread (docs/cpu-target.md, "Launches that run alone").
inline constexpr const char *KernelsMetadataName = "tidal.kernels";
inline constexpr const char *RunAloneMetadataName = "tidal.run.alone";
// After the host lowering: !{!"__tidal_block_K", i32 dimension, i64 extent,
// i32 parameter} per condition under which a block of K passes some of its
// checks (parameter -1: ntid.dimension <= extent; else (ctaid.dimension + 1)
// * ntid.dimension <= K's parameter, an array's extent), all of which the
// fitted block function tests per block (docs/cpu-target.md, "Blocks that
// pass their checks").
inline constexpr const char *BlockConditionsMetadataName = "tidal.block.conditions";
// After the host lowering: !{ptr @__tidal_block_K, i32 parameters, !{i32
// data, i32 dimensions, i32 combine, i32 bytes}...} for a kernel whose global atomics
// may go to a private copy of their array per host thread (docs/cpu-target.md,
// "Privatised atomics"): one entry per array parameter of K (data: its
// pointer's parameter index; shapes and strides follow it), combine a
// TidalCombine for a privatised array (bytes: its atomics' width), else 0.
inline constexpr const char *PrivateAtomicsMetadataName = "tidal.private.atomics";
enum TidalCombine : unsigned {
  TidalCombineAdd = 1, // add and sub (the copy holds the difference)
  TidalCombineAnd,
  TidalCombineOr,
  TidalCombineXor,
  TidalCombineMax, // signed
  TidalCombineMin,
  TidalCombineUMax,
  TidalCombineUMin,
};
// Instruction metadata: !{!"file:line:col"} on a marker call, set by the
// frontend when the module has no debug locations, for the reports that
// name a call (a divergent barrier on the cpu target).
inline constexpr const char *WhereMetadataName = "tidal.where";

// Module flags (i32 0/1) set by the frontend from the jit options.
inline constexpr const char *FlushDenormalsFlag = "tidal.ftz";
inline constexpr const char *PreciseDivisionFlag = "tidal.prec-div";
inline constexpr const char *PreciseSqrtFlag = "tidal.prec-sqrt";
inline constexpr const char *DebugFlag = "tidal.debug";
// Set by the runtime, not the frontend: tidal-lower-host builds each
// kernel's fitted block function (TIDAL_FITTED_BLOCK_PREFIX) instead of its
// block function.
inline constexpr const char *HostFittedFlag = "tidal.host.fitted";
// Beside it, for a launch whose block has more than one row: the block's
// shape (!{i32 x, i32 y, i32 z}), to which the fitted block function is
// specialised (its thread loops' trip counts constants; a block of another
// shape runs the block function as built).
inline constexpr const char *HostFittedShapeFlag = "tidal.host.fitted.shape";
// fastmath=True: float32 math functions with a fast libdevice variant
// (cos sin tan exp exp10 log log2 log10 pow) call it (__nv_fast_cosf, ...).
inline constexpr const char *FastFunctionsFlag = "tidal.fast-functions";

// Kernel function attributes set by the frontend (launch_bounds,
// max_registers), read by tidal-annotate-kernels.
inline constexpr const char *MaxThreadsAttribute = "tidal-maxntid";
inline constexpr const char *MinBlocksAttribute = "tidal-minctasm";
inline constexpr const char *MaxRegistersAttribute = "tidal-maxnreg";
// launch_bounds' third item, the most blocks per cluster (.maxclusterrank,
// sm_90 and up; older targets leave it out).
inline constexpr const char *MaxClusterRankAttribute = "tidal-maxclusterrank";

// The cpu runtime's entry points that host-lowered code calls (declared in
// HostABI.h, defined in runtime/CpuHooks.cpp).
inline constexpr const char *CpuSharedHook = "__tidal_cpu_shared";
inline constexpr const char *CpuFrameHook = "__tidal_cpu_frame";
inline constexpr const char *CpuBoundsErrorHook = "__tidal_cpu_bounds_error";
inline constexpr const char *CpuAssertFailHook = "__tidal_cpu_assert_fail";
inline constexpr const char *CpuBarrierErrorHook = "__tidal_cpu_barrier_error";
inline constexpr const char *CpuPrintHook = "__tidal_cpu_print";
inline constexpr const char *CpuWarpStepHook = "__tidal_cpu_warp_step";
inline constexpr const char *CpuWarpExitErrorHook = "__tidal_cpu_warp_exit_error";
inline constexpr const char *CpuGridSyncHook = "__tidal_cpu_grid_sync";

// The exception slot of an NVPTX module (docs/markers.md, "The exception
// slot"): a global that tidal-lower-exceptions gives every module with raise
// sites (calls of tidal.assert.fail or tidal.bounds.error). The thread that
// raises first in a launch claims it (a compare-and-swap of Code from 0),
// writes the rest and exits; after the launch the host reads the slot and
// clears it, and raises what the site's entry of the table of raise sites
// (tidal::raiseSites, numbered from 1 in the order of the marker IR) says,
// as the cpu target does.
inline constexpr const char *ExceptionSlotName = "__tidal_exception_slot";
struct ExceptionSlot {
  int32_t Code = 0;          // 0: nothing raised; else the raise site's index + 1
  uint32_t Thread[3] = {};   // tid.x, tid.y, tid.z of the raising thread
  uint32_t Block[3] = {};    // ctaid.x, ctaid.y, ctaid.z
  int32_t Axis = 0;          // tidal.bounds.error: its axis, index and extent
  int64_t Index = 0;
  int64_t Extent = 0;
};
static_assert(sizeof(ExceptionSlot) == 48, "the plugin writes the slot with this layout");
// One entry of the table of raise sites (tidal::raiseSites, Passes.h).
struct RaiseSite {
  bool Bounds = false; // tidal.bounds.error (an IndexError), else tidal.assert.fail
  std::string Text;    // the message (assert.fail) or the "where" (bounds.error)
};

// K.thread's return codes besides sync points (HostABI.h).
inline constexpr int ThreadFinished = TIDAL_THREAD_FINISHED;
inline constexpr int ThreadFailed = TIDAL_THREAD_FAILED;

// CUDA's launch and memory limits (HostABI.h), for C++ code.
inline constexpr unsigned MaxThreadsPerBlock = TIDAL_MAX_THREADS_PER_BLOCK;
inline constexpr unsigned MaxBlockDim[3] = {
    TIDAL_MAX_BLOCK_DIM_X, TIDAL_MAX_BLOCK_DIM_Y, TIDAL_MAX_BLOCK_DIM_Z};
inline constexpr unsigned MaxGridDim[3] = {
    TIDAL_MAX_GRID_DIM_X, TIDAL_MAX_GRID_DIM_Y, TIDAL_MAX_GRID_DIM_Z};
inline constexpr unsigned MaxStaticSharedBytes = TIDAL_MAX_STATIC_SHARED_BYTES;
inline constexpr unsigned MaxLocalBytesPerThread =
    TIDAL_MAX_LOCAL_BYTES_PER_THREAD;

} // namespace tidal

#endif
