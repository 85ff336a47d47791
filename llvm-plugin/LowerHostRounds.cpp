// The host lowering's last stages (LowerHost.h): createBlockFunction (the
// block function __tidal_block_K, which runs K.thread for every thread of
// the block in rounds: all threads from one resume point per loop, or, with
// a warp sync point under divergent control, warp rounds). The variant
// for launches that run alone (addAloneVariant) is in
// LowerHostPrivateAtomics.cpp, with the other pieces for global atomics.

#include "LowerHost.h"

#define DEBUG_TYPE "tidal-lower-host"

namespace tidal::host_lowering {
namespace {

// The block function's construction: what it is built from (a
// LoweredKernel), spelled out for the emitters below.
struct BlockFunctionBuilder {
  const LoweredKernel &Lowered;
  Function &Kernel;
  Function *Thread;
  Module &M;
  LLVMContext &Context;
  const DataLayout &DL;
  ArrayRef<SyncPoint> SyncPoints;
  MDNode *ThreadAccesses;

  explicit BlockFunctionBuilder(const LoweredKernel &Lowered)
      : Lowered(Lowered), Kernel(Lowered.Kernel), Thread(&Lowered.Thread),
        M(*Kernel.getParent()), Context(M.getContext()), DL(M.getDataLayout()),
        SyncPoints(Lowered.Markers.SyncPoints),
        ThreadAccesses(Lowered.ThreadAccesses) {}

  Function *build(const Twine &Name);
  SmallVector<bool, 8> uniformOutcomes();
  Constant *syncPointNames();
  void emitBarrierError(IRBuilder<> &Builder, Value *BlockContext, Value *Next,
                        Value *Count);
  Value *emitThreadUnlessFinished(IRBuilder<> &Builder, Value *State,
                                  function_ref<Value *()> Run);
  BasicBlock *emitPartialRound(IRBuilder<> &Builder, Value *Low, Value *High,
                               Value *Next, Value *Count, BasicBlock *EntryBlock,
                               BasicBlock *Continue);
  void emitBarrierReduction(IRBuilder<> &Builder, Value *Low, Value *FrameMemory,
                            Value *Padded, Value *Count, Value *Next,
                            Value *RoundPhase, BasicBlock *EntryBlock);
  void emitGridBarrier(IRBuilder<> &Builder, Value *Low, Value *BlockContext,
                       BasicBlock *Done);
  void emitWarpRounds(IRBuilder<> &Builder, ArrayRef<Value *> Arguments,
                      Value *const BlockDim[3], bool YInnermost,
                      Value *BlockContext, Value *Count, Value *Padded,
                      Value *FrameMemory, BasicBlock *EntryBlock);
};

// The names of the sync points for the runtime's reports: "the start",
// then each point's description (K.sync.names, made once per kernel).
Constant *BlockFunctionBuilder::syncPointNames() {
  std::string TableName = (Kernel.getName() + ".sync.names").str();
  if (GlobalVariable *Table = M.getNamedGlobal(TableName))
    return Table;
  Type *Pointer = PointerType::getUnqual(Context);
  SmallVector<Constant *, 8> Names;
  Names.push_back(getString(M, "the start", Kernel.getName() + ".sync.0"));
  for (unsigned K = 1; K <= SyncPoints.size(); ++K)
    Names.push_back(getString(M, SyncPoints[K - 1].Description,
                              Kernel.getName() + ".sync." + Twine(K)));
  auto *NameArray = ArrayType::get(Pointer, Names.size());
  return new GlobalVariable(M, NameArray, true, GlobalValue::PrivateLinkage,
                            ConstantArray::get(NameArray, Names), TableName);
}

// For each resume point: whether the threads of a round from there all stop
// at one point or fail (findUniformOutcomes); a load of a uniform slot's
// current value reads the same for all of them.
SmallVector<bool, 8> BlockFunctionBuilder::uniformOutcomes() {
  const unsigned Parameters = Kernel.arg_size();
  const Argument *Uniforms = Thread->getArg(Parameters + 3);
  const Argument *ThreadIndex[3] = {Thread->getArg(Parameters + 4),
                                    Thread->getArg(Parameters + 5),
                                    Thread->getArg(Parameters + 6)};
  auto ReadsUniformSlot = [&](const LoadInst &Load) {
    APInt Offset(DL.getIndexTypeSizeInBits(Load.getPointerOperandType()), 0);
    const Value *Base =
        Load.getPointerOperand()->stripAndAccumulateConstantOffsets(DL, Offset, true);
    return Base == Uniforms &&
           any_of(Lowered.Frame.UniformSlots, [&](const FrameLayout::UniformSlot &Slot) {
             return Offset == Slot.Offset;
           });
  };
  SmallVector<bool, 8> Outcomes =
      findUniformOutcomes(*Thread, ThreadIndex, Thread->getArg(Parameters + 7),
                          ReadsUniformSlot);
  LLVM_DEBUG({
    dbgs() << DEBUG_TYPE ": '" << Kernel.getName() << "': rounds with one outcome:";
    for (unsigned Point = 0; Point < Outcomes.size(); ++Point)
      if (Outcomes[Point])
        dbgs() << " from " << Point;
    dbgs() << "\n";
  });
  return Outcomes;
}

// Threads at different sync points (or some finished): the runtime reports
// them all (Next: the sync point each thread reached).
void BlockFunctionBuilder::emitBarrierError(IRBuilder<> &Builder,
                                            Value *BlockContext, Value *Next, Value *Count) {
  Type *Pointer = Builder.getPtrTy(), *I32 = Builder.getInt32Ty();
  unsigned SyncCount = SyncPoints.size();
  Constant *Table = syncPointNames();
  Function *Hook = getHook(M, CpuBarrierErrorHook, Builder.getVoidTy(),
                           {Pointer, Pointer, Pointer, I32, Pointer, I32});
  Builder.CreateCall(Hook, {BlockContext,
                            getString(M, Kernel.getName(),
                                      Kernel.getName() + ".name"),
                            Next, Count, Table,
                            Builder.getInt32(SyncCount + 1)});
}

// In a round from a sync point of a kernel whose threads may finish early:
// the thread runs (Run: its call, returning where it stopped) unless its
// state (State, a pointer to next[t]) says it finished; finished threads
// stay finished. Returns the thread's new state.
Value *BlockFunctionBuilder::emitThreadUnlessFinished(IRBuilder<> &Builder,
                                                      Value *State,
                                                      function_ref<Value *()> Run) {
  Function *Block = Builder.GetInsertBlock()->getParent();
  BasicBlock *Skip = BasicBlock::Create(Context, "finished.skip", Block);
  BasicBlock *Running = BasicBlock::Create(Context, "thread.run", Block);
  BasicBlock *Join = BasicBlock::Create(Context, "thread.ran", Block);
  Value *Finished = Builder.CreateICmpEQ(Builder.CreateLoad(Builder.getInt32Ty(), State),
                                         Builder.getInt32(ThreadFinished));
  Builder.CreateCondBr(Finished, Skip, Running);
  Builder.SetInsertPoint(Skip);
  Builder.CreateBr(Join);
  Builder.SetInsertPoint(Running);
  Value *Reached = Run();
  BasicBlock *Ran = Builder.GetInsertBlock();
  Builder.CreateBr(Join);
  Builder.SetInsertPoint(Join);
  PHINode *Result = Builder.CreatePHI(Builder.getInt32Ty(), 2, "state");
  Result->addIncoming(Reached, Ran);
  Result->addIncoming(Builder.getInt32(ThreadFinished), Skip);
  return Result;
}

// A round whose threads stopped at different points (Low < High): if some
// finished and all the others wait at one block barrier (`High`:
// syncthreads, its count/and/or, grid.sync), the rounds go on from there,
// as a GPU lets exited threads through its barriers (`bar.sync` counts
// them as arrived). Returns the block that branches to Continue then;
// leaves the builder where the others are reported (threads at different
// barriers, which debug mode and normal mode both report).
BasicBlock *BlockFunctionBuilder::emitPartialRound(IRBuilder<> &Builder, Value *Low,
                                                   Value *High, Value *Next,
                                                   Value *Count, BasicBlock *EntryBlock,
                                                   BasicBlock *Continue) {
  Type *I32 = Builder.getInt32Ty(), *I64 = Builder.getInt64Ty();
  Function *Block = Builder.GetInsertBlock()->getParent();
  Value *AtBlockBarrier = Builder.getFalse();
  for (unsigned K = 1; K <= SyncPoints.size(); ++K)
    if (!isWarpSyncPoint(SyncPoints[K - 1].Sync))
      AtBlockBarrier = Builder.CreateOr(AtBlockBarrier,
                                        Builder.CreateICmpEQ(High, Builder.getInt32(K)));
  Value *SomeFinished = Builder.CreateICmpEQ(Low, Builder.getInt32(ThreadFinished));
  BasicBlock *Partial = BasicBlock::Create(Context, "round.partial", Block);
  BasicBlock *Report = BasicBlock::Create(Context, "round.report", Block);
  Builder.CreateCondBr(Builder.CreateAnd(SomeFinished, AtBlockBarrier), Partial, Report);
  Builder.SetInsertPoint(Partial);
  AllocaInst *Others = new AllocaInst(I32, DL.getAllocaAddrSpace(), "others",
                                      EntryBlock->getTerminator()->getIterator());
  Builder.CreateStore(Builder.getInt32(0), Others);
  CountedLoop Each = beginLoop(Builder, Count, "partial.thread");
  Value *State = Builder.CreateLoad(
      I32, Builder.CreateInBoundsGEP(I32, Next, Builder.CreateZExt(Each.Counter, I64)));
  Value *Elsewhere = Builder.CreateAnd(
      Builder.CreateICmpNE(State, High),
      Builder.CreateICmpNE(State, Builder.getInt32(ThreadFinished)));
  Builder.CreateStore(Builder.CreateOr(Builder.CreateLoad(I32, Others),
                                       Builder.CreateZExt(Elsewhere, I32)),
                      Others);
  endLoop(Builder, Each);
  BasicBlock *PartialAt = Builder.GetInsertBlock();
  Builder.CreateCondBr(Builder.CreateICmpEQ(Builder.CreateLoad(I32, Others),
                                            Builder.getInt32(0)),
                       Continue, Report);
  Builder.SetInsertPoint(Report);
  return PartialAt;
}

// Everyone (but finished threads) at sync point `Low`: after a
// syncthreads_count/and/or, count the threads whose predicate held (they
// stored it in this round's exchange buffer), for K.thread to read from the
// frame's header; in a kernel whose threads may finish early, only the
// threads that arrived (next[t] not finished), whose number goes to the
// header too (for `and`).
void BlockFunctionBuilder::emitBarrierReduction(IRBuilder<> &Builder, Value *Low,
                                                Value *FrameMemory, Value *Padded,
                                                Value *Count, Value *Next,
                                                Value *RoundPhase,
                                                BasicBlock *EntryBlock) {
  const bool Finishing = Lowered.Markers.ThreadsMayFinishEarly;
  Type *I32 = Builder.getInt32Ty(), *I64 = Builder.getInt64Ty();
  Function *Block = Builder.GetInsertBlock()->getParent();
  unsigned SyncCount = SyncPoints.size();
  Value *AtReduction = Builder.getFalse();
  for (unsigned K = 1; K <= SyncCount; ++K)
    if (SyncPoints[K - 1].Sync == SyncPointKind::BlockReduction)
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
    AllocaInst *Arrivals = new AllocaInst(I32, DL.getAllocaAddrSpace(), "arrived",
                                          EntryBlock->getTerminator()->getIterator());
    Builder.CreateStore(Builder.getInt32(0), Sum);
    Builder.CreateStore(Builder.getInt32(0), Arrivals);
    CountedLoop Each = beginLoop(Builder, Count, "reduce.thread");
    Value *Thread64 = Builder.CreateZExt(Each.Counter, I64);
    Value *Predicate = Builder.CreateTrunc(
        Builder.CreateLoad(I64, Builder.CreateInBoundsGEP(I64, Written, Thread64)), I32);
    if (Finishing) {
      // A finished thread's exchange slot holds an older round's value.
      Value *Arrived = Builder.CreateICmpNE(
          Builder.CreateLoad(I32, Builder.CreateInBoundsGEP(I32, Next, Thread64)),
          Builder.getInt32(ThreadFinished));
      Predicate = Builder.CreateSelect(Arrived, Predicate, Builder.getInt32(0));
      Builder.CreateStore(Builder.CreateAdd(Builder.CreateLoad(I32, Arrivals),
                                            Builder.CreateZExt(Arrived, I32)),
                          Arrivals);
    }
    Builder.CreateStore(Builder.CreateAdd(Builder.CreateLoad(I32, Sum), Predicate), Sum);
    endLoop(Builder, Each);
    Builder.CreateAlignedStore(Builder.CreateLoad(I32, Sum), FrameMemory,
                               Align(FrameHeaderBytes));
    if (Finishing)
      Builder.CreateAlignedStore(
          Builder.CreateLoad(I32, Arrivals),
          Builder.CreateConstInBoundsGEP1_64(Builder.getInt8Ty(), FrameMemory, 4),
          Align(4));
    Builder.CreateBr(Back);
    Builder.SetInsertPoint(Back);
  }
}

// Everyone at sync point `Low`: at a grid.sync, the block waits for every
// other block of the (cooperative) launch to reach one before the next
// round (__tidal_cpu_grid_sync, CpuCooperativeLaunch.cpp); the threads'
// frames and the block's uniform slots stay as they are meanwhile. The
// runtime returns non-zero when the launch failed or was interrupted, or
// the barrier cannot complete (a block finished without reaching it): the
// block leaves.
void BlockFunctionBuilder::emitGridBarrier(IRBuilder<> &Builder, Value *Low,
                                           Value *BlockContext, BasicBlock *Done) {
  Value *AtGridBarrier = Builder.getFalse();
  for (unsigned K = 1; K <= SyncPoints.size(); ++K)
    if (SyncPoints[K - 1].Sync == SyncPointKind::GridBarrier)
      AtGridBarrier = Builder.CreateOr(AtGridBarrier,
                                       Builder.CreateICmpEQ(Low, Builder.getInt32(K)));
  if (isa<Constant>(AtGridBarrier))
    return;
  Function *Block = Builder.GetInsertBlock()->getParent();
  BasicBlock *Wait = BasicBlock::Create(Context, "grid.sync", Block);
  BasicBlock *Synced = BasicBlock::Create(Context, "grid.synced", Block);
  BasicBlock *Back = BasicBlock::Create(Context, "round.back", Block);
  Builder.CreateCondBr(AtGridBarrier, Wait, Back);
  Builder.SetInsertPoint(Wait);
  Function *Hook = getHook(M, CpuGridSyncHook, Builder.getInt32Ty(), {Builder.getPtrTy()});
  Value *Failed = Builder.CreateICmpNE(Builder.CreateCall(Hook, {BlockContext}),
                                       Builder.getInt32(0));
  Builder.CreateCondBr(Failed, Done, Synced);
  Builder.SetInsertPoint(Synced);
  Builder.CreateBr(Back);
  Builder.SetInsertPoint(Back);
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
void BlockFunctionBuilder::emitWarpRounds(IRBuilder<> &Builder, ArrayRef<Value *> Arguments,
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
  const bool Finishing = Lowered.Markers.ThreadsMayFinishEarly;
  // In debug mode, a syncwarp whose mask names a lane that finished is
  // reported (TIDAL_SYNC_WARP_CHECKED); otherwise finished lanes do not
  // hold it up.
  SmallVector<uint8_t, 16> Kinds(SyncCount + 1, TIDAL_SYNC_BLOCK);
  for (unsigned K = 1; K <= SyncCount; ++K) {
    SyncPointKind Sync = SyncPoints[K - 1].Sync;
    Kinds[K] = Sync == SyncPointKind::WarpActiveMask ? TIDAL_SYNC_ACTIVEMASK
               : Sync == SyncPointKind::WarpBarrier && Lowered.Debug
                   ? TIDAL_SYNC_WARP_CHECKED
               : isWarpSyncPoint(Sync) ? TIDAL_SYNC_WARP
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
    emitThreadLoops(Builder, BlockDim, YInnermost, Lowered.threadLoopHints(),
                    [&](Value *X, Value *Y, Value *Z) {
                      SmallVector<Value *, 16> ThreadArguments(Arguments);
                      ThreadArguments.append(
                          {X, Y, Z, Builder.getInt32(K), RoundPhase});
                      auto RunThread = [&]() -> Value * {
                        CallInst *Reached =
                            Builder.CreateCall(Thread, ThreadArguments, "reached");
                        if (ThreadAccesses)
                          Reached->setMetadata(LLVMContext::MD_access_group,
                                               ThreadAccesses);
                        return Reached;
                      };
                      const bool Skipping = Finishing && K > 0;
                      Value *Reached = Skipping ? nullptr : RunThread();
                      Value *Linear = Builder.CreateNUWAdd(
                          Builder.CreateNUWMul(
                              Builder.CreateNUWAdd(
                                  Builder.CreateNUWMul(Z, BlockDim[1]), Y),
                              BlockDim[0]),
                          X, "thread");
                      Value *State = StateOf(Linear);
                      // Finished threads stay finished (block rounds).
                      if (Skipping)
                        Reached = emitThreadUnlessFinished(Builder, State, RunThread);
                      StoreInst *Record = Builder.CreateStore(Reached, State);
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
                      if (ThreadAccesses)
                        Record->setMetadata(LLVMContext::MD_access_group,
                                            ThreadAccesses);
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
  SwitchInst *Switch = Builder.CreateSwitch(Outcome, Settled, SyncCount + 2);
  Switch->addCase(Builder.getInt32(TIDAL_WARP_STEP_FAILED), Done); // reported
  if (is_contained(Kinds, TIDAL_SYNC_WARP_CHECKED)) {
    // Debug mode: a syncwarp's mask names a lane that finished.
    BasicBlock *Exited = BasicBlock::Create(Context, "warp.exited", Block);
    Switch->addCase(Builder.getInt32(TIDAL_WARP_STEP_EXITED), Exited);
    IRBuilder<> Report(Exited);
    Function *Hook = getHook(M, CpuWarpExitErrorHook, Report.getVoidTy(),
                             {Pointer, Pointer, Pointer, I32, I32, Pointer, Pointer,
                              Pointer, I32});
    Report.CreateCall(Hook, {BlockContext,
                             getString(M, Kernel.getName(), Kernel.getName() + ".name"),
                             Report.CreateInBoundsGEP(I32, Next, Base64), Lanes, Base,
                             Report.CreateInBoundsGEP(I32, Masks, Base64), KindTable,
                             syncPointNames(), Report.getInt32(SyncCount + 1)});
    Report.CreateBr(Done);
  }
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
  // Finished threads and the others at one block barrier: on from there.
  BasicBlock *PartialAt =
      Finishing ? emitPartialRound(Builder, Low, High, Next, Count, EntryBlock, Continue)
                : nullptr;
  emitBarrierError(Builder, BlockContext, Next, Count);
  Builder.CreateBr(Done);
  Builder.SetInsertPoint(Continue);
  Value *At = Low;
  if (PartialAt) {
    PHINode *Point = Builder.CreatePHI(I32, 2, "resume.at");
    Point->addIncoming(Low, Agreed);
    Point->addIncoming(High, PartialAt);
    At = Point;
  }
  emitBarrierReduction(Builder, At, FrameMemory, Padded, Count, Next, RoundPhase,
                       EntryBlock);
  emitGridBarrier(Builder, At, BlockContext, Done);
  ResumeAt->addIncoming(At, Builder.GetInsertBlock());
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
Function *BlockFunctionBuilder::build(const Twine &Name) {
  const MarkerLowering &Markers = Lowered.Markers;
  const FrameLayout &Frame = Lowered.Frame;
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
  // A thread loop that copies or fills (the tree reduction's `buf[tid] =
  // x[i]` once its guard is folded in the fitted function) stays a loop,
  // which O3 vectorises, instead of becoming a call of libc's memcpy or
  // memset for at most a block's row: on two threads the reduction of 2^24
  // floats took 1.76-1.81 ms so, 2.10-2.16 ms with the memcpy call
  // (minimum of 60 launches, three turns alternating).
  for (const char *Builtin : {"no-builtin-memcpy", "no-builtin-memmove", "no-builtin-memset"})
    Block->addFnAttr(Builtin);
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
  if (Markers.UsesShared) {
    Function *Hook = getHook(M, CpuSharedHook, Pointer, {Pointer, I64, I32});
    Hook->addRetAttr(Attribute::NoAlias);
    Hook->addParamAttr(0, Attribute::NoCapture);
    SharedMemory = Builder.CreateCall(
        Hook, {BlockContext, Builder.getInt64(Markers.StaticSharedBytes),
               Builder.getInt32(Lowered.Debug)},
        "shared");
  }
  Value *FrameMemory = ConstantPointerNull::get(cast<PointerType>(Pointer));
  if (!SyncPoints.empty()) {
    Function *Hook = getHook(M, CpuFrameHook, Pointer, {Pointer, I64});
    Hook->addRetAttr(Attribute::NoAlias);
    Hook->addParamAttr(0, Attribute::NoCapture);
    Value *Bytes = Builder.CreateNUWAdd(
        Builder.getInt64(FrameHeaderBytes),
        Builder.CreateNUWMul(Padded, Builder.getInt64(Frame.SlotBytes)));
    FrameMemory = Builder.CreateCall(Hook, {BlockContext, Bytes}, "frame");
  }
  Value *UniformMemory = ConstantPointerNull::get(cast<PointerType>(Pointer));
  if (Frame.UniformBytes) {
    auto *Scalars = Builder.CreateAlloca(ArrayType::get(Builder.getInt8Ty(), Frame.UniformBytes),
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
  LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Name << "': "
                    << (SyncPoints.empty() ? "one loop over the threads"
                        : Markers.WarpRounds ? "warp rounds"
                                             : "block rounds")
                    << ", " << (YInnermost ? "y" : "x")
                    << " innermost (the loop order of the accesses)\n");
  if (SyncPoints.empty()) {
    emitThreadLoops(Builder, BlockDim, YInnermost, Lowered.threadLoopHints(), [&](Value *X, Value *Y, Value *Z) {
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
  if (Markers.WarpRounds) {
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
  const bool Finishing = Markers.ThreadsMayFinishEarly;
  // Rounds whose threads all stop at one point (or fail) keep no record of
  // where each stopped: no next[t], no min/max per thread, only whether one
  // failed and where the last one stopped. Not in kernels whose threads may
  // finish early: their rounds read next[t] (finished threads are skipped).
  SmallVector<bool, 8> UniformOutcome;
  if (!Finishing)
    UniformOutcome = uniformOutcomes();
  Value *Next = Builder.CreateInBoundsGEP(
      Builder.getInt8Ty(), FrameMemory,
      Builder.CreateNUWAdd(Builder.getInt64(FrameHeaderBytes),
                           Builder.CreateNUWMul(Padded, Builder.getInt64(NextPrefix))),
      "next");
  AllocaInst *Lowest = Builder.CreateAlloca(I32, nullptr, "lowest");
  AllocaInst *Highest = Builder.CreateAlloca(I32, nullptr, "highest");
  AllocaInst *Failed = Builder.CreateAlloca(Builder.getInt1Ty(), nullptr, "failed");
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
    const bool Uniform = K < UniformOutcome.size() && UniformOutcome[K];
    if (Uniform)
      Builder.CreateStore(Builder.getFalse(), Failed);
    emitThreadLoops(Builder, BlockDim, YInnermost, Lowered.threadLoopHints(), [&](Value *X, Value *Y, Value *Z) {
      SmallVector<Value *, 16> ThreadArguments(Arguments);
      ThreadArguments.append({X, Y, Z, Builder.getInt32(K), RoundPhase});
      if (Uniform) {
        // Every thread stops where the last one did, unless one failed.
        CallInst *Reached = Builder.CreateCall(Thread, ThreadArguments, "reached");
        if (ThreadAccesses)
          Reached->setMetadata(LLVMContext::MD_access_group, ThreadAccesses);
        Builder.CreateStore(Reached, Highest);
        Builder.CreateStore(
            Builder.CreateOr(Builder.CreateLoad(Builder.getInt1Ty(), Failed),
                             Builder.CreateICmpSLT(Reached,
                                                   Builder.getInt32(ThreadFinished))),
            Failed);
        return;
      }
      Value *Linear = Builder.CreateNUWAdd(
          Builder.CreateNUWMul(
              Builder.CreateNUWAdd(Builder.CreateNUWMul(Z, BlockDim[1]), Y),
              BlockDim[0]),
          X, "thread");
      Value *NextSlot = Builder.CreateInBoundsGEP(I32, Next, Builder.CreateZExt(Linear, I64));
      auto RunThread = [&]() -> Value * {
        CallInst *Reached = Builder.CreateCall(Thread, ThreadArguments, "reached");
        if (ThreadAccesses)
          Reached->setMetadata(LLVMContext::MD_access_group, ThreadAccesses);
        return Reached;
      };
      // Threads that finished before an earlier sync point (they returned)
      // stay finished: later rounds skip them.
      Value *Reached = Finishing && K > 0
                           ? emitThreadUnlessFinished(Builder, NextSlot, RunThread)
                           : RunThread();
      StoreInst *Record = Builder.CreateStore(Reached, NextSlot);
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
    if (Uniform) {
      Value *Last = Builder.CreateLoad(I32, Highest, "reached.last");
      Builder.CreateStore(
          Builder.CreateSelect(Builder.CreateLoad(Builder.getInt1Ty(), Failed),
                               Builder.getInt32(ThreadFailed), Last),
          Lowest);
    }
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

  // Threads at different sync points (or some finished): report them all,
  // unless (threads may finish early) the others all wait at one block
  // barrier: then the rounds go on from there (emitPartialRound).
  Builder.SetInsertPoint(Diverged);
  BasicBlock *PartialAt =
      Finishing ? emitPartialRound(Builder, Low, High, Next, Count, EntryBlock, Continue)
                : nullptr;
  emitBarrierError(Builder, BlockContext, Next, Count);
  Builder.CreateBr(Done);

  // Everyone at sync point `Low` (or, see above, at the grid barrier
  // `High`): the next round resumes there.
  Builder.SetInsertPoint(Continue);
  Value *At = Low;
  if (PartialAt) {
    PHINode *Point = Builder.CreatePHI(I32, 2, "resume.at");
    Point->addIncoming(Low, Agreed);
    Point->addIncoming(High, PartialAt);
    At = Point;
  }
  // What the threads stored of the block-uniform values is what the next
  // round reads.
  for (const FrameLayout::UniformSlot &Slot : Frame.UniformSlots)
    Builder.CreateAlignedStore(
        Builder.CreateAlignedLoad(
            Slot.ValueType,
            Builder.CreateConstInBoundsGEP1_64(Builder.getInt8Ty(), UniformMemory,
                                               Slot.Offset + Slot.Stride),
            Align(16)),
        Builder.CreateConstInBoundsGEP1_64(Builder.getInt8Ty(), UniformMemory,
                                           Slot.Offset),
        Align(16));
  emitBarrierReduction(Builder, At, FrameMemory, Padded, Count, Next, RoundPhase,
                       EntryBlock);
  emitGridBarrier(Builder, At, BlockContext, Done);
  ResumeAt->addIncoming(At, Builder.GetInsertBlock());
  RoundPhase->addIncoming(Builder.CreateXor(RoundPhase, Builder.getInt32(1)),
                          Builder.GetInsertBlock());
  Builder.CreateBr(Round);

  Builder.SetInsertPoint(Done);
  Builder.CreateRetVoid();
  if (Debugging)
    Debugging->finalizeSubprogram(Scope);
  return Block;
}

} // namespace

Function *createBlockFunction(const LoweredKernel &Lowered, const Twine &Name) {
  return BlockFunctionBuilder(Lowered).build(Name);
}

} // namespace tidal::host_lowering
