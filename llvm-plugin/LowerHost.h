// The host lowering's stages (tidal-lower-host; LowerHost.cpp drives them),
// each a function from what the stage before produced to what it adds:
//   createThreadFunction  LowerHostMarkers.cpp     Kernel -> ThreadFunction
//   guardLocalArrays      LowerHostGuards.cpp      local arrays' accesses checked
//   splitIndexWraps       LowerHostIndexChecks.cpp a negative index wrapped past its check
//   lowerMarkers          LowerHostMarkers.cpp     -> MarkerLowering (sync points,
//                                                  rounds, shared bytes)
//   makeResumable         LowerHostSyncPoints.cpp  -> FrameLayout
//   markParallelAccesses  LowerHostSyncPoints.cpp  -> the access group
//   createBlockFunction   LowerHostRounds.cpp      LoweredKernel -> __tidal_block_K
//   addAloneVariant,      LowerHostPrivateAtomics.cpp  global atomics: the .alone
//   recordPrivateAtomics                           variant, !tidal.private.atomics
//   recordBlockConditions LowerHostBlockShape.cpp  !tidal.block.conditions, or with
//   addFittedBlockFunction                         tidal.host.fitted: the fitted one
//   addCoarseBlockFunction LowerHostCoarsen.cpp    and beside it the coarsened one
// with the analyses (uniformity, loop order: LowerHostUniformity.cpp) and
// the small shared pieces (loops, context loads, hooks: LowerHostSupport.cpp).
// EntryValues holds what K.thread's entry computes for every stage.
#ifndef TIDAL_LOWERHOST_H
#define TIDAL_LOWERHOST_H

#include "MarkerArguments.h"
#include "Markers.h"
#include "OperationRules.h"
#include "PassClasses.h"
#include "tidal/Contract.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/SCCIterator.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Analysis/CallGraph.h"
#include "llvm/Analysis/PostDominators.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/DIBuilder.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/GetElementPtrTypeIterator.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Analysis/Utils/Local.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/LowerAtomic.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Transforms/Utils/SSAUpdater.h"
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

// After llvm/Support/Debug.h: LLVM_DEBUG that prints under -debug-only,
// and TIDAL_STATISTIC counters that -stats prints, also with Debian's
// NDEBUG libLLVM.
#include "DebugOutput.h"


namespace tidal::host_lowering {

using namespace llvm;

// Fields of TidalBlockContext read by index: {block_dim, grid_dim,
// block_idx, flags, dynamic_shared, dynamic_shared_bytes, runtime}.
enum ContextField : unsigned {
  BlockDimField = 0,
  GridDimField = 1,
  BlockIndexField = 2,
};
static_assert(offsetof(TidalBlockContext, block_dim) == 0 &&
                  offsetof(TidalBlockContext, grid_dim) == 12 &&
                  offsetof(TidalBlockContext, block_idx) == 24 &&
                  offsetof(TidalBlockContext, flags) == 36 &&
                  offsetof(TidalBlockContext, dynamic_shared) == 40 &&
                  offsetof(TidalBlockContext, dynamic_shared_bytes) == 48 &&
                  offsetof(TidalBlockContext, runtime) == 56 &&
                  sizeof(TidalBlockContext) == 64,
              "getContextType() no longer matches include/tidal/HostABI.h");


// The IR type of TidalBlockContext (%tidal.BlockContext).
StructType *getContextType(LLVMContext &Context);

// ctx->Field[Dimension], an invariant load with CUDA's range.
Value *loadContextField(IRBuilder<> &Builder, Value *ContextPointer,
                        ContextField Field, unsigned Dimension,
                        const Twine &Name);

// The entry points of the cpu runtime that lowered code calls, and the
// return codes of K.thread besides sync point numbers: tidal/Contract.h.

// Frame layout. The frame starts with FrameHeaderBytes (the result of the
// last syncthreads_count/and/or at offset 0; with ThreadsMayFinishEarly, the
// number of threads that arrived there at offset 4), then one array per slot, of
// one element per thread (padded thread count, a multiple of 16), each
// element `Stride` bytes: the slot's array starts at
// FrameHeaderBytes + PaddedThreads * Prefix (a multiple of 64, as every
// stride is a multiple of 4). The first slots are fixed: two exchange
// buffers (i64, alternating by round) and the sync point each thread reached.
constexpr uint64_t FrameHeaderBytes = 64;
constexpr uint64_t ExchangePrefix = 0;
constexpr uint64_t NextPrefix = 16;
constexpr uint64_t FirstValuePrefix = 20;
// Kernels with warp rounds (a warp collective, syncwarp or activemask) also
// keep the mask each lane passed to its collective (i32) before the values.
constexpr uint64_t MaskPrefix = 20;
constexpr uint64_t WarpFirstValuePrefix = 24;
constexpr uint64_t SharedAlignment = 64;


// The declaration of a runtime entry point (nounwind; the failure reports
// cold).
Function *getHook(Module &M, StringRef Name, Type *Result,
                  ArrayRef<Type *> Parameters, bool VarArg = false);

// Debug mode: the module flag tidal.debug, or TIDAL_CPU_DEBUG=1.
bool isDebugModule(const Module &M);

// A counted loop `for (Counter = 0; Counter < Count; ++Counter)`.
struct CountedLoop {
  PHINode *Counter;
  BasicBlock *Condition;
  BasicBlock *Exit;
};


// Emits the loop's head at the builder and leaves the builder in its body.
CountedLoop beginLoop(IRBuilder<> &Builder, Value *Count, const Twine &Name);

// How the thread loops of a block function are marked for LLVM's loop
// passes: AccessGroup, K.thread's plain accesses declared independent across
// the threads (llvm.loop.parallel_accesses; markParallelAccesses), or,
// without one, SerialUnroll, the count the innermost loop is unrolled by
// where it stays scalar (serialThreadUnroll; 0: LLVM's own choice); or,
// with Scalar, neither vectorised nor unrolled (a loop of a few threads:
// the edges of a coarsened x loop, LowerHostCoarsen.cpp).
struct ThreadLoopHints {
  MDNode *AccessGroup = nullptr;
  unsigned SerialUnroll = 0;
  bool Scalar = false;
};

// Closes the loop where the builder is and leaves the builder after it,
// with Hints' metadata on its latch (SerialUnroll only where Innermost).
void endLoop(IRBuilder<> &Builder, const CountedLoop &Loop,
             const ThreadLoopHints &Hints = {}, bool Innermost = false);

// Every thread of the block: for tid.z, for tid.y, for tid.x: Body(x, y, z),
// x innermost; with YInnermost, y innermost instead whenever the block has
// more than one row (else the x order). Leaves the builder after the loops.
void emitThreadLoops(IRBuilder<> &Builder, Value *const BlockDim[3],
                     bool YInnermost, const ThreadLoopHints &Hints,
                     function_ref<void(Value *, Value *, Value *)> Body);

// True if more of `Thread`'s memory accesses are contiguous along tid.y than
// along tid.x (LowerHostUniformity.cpp).
bool prefersYInnermost(Function &Thread, Argument *X, Argument *Y);

// A sync point of K.thread: a call after which a thread needs values that
// other threads of its block computed before the call (the marker table's
// sync-point column says which markers are).
struct SyncPoint {
  CallInst *Call;      // null once makeResumable has lowered it
  MarkerKind Kind;     // the marker's row
  SyncPointKind Sync;  // the row's sync-point column
  std::string Description; // "shfl_down_f32 at file:line:col": the divergence report
};

// i32 @__tidal.warp.bits(ptr %lanes, i32 %count, i64 %value, i1 %match):
// bit i set for i < %count if lanes[i] (i64) == %value (match) or != 0.
Function *getWarpBitsFunction(Module &M);

// Block-uniform values of `Thread` (LowerHostUniformity.cpp); with
// `Controlled`, also the blocks that a divergent branch controls.
// With `ReadsUniformMemory`, the loads it accepts are uniform too (the
// block's uniform slots, which change only between rounds).
SmallPtrSet<const Value *, 32>
findUniformValues(Function &Thread, ArrayRef<const Argument *> DivergentArguments,
                  SmallPtrSet<const BasicBlock *, 32> *Controlled = nullptr,
                  function_ref<bool(const LoadInst &)> ReadsUniformMemory = nullptr);

// For each resume point r of the resumable K.thread (0, the start, then
// each sync point): true if every thread of a round from r that does not
// fail returns the same value (the same next sync point, or all finish):
// every divergent branch reachable from r leads to one return value only
// (the tree reduction's rounds; its `s > 0` is uniform). Such a round
// needs no per-thread record of where each thread stopped
// (LowerHostUniformity.cpp).
SmallVector<bool, 8>
findUniformOutcomes(Function &Thread, ArrayRef<const Argument *> DivergentArguments,
                    const Argument *Resume,
                    function_ref<bool(const LoadInst &)> ReadsUniformMemory);

// True if a thread of `Thread` may return while others of its block go on
// to one of `SyncPoints` (their calls still in place; one at least a block
// barrier): some branch whose
// condition is divergent leads, without crossing a sync point, both to a
// return of ThreadFinished and to a sync point (LowerHostUniformity.cpp).
// Threads of a round follow one path until the first divergent branch, so
// without such a branch a round's threads all finish or all stop at sync
// points.
bool mayFinishBeforeSyncPoint(Function &Thread,
                              ArrayRef<const Argument *> DivergentArguments,
                              ArrayRef<SyncPoint> SyncPoints);

// The i64 image of a collective's value in the exchange buffer, and back.
Value *toExchange(IRBuilder<> &B, Value *V);
Value *fromExchange(IRBuilder<> &B, Value *V, Type *T);

// A private constant C string.
Constant *getString(Module &M, StringRef Text, const Twine &Name);

// Stage 1, createThreadFunction: K.thread (K's body with the signature of
// LowerHost.cpp's comment), its arguments, its dispatch entry.
struct ThreadFunction {
  Function *Kernel = nullptr;
  Function *Thread = nullptr;
  BasicBlock *Entry = nullptr; // the dispatch entry of K.thread
  BasicBlock *Body = nullptr;  // K's entry block, cloned
  Argument *ContextPointer = nullptr, *Shared = nullptr, *Frame = nullptr,
           *Uniforms = nullptr;
  Argument *ThreadIndex[3] = {};
  Argument *Resume = nullptr, *Phase = nullptr;
};

ThreadFunction createThreadFunction(Function &Kernel);

// Values that K.thread's entry computes, once, for every part of the
// thread (context fields, thread counts, frame arrays): built where a stage
// first asks, in the order asked, and shared by the stages after.
class EntryValues {
public:
  explicit EntryValues(const ThreadFunction &Thread) : Thread(Thread) {}

  // ctx->Field[Dimension].
  Value *contextField(ContextField Field, unsigned Dimension);
  // Threads of the block (i32).
  Value *threadCount();
  // Thread count rounded up to a multiple of 16 (i64): frame arrays' length.
  Value *paddedThreadCount();
  // x + ntid.x * (y + ntid.y * z) (i32): the thread's linear index.
  Value *linearThread();
  // The same, i64.
  Value *linearThread64();
  // Start of the frame array at `Prefix` (see FrameHeaderBytes); `ExtraPrefix`
  // is added to the prefix (i64, may be null).
  Value *frameArray(uint64_t Prefix, Value *ExtraPrefix, const Twine &Name);
  // This round's exchange buffers: written before a collective, read after.
  Value *exchangeBuffer(bool Write);

  IRBuilder<> entryBuilder() { return IRBuilder<>(Thread.Entry->getTerminator()); }

private:
  const ThreadFunction &Thread;
  DenseMap<unsigned, Value *> Fields;
  Value *ThreadCount = nullptr, *PaddedThreadCount = nullptr,
        *LinearThread = nullptr, *LinearThread64 = nullptr;
  Value *ExchangeWrite = nullptr, *ExchangeRead = nullptr;
};

// Stage 2, lowerMarkers: every marker of K.thread but the sync points
// lowered; what that decided.
struct MarkerLowering {
  // In the order of their numbers (1-based); with warp rounds, the block
  // barriers first, then the warp points in reverse post-order.
  SmallVector<SyncPoint, 8> SyncPoints;
  // A warp sync point under divergent control: the block function runs
  // warp rounds (each warp until its lanes stop at a block barrier or
  // finish), not rounds of the whole block.
  bool WarpRounds = false;
  // A thread may finish (return) while others of its block go on to a sync
  // point (`if i >= n: return` before a syncthreads), or the kernel has a
  // grid barrier: the rounds then skip finished threads, which count as
  // arrived at every later barrier, as a GPU's exited threads do
  // (mayFinishBeforeSyncPoint). Kernels without get the rounds unchanged.
  bool ThreadsMayFinishEarly = false;
  uint64_t StaticSharedBytes = 0; // multiple of SharedAlignment
  bool UsesShared = false;
  // Shared-memory atomics lowered to a plain load and store: the threads of
  // a round must not run them as parallel accesses.
  SmallPtrSet<Instruction *, 8> SerialisedAtomics;
};

MarkerLowering lowerMarkers(ThreadFunction &Thread, EntryValues &Values);

// Before lowerMarkers: every access to a local array of K.thread checked
// against the array's size, also without debug mode (LowerHostGuards.cpp:
// a store past one would overwrite the worker's stack).
void guardLocalArrays(ThreadFunction &Thread);

// After lowerMarkers: the bounds checks of K.thread test the index as given,
// and wrap a negative one only when that fails (LowerHostIndexChecks.cpp).
void splitIndexWraps(Function &Thread);

// Stage 3, makeResumable: the sync points lowered (K.thread returns their
// number there and resumes after them), the values that live across them
// kept in the frame; Markers.SyncPoints' calls are erased (Call = null).
struct FrameLayout {
  uint64_t SlotBytes = 0; // frame bytes per thread, 0 = no frame
  // Block-uniform values live at a sync point: one scalar per block in the
  // block function's %uniforms (an alloca, promoted to registers), stored
  // by the threads at `Offset + Stride` (pending) and read at `Offset`
  // (current); the block function copies pending to current between rounds.
  struct UniformSlot {
    Type *ValueType;
    uint64_t Offset, Stride;
  };
  SmallVector<UniformSlot, 8> UniformSlots;
  uint64_t UniformBytes = 0;
};

FrameLayout makeResumable(ThreadFunction &Thread, EntryValues &Values,
                          MarkerLowering &Markers);

// Stage 4: K.thread's plain loads and stores in one access group that the
// thread loops declare parallel; null (no group) for a kernel with atomics,
// volatile accesses or calls.
MDNode *markParallelAccesses(Function &Thread,
                             const SmallPtrSetImpl<Instruction *> &SerialisedAtomics);

// For a kernel without that group (atomics, calls): how many threads the
// innermost thread loop runs per iteration where LLVM leaves it scalar, 4
// for a small K.thread without loops (a histogram's: its loop is a load, a
// bounds check and an increment), else 0.
unsigned serialThreadUnroll(const Function &Thread, const MDNode *ThreadAccesses);

// Stage 5: what the block function is built from.
struct LoweredKernel {
  Function &Kernel;
  Function &Thread; // K.thread, or its copy for launches that run alone
  const MarkerLowering &Markers;
  const FrameLayout &Frame;
  MDNode *ThreadAccesses; // from markParallelAccesses
  bool Debug;             // debug mode (isDebugModule)
  unsigned SerialUnroll = 0; // from serialThreadUnroll

  ThreadLoopHints threadLoopHints() const { return {ThreadAccesses, SerialUnroll}; }
};

// void @Name(ptr %params, ptr %ctx): every thread of the block, in rounds.
Function *createBlockFunction(const LoweredKernel &Lowered, const Twine &Name);

// Where K.thread has checks that a whole block passes when the launch's
// block meets a condition (LowerHostBlockShape.cpp): the conditions, as
// !tidal.block.conditions entries for BlockName, which the runtime tests at
// a launch.
void recordBlockConditions(const LoweredKernel &Lowered, StringRef BlockName);

// In a module with the flag tidal.host.fitted: instead of BlockName, the
// fitted block function (TIDAL_FITTED_BLOCK_PREFIX "K"), which tests the
// conditions per block and runs a block function over a copy of K.thread
// without the checks they imply, else calls BlockName (declared here,
// defined by the module lowered without the flag). Nothing for a kernel
// without such checks.
void addFittedBlockFunction(const LoweredKernel &Lowered, const std::string &BlockName);

// What makes a check pass for every thread of a block
// (LowerHostBlockShape.cpp).
struct BlockCondition {
  unsigned Dimension;
  uint64_t Extent = 0;      // ntid.d <= Extent (a constant extent), or
  int ParameterNumber = -1; // (ctaid.d + 1) * ntid.d <= the kernel's parameter
};

// The dimension d if V is cuda.grid's zext(ctaid.d) * zext(ntid.d) +
// zext(tid.d) in K.thread (LowerHostBlockShape.cpp).
std::optional<unsigned> gridIndexOf(Value *V, Argument *Context,
                                    Argument *const ThreadIndex[3]);

// In the fitted module, for a kernel without sync points whose only uses of
// tid.x, ctaid.x and ntid.x are cuda.grid's x index: the coarsened block
// function TIDAL_COARSE_BLOCK_PREFIX "K", which runs consecutive blocks of a
// row of the grid as one block `count` times as wide (LowerHostCoarsen.cpp).
// Fitted is the fitted copy of K.thread, Conditions those it was built under.
void addCoarseBlockFunction(const LoweredKernel &Fitted,
                            ArrayRef<BlockCondition> Conditions,
                            const std::string &FittedName);

// For a kernel with global atomics: __tidal_block_K dispatches between the
// block function `BlockName` (renamed .atomic) and a copy for launches that
// run alone (.alone).
void addAloneVariant(const LoweredKernel &Lowered, const std::string &BlockName);

// After addAloneVariant: if every global atomic of the kernel may go to a
// private copy of its array per host thread, the kernel's entry in
// !tidal.private.atomics (LowerHostPrivateAtomics.cpp).
void recordPrivateAtomics(const LoweredKernel &Lowered, const std::string &BlockName);


} // namespace tidal::host_lowering

#endif
