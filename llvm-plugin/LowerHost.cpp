// tidal-lower-host: turns each kernel K of !tidal.kernels into the host
// function `void @__tidal_block_K(ptr %params, ptr %ctx)` that runs every
// thread of one block (include/tidal/HostABI.h, docs/cpu-target.md). The
// named pipeline tidal-lower-host runs it and then tidal-verify-markers.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-host in.ll
//
// K's body becomes the resumable thread function
//   i32 @K.thread(K's params..., ptr %ctx, ptr %shared, ptr %frame, ptr %uniforms,
//                 i32 %tid.x, i32 %tid.y, i32 %tid.z, i32 %resume, i32 %phase)
// that runs one thread from sync point %resume (0: the start) to the next
// sync point k (a barrier or a warp collective), where it returns k, or to
// its end (-1), or to a failed bounds check or assert (-2). Values that live
// across a sync point are kept per thread in %frame (struct of arrays indexed
// by the linear thread index). The block function runs rounds: every thread
// from the same resume point, one loop over the threads per resume point,
// so that each loop can be vectorised.

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

#define DEBUG_TYPE "tidal-lower-host"

using namespace llvm;

namespace tidal {
namespace {

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

StructType *getContextType(LLVMContext &Context) {
  if (StructType *Existing =
          StructType::getTypeByName(Context, "tidal.BlockContext"))
    return Existing;
  Type *I32 = Type::getInt32Ty(Context);
  Type *Dim3 = ArrayType::get(I32, 3);
  Type *Pointer = PointerType::getUnqual(Context);
  return StructType::create(
      Context, {Dim3, Dim3, Dim3, I32, Pointer, Type::getInt64Ty(Context), Pointer},
      "tidal.BlockContext");
}

// ctx->Field[Dimension]. The runtime never changes a block's context while
// the block runs, so the load is invariant: LICM may hoist it out of the
// thread loops even though the kernel stores through other pointers.
Value *loadContextField(IRBuilder<> &Builder, Value *ContextPointer,
                        ContextField Field, unsigned Dimension,
                        const Twine &Name) {
  Value *Address = Builder.CreateInBoundsGEP(
      getContextType(Builder.getContext()), ContextPointer,
      {Builder.getInt32(0), Builder.getInt32(Field),
       Builder.getInt32(Dimension)},
      Name + ".addr");
  LoadInst *Load =
      Builder.CreateAlignedLoad(Builder.getInt32Ty(), Address, Align(4), Name);
  Load->setMetadata(LLVMContext::MD_invariant_load,
                    MDNode::get(Builder.getContext(), {}));
  // The runtime enforces CUDA's launch limits (HostABI.h), so the fields
  // have CUDA's ranges: LLVM can then prove indices non-negative.
  static const uint32_t MaxBlockDim[3] = {TIDAL_MAX_BLOCK_DIM_X, TIDAL_MAX_BLOCK_DIM_Y,
                                          TIDAL_MAX_BLOCK_DIM_Z};
  static const uint32_t MaxGridDim[3] = {TIDAL_MAX_GRID_DIM_X, TIDAL_MAX_GRID_DIM_Y,
                                         TIDAL_MAX_GRID_DIM_Z};
  uint64_t Low = Field == BlockIndexField ? 0 : 1;
  uint64_t High = Field == BlockDimField    ? uint64_t(MaxBlockDim[Dimension]) + 1
                  : Field == GridDimField   ? uint64_t(MaxGridDim[Dimension]) + 1
                                            : uint64_t(MaxGridDim[Dimension]);
  MDBuilder Ranges(Builder.getContext());
  Load->setMetadata(LLVMContext::MD_range,
                    Ranges.createRange(APInt(32, Low), APInt(32, High)));
  return Load;
}

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

Function *getHook(Module &M, StringRef Name, Type *Result,
                  ArrayRef<Type *> Parameters, bool VarArg = false) {
  FunctionCallee Callee = M.getOrInsertFunction(
      Name, FunctionType::get(Result, Parameters, VarArg));
  auto *F = cast<Function>(Callee.getCallee());
  F->addFnAttr(Attribute::NoUnwind);
  return F;
}

bool isDebugModule(const Module &M) {
  if (auto *Flag =
          mdconst::extract_or_null<ConstantInt>(M.getModuleFlag(DebugFlag)))
    if (!Flag->isZero())
      return true;
  const char *Environment = std::getenv("TIDAL_CPU_DEBUG");
  return Environment && std::strcmp(Environment, "1") == 0;
}

// Defined functions that call a marker, directly or through direct calls.
SmallPtrSet<Function *, 16> findMarkerUsers(Module &M) {
  SmallPtrSet<Function *, 16> Users;
  SmallVector<Function *, 16> Worklist;
  auto Add = [&](Function *F) {
    if (Users.insert(F).second)
      Worklist.push_back(F);
  };
  for (Function &Marker : M)
    if (isMarker(Marker))
      for (User *U : Marker.users())
        if (auto *I = dyn_cast<Instruction>(U))
          Add(I->getFunction());
  while (!Worklist.empty())
    for (User *U : Worklist.pop_back_val()->users())
      if (auto *Call = dyn_cast<CallBase>(U))
        if (Call->getCalledFunction() && Users.contains(Call->getCalledFunction()))
          Add(Call->getFunction());
  return Users;
}

SmallPtrSet<Function *, 16> findRecursiveFunctions(Module &M) {
  SmallPtrSet<Function *, 16> Recursive;
  CallGraph Graph(M);
  for (auto SCC = scc_begin(&Graph); !SCC.isAtEnd(); ++SCC)
    if (SCC.hasCycle())
      for (CallGraphNode *Node : *SCC)
        if (Function *F = Node->getFunction())
          Recursive.insert(F);
  return Recursive;
}

// Inlines into `Kernel`, transitively, every call of a function in
// `Inlinable`, so that the kernel's markers are all in its own body.
void inlineMarkerUsers(Function &Kernel,
                       const SmallPtrSetImpl<Function *> &Inlinable,
                       SmallPtrSetImpl<Function *> &Inlined) {
  bool Progress = true;
  while (Progress) {
    SmallVector<CallBase *, 8> Calls;
    for (Instruction &I : instructions(Kernel))
      if (auto *Call = dyn_cast<CallBase>(&I))
        if (Inlinable.contains(Call->getCalledFunction()))
          Calls.push_back(Call);
    Progress = false;
    for (CallBase *Call : Calls) {
      Function *Callee = Call->getCalledFunction();
      InlineFunctionInfo Info;
      if (InlineFunction(*Call, Info).isSuccess()) {
        Inlined.insert(Callee);
        Progress = true;
      }
    }
  }
}

// True if every marker `F` refers to is a well-formed call of a marker of
// the contract with arguments it allows; otherwise the kernel is left alone
// for tidal-check-marker-arguments and tidal-verify-markers.
bool hasOnlyHostLowerableMarkers(Function &F) {
  for (Instruction &I : instructions(F))
    for (Value *Operand : I.operand_values())
      if (auto *Callee = dyn_cast<Function>(Operand); Callee && isMarker(*Callee)) {
        auto *Call = dyn_cast<CallInst>(&I);
        if (!Call || Call->getCalledOperand() != Callee || !getCalledMarker(*Call) ||
            !hasValidMarkerArguments(*Call))
          return false;
      }
  return true;
}

// A counted loop `for (Counter = 0; Counter < Count; ++Counter)`.
struct CountedLoop {
  PHINode *Counter;
  BasicBlock *Condition;
  BasicBlock *Exit;
};

// Emits the loop's head at the builder and leaves the builder in its body.
CountedLoop beginLoop(IRBuilder<> &Builder, Value *Count, const Twine &Name) {
  LLVMContext &Context = Builder.getContext();
  Function *F = Builder.GetInsertBlock()->getParent();
  BasicBlock *Preheader = Builder.GetInsertBlock();
  BasicBlock *Condition = BasicBlock::Create(Context, Name + ".cond", F);
  BasicBlock *Body = BasicBlock::Create(Context, Name + ".body", F);
  BasicBlock *Exit = BasicBlock::Create(Context, Name + ".end");
  Builder.CreateBr(Condition);
  Builder.SetInsertPoint(Condition);
  PHINode *Counter = Builder.CreatePHI(Builder.getInt32Ty(), 2, Name);
  Counter->addIncoming(Builder.getInt32(0), Preheader);
  Builder.CreateCondBr(Builder.CreateICmpULT(Counter, Count, Name + ".inrange"),
                       Body, Exit);
  Builder.SetInsertPoint(Body);
  return {Counter, Condition, Exit};
}

// Closes the loop where the builder is and leaves the builder after it.
// With AccessGroup, the loop's iterations are declared independent for the
// memory accesses in that group (llvm.loop.parallel_accesses).
void endLoop(IRBuilder<> &Builder, const CountedLoop &Loop,
             MDNode *AccessGroup = nullptr) {
  Value *Next = Builder.CreateNUWAdd(Loop.Counter, Builder.getInt32(1),
                                     Loop.Counter->getName() + ".next");
  Loop.Counter->addIncoming(Next, Builder.GetInsertBlock());
  BranchInst *Latch = Builder.CreateBr(Loop.Condition);
  if (AccessGroup) {
    LLVMContext &Context = Builder.getContext();
    MDNode *Parallel = MDNode::get(
        Context, {MDString::get(Context, "llvm.loop.parallel_accesses"), AccessGroup});
    MDNode *LoopID = MDNode::getDistinct(Context, {nullptr, Parallel});
    LoopID->replaceOperandWith(0, LoopID);
    Latch->setMetadata(LLVMContext::MD_loop, LoopID);
  }
  Loop.Exit->insertInto(Builder.GetInsertBlock()->getParent());
  Builder.SetInsertPoint(Loop.Exit);
}

// Every thread of the block: for tid.z, for tid.y, for tid.x: Body(x, y, z),
// x innermost; with YInnermost, y innermost instead whenever the block has
// more than one row (else the x order). Leaves the builder after the loops.
void emitThreadLoops(IRBuilder<> &Builder, Value *const BlockDim[3],
                     bool YInnermost, MDNode *AccessGroup,
                     function_ref<void(Value *, Value *, Value *)> Body) {
  auto Nest = [&](unsigned Outer, unsigned Middle, unsigned Inner) {
    static const char *Names[3] = {"tid.x", "tid.y", "tid.z"};
    CountedLoop Loops[3];
    for (unsigned Dimension : {Outer, Middle, Inner})
      Loops[Dimension] = beginLoop(Builder, BlockDim[Dimension], Names[Dimension]);
    Body(Loops[0].Counter, Loops[1].Counter, Loops[2].Counter);
    for (unsigned Dimension : {Inner, Middle, Outer})
      endLoop(Builder, Loops[Dimension], AccessGroup);
  };
  if (!YInnermost) {
    Nest(2, 1, 0);
    return;
  }
  LLVMContext &Context = Builder.getContext();
  Function *F = Builder.GetInsertBlock()->getParent();
  BasicBlock *Rows = BasicBlock::Create(Context, "y.innermost", F);
  BasicBlock *Columns = BasicBlock::Create(Context, "x.innermost", F);
  BasicBlock *Join = BasicBlock::Create(Context, "threads.done", F);
  Builder.CreateCondBr(Builder.CreateICmpUGT(BlockDim[1], Builder.getInt32(1)),
                       Rows, Columns);
  Builder.SetInsertPoint(Rows);
  Nest(2, 0, 1);
  Builder.CreateBr(Join);
  Builder.SetInsertPoint(Columns);
  Nest(2, 1, 0);
  Builder.CreateBr(Join);
  Join->moveAfter(Builder.GetInsertBlock());
  Builder.SetInsertPoint(Join);
}

// How an address moves when one thread index grows by one: not at all, by a
// constant number of bytes, or otherwise (a heuristic for the loop order;
// wrapping arithmetic is ignored).
struct ThreadStep {
  enum Kinds { None, Constant, Other } Kind = None;
  int64_t Bytes = 0;
  bool operator==(const ThreadStep &O) const {
    return Kind == O.Kind && (Kind != Constant || Bytes == O.Bytes);
  }
};

ThreadStep addSteps(ThreadStep A, ThreadStep B, bool Subtract) {
  if (A.Kind == ThreadStep::Other || B.Kind == ThreadStep::Other)
    return {ThreadStep::Other};
  if (B.Kind == ThreadStep::None)
    return A;
  int64_t Bytes = (A.Kind == ThreadStep::None ? 0 : A.Bytes) +
                  (Subtract ? -B.Bytes : B.Bytes);
  return {ThreadStep::Constant, Bytes};
}

ThreadStep stepAlong(Value *V, Argument *Index, const DataLayout &DL,
                     DenseMap<Value *, ThreadStep> &Known, unsigned Depth = 0) {
  if (V == Index)
    return {ThreadStep::Constant, 1};
  auto *I = dyn_cast<Instruction>(V);
  if (!I)
    return {};
  if (auto Found = Known.find(V); Found != Known.end())
    return Found->second;
  if (Depth > 24)
    return {ThreadStep::Other};
  Known[V] = {ThreadStep::Other}; // a cycle through phis
  auto Of = [&](Value *Operand) {
    return stepAlong(Operand, Index, DL, Known, Depth + 1);
  };
  ThreadStep Result;
  switch (I->getOpcode()) {
  case Instruction::Add:
  case Instruction::Sub:
    Result = addSteps(Of(I->getOperand(0)), Of(I->getOperand(1)),
                      I->getOpcode() == Instruction::Sub);
    break;
  case Instruction::Mul:
  case Instruction::Shl: {
    ThreadStep A = Of(I->getOperand(0)), B = Of(I->getOperand(1));
    auto *Factor = dyn_cast<ConstantInt>(I->getOperand(1));
    if (A.Kind == ThreadStep::None && B.Kind == ThreadStep::None)
      Result = {};
    else if (I->getOpcode() == Instruction::Mul && B.Kind != ThreadStep::None &&
             A.Kind == ThreadStep::None && isa<ConstantInt>(I->getOperand(0)))
      Result = B.Kind == ThreadStep::Constant
                   ? ThreadStep{ThreadStep::Constant,
                                B.Bytes * cast<ConstantInt>(I->getOperand(0))
                                              ->getSExtValue()}
                   : ThreadStep{ThreadStep::Other};
    else if (A.Kind == ThreadStep::Constant && Factor &&
             Factor->getValue().getActiveBits() < 32)
      Result = {ThreadStep::Constant,
                I->getOpcode() == Instruction::Mul
                    ? A.Bytes * Factor->getSExtValue()
                    : A.Bytes << Factor->getZExtValue()};
    else
      Result = {ThreadStep::Other};
    break;
  }
  case Instruction::ZExt:
  case Instruction::SExt:
  case Instruction::Trunc:
  case Instruction::Freeze:
    Result = Of(I->getOperand(0));
    break;
  case Instruction::Select: {
    // Python's negative-index wrap: both arms move alike.
    ThreadStep A = Of(I->getOperand(1)), B = Of(I->getOperand(2));
    Result = A == B ? A : ThreadStep{ThreadStep::Other};
    break;
  }
  case Instruction::GetElementPtr: {
    auto *GEP = cast<GetElementPtrInst>(I);
    Result = Of(GEP->getPointerOperand());
    for (gep_type_iterator It = gep_type_begin(GEP), End = gep_type_end(GEP);
         It != End && Result.Kind != ThreadStep::Other; ++It) {
      ThreadStep S = Of(It.getOperand());
      if (S.Kind == ThreadStep::None)
        continue;
      if (It.isStruct() || S.Kind == ThreadStep::Other) {
        Result = {ThreadStep::Other};
        break;
      }
      int64_t Stride = It.getSequentialElementStride(DL).getFixedValue();
      Result = addSteps(Result, {ThreadStep::Constant, S.Bytes * Stride}, false);
    }
    break;
  }
  default:
    // Loads, phis, calls: along the index only if nothing they read is.
    Result = {};
    for (Value *Operand : I->operands())
      if (Of(Operand).Kind != ThreadStep::None)
        Result = {ThreadStep::Other};
    break;
  }
  Known[V] = Result;
  return Result;
}

// True if more of `Thread`'s memory accesses are contiguous along tid.y than
// along tid.x (a row-major a[i, j] indexed by i, j = grid(2)): the thread
// loops then run y innermost, which the vectoriser can use.
bool prefersYInnermost(Function &Thread, Argument *X, Argument *Y) {
  const DataLayout &DL = Thread.getDataLayout();
  DenseMap<Value *, ThreadStep> AlongX, AlongY;
  unsigned ContiguousX = 0, ContiguousY = 0;
  for (Instruction &I : instructions(Thread)) {
    Value *Pointer = getLoadStorePointerOperand(&I);
    if (!Pointer)
      continue;
    int64_t Bytes = DL.getTypeStoreSize(getLoadStoreType(&I)).getFixedValue();
    ThreadStep SX = stepAlong(Pointer, X, DL, AlongX);
    ThreadStep SY = stepAlong(Pointer, Y, DL, AlongY);
    ContiguousX += SX.Kind == ThreadStep::Constant && SX.Bytes == Bytes;
    ContiguousY += SY.Kind == ThreadStep::Constant && SY.Bytes == Bytes;
  }
  return ContiguousY > ContiguousX;
}

// A sync point of K.thread: a call after which a thread needs values that
// other threads of its block computed before the call.
struct SyncPoint {
  CallInst *Call;
  std::string Operation; // marker name without "tidal.", e.g. "shfl.down.f32"
  std::string Description; // for the divergence report
};

// Sync points of one warp: collectives (lanes exchange values), syncwarp,
// and activemask (the lanes at the call: those that arrived together).
bool isWarpSyncOperation(StringRef Operation) {
  return Operation == "syncwarp" || Operation == "activemask" ||
         Operation.starts_with("shfl.") || Operation.starts_with("vote.") ||
         Operation.starts_with("match.");
}

bool isSyncPointOperation(StringRef Operation) {
  return Operation.starts_with("syncthreads") || isWarpSyncOperation(Operation);
}

bool isBarrierReduction(StringRef Operation) {
  return Operation == "syncthreads.count" || Operation == "syncthreads.and" ||
         Operation == "syncthreads.or";
}

// i32 @__tidal.warp.bits(ptr %lanes, i32 %count, i64 %value, i1 %match):
// bit i set for i < %count if lanes[i] (i64) == %value (match) or != 0.
Function *getWarpBitsFunction(Module &M) {
  if (Function *Existing = M.getFunction("__tidal.warp.bits"))
    return Existing;
  LLVMContext &Context = M.getContext();
  Type *I32 = Type::getInt32Ty(Context), *I64 = Type::getInt64Ty(Context);
  Function *F = Function::Create(
      FunctionType::get(I32,
                        {PointerType::getUnqual(Context), I32, I64,
                         Type::getInt1Ty(Context)},
                        false),
      GlobalValue::InternalLinkage, "__tidal.warp.bits", M);
  F->addFnAttr(Attribute::NoUnwind);
  F->addFnAttr(Attribute::AlwaysInline);
  Argument *Lanes = F->getArg(0), *Count = F->getArg(1), *Wanted = F->getArg(2),
           *Match = F->getArg(3);
  BasicBlock *Entry = BasicBlock::Create(Context, "entry", F);
  BasicBlock *Loop = BasicBlock::Create(Context, "lane", F);
  BasicBlock *Exit = BasicBlock::Create(Context, "exit", F);
  IRBuilder<> B(Entry);
  B.CreateCondBr(B.CreateICmpEQ(Count, B.getInt32(0)), Exit, Loop);
  B.SetInsertPoint(Loop);
  PHINode *Lane = B.CreatePHI(I32, 2, "i");
  PHINode *Bits = B.CreatePHI(I32, 2, "bits");
  Lane->addIncoming(B.getInt32(0), Entry);
  Bits->addIncoming(B.getInt32(0), Entry);
  Value *Element = B.CreateLoad(
      I64, B.CreateInBoundsGEP(I64, Lanes, B.CreateZExt(Lane, I64)), "v");
  Value *Set = B.CreateSelect(Match, B.CreateICmpEQ(Element, Wanted),
                              B.CreateICmpNE(Element, B.getInt64(0)));
  Value *NewBits =
      B.CreateOr(Bits, B.CreateShl(B.CreateZExt(Set, I32), Lane), "bits.next");
  Value *NextLane = B.CreateNUWAdd(Lane, B.getInt32(1));
  Lane->addIncoming(NextLane, Loop);
  Bits->addIncoming(NewBits, Loop);
  B.CreateCondBr(B.CreateICmpULT(NextLane, Count), Loop, Exit);
  B.SetInsertPoint(Exit);
  PHINode *Result = B.CreatePHI(I32, 2, "result");
  Result->addIncoming(B.getInt32(0), Entry);
  Result->addIncoming(NewBits, Loop);
  B.CreateRet(Result);
  return F;
}

// Values that every thread of a block computes alike (block-uniform):
// built from constants, the kernel's parameters, the invariant context
// fields and other uniform values only, under control flow that does not
// depend on the thread. Everything else is divergent: the thread index,
// memory (other than the context), calls, and phis that join paths a
// divergent branch chose between (also the header phis of loops whose exit
// depends on the thread). Optimistic: all uniform, then divergence spreads
// to a fixed point.
// With `Controlled`, also the blocks that a divergent branch controls (that
// only some threads of a block may run).
SmallPtrSet<const Value *, 32>
findUniformValues(Function &Thread, ArrayRef<const Argument *> DivergentArguments,
                  SmallPtrSet<const BasicBlock *, 32> *Controlled = nullptr) {
  PostDominatorTree PostDominators(Thread);
  SmallPtrSet<const Value *, 32> Divergent(DivergentArguments.begin(),
                                           DivergentArguments.end());
  SmallPtrSet<const Instruction *, 16> DivergentBranches;
  SmallPtrSet<const BasicBlock *, 32> ControlledBlocks; // by a divergent branch
  auto IsDivergent = [&](const Value *V) { return Divergent.contains(V); };
  auto ComputesDivergent = [&](const Instruction &I) {
    if (auto *Phi = dyn_cast<PHINode>(&I)) {
      for (unsigned In = 0; In < Phi->getNumIncomingValues(); ++In) {
        const BasicBlock *From = Phi->getIncomingBlock(In);
        if (IsDivergent(Phi->getIncomingValue(In)) || ControlledBlocks.contains(From) ||
            DivergentBranches.contains(From->getTerminator()))
          return true;
      }
      return false;
    }
    if (auto *Load = dyn_cast<LoadInst>(&I))
      if (!Load->getMetadata(LLVMContext::MD_invariant_load))
        return true; // memory: only the block context is the same for all
    if (isa<AllocaInst>(I) || isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I))
      return true;
    if (auto *Call = dyn_cast<CallBase>(&I))
      if (!isa<IntrinsicInst>(Call) || Call->mayReadOrWriteMemory())
        return true;
    return any_of(I.operands(), [&](const Use &U) { return IsDivergent(U.get()); });
  };
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (BasicBlock &Block : Thread) {
      Instruction *Terminator = Block.getTerminator();
      Value *Condition = nullptr;
      if (auto *Branch = dyn_cast<BranchInst>(Terminator); Branch && Branch->isConditional())
        Condition = Branch->getCondition();
      else if (auto *Switch = dyn_cast<SwitchInst>(Terminator))
        Condition = Switch->getCondition();
      if (!Condition || !IsDivergent(Condition) ||
          !DivergentBranches.insert(Terminator).second)
        continue;
      // The blocks between the branch and its join (immediate
      // post-dominator; none if the paths only meet at the exit).
      Changed = true;
      DomTreeNode *Node = PostDominators.getNode(&Block);
      DomTreeNode *JoinNode = Node ? Node->getIDom() : nullptr;
      const BasicBlock *Join = JoinNode ? JoinNode->getBlock() : nullptr;
      SmallVector<const BasicBlock *, 16> Work(successors(&Block));
      while (!Work.empty()) {
        const BasicBlock *Controlled = Work.pop_back_val();
        if (Controlled == Join || !ControlledBlocks.insert(Controlled).second)
          continue;
        append_range(Work, successors(Controlled));
      }
    }
    for (Instruction &I : instructions(Thread))
      if (!I.getType()->isVoidTy() && !IsDivergent(&I) && ComputesDivergent(I)) {
        Divergent.insert(&I);
        Changed = true;
      }
  }
  SmallPtrSet<const Value *, 32> Uniform;
  for (Instruction &I : instructions(Thread))
    if (!I.getType()->isVoidTy() && !IsDivergent(&I))
      Uniform.insert(&I);
  if (Controlled)
    *Controlled = std::move(ControlledBlocks);
  return Uniform;
}

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

// K.thread: K's body with the signature of the file comment; returns -1
// where K returned. The dispatch entry (later a switch over %resume)
// computes the values every part of the thread may use.
void KernelLowering::createThreadFunction() {
  Type *I32 = Type::getInt32Ty(Context);
  Type *Pointer = PointerType::getUnqual(Context);
  SmallVector<Type *, 16> Parameters(Kernel.getFunctionType()->params());
  Parameters.append({Pointer, Pointer, Pointer, Pointer, I32, I32, I32, I32, I32});
  Thread = Function::Create(FunctionType::get(I32, Parameters, false),
                            GlobalValue::InternalLinkage,
                            Kernel.getName() + ".thread", M);
  unsigned First = Kernel.arg_size();
  ContextPointer = Thread->getArg(First);
  Shared = Thread->getArg(First + 1);
  Frame = Thread->getArg(First + 2);
  Uniforms = Thread->getArg(First + 3);
  for (unsigned D = 0; D < 3; ++D)
    ThreadIndex[D] = Thread->getArg(First + 4 + D);
  Resume = Thread->getArg(First + 7);
  Phase = Thread->getArg(First + 8);
  ContextPointer->setName("ctx");
  Shared->setName("shared");
  Frame->setName("frame");
  Uniforms->setName("uniforms");
  ThreadIndex[0]->setName("tid.x");
  ThreadIndex[1]->setName("tid.y");
  ThreadIndex[2]->setName("tid.z");
  Resume->setName("resume");
  Phase->setName("phase");

  ValueToValueMapTy Map;
  for (auto [From, To] : zip_first(Kernel.args(), Thread->args())) {
    To.setName(From.getName());
    Map[&From] = &To;
  }
  SmallVector<ReturnInst *, 4> Returns;
  CloneFunctionInto(Thread, &Kernel, Map,
                    CloneFunctionChangeType::LocalChangesOnly, Returns);
  for (ReturnInst *Return : Returns) {
    ReturnInst::Create(Context, ConstantInt::getSigned(I32, ThreadFinished),
                       Return->getIterator());
    Return->eraseFromParent();
  }
  Thread->setLinkage(GlobalValue::InternalLinkage);
  Thread->setVisibility(GlobalValue::DefaultVisibility);
  Thread->removeFnAttr(Attribute::NoInline);
  Thread->removeFnAttr(Attribute::OptimizeNone);
  Thread->addFnAttr(Attribute::AlwaysInline);

  // Variables that inlined helpers left in memory become registers first:
  // fewer values for the frame.
  Body = &Thread->getEntryBlock();
  {
    DominatorTree Tree(*Thread);
    SmallVector<AllocaInst *, 8> Promotable;
    for (Instruction &I : *Body)
      if (auto *Alloca = dyn_cast<AllocaInst>(&I))
        if (isAllocaPromotable(Alloca))
          Promotable.push_back(Alloca);
    if (!Promotable.empty())
      PromoteMemToReg(Promotable, Tree);
  }
  Entry = BasicBlock::Create(Context, "thread.entry", Thread, Body);
  BranchInst::Create(Body, Entry);
  // Static allocas stay in the entry block.
  for (Instruction &I : make_early_inc_range(*Body))
    if (auto *Alloca = dyn_cast<AllocaInst>(&I); Alloca && Alloca->isStaticAlloca())
      Alloca->moveBefore(Entry->getTerminator());
}

Value *KernelLowering::lowerAtomic(IRBuilder<> &B, CallInst &Call,
                                   const AtomicRule &Rule) {
  Value *Pointer = Call.getArgOperand(0);
  Type *T = Call.getType();
  Align Alignment(DL.getTypeStoreSize(T));
  SmallVector<Value *, 2> Arguments(drop_begin(Call.args()));
  // A block's threads run one after the other on one host thread, so an
  // atomic on the block's shared memory needs no atomic instruction.
  SmallVector<const Value *, 4> Objects;
  getUnderlyingObjects(Pointer, Objects, nullptr, 0);
  bool SharedOnly = !Objects.empty() && all_of(Objects, [](const Value *Object) {
    const auto *Marker = dyn_cast<CallInst>(Object);
    std::optional<MarkerName> Name = Marker ? getMarkerCall(*Marker) : std::nullopt;
    return Name && (Name->Kind == MarkerKind::SharedArray ||
                    Name->Kind == MarkerKind::SharedDynamic);
  });
  if (!SharedOnly)
    return emitAtomic(B, Rule, Pointer, Arguments, Alignment);
  LoadInst *Old = B.CreateAlignedLoad(T, Pointer, Alignment);
  Value *New;
  if (Rule.Shape == AtomicRule::CompareExchange)
    New = B.CreateSelect(B.CreateICmpEQ(Old, Arguments[0]), Arguments[1], Old);
  else
    New = buildAtomicRMWValue(Rule.Operation, B, Old,
                              formAtomicOperand(B, Rule, Arguments[0]));
  StoreInst *Store = B.CreateAlignedStore(New, Pointer, Alignment);
  SerialisedAtomics.insert(Old);
  SerialisedAtomics.insert(Store);
  return Old;
}

Value *KernelLowering::lowerMath(IRBuilder<> &B, CallInst &Call,
                                 MarkerKind Kind, const MathRule &Rule) {
  Type *T = Call.getType();
  Value *X = Call.getArgOperand(0);
  Value *Y = Call.arg_size() > 1 ? Call.getArgOperand(1) : nullptr;
  // LLVM's own operations where there is one (vectorisable, folded) ...
  Intrinsic::ID Id = Rule.HostIntrinsic;
  if (Id != Intrinsic::not_intrinsic)
    return Y ? B.CreateBinaryIntrinsic(Id, X, Y) : B.CreateUnaryIntrinsic(Id, X);
  if (Kind == MarkerKind::MathRsqrt)
    return B.CreateFDiv(ConstantFP::get(T, 1.0),
                        B.CreateUnaryIntrinsic(Intrinsic::sqrt, X));
  if (Kind == MarkerKind::MathFmod)
    return B.CreateFRem(X, Y);
  // ... else libm from the process: tanf/tan, atan2f/atan2, ...
  std::string Name = (Rule.LibraryName + (T->isFloatTy() ? "f" : "")).str();
  SmallVector<Type *, 2> Parameters(Call.arg_size(), T);
  FunctionCallee Libm =
      M.getOrInsertFunction(Name, FunctionType::get(T, Parameters, false));
  SmallVector<Value *, 2> Arguments(Call.args());
  return B.CreateCall(Libm, Arguments);
}

// bounds.error / assert.fail: report to the runtime (which records the
// first failure of the launch), then leave the thread with -2.
void KernelLowering::lowerFailure(CallInst &Call, StringRef Operation) {
  IRBuilder<> B(&Call);
  Type *Pointer = B.getPtrTy(), *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  if (Operation == "bounds.error") {
    Function *Hook = getHook(M, CpuBoundsErrorHook, B.getVoidTy(),
                             {Pointer, Pointer, I64, I64, I32, I32, I32, I32});
    B.CreateCall(Hook, {ContextPointer, Call.getArgOperand(0),
                        Call.getArgOperand(1), Call.getArgOperand(2),
                        Call.getArgOperand(3), ThreadIndex[0], ThreadIndex[1],
                        ThreadIndex[2]});
  } else {
    Function *Hook = getHook(M, CpuAssertFailHook, B.getVoidTy(),
                             {Pointer, Pointer, I32, I32, I32});
    B.CreateCall(Hook, {ContextPointer, Call.getArgOperand(0), ThreadIndex[0],
                        ThreadIndex[1], ThreadIndex[2]});
  }
  BasicBlock *Block = Call.getParent();
  BasicBlock *Rest = Block->splitBasicBlock(Call.getNextNode(), "unreachable");
  (void)Rest; // no predecessor left: removed with removeUnreachableBlocks
  Block->getTerminator()->eraseFromParent();
  Call.eraseFromParent();
  ReturnInst::Create(Context, ConstantInt::getSigned(I32, ThreadFailed), Block);
}

// Every marker but the shared-memory ones (which atomics look at) and the
// sync points. Returns true if it replaced and erased the call.
bool KernelLowering::lowerMarkerCall(CallInst &Call, StringRef Operation,
                                     SmallVectorImpl<CallInst *> &SharedCalls) {
  IRBuilder<> B(&Call);
  Value *Result = nullptr;
  if (auto Register = getSpecialRegisterCall(Call)) {
    // index within block: parameters; sizes and block index: the context
    switch (Register->Register) {
    case SpecialRegister::ThreadIndex:
      Result = ThreadIndex[Register->Dimension];
      break;
    case SpecialRegister::BlockDim:
      Result = contextField(BlockDimField, Register->Dimension);
      break;
    case SpecialRegister::BlockIndex:
      Result = contextField(BlockIndexField, Register->Dimension);
      break;
    case SpecialRegister::GridDim:
      Result = contextField(GridDimField, Register->Dimension);
      break;
    }
  } else if (Operation == "shared.array" || Operation == "shared.dynamic") {
    SharedCalls.push_back(&Call);
    return false;
  } else if (isSyncPointOperation(Operation)) {
    return false; // collected by lowerMarkers, lowered by makeResumable
  }
  // lanes of the warp: linear thread index modulo 32
  else if (Operation == "warpsize") {
    Result = B.getInt32(32);
  } else if (Operation == "laneid" || Operation == "lanemask.lt") {
    Value *Lane = B.CreateAnd(linearThread(), 31, "laneid");
    Result = Operation == "laneid"
                 ? Lane
                 : B.CreateSub(B.CreateShl(B.getInt32(1), Lane), B.getInt32(1));
  }
  // fences: a block's threads share one host thread
  else if (Operation == "threadfence.block") {
    B.CreateFence(AtomicOrdering::SequentiallyConsistent,
                  SyncScope::SingleThread);
  } else if (Operation == "threadfence" || Operation == "threadfence.system") {
    B.CreateFence(AtomicOrdering::SequentiallyConsistent);
  }
  // memory
  else if (Operation == "local.array") {
    // valid: hasOnlyHostLowerableMarkers checked the kernel's calls
    ArrayArguments Size = *getArrayArguments(Call);
    IRBuilder<> EntryB = entryBuilder();
    AllocaInst *Array = EntryB.CreateAlloca(
        ArrayType::get(B.getInt8Ty(), std::max<uint64_t>(Size.Bytes, 1)),
        nullptr, "local");
    Array->setAlignment(Size.Alignment);
    Result = Array;
  } else if (Operation == "const.array") {
    Result = Call.getArgOperand(0);
  }
  // output and failures
  else if (Operation == "print") {
    Function *Hook = getHook(M, CpuPrintHook, B.getVoidTy(), {B.getPtrTy()}, true);
    SmallVector<Value *, 8> Arguments(Call.args());
    B.CreateCall(Hook, Arguments);
  } else if (Operation == "bounds.error" || Operation == "assert.fail") {
    lowerFailure(Call, Operation);
    return true;
  }
  // typed families
  else if (std::optional<AtomicRule> Atomic = getAtomicRule(*getMarkerCall(Call))) {
    Result = lowerAtomic(B, Call, *Atomic);
  } else if (std::optional<MathRule> Math = getMathRule(getMarkerCall(Call)->Kind)) {
    Result = lowerMath(B, Call, getMarkerCall(Call)->Kind, *Math);
  } else {
    return false;
  }
  if (Result) {
    if (isa<Instruction>(Result) && !Result->hasName())
      Result->takeName(&Call);
    Call.replaceAllUsesWith(Result);
  }
  Call.eraseFromParent();
  return true;
}

// Static shared arrays at fixed offsets of the block's shared memory, one
// per call site; the dynamic shared memory after them.
// Each array is at most TIDAL_MAX_STATIC_SHARED_BYTES and 64-byte aligned
// at most (getArrayArguments), so the offsets cannot overflow; their total
// over the limit is an error naming the kernel.
void KernelLowering::lowerSharedCalls(ArrayRef<CallInst *> Calls) {
  uint64_t Offset = 0;
  IRBuilder<> B = entryBuilder();
  SmallVector<CallInst *, 4> DynamicCalls;
  for (CallInst *Call : Calls) {
    if (getMarkerCall(*Call)->Kind != MarkerKind::SharedArray) {
      DynamicCalls.push_back(Call);
      continue;
    }
    // valid: hasOnlyHostLowerableMarkers checked the kernel's calls
    ArrayArguments Size = *getArrayArguments(*Call);
    Offset = alignTo(Offset, std::min<uint64_t>(Size.Alignment.value(),
                                                SharedAlignment));
    Value *Address =
        B.CreateInBoundsGEP(B.getInt8Ty(), Shared, B.getInt64(Offset));
    Offset += Size.Bytes;
    Address->takeName(Call);
    Call->replaceAllUsesWith(Address);
    Call->eraseFromParent();
  }
  StaticSharedBytes = alignTo(Offset, SharedAlignment);
  if (Offset > TIDAL_MAX_STATIC_SHARED_BYTES)
    reportError(Context, "kernel '" + Kernel.getName() + "': its shared arrays "
                         "take " + Twine(Offset) + " bytes, over CUDA's limit "
                         "of " + Twine(TIDAL_MAX_STATIC_SHARED_BYTES) +
                         " bytes of static shared memory per block");
  for (CallInst *Call : DynamicCalls) {
    Value *Address = B.CreateInBoundsGEP(B.getInt8Ty(), Shared,
                                         B.getInt64(StaticSharedBytes));
    Address->takeName(Call);
    Call->replaceAllUsesWith(Address);
    Call->eraseFromParent();
  }
  UsesShared = !Calls.empty();
}

// Lowers every well-formed marker call of K.thread; sync points are
// collected (makeResumable lowers them). Returns false if a marker is left.
bool KernelLowering::lowerMarkers() {
  SmallVector<CallInst *, 32> Calls;
  for (Instruction &I : instructions(*Thread))
    if (auto *Call = dyn_cast<CallInst>(&I))
      if (getCalledMarker(*Call))
        Calls.push_back(Call);
  SmallVector<CallInst *, 8> SharedCalls;
  for (CallInst *Call : Calls) {
    StringRef Name = Call->getCalledFunction()->getName().drop_front(
        StringRef(MarkerPrefix).size());
    lowerMarkerCall(*Call, Name, SharedCalls);
  }
  lowerSharedCalls(SharedCalls);
  removeUnreachableBlocks(*Thread);
  bool AllLowered = true;
  for (Instruction &I : instructions(*Thread))
    if (auto *Call = dyn_cast<CallInst>(&I))
      if (const Function *Marker = getCalledMarker(*Call)) {
        StringRef Operation =
            Marker->getName().drop_front(StringRef(MarkerPrefix).size());
        if (!isSyncPointOperation(Operation)) {
          AllLowered = false;
          continue;
        }
        std::string Location = describeLocation(*Call);
        std::string Name = Operation.str();
        std::replace(Name.begin(), Name.end(), '.', '_');
        SyncPoints.push_back(
            {Call, Operation.str(),
             Name + (Location.empty() ? "" : " at " + Location)});
      }
  // Warp rounds only for a warp sync point that a divergent branch controls
  // (`if tid < 32: shfl...`, or after an early return): one that every
  // thread of the block reaches is completed for the whole block at once, as
  // a syncthreads (block rounds, the faster code). activemask there is every
  // existing lane of the warp: no sync point.
  if (any_of(SyncPoints, [](const SyncPoint &P) {
        return isWarpSyncOperation(P.Operation);
      })) {
    SmallPtrSet<const BasicBlock *, 32> Controlled;
    findUniformValues(*Thread, {ThreadIndex[0], ThreadIndex[1], ThreadIndex[2]},
                      &Controlled);
    WarpRounds = any_of(SyncPoints, [&](const SyncPoint &P) {
      return isWarpSyncOperation(P.Operation) &&
             Controlled.contains(P.Call->getParent());
    });
    if (WarpRounds) {
      FramePrefix = WarpFirstValuePrefix;
    } else {
      for (SyncPoint &Point : SyncPoints)
        if (Point.Operation == "activemask") {
          IRBuilder<> B(Point.Call);
          Value *Thread = linearThread();
          Value *Lanes = B.CreateSub(threadCount(), B.CreateAnd(Thread, ~31u));
          Value *Partial = B.CreateSub(
              B.CreateShl(B.getInt32(1), B.CreateAnd(Lanes, 31)), B.getInt32(1));
          Value *Mask = B.CreateSelect(B.CreateICmpUGE(Lanes, B.getInt32(32)),
                                       B.getInt32(~0u), Partial, "activemask");
          Point.Call->replaceAllUsesWith(Mask);
          Point.Call->eraseFromParent();
          Point.Call = nullptr;
        }
      llvm::erase_if(SyncPoints, [](const SyncPoint &P) { return !P.Call; });
    }
  }
  // With warp rounds, the block barriers come first (a round in which no
  // thread returned a higher number needs no warp step), then the warp
  // points in reverse post-order: __tidal_cpu_warp_step completes the group
  // at the lowest point first, so that lanes split by a branch meet again
  // after it.
  if (WarpRounds) {
    DenseMap<const BasicBlock *, unsigned> Order;
    for (BasicBlock *Block : ReversePostOrderTraversal<Function *>(Thread))
      Order.try_emplace(Block, Order.size());
    llvm::stable_sort(SyncPoints, [&](const SyncPoint &A, const SyncPoint &B) {
      bool WarpA = isWarpSyncOperation(A.Operation),
           WarpB = isWarpSyncOperation(B.Operation);
      if (WarpA != WarpB)
        return WarpB;
      return Order.lookup(A.Call->getParent()) < Order.lookup(B.Call->getParent());
    });
  }
  return AllLowered;
}

// The i64 image of a collective's value in the exchange buffer, and back.
Value *toExchange(IRBuilder<> &B, Value *V) {
  Type *T = V->getType();
  if (T->isFloatTy())
    V = B.CreateBitCast(V, B.getInt32Ty());
  else if (T->isDoubleTy())
    V = B.CreateBitCast(V, B.getInt64Ty());
  return B.CreateZExt(V, B.getInt64Ty());
}

Value *fromExchange(IRBuilder<> &B, Value *V, Type *T) {
  if (T->isFloatTy())
    return B.CreateBitCast(B.CreateTrunc(V, B.getInt32Ty()), T);
  if (T->isDoubleTy())
    return B.CreateBitCast(V, T);
  return B.CreateTrunc(V, T);
}

// Before returning at a sync point: what the other threads will need.
void KernelLowering::storeBeforeSyncPoint(IRBuilder<> &B, const SyncPoint &Point) {
  StringRef Operation = Point.Operation;
  CallInst *Call = Point.Call;
  Value *Stored = nullptr;
  if (isBarrierReduction(Operation))
    Stored = B.CreateZExt(B.CreateICmpNE(Call->getArgOperand(0), B.getInt32(0)),
                         B.getInt64Ty());
  else if (Operation.starts_with("shfl.") || Operation.starts_with("vote.") ||
           Operation.starts_with("match."))
    Stored = toExchange(B, Call->getArgOperand(1));
  if (WarpRounds && isWarpSyncOperation(Operation) && Operation != "activemask") {
    Value *Masks = frameArray(MaskPrefix, nullptr, "masks");
    B.CreateAlignedStore(
        Call->getArgOperand(0),
        B.CreateInBoundsGEP(B.getInt32Ty(), Masks,
                            B.CreateZExt(linearThread(), B.getInt64Ty())),
        Align(4));
  }
  if (!Stored)
    return;
  Value *Slot = B.CreateInBoundsGEP(B.getInt64Ty(), exchangeBuffer(true),
                                    B.CreateZExt(linearThread(), B.getInt64Ty()));
  B.CreateAlignedStore(Stored, Slot, Align(8));
}

// After resuming from a sync point: its result, from what every thread of
// the block stored (or the block function reduced) before.
Value *KernelLowering::resumeAfterSyncPoint(IRBuilder<> &B,
                                            const SyncPoint &Point) {
  StringRef Operation = Point.Operation;
  CallInst *Call = Point.Call;
  Type *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  // barriers
  if (Operation == "syncthreads" || Operation == "syncwarp")
    return nullptr;
  if (isBarrierReduction(Operation)) {
    Value *Count = B.CreateAlignedLoad(I32, Frame, Align(FrameHeaderBytes),
                                       "syncthreads.count");
    if (Operation == "syncthreads.count")
      return Count;
    Value *Holds = Operation == "syncthreads.and"
                       ? B.CreateICmpEQ(Count, threadCount())
                       : B.CreateICmpNE(Count, B.getInt32(0));
    return B.CreateZExt(Holds, I32);
  }
  // warp collectives: lanes are threads warpBase .. warpBase + 31
  Value *Thread = linearThread();
  Value *Lane = B.CreateAnd(Thread, 31);
  Value *WarpBase = B.CreateAnd(Thread, ~31u);
  Value *Read = exchangeBuffer(false);
  auto LoadLane = [&](Value *Index) {
    return B.CreateAlignedLoad(
        I64, B.CreateInBoundsGEP(I64, Read, B.CreateZExt(Index, I64)), Align(8));
  };
  // activemask: the lanes that arrived together (__tidal_cpu_warp_step
  // wrote them as this thread's result).
  if (Operation == "activemask")
    return B.CreateTrunc(LoadLane(Thread), I32);
  if (Operation.starts_with("shfl.")) {
    StringRef Mode = Operation.drop_front(5).split('.').first;
    Value *Delta = Call->getArgOperand(2);
    Value *Source, *Valid;
    if (Mode == "idx") {
      Source = B.CreateAnd(Delta, 31);
      Valid = B.getTrue();
    } else if (Mode == "up") {
      Source = B.CreateSub(Lane, Delta);
      Valid = B.CreateICmpULE(Delta, Lane);
    } else if (Mode == "down") {
      Source = B.CreateAdd(Lane, Delta);
      Valid = B.CreateICmpULT(Delta, B.CreateSub(B.getInt32(32), Lane));
    } else {
      Source = B.CreateXor(Lane, Delta);
      Valid = B.CreateICmpULT(Source, B.getInt32(32));
    }
    Value *SourceThread = B.CreateAdd(WarpBase, Source);
    Valid = B.CreateAnd(Valid, B.CreateICmpULT(SourceThread, threadCount()));
    Value *From = B.CreateSelect(Valid, SourceThread, Thread);
    return fromExchange(B, LoadLane(From), Call->getType());
  }
  Value *Lanes = B.CreateInBoundsGEP(I64, Read, B.CreateZExt(WarpBase, I64));
  Value *LaneCount = B.CreateBinaryIntrinsic(
      Intrinsic::umin, B.CreateSub(threadCount(), WarpBase), B.getInt32(32));
  Value *Existing = B.CreateSelect(
      B.CreateICmpEQ(LaneCount, B.getInt32(32)), B.getInt32(~0u),
      B.CreateSub(B.CreateShl(B.getInt32(1), LaneCount), B.getInt32(1)));
  Value *Mask = Call->getArgOperand(0);
  Value *Members = B.CreateAnd(Mask, Existing);
  Function *Bits = getWarpBitsFunction(M);
  if (Operation.starts_with("vote.")) {
    Value *Ballot = B.CreateAnd(
        B.CreateCall(Bits, {Lanes, LaneCount, B.getInt64(0), B.getFalse()}), Mask);
    if (Operation == "vote.ballot")
      return Ballot;
    Value *All = B.CreateICmpEQ(Ballot, Members);
    Value *None = B.CreateICmpEQ(Ballot, B.getInt32(0));
    if (Operation == "vote.all")
      return All;
    if (Operation == "vote.any")
      return B.CreateNot(None);
    return B.CreateOr(All, None); // vote.uni
  }
  // match.any / match.all
  Value *Own = LoadLane(Thread);
  Value *Matching =
      B.CreateAnd(B.CreateCall(Bits, {Lanes, LaneCount, Own, B.getTrue()}), Mask);
  if (Operation.starts_with("match.any"))
    return Matching;
  Value *AllEqual = B.CreateICmpEQ(Matching, Members);
  Value *Result = B.CreateInsertValue(
      PoisonValue::get(Call->getType()),
      B.CreateSelect(AllEqual, Mask, B.getInt32(0)), 0);
  return B.CreateInsertValue(Result, AllEqual, 1);
}

// This thread's element (address in the entry) of a new frame array of
// `Size` bytes per thread.
Value *KernelLowering::frameElement(uint64_t Size, uint64_t Alignment,
                                    const Twine &Name) {
  if (!Thread64) {
    Value *Linear = linearThread();
    IRBuilder<> B = entryBuilder();
    Thread64 = B.CreateZExt(Linear, B.getInt64Ty(), "thread.i64");
  }
  uint64_t Stride = alignTo(std::max<uint64_t>(Size, 1),
                            std::max<uint64_t>(Alignment, 4));
  Value *Array = frameArray(FramePrefix, nullptr, Name + ".frame");
  FramePrefix += Stride;
  IRBuilder<> B = entryBuilder();
  return B.CreateInBoundsGEP(B.getInt8Ty(), Array,
                             B.CreateNUWMul(Thread64, B.getInt64(Stride)));
}

// Values defined before a sync point and used after it no longer dominate
// their uses once the entry dispatches to the resume points. Pure
// computations from the entry's values (thread index arithmetic, addresses
// in shared memory) move to the entry: recomputing them is cheaper than
// keeping them. Every other such value is stored where the thread returns
// at a sync point at which it is live, loaded where the thread resumes
// there (ResumeBlocks[k], reached only from the entry), and SSA is rebuilt
// around those loads: a region reads its live-in values once and writes its
// live-out values once. A block-uniform value is one scalar of the block
// (UniformSlots), any other one element per thread of a frame array.
void KernelLowering::keepValuesAcrossSyncPoints(
    ArrayRef<BasicBlock *> SyncBlocks, ArrayRef<BasicBlock *> ResumeBlocks,
    const SmallPtrSetImpl<const Value *> &Uniform) {
  DominatorTree Tree(*Thread);
  SmallVector<Instruction *, 32> Crossing;
  for (Instruction &I : instructions(*Thread))
    if (!isa<AllocaInst>(I) &&
        any_of(I.uses(), [&](Use &U) { return !Tree.dominates(&I, U); }))
      Crossing.push_back(&I);
  std::function<bool(Instruction *, unsigned)> Hoist = [&](Instruction *I,
                                                           unsigned Depth) {
    if (I->getParent() == Entry)
      return true;
    if (Depth > 8 || isa<PHINode>(I) || isa<AllocaInst>(I) ||
        I->mayReadOrWriteMemory() || !isSafeToSpeculativelyExecute(I))
      return false;
    for (Value *Operand : I->operands())
      if (auto *Defining = dyn_cast<Instruction>(Operand))
        if (!Hoist(Defining, Depth + 1))
          return false;
    I->moveBefore(Entry->getTerminator());
    return true;
  };
  DenseMap<BasicBlock *, unsigned> ResumeIndex;
  for (auto [K, Block] : enumerate(ResumeBlocks))
    ResumeIndex[Block] = K;
  for (Instruction *V : Crossing) {
    if (Hoist(V, 0))
      continue;
    // 1. The sync points where V is live: walk back from its uses; a resume
    //    block leads back to its sync point.
    BasicBlock *Definition = V->getParent();
    SmallVector<unsigned, 4> LiveAt;
    SmallPtrSet<BasicBlock *, 16> Visited;
    SmallVector<BasicBlock *, 16> Work;
    auto NeededAtEnd = [&](BasicBlock *Block) {
      if (Block != Definition)
        Work.push_back(Block);
    };
    for (Use &U : V->uses()) {
      auto *User = cast<Instruction>(U.getUser());
      auto *Phi = dyn_cast<PHINode>(User);
      NeededAtEnd(Phi ? Phi->getIncomingBlock(U) : User->getParent());
    }
    while (!Work.empty()) {
      BasicBlock *Block = Work.pop_back_val();
      if (Block == Entry || !Visited.insert(Block).second)
        continue;
      if (auto Found = ResumeIndex.find(Block); Found != ResumeIndex.end()) {
        LiveAt.push_back(Found->second);
        NeededAtEnd(SyncBlocks[Found->second]);
        continue;
      }
      for (BasicBlock *Predecessor : predecessors(Block))
        NeededAtEnd(Predecessor);
    }
    // 2. Its place: a scalar of the block or an element per thread.
    Type *T = V->getType();
    uint64_t Size = DL.getTypeAllocSize(T).getFixedValue();
    Value *ReadAt, *WriteAt;
    Align Alignment;
    if (Uniform.contains(V)) {
      uint64_t Stride = alignTo(std::max<uint64_t>(Size, 1), 16);
      UniformSlots.push_back({T, UniformBytes, Stride});
      IRBuilder<> B = entryBuilder();
      ReadAt = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Uniforms, UniformBytes,
                                            V->getName() + ".uniform");
      WriteAt = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Uniforms,
                                             UniformBytes + Stride,
                                             V->getName() + ".pending");
      UniformBytes += 2 * Stride;
      Alignment = Align(16);
    } else {
      uint64_t Before = FramePrefix;
      ReadAt = WriteAt = frameElement(Size, DL.getABITypeAlign(T).value(), V->getName());
      Alignment = commonAlignment(Align(64), FramePrefix - Before);
    }
    // 3. Stored before returning, loaded on resuming; SSA rebuilt.
    SSAUpdater Updater;
    Updater.Initialize(T, V->getName());
    Updater.AddAvailableValue(Definition, V);
    for (unsigned K : LiveAt) {
      IRBuilder<> B(&*ResumeBlocks[K]->getFirstInsertionPt());
      Updater.AddAvailableValue(
          ResumeBlocks[K], B.CreateAlignedLoad(T, ReadAt, Alignment, V->getName() + ".resumed"));
    }
    SmallVector<Use *, 8> Rewrite;
    for (Use &U : V->uses())
      if (!Tree.dominates(V, U))
        Rewrite.push_back(&U);
    for (unsigned K : LiveAt) {
      IRBuilder<> B(SyncBlocks[K]->getTerminator());
      StoreInst *Store = B.CreateAlignedStore(V, WriteAt, Alignment);
      if (!Tree.dominates(V, Store->getOperandUse(0)))
        Rewrite.push_back(&Store->getOperandUse(0));
    }
    for (Use *U : Rewrite)
      Updater.RewriteUse(*U);
  }
}

// Every alloca (demoted values, local arrays, variables) becomes the
// thread's element of a frame array: it must survive K.thread's returns.
void KernelLowering::moveAllocasToFrame() {
  SmallVector<AllocaInst *, 32> Allocas;
  for (Instruction &I : instructions(*Thread))
    if (auto *Alloca = dyn_cast<AllocaInst>(&I))
      Allocas.push_back(Alloca);
  for (AllocaInst *Alloca : Allocas) {
    std::optional<TypeSize> Size = Alloca->getAllocationSize(DL);
    if (!Alloca->isStaticAlloca() || !Size || Size->isScalable()) {
      reportError(Context, "cannot lower kernel '" + Kernel.getName() +
                               "': a stack allocation of variable size lives "
                               "across a barrier");
      continue;
    }
    Value *Address = frameElement(Size->getFixedValue(),
                                  Alloca->getAlign().value(), Alloca->getName());
    for (User *U : make_early_inc_range(Alloca->users()))
      if (auto *Intrinsic = dyn_cast<IntrinsicInst>(U);
          Intrinsic && Intrinsic->isLifetimeStartOrEnd())
        Intrinsic->eraseFromParent();
    Address->takeName(Alloca);
    Alloca->replaceAllUsesWith(Address);
    Alloca->eraseFromParent();
  }
  FrameSlotBytes = FramePrefix;

  // The addresses went to the end of the entry, after computations moved
  // there that use them: put the entry (pure, no phis) in def-use order.
  SmallVector<Instruction *, 64> Order;
  SmallPtrSet<Instruction *, 32> Placed;
  std::function<void(Instruction *)> Place = [&](Instruction *I) {
    if (!Placed.insert(I).second)
      return;
    for (Value *Operand : I->operands())
      if (auto *Defining = dyn_cast<Instruction>(Operand);
          Defining && Defining->getParent() == Entry)
        Place(Defining);
    Order.push_back(I);
  };
  SmallVector<Instruction *, 64> Original;
  for (Instruction &I : *Entry)
    if (!I.isTerminator())
      Original.push_back(&I);
  for (Instruction *I : Original)
    Place(I);
  for (Instruction *I : Order)
    I->moveBefore(Entry->getTerminator());
}

// Sync point k (1-based): the thread stores what others need, returns k;
// the code after it becomes resume point k of the entry's switch.
void KernelLowering::makeResumable() {
  if (SyncPoints.empty())
    return;
  // Warps run their rounds at different times: a value of the block would
  // need more than one pending copy, so with warp rounds every value is kept
  // per thread.
  SmallPtrSet<const Value *, 32> Uniform;
  if (!WarpRounds)
    Uniform = findUniformValues(*Thread,
                                {ThreadIndex[0], ThreadIndex[1], ThreadIndex[2]});
  SmallVector<BasicBlock *, 8> SyncBlocks, ResumeBlocks;
  Type *I32 = Type::getInt32Ty(Context);
  unsigned Number = 0;
  for (SyncPoint &Point : SyncPoints) {
    ++Number;
    CallInst *Call = Point.Call;
    BasicBlock *Before = Call->getParent();
    BasicBlock *After = Before->splitBasicBlock(Call->getNextNode(),
                                                "sync." + Twine(Number) + ".after");
    BasicBlock *Resumed =
        BasicBlock::Create(Context, "resume." + Twine(Number), Thread, After);
    BranchInst::Create(After, Resumed);
    IRBuilder<> B(Call);
    storeBeforeSyncPoint(B, Point);
    Before->getTerminator()->eraseFromParent();
    ReturnInst::Create(Context, ConstantInt::get(I32, Number), Before);
    IRBuilder<> A(&*After->getFirstInsertionPt());
    if (Value *Result = resumeAfterSyncPoint(A, Point)) {
      Result->takeName(Call);
      Call->replaceAllUsesWith(Result);
    }
    Call->eraseFromParent();
    Point.Call = nullptr;
    SyncBlocks.push_back(Before);
    ResumeBlocks.push_back(Resumed);
  }
  Instruction *Branch = Entry->getTerminator();
  BasicBlock *Invalid = BasicBlock::Create(Context, "resume.invalid", Thread);
  new UnreachableInst(Context, Invalid);
  SwitchInst *Switch =
      SwitchInst::Create(Resume, Invalid, Number + 1, Branch->getIterator());
  Switch->addCase(ConstantInt::get(cast<IntegerType>(I32), 0), Body);
  for (unsigned K = 1; K <= Number; ++K)
    Switch->addCase(ConstantInt::get(cast<IntegerType>(I32), K),
                    ResumeBlocks[K - 1]);
  Branch->eraseFromParent();
  keepValuesAcrossSyncPoints(SyncBlocks, ResumeBlocks, Uniform);
  moveAllocasToFrame();
}


// Threads of a round (between two sync points) may run in any order, and
// two of them touching the same location, one writing, without an atomic is
// a data race in CUDA: the thread loops may run their iterations in parallel
// (vectorised) for every plain load and store of K.thread, which go into one
// access group. A kernel with atomics (also their plain form on shared
// memory), volatile accesses or calls gets no group: its loops are analysed
// as usual.
void KernelLowering::markParallelAccesses() {
  if (!SerialisedAtomics.empty())
    return;
  SmallVector<Instruction *, 32> Accesses;
  for (Instruction &I : instructions(*Thread)) {
    if (isa<LoadInst, StoreInst>(I)) {
      if (isa<LoadInst>(I) ? !cast<LoadInst>(I).isSimple()
                           : !cast<StoreInst>(I).isSimple())
        return; // volatile or atomic: leave every thread loop as it is
      Accesses.push_back(&I);
    } else if (I.mayReadOrWriteMemory() &&
               !(isa<IntrinsicInst>(I) && !I.mayWriteToMemory())) {
      return; // an atomic, a fence or a call
    }
  }
  if (Accesses.empty())
    return;
  // The calls of K.thread in the thread loops carry the group too: the
  // inliner gives it to every access of the inlined body, also to those that
  // K.thread's own simplification (before inlining) created without it.
  ThreadAccesses = MDNode::getDistinct(Context, {});
  for (Instruction *I : Accesses)
    I->setMetadata(LLVMContext::MD_access_group, ThreadAccesses);
}

// A private constant C string.
Constant *getString(Module &M, StringRef Text, const Twine &Name) {
  IRBuilder<> B(M.getContext());
  auto *Global = new GlobalVariable(
      M, ArrayType::get(B.getInt8Ty(), Text.size() + 1), true,
      GlobalValue::PrivateLinkage,
      ConstantDataArray::getString(M.getContext(), Text), Name);
  Global->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  Global->setAlignment(Align(1));
  return Global;
}

// Threads at different sync points (or some finished): the runtime reports
// them all (Next: the sync point each thread reached).
void KernelLowering::emitBarrierError(IRBuilder<> &Builder, Value *BlockContext,
                                      Value *Next, Value *Count) {
  Type *Pointer = Builder.getPtrTy(), *I32 = Builder.getInt32Ty();
  unsigned SyncCount = SyncPoints.size();
  SmallVector<Constant *, 8> Names;
  Names.push_back(getString(M, "the start", Kernel.getName() + ".sync.0"));
  for (unsigned K = 1; K <= SyncCount; ++K)
    Names.push_back(getString(M, SyncPoints[K - 1].Description,
                              Kernel.getName() + ".sync." + Twine(K)));
  auto *NameArray = ArrayType::get(Pointer, Names.size());
  auto *Table = new GlobalVariable(M, NameArray, true,
                                   GlobalValue::PrivateLinkage,
                                   ConstantArray::get(NameArray, Names),
                                   Kernel.getName() + ".sync.names");
  Function *Hook = getHook(M, CpuBarrierErrorHook, Builder.getVoidTy(),
                           {Pointer, Pointer, Pointer, I32, Pointer, I32});
  Builder.CreateCall(Hook, {BlockContext,
                            getString(M, Kernel.getName(),
                                      Kernel.getName() + ".name"),
                            Next, Count, Table,
                            Builder.getInt32(SyncCount + 1)});
}

// Everyone at sync point `Low`: after a syncthreads_count/and/or, count
// the threads whose predicate held (they stored it in this round's
// exchange buffer), for K.thread to read from the frame's header.
void KernelLowering::emitBarrierReduction(IRBuilder<> &Builder, Value *Low,
                                          Value *FrameMemory, Value *Padded,
                                          Value *Count, Value *RoundPhase,
                                          BasicBlock *EntryBlock) {
  Type *I32 = Builder.getInt32Ty(), *I64 = Builder.getInt64Ty();
  Function *Block = Builder.GetInsertBlock()->getParent();
  unsigned SyncCount = SyncPoints.size();
  Value *AtReduction = Builder.getFalse();
  for (unsigned K = 1; K <= SyncCount; ++K)
    if (isBarrierReduction(SyncPoints[K - 1].Operation))
      AtReduction = Builder.CreateOr(
          AtReduction, Builder.CreateICmpEQ(Low, Builder.getInt32(K)));
  if (!isa<Constant>(AtReduction)) {
    BasicBlock *Reduce = BasicBlock::Create(Context, "reduce", Block);
    BasicBlock *Back = BasicBlock::Create(Context, "round.back", Block);
    Builder.CreateCondBr(AtReduction, Reduce, Back);
    Builder.SetInsertPoint(Reduce);
    Value *Written = Builder.CreateInBoundsGEP(
        Builder.getInt8Ty(), FrameMemory,
        Builder.CreateNUWAdd(
            Builder.getInt64(FrameHeaderBytes),
            Builder.CreateNUWMul(
                Padded, Builder.CreateNUWAdd(
                            Builder.getInt64(ExchangePrefix),
                            Builder.CreateShl(Builder.CreateZExt(RoundPhase, I64),
                                              3)))),
        "exchange");
    AllocaInst *Sum = new AllocaInst(I32, DL.getAllocaAddrSpace(), "count",
                                     EntryBlock->getTerminator()->getIterator());
    Builder.CreateStore(Builder.getInt32(0), Sum);
    CountedLoop Each = beginLoop(Builder, Count, "reduce.thread");
    Value *Predicate = Builder.CreateLoad(
        I64, Builder.CreateInBoundsGEP(I64, Written,
                                       Builder.CreateZExt(Each.Counter, I64)));
    Builder.CreateStore(
        Builder.CreateAdd(Builder.CreateLoad(I32, Sum),
                          Builder.CreateTrunc(Predicate, I32)),
        Sum);
    endLoop(Builder, Each);
    Builder.CreateAlignedStore(Builder.CreateLoad(I32, Sum), FrameMemory,
                               Align(FrameHeaderBytes));
    Builder.CreateBr(Back);
    Builder.SetInsertPoint(Back);
  }
}

// Rounds of a kernel with a warp sync point under a divergent branch
// (docs/cpu-target.md, "Warp rounds"). Every thread has a state in next[t]:
// the sync point where it stopped (or -1 finished, -2 failed), plus
// TIDAL_SYNC_RELEASED when it may resume there. A block round runs every
// thread from the round's resume point (one thread loop per point). If all
// then wait at one warp point, it is completed for the whole block (the next
// round, other %phase, reads what they wrote). Else each warp with a lane
// at a warp point settles: __tidal_cpu_warp_step completes one group of its
// lanes (filling the read buffer for them) and the group's lanes run from
// there (one lane loop per warp point), again, until no group can complete.
// Then the block is checked as in the block rounds (all at one syncthreads,
// or all finished; else the report) and the next round resumes there.
void KernelLowering::emitWarpRounds(IRBuilder<> &Builder, ArrayRef<Value *> Arguments,
                                    Value *const BlockDim[3], bool YInnermost,
                                    Value *BlockContext, Value *Count, Value *Padded,
                                    Value *FrameMemory, BasicBlock *EntryBlock) {
  Type *Pointer = Builder.getPtrTy(), *I32 = Builder.getInt32Ty(),
       *I64 = Builder.getInt64Ty();
  Function *Block = Builder.GetInsertBlock()->getParent();
  unsigned SyncCount = SyncPoints.size();
  auto FrameArrayAt = [&](uint64_t Prefix, const Twine &Name) {
    return Builder.CreateInBoundsGEP(
        Builder.getInt8Ty(), FrameMemory,
        Builder.CreateNUWAdd(Builder.getInt64(FrameHeaderBytes),
                             Builder.CreateNUWMul(Padded, Builder.getInt64(Prefix))),
        Name);
  };
  Value *Next = FrameArrayAt(NextPrefix, "next");
  Value *Masks = FrameArrayAt(MaskPrefix, "masks");
  Value *Exchange = FrameArrayAt(ExchangePrefix, "exchange");
  SmallVector<uint8_t, 16> Kinds(SyncCount + 1, TIDAL_SYNC_BLOCK);
  for (unsigned K = 1; K <= SyncCount; ++K) {
    StringRef Operation = SyncPoints[K - 1].Operation;
    Kinds[K] = Operation == "activemask"           ? TIDAL_SYNC_ACTIVEMASK
               : isWarpSyncOperation(Operation) ? TIDAL_SYNC_WARP
                                                : TIDAL_SYNC_BLOCK;
  }
  auto *KindTable = new GlobalVariable(
      M, ArrayType::get(Builder.getInt8Ty(), Kinds.size()), true,
      GlobalValue::PrivateLinkage, ConstantDataArray::get(Context, Kinds),
      Kernel.getName() + ".sync.kinds");
  Function *Step = getHook(M, CpuWarpStepHook, I32,
                           {Pointer, I32, Pointer, Pointer, Pointer, Pointer});
  Value *Released = Builder.getInt32(TIDAL_SYNC_RELEASED);
  auto StateOf = [&](Value *Thread) {
    return Builder.CreateInBoundsGEP(I32, Next, Builder.CreateZExt(Thread, I64));
  };
  AllocaInst *Lowest = Builder.CreateAlloca(I32, nullptr, "lowest");
  AllocaInst *Highest = Builder.CreateAlloca(I32, nullptr, "highest");
  // Bit w: a thread of warp w stopped at a warp point (at most 32 warps).
  AllocaInst *Waiting = Builder.CreateAlloca(I32, nullptr, "waiting");
  unsigned LastBlockPoint = 0;
  for (unsigned K = 1; K <= SyncCount; ++K)
    if (Kinds[K] == TIDAL_SYNC_BLOCK)
      LastBlockPoint = K;
  BasicBlock *Round = BasicBlock::Create(Context, "round", Block);
  BasicBlock *Done = BasicBlock::Create(Context, "done");
  BasicBlock *Warps = BasicBlock::Create(Context, "warps");
  BasicBlock *Reached = BasicBlock::Create(Context, "round.reached");
  Builder.CreateBr(Round);
  Builder.SetInsertPoint(Round);

  // 1. Every thread from the round's resume point (the start or a block
  //    barrier) to its next sync point: one thread loop per such point, as
  //    in the block rounds (vectorisable).
  PHINode *ResumeAt = Builder.CreatePHI(I32, 3, "resume");
  PHINode *RoundPhase = Builder.CreatePHI(I32, 3, "phase");
  ResumeAt->addIncoming(Builder.getInt32(0), EntryBlock);
  RoundPhase->addIncoming(Builder.getInt32(0), EntryBlock);
  // This round's exchange buffers: threads write buffer %phase and read the
  // other one (as K.thread computes them).
  Value *PhaseOffset = Builder.CreateMul(Builder.CreateZExt(RoundPhase, I64),
                                        Padded);
  Value *Written = Builder.CreateInBoundsGEP(
      I64, Exchange, PhaseOffset, "exchange.written");
  Value *Read = Builder.CreateInBoundsGEP(
      I64, Exchange, Builder.CreateSub(Padded, PhaseOffset), "exchange.read");
  BasicBlock *Invalid = BasicBlock::Create(Context, "round.invalid", Block);
  new UnreachableInst(Context, Invalid);
  Builder.CreateStore(Builder.getInt32(0), Waiting);
  Builder.CreateStore(Builder.getInt32(INT32_MAX), Lowest);
  Builder.CreateStore(Builder.getInt32(INT32_MIN), Highest);
  SwitchInst *Resumes = Builder.CreateSwitch(ResumeAt, Invalid, SyncCount + 1);
  for (unsigned K = 0; K <= SyncCount; ++K) {
    BasicBlock *Region = BasicBlock::Create(Context, "from." + Twine(K), Block);
    Resumes->addCase(Builder.getInt32(K), Region);
    Builder.SetInsertPoint(Region);
    emitThreadLoops(Builder, BlockDim, YInnermost, ThreadAccesses,
                    [&](Value *X, Value *Y, Value *Z) {
                      SmallVector<Value *, 16> ThreadArguments(Arguments);
                      ThreadArguments.append(
                          {X, Y, Z, Builder.getInt32(K), RoundPhase});
                      CallInst *Reached =
                          Builder.CreateCall(Thread, ThreadArguments, "reached");
                      Value *Linear = Builder.CreateNUWAdd(
                          Builder.CreateNUWMul(
                              Builder.CreateNUWAdd(
                                  Builder.CreateNUWMul(Z, BlockDim[1]), Y),
                              BlockDim[0]),
                          X, "thread");
                      StoreInst *Record = Builder.CreateStore(Reached, StateOf(Linear));
                      Value *AtWarpPoint = Builder.CreateZExt(
                          Builder.CreateICmpSGT(Reached,
                                                Builder.getInt32(LastBlockPoint)),
                          I32);
                      Value *WarpBit =
                          Builder.CreateShl(AtWarpPoint, Builder.CreateLShr(Linear, 5));
                      Builder.CreateStore(
                          Builder.CreateOr(Builder.CreateLoad(I32, Waiting), WarpBit),
                          Waiting);
                      Builder.CreateStore(
                          Builder.CreateBinaryIntrinsic(
                              Intrinsic::smin, Builder.CreateLoad(I32, Lowest), Reached),
                          Lowest);
                      Builder.CreateStore(
                          Builder.CreateBinaryIntrinsic(
                              Intrinsic::smax, Builder.CreateLoad(I32, Highest), Reached),
                          Highest);
                      if (ThreadAccesses) {
                        Reached->setMetadata(LLVMContext::MD_access_group,
                                             ThreadAccesses);
                        Record->setMetadata(LLVMContext::MD_access_group,
                                            ThreadAccesses);
                      }
                    });
    Builder.CreateBr(Reached);
  }
  // No thread at a warp point (they come after the block barriers): no
  // warp step.
  Reached->insertInto(Block);
  Builder.SetInsertPoint(Reached);
  BasicBlock *CheckBlock = BasicBlock::Create(Context, "round.check");
  BasicBlock *Some = BasicBlock::Create(Context, "round.some", Block);
  BasicBlock *Together = BasicBlock::Create(Context, "round.together", Block);
  Value *WaitingWarps = Builder.CreateLoad(I32, Waiting, "waiting.warps");
  Value *ALow = Builder.CreateLoad(I32, Lowest, "reached.lowest");
  Value *AHigh = Builder.CreateLoad(I32, Highest, "reached.highest");
  // Every thread of the block at the same warp point (the usual case: all
  // warps run the collective): every warp's group is whole; complete them
  // all at once (one vectorisable copy) and go on with the block rounds.
  Builder.CreateCondBr(
      Builder.CreateAnd(Builder.CreateICmpEQ(ALow, AHigh),
                        Builder.CreateICmpSGT(ALow, Builder.getInt32(LastBlockPoint))),
      Together, Some);
  Builder.SetInsertPoint(Together);
  {
    // The next round (other phase) reads what they wrote; activemask: the
    // existing lanes of each thread's warp, written there first.
    Value *IsMask = Builder.CreateICmpEQ(
        Builder.CreateLoad(Builder.getInt8Ty(),
                           Builder.CreateInBoundsGEP(Builder.getInt8Ty(), KindTable,
                                                     Builder.CreateZExt(ALow, I64))),
        Builder.getInt8(TIDAL_SYNC_ACTIVEMASK));
    BasicBlock *MaskBlock = BasicBlock::Create(Context, "together.activemask", Block);
    BasicBlock *Again = BasicBlock::Create(Context, "together.next", Block);
    Builder.CreateCondBr(IsMask, MaskBlock, Again);
    Builder.SetInsertPoint(MaskBlock);
    CountedLoop Each = beginLoop(Builder, Count, "activemask.thread");
    Value *WarpLanes = Builder.CreateSub(Count, Builder.CreateAnd(Each.Counter, ~31u));
    Value *Existing = Builder.CreateSelect(
        Builder.CreateICmpUGE(WarpLanes, Builder.getInt32(32)), Builder.getInt32(~0u),
        Builder.CreateSub(Builder.CreateShl(Builder.getInt32(1),
                                            Builder.CreateAnd(WarpLanes, 31)),
                          Builder.getInt32(1)));
    Builder.CreateStore(Builder.CreateZExt(Existing, I64),
                        Builder.CreateInBoundsGEP(I64, Written,
                                                  Builder.CreateZExt(Each.Counter, I64)));
    endLoop(Builder, Each);
    Builder.CreateBr(Again);
    Builder.SetInsertPoint(Again);
    ResumeAt->addIncoming(ALow, Again);
    RoundPhase->addIncoming(Builder.CreateXor(RoundPhase, Builder.getInt32(1)), Again);
    Builder.CreateBr(Round);
  }
  Builder.SetInsertPoint(Some);
  Builder.CreateCondBr(Builder.CreateICmpNE(WaitingWarps, Builder.getInt32(0)),
                       Warps, CheckBlock);
  Warps->insertInto(Block);
  Builder.SetInsertPoint(Warps);

  // 2. Each warp with lanes at a warp point until it settles: complete a
  //    group (the lanes at one point), run them from there, again. One lane
  //    loop per warp point, so that each holds only that point's region.
  Value *WarpCount = Builder.CreateLShr(
      Builder.CreateNUWAdd(Count, Builder.getInt32(31)), 5, "warp.count");
  CountedLoop EachWarp = beginLoop(Builder, WarpCount, "warp");
  Value *Base = Builder.CreateShl(EachWarp.Counter, 5, "warp.base");
  Value *Lanes = Builder.CreateBinaryIntrinsic(
      Intrinsic::umin, Builder.CreateSub(Count, Base), Builder.getInt32(32), nullptr,
      "lanes");
  Value *OneRow = Builder.CreateICmpEQ(BlockDim[0], Count, "one.row");
  BasicBlock *StepBlock = BasicBlock::Create(Context, "warp.step", Block);
  BasicBlock *Settled = BasicBlock::Create(Context, "warp.settled", Block);
  Builder.CreateCondBr(
      Builder.CreateTrunc(Builder.CreateLShr(WaitingWarps, EachWarp.Counter),
                          Builder.getInt1Ty()),
      StepBlock, Settled);
  Builder.SetInsertPoint(StepBlock);
  Value *Base64 = Builder.CreateZExt(Base, I64);
  Value *Outcome = Builder.CreateCall(
      Step, {Builder.CreateInBoundsGEP(I32, Next, Base64), Lanes,
             Builder.CreateInBoundsGEP(I32, Masks, Base64),
             Builder.CreateInBoundsGEP(I64, Written, Base64),
             Builder.CreateInBoundsGEP(I64, Read, Base64), KindTable},
      "outcome");
  SwitchInst *Switch = Builder.CreateSwitch(Outcome, Settled, SyncCount + 1);
  Switch->addCase(Builder.getInt32(2), Done); // a lane failed (reported)
  for (unsigned K = 1; K <= SyncCount; ++K) {
    if (Kinds[K] == TIDAL_SYNC_BLOCK)
      continue;
    BasicBlock *Run = BasicBlock::Create(Context, "warp.from." + Twine(K), Block);
    Switch->addCase(Builder.getInt32(TIDAL_SYNC_RELEASED + K), Run);
    Builder.SetInsertPoint(Run);
    CountedLoop EachLane = beginLoop(Builder, Lanes, "lane");
    Value *Linear = Builder.CreateNUWAdd(Base, EachLane.Counter, "thread");
    Value *StateAddress = StateOf(Linear);
    Value *State = Builder.CreateLoad(I32, StateAddress, "state");
    BasicBlock *LaneResume = BasicBlock::Create(Context, "lane.resume", Block);
    BasicBlock *LaneNext = BasicBlock::Create(Context, "lane.next", Block);
    Builder.CreateCondBr(
        Builder.CreateICmpEQ(State, Builder.getInt32(TIDAL_SYNC_RELEASED + K)),
        LaneResume, LaneNext);
    // The thread index: no division in a block of one row.
    Builder.SetInsertPoint(LaneResume);
    BasicBlock *Rows = BasicBlock::Create(Context, "lane.rows", Block);
    BasicBlock *Call = BasicBlock::Create(Context, "lane.call", Block);
    Builder.CreateCondBr(OneRow, Call, Rows);
    Builder.SetInsertPoint(Rows);
    Value *Rest = Builder.CreateUDiv(Linear, BlockDim[0]);
    Value *RowX = Builder.CreateURem(Linear, BlockDim[0]);
    Value *RowY = Builder.CreateURem(Rest, BlockDim[1]);
    Value *RowZ = Builder.CreateUDiv(Rest, BlockDim[1]);
    Builder.CreateBr(Call);
    Builder.SetInsertPoint(Call);
    PHINode *X = Builder.CreatePHI(I32, 2, "x"), *Y = Builder.CreatePHI(I32, 2, "y"),
            *Z = Builder.CreatePHI(I32, 2, "z");
    X->addIncoming(Linear, LaneResume);
    X->addIncoming(RowX, Rows);
    Y->addIncoming(Builder.getInt32(0), LaneResume);
    Y->addIncoming(RowY, Rows);
    Z->addIncoming(Builder.getInt32(0), LaneResume);
    Z->addIncoming(RowZ, Rows);
    SmallVector<Value *, 16> ThreadArguments(Arguments);
    ThreadArguments.append({X, Y, Z, Builder.getInt32(K), RoundPhase});
    Builder.CreateStore(Builder.CreateCall(Thread, ThreadArguments, "reached"),
                        StateAddress);
    Builder.CreateBr(LaneNext);
    Builder.SetInsertPoint(LaneNext);
    endLoop(Builder, EachLane);
    Builder.CreateBr(StepBlock);
  }
  Builder.SetInsertPoint(Settled);
  endLoop(Builder, EachWarp);

  // The block: every thread at the same syncthreads, or all finished.
  Builder.CreateBr(CheckBlock);
  CheckBlock->insertInto(Block);
  Builder.SetInsertPoint(CheckBlock);
  Builder.CreateStore(Builder.getInt32(INT32_MAX), Lowest);
  Builder.CreateStore(Builder.getInt32(INT32_MIN), Highest);
  {
    CountedLoop Each = beginLoop(Builder, Count, "check.thread");
    Value *At = Builder.CreateLoad(I32, StateOf(Each.Counter));
    Builder.CreateStore(Builder.CreateBinaryIntrinsic(
                            Intrinsic::smin, Builder.CreateLoad(I32, Lowest), At),
                        Lowest);
    Builder.CreateStore(Builder.CreateBinaryIntrinsic(
                            Intrinsic::smax, Builder.CreateLoad(I32, Highest), At),
                        Highest);
    endLoop(Builder, Each);
  }
  Value *Low = Builder.CreateLoad(I32, Lowest, "lowest.value");
  Value *High = Builder.CreateLoad(I32, Highest, "highest.value");
  BasicBlock *Agreed = BasicBlock::Create(Context, "round.agreed", Block);
  BasicBlock *Diverged = BasicBlock::Create(Context, "round.diverged", Block);
  BasicBlock *Continue = BasicBlock::Create(Context, "round.next", Block);
  BasicBlock *NotFailed = BasicBlock::Create(Context, "round.ok", Block);
  // A failed thread (-2) has been reported: leave the block.
  Builder.CreateCondBr(Builder.CreateICmpSLT(Low, Builder.getInt32(ThreadFinished)),
                       Done, NotFailed);
  Builder.SetInsertPoint(NotFailed);
  Builder.CreateCondBr(Builder.CreateICmpEQ(Low, High), Agreed, Diverged);
  Builder.SetInsertPoint(Agreed);
  Builder.CreateCondBr(Builder.CreateICmpEQ(Low, Builder.getInt32(ThreadFinished)),
                       Done, Continue);
  Builder.SetInsertPoint(Diverged);
  emitBarrierError(Builder, BlockContext, Next, Count);
  Builder.CreateBr(Done);
  Builder.SetInsertPoint(Continue);
  emitBarrierReduction(Builder, Low, FrameMemory, Padded, Count, RoundPhase,
                       EntryBlock);
  ResumeAt->addIncoming(Low, Builder.GetInsertBlock());
  RoundPhase->addIncoming(Builder.CreateXor(RoundPhase, Builder.getInt32(1)),
                          Builder.GetInsertBlock());
  Builder.CreateBr(Round);
  Done->insertInto(Block);
  Builder.SetInsertPoint(Done);
  Builder.CreateRetVoid();
}

// void @__tidal_block_K(ptr %params, ptr %ctx): loads K's parameters from
// params[i] (cuLaunchKernel's kernelParams), gets the block's shared memory
// and frame from the runtime, and runs K.thread for every thread of the
// block, x innermost so that the x loop can be vectorised. With sync points,
// in rounds: every thread from the same resume point, until all finish;
// threads that reach different sync points are reported.
Function *KernelLowering::createBlockFunction(const Twine &Name) {
  Type *Pointer = PointerType::getUnqual(Context);
  Type *I32 = Type::getInt32Ty(Context), *I64 = Type::getInt64Ty(Context);
  Function *Block = Function::Create(
      FunctionType::get(Type::getVoidTy(Context), {Pointer, Pointer}, false),
      GlobalValue::ExternalLinkage, Name, M);
  AttrBuilder KernelAttributes(Context, Kernel.getAttributes().getFnAttrs());
  KernelAttributes.removeAttribute(Attribute::NoInline)
      .removeAttribute(Attribute::OptimizeNone)
      .removeAttribute(Attribute::AlwaysInline);
  Block->addFnAttrs(KernelAttributes);
  Argument *Params = Block->getArg(0);
  Argument *BlockContext = Block->getArg(1);
  Params->setName("params");
  BlockContext->setName("ctx");
  Block->addParamAttr(0, Attribute::NoCapture);
  Block->addParamAttr(0, Attribute::ReadOnly);
  Block->addParamAttr(1, Attribute::NoAlias);
  Block->addParamAttr(1, Attribute::NoCapture);
  Block->addParamAttr(1, Attribute::ReadOnly);

  BasicBlock *EntryBlock = BasicBlock::Create(Context, "entry", Block);
  IRBuilder<> Builder(EntryBlock);
  // With debug info, an artificial subprogram at the kernel's line, so that
  // K.thread's locations stay meaningful once it is inlined here.
  std::optional<DIBuilder> Debugging;
  DISubprogram *Scope = nullptr;
  if (DISubprogram *KernelScope = Kernel.getSubprogram()) {
    Debugging.emplace(M, /*AllowUnresolved=*/false, KernelScope->getUnit());
    Scope = Debugging->createFunction(
        KernelScope->getFile(), Name.str(), StringRef(), KernelScope->getFile(),
        KernelScope->getLine(),
        Debugging->createSubroutineType(Debugging->getOrCreateTypeArray({})),
        KernelScope->getScopeLine(), DINode::FlagArtificial,
        DISubprogram::SPFlagDefinition);
    Block->setSubprogram(Scope);
    Builder.SetCurrentDebugLocation(
        DILocation::get(Context, KernelScope->getLine(), 0, Scope));
  }

  // 1. The parameter values: params[i] points at the i-th.
  SmallVector<Value *, 16> Arguments;
  for (Argument &Parameter : Kernel.args()) {
    StringRef ParameterName = Parameter.getName();
    Value *Slot = Builder.CreateConstInBoundsGEP1_64(
        Pointer, Params, Parameter.getArgNo(), ParameterName + ".slot");
    Value *Address =
        Builder.CreateLoad(Pointer, Slot, ParameterName + ".addr");
    Arguments.push_back(
        Builder.CreateLoad(Parameter.getType(), Address, ParameterName));
  }

  // 2. The trip counts: the block's size.
  const char *BlockDimNames[3] = {"ntid.x", "ntid.y", "ntid.z"};
  Value *BlockDim[3];
  for (unsigned Dimension = 0; Dimension < 3; ++Dimension)
    BlockDim[Dimension] = loadContextField(Builder, BlockContext, BlockDimField,
                                           Dimension, BlockDimNames[Dimension]);
  Value *Count = Builder.CreateNUWMul(
      Builder.CreateNUWMul(BlockDim[0], BlockDim[1]), BlockDim[2], "nthreads");
  Value *Padded = Builder.CreateAnd(
      Builder.CreateNUWAdd(Builder.CreateZExt(Count, I64), Builder.getInt64(15)),
      Builder.getInt64(~uint64_t(15)), "nthreads.padded");

  // 3. The block's shared memory (static, then dynamic; poisoned in debug
  //    mode) and the frame of its threads, both owned by the runtime.
  Value *SharedMemory = ConstantPointerNull::get(cast<PointerType>(Pointer));
  if (UsesShared) {
    Function *Hook = getHook(M, CpuSharedHook, Pointer, {Pointer, I64, I32});
    Hook->addRetAttr(Attribute::NoAlias);
    Hook->addParamAttr(0, Attribute::NoCapture);
    SharedMemory = Builder.CreateCall(
        Hook, {BlockContext, Builder.getInt64(StaticSharedBytes),
               Builder.getInt32(Debug)},
        "shared");
  }
  Value *FrameMemory = ConstantPointerNull::get(cast<PointerType>(Pointer));
  if (!SyncPoints.empty()) {
    Function *Hook = getHook(M, CpuFrameHook, Pointer, {Pointer, I64});
    Hook->addRetAttr(Attribute::NoAlias);
    Hook->addParamAttr(0, Attribute::NoCapture);
    Value *Bytes = Builder.CreateNUWAdd(
        Builder.getInt64(FrameHeaderBytes),
        Builder.CreateNUWMul(Padded, Builder.getInt64(FrameSlotBytes)));
    FrameMemory = Builder.CreateCall(Hook, {BlockContext, Bytes}, "frame");
  }
  Value *UniformMemory = ConstantPointerNull::get(cast<PointerType>(Pointer));
  if (UniformBytes) {
    auto *Scalars = Builder.CreateAlloca(ArrayType::get(Builder.getInt8Ty(), UniformBytes),
                                         nullptr, "uniforms");
    Scalars->setAlignment(Align(16));
    UniformMemory = Scalars;
  }
  Arguments.append({BlockContext, SharedMemory, FrameMemory, UniformMemory});

  // 4. Without sync points: for tid.z, for tid.y, for tid.x: K.thread.
  //    (y innermost for kernels whose accesses are contiguous along y).
  const unsigned FirstIndex = Kernel.arg_size() + 4; // tid.x of K.thread
  const bool YInnermost = prefersYInnermost(*Thread, Thread->getArg(FirstIndex),
                                            Thread->getArg(FirstIndex + 1));
  if (SyncPoints.empty()) {
    emitThreadLoops(Builder, BlockDim, YInnermost, ThreadAccesses, [&](Value *X, Value *Y, Value *Z) {
      SmallVector<Value *, 16> ThreadArguments(Arguments);
      ThreadArguments.append({X, Y, Z, Builder.getInt32(0), Builder.getInt32(0)});
      CallInst *Run = Builder.CreateCall(Thread, ThreadArguments);
      if (ThreadAccesses)
        Run->setMetadata(LLVMContext::MD_access_group, ThreadAccesses);
    });
    Builder.CreateRetVoid();
    if (Debugging)
      Debugging->finalizeSubprogram(Scope);
    return Block;
  }

  // 5. With warp sync points: warp rounds (emitWarpRounds).
  if (WarpRounds) {
    emitWarpRounds(Builder, Arguments, BlockDim, YInnermost, BlockContext, Count,
                   Padded, FrameMemory, EntryBlock);
    if (Debugging)
      Debugging->finalizeSubprogram(Scope);
    return Block;
  }

  // 6. With sync points, rounds: each thread runs from resume point r to
  //    its next sync point, whose number it returns (stored in next[t]); the
  //    round's lowest and highest return values say whether all agree.
  unsigned SyncCount = SyncPoints.size();
  Value *Next = Builder.CreateInBoundsGEP(
      Builder.getInt8Ty(), FrameMemory,
      Builder.CreateNUWAdd(Builder.getInt64(FrameHeaderBytes),
                           Builder.CreateNUWMul(Padded, Builder.getInt64(NextPrefix))),
      "next");
  AllocaInst *Lowest = Builder.CreateAlloca(I32, nullptr, "lowest");
  AllocaInst *Highest = Builder.CreateAlloca(I32, nullptr, "highest");
  BasicBlock *Round = BasicBlock::Create(Context, "round", Block);
  Builder.CreateBr(Round);
  Builder.SetInsertPoint(Round);
  PHINode *ResumeAt = Builder.CreatePHI(I32, 2, "resume");
  PHINode *RoundPhase = Builder.CreatePHI(I32, 2, "phase");
  ResumeAt->addIncoming(Builder.getInt32(0), EntryBlock);
  RoundPhase->addIncoming(Builder.getInt32(0), EntryBlock);
  Builder.CreateStore(Builder.getInt32(INT32_MAX), Lowest);
  Builder.CreateStore(Builder.getInt32(INT32_MIN), Highest);
  BasicBlock *Invalid = BasicBlock::Create(Context, "round.invalid", Block);
  new UnreachableInst(Context, Invalid);
  BasicBlock *Check = BasicBlock::Create(Context, "round.check");
  SwitchInst *Switch = Builder.CreateSwitch(ResumeAt, Invalid, SyncCount + 1);
  for (unsigned K = 0; K <= SyncCount; ++K) {
    BasicBlock *Region =
        BasicBlock::Create(Context, "from." + Twine(K), Block);
    Switch->addCase(Builder.getInt32(K), Region);
    Builder.SetInsertPoint(Region);
    emitThreadLoops(Builder, BlockDim, YInnermost, ThreadAccesses, [&](Value *X, Value *Y, Value *Z) {
      SmallVector<Value *, 16> ThreadArguments(Arguments);
      ThreadArguments.append({X, Y, Z, Builder.getInt32(K), RoundPhase});
      CallInst *Reached = Builder.CreateCall(Thread, ThreadArguments, "reached");
      if (ThreadAccesses)
        Reached->setMetadata(LLVMContext::MD_access_group, ThreadAccesses);
      Value *Linear = Builder.CreateNUWAdd(
          Builder.CreateNUWMul(
              Builder.CreateNUWAdd(Builder.CreateNUWMul(Z, BlockDim[1]), Y),
              BlockDim[0]),
          X, "thread");
      StoreInst *Record = Builder.CreateStore(
          Reached, Builder.CreateInBoundsGEP(I32, Next, Builder.CreateZExt(Linear, I64)));
      if (ThreadAccesses)
        Record->setMetadata(LLVMContext::MD_access_group, ThreadAccesses);
      Builder.CreateStore(
          Builder.CreateBinaryIntrinsic(Intrinsic::smin,
                                        Builder.CreateLoad(I32, Lowest), Reached),
          Lowest);
      Builder.CreateStore(
          Builder.CreateBinaryIntrinsic(Intrinsic::smax,
                                        Builder.CreateLoad(I32, Highest), Reached),
          Highest);
    });
    Builder.CreateBr(Check);
  }
  Check->insertInto(Block);
  Builder.SetInsertPoint(Check);
  Value *Low = Builder.CreateLoad(I32, Lowest, "lowest.value");
  Value *High = Builder.CreateLoad(I32, Highest, "highest.value");
  BasicBlock *Done = BasicBlock::Create(Context, "done", Block);
  BasicBlock *Agreed = BasicBlock::Create(Context, "round.agreed", Block);
  BasicBlock *Diverged = BasicBlock::Create(Context, "round.diverged", Block);
  BasicBlock *NotFailed = BasicBlock::Create(Context, "round.ok", Block);
  BasicBlock *Continue = BasicBlock::Create(Context, "round.next", Block);
  // A failed thread (-2) has been reported: leave the block.
  Builder.CreateCondBr(
      Builder.CreateICmpSLT(Low, Builder.getInt32(ThreadFinished)), Done,
      NotFailed);
  Builder.SetInsertPoint(NotFailed);
  Builder.CreateCondBr(Builder.CreateICmpEQ(Low, High), Agreed, Diverged);
  Builder.SetInsertPoint(Agreed);
  Builder.CreateCondBr(Builder.CreateICmpEQ(Low, Builder.getInt32(ThreadFinished)),
                       Done, Continue);

  // Threads at different sync points (or some finished): report them all.
  Builder.SetInsertPoint(Diverged);
  emitBarrierError(Builder, BlockContext, Next, Count);
  Builder.CreateBr(Done);

  // Everyone at sync point `Low`: the next round resumes there.
  Builder.SetInsertPoint(Continue);
  // What the threads stored of the block-uniform values is what the next
  // round reads.
  for (const UniformSlot &Slot : UniformSlots)
    Builder.CreateAlignedStore(
        Builder.CreateAlignedLoad(
            Slot.ValueType,
            Builder.CreateConstInBoundsGEP1_64(Builder.getInt8Ty(), UniformMemory,
                                               Slot.Offset + Slot.Stride),
            Align(16)),
        Builder.CreateConstInBoundsGEP1_64(Builder.getInt8Ty(), UniformMemory,
                                           Slot.Offset),
        Align(16));
  emitBarrierReduction(Builder, Low, FrameMemory, Padded, Count, RoundPhase,
                       EntryBlock);
  ResumeAt->addIncoming(Low, Builder.GetInsertBlock());
  RoundPhase->addIncoming(Builder.CreateXor(RoundPhase, Builder.getInt32(1)),
                          Builder.GetInsertBlock());
  Builder.CreateBr(Round);

  Builder.SetInsertPoint(Done);
  Builder.CreateRetVoid();
  if (Debugging)
    Debugging->finalizeSubprogram(Scope);
  return Block;
}

// For a kernel with atomics on global memory: __tidal_block_K runs
// `.atomic` (the block function as built) or, when the context says that no
// other host thread runs a block of this launch (TIDAL_CONTEXT_ALONE),
// `.alone`, the same block function over a copy of K.thread whose atomics
// are plain read-modify-writes: a locked instruction costs ~2.5 ns and the
// atomics' cache lines stay in one core either way.
void KernelLowering::addAloneVariant(const std::string &BlockName) {
  if (none_of(instructions(*Thread), [](Instruction &I) {
        return isa<AtomicRMWInst, AtomicCmpXchgInst>(I);
      }))
    return;
  Function *Atomic = M.getFunction(BlockName);
  Atomic->setName(BlockName + ".atomic");
  Atomic->setLinkage(GlobalValue::InternalLinkage);
  ValueToValueMapTy Map;
  Function *Plain = CloneFunction(Thread, Map);
  Plain->setName(Thread->getName() + ".alone");
  for (Instruction &I : make_early_inc_range(instructions(*Plain)))
    if (auto *RMW = dyn_cast<AtomicRMWInst>(&I))
      lowerAtomicRMWInst(RMW);
    else if (auto *Exchange = dyn_cast<AtomicCmpXchgInst>(&I))
      lowerAtomicCmpXchgInst(Exchange);
  Function *Shared = Thread;
  Thread = Plain;
  Function *Alone = createBlockFunction(BlockName + ".alone");
  Thread = Shared;
  Alone->setLinkage(GlobalValue::InternalLinkage);

  Function *Dispatch = Function::Create(Atomic->getFunctionType(),
                                        GlobalValue::ExternalLinkage, BlockName, M);
  Dispatch->copyAttributesFrom(Atomic);
  Dispatch->setLinkage(GlobalValue::ExternalLinkage);
  Argument *Params = Dispatch->getArg(0), *BlockContext = Dispatch->getArg(1);
  Params->setName("params");
  BlockContext->setName("ctx");
  IRBuilder<> B(BasicBlock::Create(Context, "entry", Dispatch));
  Value *FlagsAddress = B.CreateStructGEP(getContextType(Context), BlockContext, 3);
  LoadInst *Flags = B.CreateAlignedLoad(B.getInt32Ty(), FlagsAddress, Align(4), "flags");
  Flags->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(Context, {}));
  BasicBlock *RunAlone = BasicBlock::Create(Context, "alone", Dispatch);
  BasicBlock *RunShared = BasicBlock::Create(Context, "shared", Dispatch);
  B.CreateCondBr(B.CreateICmpNE(B.CreateAnd(Flags, TIDAL_CONTEXT_ALONE), B.getInt32(0)),
                 RunAlone, RunShared);
  for (auto [Block, Callee] : {std::pair(RunAlone, Alone), std::pair(RunShared, Atomic)}) {
    B.SetInsertPoint(Block);
    B.CreateCall(Callee, {Params, BlockContext})->setTailCall();
    B.CreateRetVoid();
  }
  // The runtime runs such kernels' launches on one host thread (docs).
  M.getOrInsertNamedMetadata(RunAloneMetadataName)
      ->addOperand(MDNode::get(Context, {ValueAsMetadata::get(Dispatch)}));
}

// Rewrites !tidal.kernels without the kernels in `Lowered`; drops it if none
// remain.
void removeFromKernelList(Module &M, const SmallPtrSetImpl<Function *> &Lowered) {
  NamedMDNode *List = M.getNamedMetadata(KernelsMetadataName);
  if (!List)
    return;
  SmallVector<MDNode *, 8> Remaining;
  for (MDNode *Entry : List->operands())
    if (Entry->getNumOperands() == 0 ||
        !Lowered.contains(
            mdconst::dyn_extract_or_null<Function>(Entry->getOperand(0))))
      Remaining.push_back(Entry);
  List->clearOperands();
  for (MDNode *Entry : Remaining)
    List->addOperand(Entry);
  if (Remaining.empty())
    List->eraseFromParent();
}

} // namespace

bool lowerHost(Module &M) {
  SmallVector<Function *, 8> Kernels = getKernels(M);
  bool Debug = isDebugModule(M);

  // 1. Inline the functions that use markers into the kernels calling them.
  //    Recursive ones cannot be; their markers stay, and are reported.
  SmallPtrSet<Function *, 16> Inlinable = findMarkerUsers(M);
  for (Function *F : findRecursiveFunctions(M))
    Inlinable.erase(F);
  for (Function *Kernel : Kernels)
    Inlinable.erase(Kernel);
  SmallPtrSet<Function *, 16> Inlined;
  for (Function *Kernel : Kernels)
    if (!Kernel->isDeclaration())
      inlineMarkerUsers(*Kernel, Inlinable, Inlined);

  // 2. K -> K.thread + __tidal_block_K.
  SmallPtrSet<Function *, 8> Lowered;
  for (Function *Kernel : Kernels) {
    std::string BlockName = (TIDAL_BLOCK_PREFIX + Kernel->getName()).str();
    if (Kernel->isDeclaration() || !hasOnlyHostLowerableMarkers(*Kernel))
      continue;
    std::string Problem;
    if (!Kernel->use_empty())
      Problem = "it is used other than from !" +
                std::string(KernelsMetadataName) + " (kernels cannot be called)";
    else if (Kernel->isVarArg())
      Problem = "kernels cannot be variadic";
    else if (M.getNamedValue(BlockName))
      Problem = "the module already has a global named '" + BlockName + "'";
    if (!Problem.empty()) {
      reportError(M.getContext(),
                  "cannot lower kernel '" + Kernel->getName() + "': " + Problem);
      continue;
    }
    KernelLowering Lowering(*Kernel, Debug);
    Lowering.createThreadFunction();
    Lowering.lowerMarkers();
    Lowering.makeResumable();
    Lowering.markParallelAccesses();
    Lowering.createBlockFunction(BlockName);
    Lowering.addAloneVariant(BlockName);
    Lowered.insert(Kernel);
  }

  // 3. Erase the kernels, then the inlined functions nobody calls any more
  //    (markers mean nothing outside a kernel), then unused markers.
  bool Changed = !Inlined.empty() || !Lowered.empty();
  removeFromKernelList(M, Lowered);
  for (Function *Kernel : Lowered)
    Kernel->eraseFromParent();
  for (bool Erased = true; Erased;) {
    SmallVector<Function *, 8> Dead;
    for (Function *F : Inlined)
      if (F->use_empty())
        Dead.push_back(F);
    for (Function *F : Dead) {
      Inlined.erase(F);
      F->eraseFromParent();
    }
    Erased = !Dead.empty();
  }
  for (Function &Marker : make_early_inc_range(M))
    if (isMarker(Marker) && Marker.isDeclaration() && Marker.use_empty()) {
      Marker.eraseFromParent();
      Changed = true;
    }
  return Changed;
}


} // namespace tidal
