// The host lowering's stages (tidal-lower-host; LowerHost.cpp drives them),
// and what they share: the block context's IR type, the frame layout, the
// sync points, and KernelLowering, which carries one kernel through the
// stages:
//   uniformity   LowerHostUniformity.cpp  block-uniform values, loop order
//   markers      LowerHostMarkers.cpp     K.thread, every marker but sync points
//   sync points  LowerHostSyncPoints.cpp  frames, resumable regions
//   rounds       LowerHostRounds.cpp      the block function: block and warp rounds
//   support      LowerHostSupport.cpp     loops, context loads, runtime hooks
#ifndef TIDAL_LOWERHOST_H
#define TIDAL_LOWERHOST_H

#include "MarkerArguments.h"
#include "Markers.h"
#include "OperationRules.h"
#include "PassClasses.h"
#include "tidal/Contract.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#include "Markers.h"
#include "PassClasses.h"
#include "MarkerArguments.h"
#include "OperationRules.h"
#include "tidal/Contract.h"

#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/SCCIterator.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
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
#include "llvm/Support/MathExtras.h"
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
// last syncthreads_count/and/or at offset 0), then one array per slot, of
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


// The declaration of a runtime entry point (nounwind).
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

// Closes the loop where the builder is and leaves the builder after it.
// With AccessGroup, the loop's iterations are declared independent for the
// memory accesses in that group (llvm.loop.parallel_accesses).
void endLoop(IRBuilder<> &Builder, const CountedLoop &Loop,
             MDNode *AccessGroup = nullptr);

// Every thread of the block: for tid.z, for tid.y, for tid.x: Body(x, y, z),
// x innermost; with YInnermost, y innermost instead whenever the block has
// more than one row (else the x order). Leaves the builder after the loops.
void emitThreadLoops(IRBuilder<> &Builder, Value *const BlockDim[3],
                     bool YInnermost, MDNode *AccessGroup,
                     function_ref<void(Value *, Value *, Value *)> Body);

// True if more of `Thread`'s memory accesses are contiguous along tid.y than
// along tid.x (LowerHostUniformity.cpp).
bool prefersYInnermost(Function &Thread, Argument *X, Argument *Y);

// A sync point of K.thread: a call after which a thread needs values that
// other threads of its block computed before the call.
struct SyncPoint {
  CallInst *Call;
  std::string Operation; // marker name without "tidal.", e.g. "shfl.down.f32"
  std::string Description; // for the divergence report
};


// Sync points of one warp: collectives (lanes exchange values), syncwarp,
// and activemask (the lanes at the call: those that arrived together).
bool isWarpSyncOperation(StringRef Operation);
bool isSyncPointOperation(StringRef Operation);
// syncthreads.count/and/or.
bool isBarrierReduction(StringRef Operation);

// i32 @__tidal.warp.bits(ptr %lanes, i32 %count, i64 %value, i1 %match):
// bit i set for i < %count if lanes[i] (i64) == %value (match) or != 0.
Function *getWarpBitsFunction(Module &M);

// Block-uniform values of `Thread` (LowerHostUniformity.cpp); with
// `Controlled`, also the blocks that a divergent branch controls.
SmallPtrSet<const Value *, 32>
findUniformValues(Function &Thread, ArrayRef<const Argument *> DivergentArguments,
                  SmallPtrSet<const BasicBlock *, 32> *Controlled = nullptr);

// The i64 image of a collective's value in the exchange buffer, and back.
Value *toExchange(IRBuilder<> &B, Value *V);
Value *fromExchange(IRBuilder<> &B, Value *V, Type *T);

// A private constant C string.
Constant *getString(Module &M, StringRef Text, const Twine &Name);

// Everything the lowering of one kernel K knows: its thread function, the
// values its dispatch entry computes, the shared memory and frame layouts.
class KernelLowering {
public:
  KernelLowering(Function &Kernel, bool Debug)
      : Kernel(Kernel), M(*Kernel.getParent()), Context(M.getContext()),
        DL(M.getDataLayout()), Debug(Debug) {}

  Function &Kernel;
  Module &M;
  LLVMContext &Context;
  const DataLayout &DL;
  bool Debug;

  Function *Thread = nullptr;
  BasicBlock *Entry = nullptr; // the dispatch entry of K.thread
  BasicBlock *Body = nullptr;  // K's entry block, cloned
  Argument *ContextPointer = nullptr, *Shared = nullptr, *Frame = nullptr,
           *Uniforms = nullptr;
  Argument *ThreadIndex[3] = {};
  Argument *Resume = nullptr, *Phase = nullptr;

  uint64_t StaticSharedBytes = 0; // multiple of SharedAlignment
  bool UsesShared = false;
  uint64_t FrameSlotBytes = 0;    // per thread, 0 = no frame
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
  SmallVector<SyncPoint, 8> SyncPoints;
  // A warp sync point exists: the block function runs warp rounds (each
  // warp until its lanes stop at a block barrier or finish), not rounds of
  // the whole block.
  bool WarpRounds = false;
  // Shared-memory atomics lowered to a plain load and store: the threads of
  // a round must not run them as parallel accesses.
  SmallPtrSet<Instruction *, 8> SerialisedAtomics;
  MDNode *ThreadAccesses = nullptr;

  void markParallelAccesses();

  void createThreadFunction();
  bool lowerMarkers();
  void makeResumable();
  Function *createBlockFunction(const Twine &Name);
  void addAloneVariant(const std::string &BlockName);

private:
  void emitBarrierError(IRBuilder<> &Builder, Value *BlockContext, Value *Next,
                        Value *Count);
  void emitBarrierReduction(IRBuilder<> &Builder, Value *Low, Value *FrameMemory,
                            Value *Padded, Value *Count, Value *RoundPhase,
                            BasicBlock *EntryBlock);
  void emitWarpRounds(IRBuilder<> &Builder, ArrayRef<Value *> Arguments,
                      Value *const BlockDim[3], bool YInnermost,
                      Value *BlockContext, Value *Count, Value *Padded,
                      Value *FrameMemory, BasicBlock *EntryBlock);

  DenseMap<unsigned, Value *> Fields;
  uint64_t FramePrefix = FirstValuePrefix; // next free frame array
  Value *Thread64 = nullptr;
  Value *ThreadCount = nullptr, *PaddedThreadCount = nullptr,
        *LinearThread = nullptr;

  IRBuilder<> entryBuilder() {
    return IRBuilder<>(Entry->getTerminator());
  }
  Value *contextField(ContextField Field, unsigned Dimension) {
    Value *&Cached = Fields[Field * 3 + Dimension];
    if (!Cached) {
      static const char *Names[3][3] = {{"ntid.x", "ntid.y", "ntid.z"},
                                        {"nctaid.x", "nctaid.y", "nctaid.z"},
                                        {"ctaid.x", "ctaid.y", "ctaid.z"}};
      IRBuilder<> B = entryBuilder();
      Cached = loadContextField(B, ContextPointer, Field, Dimension,
                                Names[Field][Dimension]);
    }
    return Cached;
  }
  // Threads of the block (i32).
  Value *threadCount() {
    if (!ThreadCount) {
      Value *XY = contextField(BlockDimField, 0), *Y = contextField(BlockDimField, 1),
            *Z = contextField(BlockDimField, 2);
      IRBuilder<> B = entryBuilder();
      ThreadCount = B.CreateNUWMul(B.CreateNUWMul(XY, Y), Z, "nthreads");
    }
    return ThreadCount;
  }
  // Thread count rounded up to a multiple of 16 (i64): frame arrays' length.
  Value *paddedThreadCount() {
    if (!PaddedThreadCount) {
      Value *Count = threadCount();
      IRBuilder<> B = entryBuilder();
      PaddedThreadCount = B.CreateAnd(
          B.CreateNUWAdd(B.CreateZExt(Count, B.getInt64Ty()), B.getInt64(15)),
          B.getInt64(~uint64_t(15)), "nthreads.padded");
    }
    return PaddedThreadCount;
  }
  // x + ntid.x * (y + ntid.y * z) (i32): the thread's linear index.
  Value *linearThread() {
    if (!LinearThread) {
      Value *DimX = contextField(BlockDimField, 0),
            *DimY = contextField(BlockDimField, 1);
      IRBuilder<> B = entryBuilder();
      Value *ZY = B.CreateNUWAdd(B.CreateNUWMul(ThreadIndex[2], DimY),
                                 ThreadIndex[1]);
      LinearThread =
          B.CreateNUWAdd(B.CreateNUWMul(ZY, DimX), ThreadIndex[0], "thread");
    }
    return LinearThread;
  }
  // Start of the frame array at `Prefix` (see FrameHeaderBytes), in the
  // entry; `Extra` is added to the prefix (i64, may be null).
  Value *frameArray(uint64_t Prefix, Value *ExtraPrefix, const Twine &Name) {
    Value *Padded = paddedThreadCount();
    IRBuilder<> B = entryBuilder();
    Value *PrefixValue = B.getInt64(Prefix);
    if (ExtraPrefix)
      PrefixValue = B.CreateNUWAdd(PrefixValue, ExtraPrefix);
    Value *Offset = B.CreateNUWAdd(B.getInt64(FrameHeaderBytes),
                                   B.CreateNUWMul(Padded, PrefixValue));
    return B.CreateInBoundsGEP(B.getInt8Ty(), Frame, Offset, Name);
  }
  // This round's exchange buffers: written before a collective, read after.
  Value *ExchangeWrite = nullptr, *ExchangeRead = nullptr;
  Value *exchangeBuffer(bool Write) {
    if (!ExchangeWrite) {
      IRBuilder<> B = entryBuilder();
      Value *PhaseBytes = B.CreateShl(B.CreateZExt(Phase, B.getInt64Ty()), 3);
      Value *OtherBytes = B.CreateSub(B.getInt64(8), PhaseBytes);
      ExchangeWrite = frameArray(ExchangePrefix, PhaseBytes, "exchange.write");
      ExchangeRead = frameArray(ExchangePrefix, OtherBytes, "exchange.read");
    }
    return Write ? ExchangeWrite : ExchangeRead;
  }

  bool lowerMarkerCall(CallInst &Call, StringRef Operation,
                       SmallVectorImpl<CallInst *> &SharedCalls);
  Value *lowerAtomic(IRBuilder<> &B, CallInst &Call, const AtomicRule &Rule);
  Value *lowerMath(IRBuilder<> &B, CallInst &Call, MarkerKind Kind,
                   const MathRule &Rule);
  void lowerFailure(CallInst &Call, StringRef Operation);
  void lowerSharedCalls(ArrayRef<CallInst *> Calls);
  Value *resumeAfterSyncPoint(IRBuilder<> &B, const SyncPoint &Point);
  void storeBeforeSyncPoint(IRBuilder<> &B, const SyncPoint &Point);
  Value *frameElement(uint64_t Size, uint64_t Alignment, const Twine &Name);
  void keepValuesAcrossSyncPoints(ArrayRef<BasicBlock *> SyncBlocks,
                                  ArrayRef<BasicBlock *> ResumeBlocks,
                                  const SmallPtrSetImpl<const Value *> &Uniform);
  void moveAllocasToFrame();
};


} // namespace tidal::host_lowering

#endif
