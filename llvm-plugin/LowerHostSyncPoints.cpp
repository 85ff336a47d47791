// The host lowering's sync-point stages (LowerHost.h): makeResumable
// (K.thread made resumable at each barrier and warp collective: it returns
// the sync point's number there, and resumes after it; the values that live
// across a sync point kept per thread in the frame, or once per block when
// uniform: the FrameLayout), and markParallelAccesses (its plain memory
// accesses marked parallel for the vectoriser).

#include "LowerHost.h"

#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/ConstantRange.h"
#include <map>

#define DEBUG_TYPE "tidal-lower-host"

TIDAL_STATISTIC(NumUniformValues, "Values kept once per block across sync points (uniform slots)");
TIDAL_STATISTIC(NumFrameValues, "Values kept per thread across sync points");
TIDAL_STATISTIC(NumFrameBytes, "Frame bytes per thread of the lowered kernels");

namespace tidal::host_lowering {
namespace {

// makeResumable's work on one kernel: what it reads (K.thread, its entry
// values, the sync points and rounds) and what it produces (Layout).
struct SyncPointLowerer {
  ThreadFunction &Thread;
  EntryValues &Values;
  const MarkerLowering &Markers;
  FrameLayout &Layout;
  Module &M;
  LLVMContext &Context;
  const DataLayout &DL;
  // The next free frame array (see FrameHeaderBytes).
  uint64_t FramePrefix;

  SyncPointLowerer(ThreadFunction &Thread, EntryValues &Values,
          const MarkerLowering &Markers, FrameLayout &Layout)
      : Thread(Thread), Values(Values), Markers(Markers), Layout(Layout),
        M(*Thread.Thread->getParent()), Context(M.getContext()),
        DL(M.getDataLayout()),
        FramePrefix(Markers.WarpRounds ? WarpFirstValuePrefix : FirstValuePrefix) {}

  Value *resumeAfterSyncPoint(IRBuilder<> &B, const SyncPoint &Point);
  void storeBeforeSyncPoint(IRBuilder<> &B, const SyncPoint &Point);
  Value *frameElement(uint64_t Size, uint64_t Alignment, const Twine &Name);
  void keepValuesAcrossSyncPoints(ArrayRef<BasicBlock *> SyncBlocks,
                                  ArrayRef<BasicBlock *> ResumeBlocks,
                                  const SmallPtrSetImpl<const Value *> &Uniform);
  void moveAllocasToFrame();
  void findCounterRanges();

  // The signed ranges of K.thread's loop counters (integer phis of loop
  // headers) at each sync point (0-based), known before the sync points
  // split their loops: ScalarEvolution's range, narrowed by the branches
  // that lead to the sync point (`i < nctaid.x`). A counter kept across a
  // barrier (the tiled matmul's `for i in range(bpg)`) is resumed with
  // assumptions of that range, so that LLVM still knows `tx + (i + 1) *
  // TILE` is not negative: no wrap of a negative index, contiguous loads
  // instead of gathers.
  std::map<std::pair<const Value *, unsigned>, ConstantRange> CounterRanges;
};

void SyncPointLowerer::findCounterRanges() {
  Function &F = *Thread.Thread;
  TargetLibraryInfoImpl Library(Triple(M.getTargetTriple()));
  TargetLibraryInfo LibraryInfo(Library, &F);
  AssumptionCache Assumptions(F);
  DominatorTree Tree(F);
  LoopInfo Loops(Tree);
  ScalarEvolution Evolution(F, LibraryInfo, Assumptions, Tree, Loops);
  SmallVector<std::pair<PHINode *, ConstantRange>, 8> Counters;
  for (Loop *L : Loops.getLoopsInPreorder())
    for (PHINode &Phi : L->getHeader()->phis())
      if (Phi.getType()->isIntegerTy() && Evolution.isSCEVable(Phi.getType()))
        Counters.emplace_back(&Phi, Evolution.getSignedRange(Evolution.getSCEV(&Phi)));
  for (auto [Index, Point] : enumerate(Markers.SyncPoints)) {
    BasicBlock *At = Point.Call->getParent();
    for (auto &[Phi, Whole] : Counters) {
      if (!Tree.dominates(Phi->getParent(), At))
        continue;
      ConstantRange Range = Whole;
      // The branches on the way: `Phi pred X` true (or false) on an edge
      // that dominates the sync point.
      for (DomTreeNode *Node = Tree.getNode(At); Node && Node->getIDom();
           Node = Node->getIDom()) {
        BasicBlock *Dominator = Node->getIDom()->getBlock();
        auto *Branch = dyn_cast<BranchInst>(Dominator->getTerminator());
        auto *Compare = Branch && Branch->isConditional()
                            ? dyn_cast<ICmpInst>(Branch->getCondition())
                            : nullptr;
        if (!Compare || Branch->getSuccessor(0) == Branch->getSuccessor(1))
          continue;
        CmpInst::Predicate Predicate = Compare->getPredicate();
        Value *Other = Compare->getOperand(1);
        if (Compare->getOperand(1) == Phi) {
          Predicate = CmpInst::getSwappedPredicate(Predicate);
          Other = Compare->getOperand(0);
        } else if (Compare->getOperand(0) != Phi) {
          continue;
        }
        for (unsigned Side : {0u, 1u})
          if (Tree.dominates(BasicBlockEdge(Dominator, Branch->getSuccessor(Side)), At))
            Range = Range.intersectWith(
                ConstantRange::makeAllowedICmpRegion(
                    Side == 0 ? Predicate : CmpInst::getInversePredicate(Predicate),
                    computeConstantRange(Other, ICmpInst::isSigned(Predicate))),
                ConstantRange::Signed);
      }
      if (!Range.isFullSet() && !Range.isEmptySet() && !Range.isSignWrappedSet())
        CounterRanges.try_emplace({Phi, unsigned(Index)}, Range);
    }
  }
}

// Before returning at a sync point: what the other threads will need.
void SyncPointLowerer::storeBeforeSyncPoint(IRBuilder<> &B, const SyncPoint &Point) {
  CallInst *Call = Point.Call;
  Value *Stored = nullptr;
  if (Point.Sync == SyncPointKind::BlockReduction)
    Stored = B.CreateZExt(B.CreateICmpNE(Call->getArgOperand(0), B.getInt32(0)),
                         B.getInt64Ty());
  else if (Point.Sync == SyncPointKind::WarpExchange)
    Stored = toExchange(B, Call->getArgOperand(1));
  if (Markers.WarpRounds && isWarpSyncPoint(Point.Sync) &&
      Point.Sync != SyncPointKind::WarpActiveMask) {
    Value *Masks = Values.frameArray(MaskPrefix, nullptr, "masks");
    B.CreateAlignedStore(
        Call->getArgOperand(0),
        B.CreateInBoundsGEP(B.getInt32Ty(), Masks,
                            B.CreateZExt(Values.linearThread(), B.getInt64Ty())),
        Align(4));
  }
  if (!Stored)
    return;
  Value *Slot = B.CreateInBoundsGEP(B.getInt64Ty(), Values.exchangeBuffer(true),
                                    B.CreateZExt(Values.linearThread(), B.getInt64Ty()));
  B.CreateAlignedStore(Stored, Slot, Align(8));
}

// After resuming from a sync point: its result, from what every thread of
// the block stored (or the block function reduced) before.
Value *SyncPointLowerer::resumeAfterSyncPoint(IRBuilder<> &B, const SyncPoint &Point) {
  MarkerKind Kind = Point.Kind;
  CallInst *Call = Point.Call;
  Type *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  // barriers
  if (Point.Sync == SyncPointKind::BlockBarrier ||
      Point.Sync == SyncPointKind::GridBarrier ||
      Point.Sync == SyncPointKind::WarpBarrier)
    return nullptr;
  if (Point.Sync == SyncPointKind::BlockReduction) {
    Value *Count = B.CreateAlignedLoad(I32, Thread.Frame, Align(FrameHeaderBytes),
                                       "syncthreads.count");
    if (Kind == MarkerKind::SyncThreadsCount)
      return Count;
    // and: every thread that arrived; threads that finished before do not
    // take part (the block function counts the others after the count).
    Value *Arrived = Values.threadCount();
    if (Markers.ThreadsMayFinishEarly)
      Arrived = B.CreateAlignedLoad(
          I32, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Thread.Frame, 4), Align(4),
          "syncthreads.arrived");
    Value *Holds = Kind == MarkerKind::SyncThreadsAnd
                       ? B.CreateICmpEQ(Count, Arrived)
                       : B.CreateICmpNE(Count, B.getInt32(0));
    return B.CreateZExt(Holds, I32);
  }
  // warp collectives: lanes are threads warpBase .. warpBase + 31
  Value *Linear = Values.linearThread();
  Value *Lane = B.CreateAnd(Linear, 31);
  Value *WarpBase = B.CreateAnd(Linear, ~31u);
  Value *Read = Values.exchangeBuffer(false);
  auto LoadLane = [&](Value *Index) {
    return B.CreateAlignedLoad(
        I64, B.CreateInBoundsGEP(I64, Read, B.CreateZExt(Index, I64)), Align(8));
  };
  // activemask: the lanes that arrived together (__tidal_cpu_warp_step
  // wrote them as this thread's result).
  if (Point.Sync == SyncPointKind::WarpActiveMask)
    return B.CreateTrunc(LoadLane(Linear), I32);
  if (Kind >= MarkerKind::ShuffleIndex && Kind <= MarkerKind::ShuffleXor) {
    Value *Delta = Call->getArgOperand(2);
    Value *Source, *Valid;
    if (Kind == MarkerKind::ShuffleIndex) {
      Source = B.CreateAnd(Delta, 31);
      Valid = B.getTrue();
    } else if (Kind == MarkerKind::ShuffleUp) {
      Source = B.CreateSub(Lane, Delta);
      Valid = B.CreateICmpULE(Delta, Lane);
    } else if (Kind == MarkerKind::ShuffleDown) {
      Source = B.CreateAdd(Lane, Delta);
      Valid = B.CreateICmpULT(Delta, B.CreateSub(B.getInt32(32), Lane));
    } else {
      Source = B.CreateXor(Lane, Delta);
      Valid = B.CreateICmpULT(Source, B.getInt32(32));
    }
    Value *SourceThread = B.CreateAdd(WarpBase, Source);
    Valid = B.CreateAnd(Valid, B.CreateICmpULT(SourceThread, Values.threadCount()));
    Value *From = B.CreateSelect(Valid, SourceThread, Linear);
    return fromExchange(B, LoadLane(From), Call->getType());
  }
  Value *Lanes = B.CreateInBoundsGEP(I64, Read, B.CreateZExt(WarpBase, I64));
  Value *LaneCount = B.CreateBinaryIntrinsic(
      Intrinsic::umin, B.CreateSub(Values.threadCount(), WarpBase), B.getInt32(32));
  Value *Existing = B.CreateSelect(
      B.CreateICmpEQ(LaneCount, B.getInt32(32)), B.getInt32(~0u),
      B.CreateSub(B.CreateShl(B.getInt32(1), LaneCount), B.getInt32(1)));
  Value *Mask = Call->getArgOperand(0);
  Value *Members = B.CreateAnd(Mask, Existing);
  Function *Bits = getWarpBitsFunction(M);
  if (Kind >= MarkerKind::VoteAll && Kind <= MarkerKind::VoteBallot) {
    Value *Ballot = B.CreateAnd(
        B.CreateCall(Bits, {Lanes, LaneCount, B.getInt64(0), B.getFalse()}), Mask);
    if (Kind == MarkerKind::VoteBallot)
      return Ballot;
    Value *All = B.CreateICmpEQ(Ballot, Members);
    Value *None = B.CreateICmpEQ(Ballot, B.getInt32(0));
    if (Kind == MarkerKind::VoteAll)
      return All;
    if (Kind == MarkerKind::VoteAny)
      return B.CreateNot(None);
    return B.CreateOr(All, None); // vote.uni
  }
  // match.any / match.all
  assert((Kind == MarkerKind::MatchAny || Kind == MarkerKind::MatchAll) &&
         "a warp exchange the host lowering does not know");
  Value *Own = LoadLane(Linear);
  Value *Matching =
      B.CreateAnd(B.CreateCall(Bits, {Lanes, LaneCount, Own, B.getTrue()}), Mask);
  if (Kind == MarkerKind::MatchAny)
    return Matching;
  // The lanes that matched: those of the mask that exist (a block of 10
  // threads matching with 0xffffffff gets 0b1111111111, as Numba's
  // test_warp_ops expects), not the mask itself.
  Value *AllEqual = B.CreateICmpEQ(Matching, Members);
  Value *Result = B.CreateInsertValue(
      PoisonValue::get(Call->getType()),
      B.CreateSelect(AllEqual, Members, B.getInt32(0)), 0);
  return B.CreateInsertValue(Result, AllEqual, 1);
}

// This thread's element (address in the entry) of a new frame array of
// `Size` bytes per thread.
Value *SyncPointLowerer::frameElement(uint64_t Size, uint64_t Alignment,
                             const Twine &Name) {
  Value *Thread64 = Values.linearThread64();
  uint64_t Stride = alignTo(std::max<uint64_t>(Size, 1),
                            std::max<uint64_t>(Alignment, 4));
  Value *Array = Values.frameArray(FramePrefix, nullptr, Name + ".frame");
  FramePrefix += Stride;
  IRBuilder<> B = Values.entryBuilder();
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
void SyncPointLowerer::keepValuesAcrossSyncPoints(
    ArrayRef<BasicBlock *> SyncBlocks, ArrayRef<BasicBlock *> ResumeBlocks,
    const SmallPtrSetImpl<const Value *> &Uniform) {
  BasicBlock *Entry = Thread.Entry;
  uint64_t &UniformBytes = Layout.UniformBytes;
  DominatorTree Tree(*Thread.Thread);
  SmallVector<Instruction *, 32> Crossing;
  for (Instruction &I : instructions(*Thread.Thread))
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
      Layout.UniformSlots.push_back({T, UniformBytes, Stride});
      IRBuilder<> B = Values.entryBuilder();
      ReadAt = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Thread.Uniforms,
                                            UniformBytes, V->getName() + ".uniform");
      WriteAt = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Thread.Uniforms,
                                             UniformBytes + Stride,
                                             V->getName() + ".pending");
      LLVM_DEBUG(dbgs() << DEBUG_TYPE ": block-uniform across a sync point: "
                        << *V << " (uniform slot at offset " << UniformBytes
                        << ", pending at " << UniformBytes + Stride << ", "
                        << Size << " bytes, once per block)\n");
      UniformBytes += 2 * Stride;
      Alignment = Align(16);
      ++NumUniformValues;
    } else {
      uint64_t Before = FramePrefix;
      ReadAt = WriteAt = frameElement(Size, DL.getABITypeAlign(T).value(), V->getName());
      Alignment = commonAlignment(Align(64), FramePrefix - Before);
      ++NumFrameValues;
      LLVM_DEBUG(dbgs() << DEBUG_TYPE ": per-thread across a sync point: " << *V
                        << " (frame slot at prefix " << Before << ", "
                        << FramePrefix - Before << " bytes per thread)\n");
    }
    // 3. Stored before returning, loaded on resuming; SSA rebuilt.
    SSAUpdater Updater;
    Updater.Initialize(T, V->getName());
    Updater.AddAvailableValue(Definition, V);
    for (unsigned K : LiveAt) {
      IRBuilder<> B(&*ResumeBlocks[K]->getFirstInsertionPt());
      LoadInst *Resumed =
          B.CreateAlignedLoad(T, ReadAt, Alignment, V->getName() + ".resumed");
      // Assumptions, not !range: SROA promotes the uniform slots and drops
      // a load's range (and InstCombine drops assumptions a range implies).
      if (auto Range = CounterRanges.find({V, K}); Range != CounterRanges.end()) {
        const APInt &Low = Range->second.getSignedMin(), &High = Range->second.getSignedMax();
        if (!Low.isMinSignedValue())
          B.CreateAssumption(B.CreateICmpSGE(Resumed, B.getInt(Low)));
        if (!High.isMaxSignedValue())
          B.CreateAssumption(B.CreateICmpSLE(Resumed, B.getInt(High)));
      }
      Updater.AddAvailableValue(ResumeBlocks[K], Resumed);
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
void SyncPointLowerer::moveAllocasToFrame() {
  Function &Kernel = *Thread.Kernel;
  BasicBlock *Entry = Thread.Entry;
  SmallVector<AllocaInst *, 32> Allocas;
  for (Instruction &I : instructions(*Thread.Thread))
    if (auto *Alloca = dyn_cast<AllocaInst>(&I))
      Allocas.push_back(Alloca);
  for (AllocaInst *Alloca : Allocas) {
    std::optional<TypeSize> Size = Alloca->getAllocationSize(DL);
    // Constant-size allocas anywhere (the old entry block is no longer
    // K.thread's first block, so isStaticAlloca would refuse clang's).
    if (!Size || Size->isScalable()) {
      reportError(Context, "cannot lower kernel '" + Kernel.getName() +
                               "': a stack allocation of variable size lives "
                               "across a barrier");
      continue;
    }
    uint64_t Before = FramePrefix;
    Value *Address = frameElement(Size->getFixedValue(),
                                  Alloca->getAlign().value(), Alloca->getName());
    LLVM_DEBUG(dbgs() << DEBUG_TYPE ": per-thread stack slot: " << *Alloca
                      << " (frame slot at prefix " << Before << ", "
                      << FramePrefix - Before << " bytes per thread)\n");
    for (User *U : make_early_inc_range(Alloca->users()))
      if (auto *Intrinsic = dyn_cast<IntrinsicInst>(U);
          Intrinsic && Intrinsic->isLifetimeStartOrEnd())
        Intrinsic->eraseFromParent();
    Address->takeName(Alloca);
    Alloca->replaceAllUsesWith(Address);
    Alloca->eraseFromParent();
  }
  Layout.SlotBytes = FramePrefix;
  NumFrameBytes += Layout.SlotBytes;
  LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Kernel.getName() << "': frame of "
                    << Layout.SlotBytes << " bytes per thread, "
                    << Layout.UniformBytes << " bytes of block-uniform slots\n");

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

} // namespace

// Sync point k (1-based): the thread stores what others need, returns k;
// the code after it becomes resume point k of the entry's switch.
FrameLayout makeResumable(ThreadFunction &Thread, EntryValues &Values,
                          MarkerLowering &Markers) {
  FrameLayout Layout;
  if (Markers.SyncPoints.empty())
    return Layout;
  SyncPointLowerer Work(Thread, Values, Markers, Layout);
  LLVMContext &Context = Work.Context;
  Work.findCounterRanges(); // before the sync points split the loops
  // Warps run their rounds at different times: a value of the block would
  // need more than one pending copy, so with warp rounds every value is kept
  // per thread.
  SmallPtrSet<const Value *, 32> Uniform;
  if (!Markers.WarpRounds) {
    Uniform = findUniformValues(*Thread.Thread, {Thread.ThreadIndex[0],
                                                 Thread.ThreadIndex[1],
                                                 Thread.ThreadIndex[2]});
    LLVM_DEBUG({
      dbgs() << DEBUG_TYPE ": '" << Thread.Kernel->getName() << "': "
             << Uniform.size() << " block-uniform values\n";
      for (Instruction &I : instructions(*Thread.Thread))
        if (Uniform.contains(&I))
          dbgs() << DEBUG_TYPE ":   uniform: " << I << "\n";
    });
  }
  SmallVector<BasicBlock *, 8> SyncBlocks, ResumeBlocks;
  Type *I32 = Type::getInt32Ty(Context);
  unsigned Number = 0;
  for (SyncPoint &Point : Markers.SyncPoints) {
    ++Number;
    CallInst *Call = Point.Call;
    BasicBlock *Before = Call->getParent();
    BasicBlock *After = Before->splitBasicBlock(Call->getNextNode(),
                                                "sync." + Twine(Number) + ".after");
    BasicBlock *Resumed =
        BasicBlock::Create(Context, "resume." + Twine(Number), Thread.Thread, After);
    BranchInst::Create(After, Resumed);
    IRBuilder<> B(Call);
    Work.storeBeforeSyncPoint(B, Point);
    Before->getTerminator()->eraseFromParent();
    ReturnInst::Create(Context, ConstantInt::get(I32, Number), Before);
    IRBuilder<> A(&*After->getFirstInsertionPt());
    if (Value *Result = Work.resumeAfterSyncPoint(A, Point)) {
      Result->takeName(Call);
      Call->replaceAllUsesWith(Result);
    }
    Call->eraseFromParent();
    Point.Call = nullptr;
    SyncBlocks.push_back(Before);
    ResumeBlocks.push_back(Resumed);
  }
  Instruction *Branch = Thread.Entry->getTerminator();
  BasicBlock *Invalid = BasicBlock::Create(Context, "resume.invalid", Thread.Thread);
  new UnreachableInst(Context, Invalid);
  SwitchInst *Switch =
      SwitchInst::Create(Thread.Resume, Invalid, Number + 1, Branch->getIterator());
  Switch->addCase(ConstantInt::get(cast<IntegerType>(I32), 0), Thread.Body);
  for (unsigned K = 1; K <= Number; ++K)
    Switch->addCase(ConstantInt::get(cast<IntegerType>(I32), K),
                    ResumeBlocks[K - 1]);
  Branch->eraseFromParent();
  Work.keepValuesAcrossSyncPoints(SyncBlocks, ResumeBlocks, Uniform);
  Work.moveAllocasToFrame();
  return Layout;
}


// A call of the runtime hook of a failed bounds check or assert.
static bool isFailureHookCall(const Instruction &I) {
  auto *Call = dyn_cast<CallInst>(&I);
  Function *Callee = Call ? Call->getCalledFunction() : nullptr;
  return Callee && (Callee->getName() == CpuBoundsErrorHook ||
                    Callee->getName() == CpuAssertFailHook);
}

// Threads of a round (between two sync points) may run in any order, and
// two of them touching the same location, one writing, without an atomic is
// a data race in CUDA: the thread loops may run their iterations in parallel
// (vectorised) for every plain load and store of K.thread, which go into one
// access group. A kernel with atomics (also their plain form on shared
// memory), volatile accesses or calls gets no group: its loops are analysed
// as usual. The failure hooks (a failed bounds check or assert) are not such
// calls: they record the failure in the runtime, never touch the kernel's
// memory, and end the thread (-2); a loop that still calls one is not
// vectorised anyway, but the fitted block function's copy, whose implied
// checks are gone, is then a parallel loop (the reduction's rounds: scalar,
// behind an always-failing runtime alias check, without this).
MDNode *markParallelAccesses(Function &Thread,
                             const SmallPtrSetImpl<Instruction *> &SerialisedAtomics) {
  if (!SerialisedAtomics.empty())
    return nullptr;
  SmallVector<Instruction *, 32> Accesses;
  for (Instruction &I : instructions(Thread)) {
    if (isa<LoadInst, StoreInst>(I)) {
      if (isa<LoadInst>(I) ? !cast<LoadInst>(I).isSimple()
                           : !cast<StoreInst>(I).isSimple())
        return nullptr; // volatile or atomic: leave every thread loop as it is
      Accesses.push_back(&I);
    } else if (I.mayReadOrWriteMemory() &&
               !(isa<IntrinsicInst>(I) && !I.mayWriteToMemory()) &&
               !isa<AssumeInst>(I) && !isFailureHookCall(I)) {
      return nullptr; // an atomic, a fence or a call
    }
  }
  if (Accesses.empty())
    return nullptr;
  // The calls of K.thread in the thread loops carry the group too: the
  // inliner gives it to every access of the inlined body, also to those that
  // K.thread's own simplification (before inlining) created without it.
  MDNode *ThreadAccesses = MDNode::getDistinct(Thread.getContext(), {});
  for (Instruction *I : Accesses)
    I->setMetadata(LLVMContext::MD_access_group, ThreadAccesses);
  LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Thread.getName() << "': "
                    << Accesses.size()
                    << " loads and stores marked parallel in the thread loops\n");
  return ThreadAccesses;
}

// The thread loop of a kernel with global atomics stays scalar (an atomic
// add at an index read from memory: any two threads may meet), and LLVM's
// unroller leaves it alone on x86 (runtime unrolling is off there), so each
// thread's few instructions came with the loop's own: the histogram of
// bench/vs_openmp_cuda.py ran 0.52 ns per element on one thread, 0.41 unrolled
// by 4 (and by 8; C++ with OpenMP's loop, 0.41). Only for a small K.thread
// without loops, whose copies cost little to compile and whose unrolled
// loop LLVM can always build (no inner loop, nothing it may not duplicate).
unsigned serialThreadUnroll(const Function &Thread, const MDNode *ThreadAccesses) {
  constexpr unsigned Count = 4, MaxInstructions = 200;
  if (ThreadAccesses)
    return 0;
  unsigned Instructions = 0;
  for (const Instruction &I : instructions(Thread)) {
    if (++Instructions > MaxInstructions)
      return 0;
    if (const auto *Call = dyn_cast<CallBase>(&I))
      if (Call->cannotDuplicate() || Call->isConvergent())
        return 0;
  }
  DominatorTree Dominators(const_cast<Function &>(Thread));
  LoopInfo Loops(Dominators);
  return Loops.empty() ? Count : 0;
}


} // namespace tidal::host_lowering
