// The host lowering's first two stages (LowerHost.h): createThreadFunction
// (K.thread, K's body with the thread's parameters) and lowerMarkers (every
// marker in it lowered for the host: special registers from the context and
// the thread index, shared memory at offsets of the block's memory, atomics
// and math by OperationRules.h, failures to the runtime; the sync points,
// the rows of the marker table's sync-point column, collected for
// makeResumable, and the choice between block and warp rounds).

#include "LowerHost.h"

#define DEBUG_TYPE "tidal-lower-host"

TIDAL_STATISTIC(NumSyncPoints, "Sync points (rounds split there)");
TIDAL_STATISTIC(NumWarpRoundKernels, "Kernels that run warp rounds");
TIDAL_STATISTIC(NumStaticSharedBytes, "Static shared bytes of the lowered kernels");

namespace tidal::host_lowering {

// K.thread: K's body with the signature of the file comment; returns -1
// where K returned. The dispatch entry (later a switch over %resume)
// computes the values every part of the thread may use.
ThreadFunction createThreadFunction(Function &Kernel) {
  Module &M = *Kernel.getParent();
  LLVMContext &Context = M.getContext();
  Type *I32 = Type::getInt32Ty(Context);
  Type *Pointer = PointerType::getUnqual(Context);
  SmallVector<Type *, 16> Parameters(Kernel.getFunctionType()->params());
  Parameters.append({Pointer, Pointer, Pointer, Pointer, I32, I32, I32, I32, I32});
  Function *Thread = Function::Create(FunctionType::get(I32, Parameters, false),
                                      GlobalValue::InternalLinkage,
                                      Kernel.getName() + ".thread", M);
  ThreadFunction Result;
  Result.Kernel = &Kernel;
  Result.Thread = Thread;
  // K's parameters come first, then the thread's.
  auto ThreadParameter = [&](unsigned Index, const char *Name) {
    Argument *Parameter = Thread->getArg(Kernel.arg_size() + Index);
    Parameter->setName(Name);
    return Parameter;
  };
  Result.ContextPointer = ThreadParameter(0, "ctx");
  Result.Shared = ThreadParameter(1, "shared");
  Result.Frame = ThreadParameter(2, "frame");
  Result.Uniforms = ThreadParameter(3, "uniforms");
  Result.ThreadIndex[0] = ThreadParameter(4, "tid.x");
  Result.ThreadIndex[1] = ThreadParameter(5, "tid.y");
  Result.ThreadIndex[2] = ThreadParameter(6, "tid.z");
  Result.Resume = ThreadParameter(7, "resume");
  Result.Phase = ThreadParameter(8, "phase");

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
  BasicBlock *Body = Result.Body = &Thread->getEntryBlock();
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
  BasicBlock *Entry = Result.Entry =
      BasicBlock::Create(Context, "thread.entry", Thread, Body);
  BranchInst::Create(Body, Entry);
  // Static allocas stay in the entry block.
  for (Instruction &I : make_early_inc_range(*Body))
    if (auto *Alloca = dyn_cast<AllocaInst>(&I); Alloca && Alloca->isStaticAlloca())
      Alloca->moveBefore(Entry->getTerminator());
  return Result;
}

namespace {

// lowerMarkers' work on one kernel: what it reads (K.thread, its entry
// values) and what it produces (Lowering).
struct MarkerLowerer {
  ThreadFunction &Thread;
  EntryValues &Values;
  MarkerLowering &Lowering;
  Module &M;
  LLVMContext &Context;
  const DataLayout &DL;

  MarkerLowerer(ThreadFunction &Thread, EntryValues &Values, MarkerLowering &Lowering)
      : Thread(Thread), Values(Values), Lowering(Lowering),
        M(*Thread.Thread->getParent()), Context(M.getContext()),
        DL(M.getDataLayout()) {}

  bool lowerMarkerCall(CallInst &Call, SmallVectorImpl<CallInst *> &SharedCalls);
  Value *lowerAtomic(IRBuilder<> &B, CallInst &Call, const AtomicRule &Rule);
  Value *lowerMath(IRBuilder<> &B, CallInst &Call, MarkerKind Kind,
                   const MathRule &Rule);
  void lowerFailure(CallInst &Call, MarkerKind Kind);
  void lowerSharedCalls(ArrayRef<CallInst *> Calls);
  void collectSyncPoints();
  void chooseRounds();
};

Value *MarkerLowerer::lowerAtomic(IRBuilder<> &B, CallInst &Call,
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
  else if (Rule.Shape == AtomicRule::OrderedFloatLoop)
    New = emitOrderedMinMaxValue(B, Rule, Old, Arguments[0]);
  else
    New = buildAtomicRMWValue(Rule.Operation, B, Old,
                              formAtomicOperand(B, Rule, Arguments[0]));
  StoreInst *Store = B.CreateAlignedStore(New, Pointer, Alignment);
  Lowering.SerialisedAtomics.insert(Old);
  Lowering.SerialisedAtomics.insert(Store);
  return Old;
}

Value *MarkerLowerer::lowerMath(IRBuilder<> &B, CallInst &Call,
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
  // ... else libm from the process: tanf/tan, atan2f/atan2, ...; cbrt is
  // tidal's host libdevice's (linked after this pass: libm's is 1 ulp off
  // on exact cubes, cbrt(-27.0) = -3.0000000000000004).
  std::string Name = (Rule.LibraryName + (T->isFloatTy() ? "f" : "")).str();
  if (Kind == MarkerKind::MathCbrt)
    Name = "__nv_" + Name;
  SmallVector<Type *, 2> Parameters(Call.arg_size(), T);
  FunctionCallee Libm =
      M.getOrInsertFunction(Name, FunctionType::get(T, Parameters, false));
  SmallVector<Value *, 2> Arguments(Call.args());
  return B.CreateCall(Libm, Arguments);
}

// bounds.error / assert.fail: report to the runtime (which records the
// first failure of the launch), then leave the thread with -2.
void MarkerLowerer::lowerFailure(CallInst &Call, MarkerKind Kind) {
  Argument *ContextPointer = Thread.ContextPointer;
  Argument *const *ThreadIndex = Thread.ThreadIndex;
  IRBuilder<> B(&Call);
  Type *Pointer = B.getPtrTy(), *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  if (Kind == MarkerKind::BoundsError || Kind == MarkerKind::BoundsFault) {
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
bool MarkerLowerer::lowerMarkerCall(CallInst &Call,
                                    SmallVectorImpl<CallInst *> &SharedCalls) {
  IRBuilder<> B(&Call);
  Value *Result = nullptr;
  Argument *const *ThreadIndex = Thread.ThreadIndex;
  MarkerName Marker = *getMarkerCall(Call);
  if (auto Register = getSpecialRegister(Marker.Kind)) {
    // index within block: parameters; sizes and block index: the context
    switch (Register->Register) {
    case SpecialRegister::ThreadIndex:
      Result = ThreadIndex[Register->Dimension];
      break;
    case SpecialRegister::BlockDim:
      Result = Values.contextField(BlockDimField, Register->Dimension);
      break;
    case SpecialRegister::BlockIndex:
      Result = Values.contextField(BlockIndexField, Register->Dimension);
      break;
    case SpecialRegister::GridDim:
      Result = Values.contextField(GridDimField, Register->Dimension);
      break;
    }
  } else {
    switch (Marker.Kind) {
    case MarkerKind::SharedArray:
    case MarkerKind::SharedDynamic:
      SharedCalls.push_back(&Call);
      return false;
    // the launch's dynamic shared bytes: ctx->dynamic_shared_bytes
    case MarkerKind::SharedDynamicBytes: {
      Value *Address = B.CreateStructGEP(getContextType(Context), Thread.ContextPointer, 5,
                                         "dynamic_shared_bytes.addr");
      LoadInst *Bytes = B.CreateAlignedLoad(B.getInt64Ty(), Address, Align(8),
                                            "dynamic_shared_bytes");
      Bytes->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(Context, {}));
      Result = Bytes;
      break;
    }
    // lanes of the warp: linear thread index modulo 32
    case MarkerKind::WarpSize:
      Result = B.getInt32(32);
      break;
    case MarkerKind::LaneId:
    case MarkerKind::LaneMaskLess: {
      Value *Lane = B.CreateAnd(Values.linearThread(), 31, "laneid");
      Result = Marker.Kind == MarkerKind::LaneId
                   ? Lane
                   : B.CreateSub(B.CreateShl(B.getInt32(1), Lane), B.getInt32(1));
      break;
    }
    // fences: a block's threads share one host thread
    case MarkerKind::ThreadFenceBlock:
      B.CreateFence(AtomicOrdering::SequentiallyConsistent,
                    SyncScope::SingleThread);
      break;
    case MarkerKind::ThreadFence:
    case MarkerKind::ThreadFenceSystem:
      B.CreateFence(AtomicOrdering::SequentiallyConsistent);
      break;
    // sleep: CUDA allows any duration from 0 to twice the request, and the
    // threads of a block take turns on one host thread, so it is 0 here
    case MarkerKind::NanoSleep:
      break;
    // the kernel uses the grid group: its launches are cooperative (the
    // dispatcher reads that from the marker IR); nothing to run
    case MarkerKind::GridGroup:
      break;
    // memory
    case MarkerKind::LocalArray: {
      // valid: hasOnlyHostLowerableMarkers checked the kernel's calls
      ArrayArguments Size = *getArrayArguments(Call);
      IRBuilder<> EntryB = Values.entryBuilder();
      AllocaInst *Array = EntryB.CreateAlloca(
          ArrayType::get(B.getInt8Ty(), std::max<uint64_t>(Size.Bytes, 1)),
          nullptr, "local");
      Array->setAlignment(Size.Alignment);
      Result = Array;
      break;
    }
    case MarkerKind::ConstArray:
      Result = Call.getArgOperand(0);
      break;
    // cache-hinted accesses: plain loads and stores (the host has no such
    // hints; the values are the same)
    case MarkerKind::LoadCacheAll:
    case MarkerKind::LoadCacheGlobal:
    case MarkerKind::LoadCacheStreaming:
    case MarkerKind::LoadLastUse:
      Result = B.CreateAlignedLoad(Call.getType(), Call.getArgOperand(0),
                                   Align(Call.getType()->getPrimitiveSizeInBits() / 8));
      break;
    case MarkerKind::LoadDontCache: // ld.cv: fetched again at each use, as volatile
      Result = B.CreateAlignedLoad(Call.getType(), Call.getArgOperand(0),
                                   Align(Call.getType()->getPrimitiveSizeInBits() / 8),
                                   /*isVolatile=*/true);
      break;
    case MarkerKind::StoreCacheGlobal:
    case MarkerKind::StoreCacheStreaming:
    case MarkerKind::StoreWriteBack:
    case MarkerKind::StoreWriteThrough: {
      Value *Stored = Call.getArgOperand(1);
      B.CreateAlignedStore(Stored, Call.getArgOperand(0),
                           Align(Stored->getType()->getPrimitiveSizeInBits() / 8));
      break;
    }
    // output and failures
    case MarkerKind::Print: {
      Function *Hook = getHook(M, CpuPrintHook, B.getVoidTy(), {B.getPtrTy()}, true);
      SmallVector<Value *, 8> Arguments(Call.args());
      B.CreateCall(Hook, Arguments);
      break;
    }
    case MarkerKind::BoundsError:
    case MarkerKind::BoundsFault:
    case MarkerKind::AssertFail:
      lowerFailure(Call, Marker.Kind);
      return true;
    default:
      // sync points: collected by lowerMarkers, lowered by makeResumable
      if (getSyncPointKind(Marker.Kind) != SyncPointKind::NoSync)
        return false;
      // atomics and math: the rules shared with NVPTX (OperationRules.h)
      if (std::optional<AtomicRule> Atomic = getAtomicRule(Marker))
        Result = lowerAtomic(B, Call, *Atomic);
      else if (std::optional<MathRule> Math = getMathRule(Marker.Kind))
        Result = lowerMath(B, Call, Marker.Kind, *Math);
      else
        return false;
    }
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
void MarkerLowerer::lowerSharedCalls(ArrayRef<CallInst *> Calls) {
  Function &Kernel = *Thread.Kernel;
  Argument *Shared = Thread.Shared;
  uint64_t &StaticSharedBytes = Lowering.StaticSharedBytes;
  uint64_t Offset = 0;
  IRBuilder<> B = Values.entryBuilder();
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
  NumStaticSharedBytes += StaticSharedBytes;
  LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Kernel.getName() << "': "
                    << StaticSharedBytes << " bytes of static shared memory\n");
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
  Lowering.UsesShared = !Calls.empty();
}

// The sync points: the marker calls left, all of the table's sync-point
// rows (the others are left for tidal-verify-markers).
void MarkerLowerer::collectSyncPoints() {
  for (Instruction &I : instructions(*Thread.Thread))
    if (auto *Call = dyn_cast<CallInst>(&I))
      if (std::optional<MarkerName> Marker = getMarkerCall(*Call)) {
        SyncPointKind Sync = getSyncPointKind(Marker->Kind);
        if (Sync == SyncPointKind::NoSync)
          continue;
        std::string Location = describeLocation(*Call);
        std::string Name = Call->getCalledFunction()
                               ->getName()
                               .drop_front(StringRef(MarkerPrefix).size())
                               .str();
        std::replace(Name.begin(), Name.end(), '.', '_');
        Lowering.SyncPoints.push_back(
            {Call, Marker->Kind, Sync,
             Name + (Location.empty() ? "" : " at " + Location)});
      }
}

// Warp rounds only for a warp sync point that a divergent branch controls
// (`if tid < 32: shfl...`, or after an early return): one that every
// thread of the block reaches is completed for the whole block at once, as
// a syncthreads (block rounds, the faster code). activemask there is every
// existing lane of the warp: no sync point.
void MarkerLowerer::chooseRounds() {
  SmallVectorImpl<SyncPoint> &SyncPoints = Lowering.SyncPoints;
  Function &Kernel = *Thread.Kernel;
  auto IsWarpPoint = [](const SyncPoint &P) { return isWarpSyncPoint(P.Sync); };
  if (any_of(SyncPoints, IsWarpPoint)) {
    SmallPtrSet<const BasicBlock *, 32> Controlled;
    findUniformValues(*Thread.Thread,
                      {Thread.ThreadIndex[0], Thread.ThreadIndex[1],
                       Thread.ThreadIndex[2]},
                      &Controlled);
    Lowering.WarpRounds = any_of(SyncPoints, [&](const SyncPoint &P) {
      return IsWarpPoint(P) && Controlled.contains(P.Call->getParent());
    });
    LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Kernel.getName() << "' runs "
                      << (Lowering.WarpRounds
                              ? "warp rounds: a warp sync point is "
                                "under divergent control"
                              : "block rounds: every warp sync point is "
                                "reached by the whole block")
                      << "\n");
    if (Lowering.WarpRounds) {
      ++NumWarpRoundKernels;
    } else {
      for (SyncPoint &Point : SyncPoints)
        if (Point.Sync == SyncPointKind::WarpActiveMask) {
          IRBuilder<> B(Point.Call);
          Value *Linear = Values.linearThread();
          Value *Lanes = B.CreateSub(Values.threadCount(), B.CreateAnd(Linear, ~31u));
          Value *Partial = B.CreateSub(
              B.CreateShl(B.getInt32(1), B.CreateAnd(Lanes, 31)), B.getInt32(1));
          Value *Mask = B.CreateSelect(B.CreateICmpUGE(Lanes, B.getInt32(32)),
                                       B.getInt32(~0u), Partial, "activemask");
          LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Kernel.getName() << "': "
                            << Point.Description
                            << " is every existing lane of the warp, "
                               "not a sync point\n");
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
  if (Lowering.WarpRounds) {
    DenseMap<const BasicBlock *, unsigned> Order;
    for (BasicBlock *Block : ReversePostOrderTraversal<Function *>(Thread.Thread))
      Order.try_emplace(Block, Order.size());
    llvm::stable_sort(SyncPoints, [&](const SyncPoint &A, const SyncPoint &B) {
      bool WarpA = IsWarpPoint(A), WarpB = IsWarpPoint(B);
      if (WarpA != WarpB)
        return WarpB;
      return Order.lookup(A.Call->getParent()) < Order.lookup(B.Call->getParent());
    });
  }
}

} // namespace

// Lowers every well-formed marker call of K.thread but the sync points,
// which it collects (makeResumable lowers them), and chooses the rounds.
MarkerLowering lowerMarkers(ThreadFunction &Thread, EntryValues &Values) {
  MarkerLowering Lowering;
  MarkerLowerer Lowerer(Thread, Values, Lowering);
  SmallVector<CallInst *, 32> Calls;
  for (Instruction &I : instructions(*Thread.Thread))
    if (auto *Call = dyn_cast<CallInst>(&I))
      if (getCalledMarker(*Call))
        Calls.push_back(Call);
  SmallVector<CallInst *, 8> SharedCalls;
  for (CallInst *Call : Calls)
    Lowerer.lowerMarkerCall(*Call, SharedCalls);
  Lowerer.lowerSharedCalls(SharedCalls);
  removeUnreachableBlocks(*Thread.Thread);
  Lowerer.collectSyncPoints();
  Lowerer.chooseRounds();
  Argument *const *Index = Thread.ThreadIndex;
  Lowering.ThreadsMayFinishEarly =
      any_of(Lowering.SyncPoints,
             [](const SyncPoint &P) { return P.Sync == SyncPointKind::GridBarrier; }) ||
      mayFinishBeforeSyncPoint(*Thread.Thread, {Index[0], Index[1], Index[2]},
                               Lowering.SyncPoints);
  LLVM_DEBUG(if (Lowering.ThreadsMayFinishEarly) dbgs()
             << DEBUG_TYPE ": '" << Thread.Kernel->getName()
             << "': a thread may finish while others go on to a sync point: "
                "the rounds skip finished threads\n");
  NumSyncPoints += Lowering.SyncPoints.size();
  LLVM_DEBUG({
    for (auto [Index, Point] : enumerate(Lowering.SyncPoints))
      dbgs() << DEBUG_TYPE ": '" << Thread.Kernel->getName()
             << "': rounds split at sync point " << Index + 1 << ", "
             << Point.Description << " (" << getSyncPointKindName(Point.Sync)
             << ")\n";
  });
  return Lowering;
}


} // namespace tidal::host_lowering
