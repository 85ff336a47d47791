// The host lowering's analyses (LowerHost.h): which values every thread of
// a block computes alike (block-uniform: kept once per block across sync
// points, and what decides between block and warp rounds), and in which
// order the thread loops run (x or y innermost).

#include "LowerHost.h"

#define DEBUG_TYPE "tidal-lower-host"

namespace tidal::host_lowering {

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
                  SmallPtrSet<const BasicBlock *, 32> *Controlled,
                  function_ref<bool(const LoadInst &)> ReadsUniformMemory) {
  // The joins of divergent branches, without the paths into failures (a
  // failed bounds check or assert returns ThreadFailed or is unreachable):
  // a failing thread stops its block at the end of the round, so a branch
  // whose one side only may fail still joins where its paths meet (the
  // index checks of `buf[tid] += buf[tid + s]` under `if tid < s:` keep the
  // loop's stride `s` uniform). First the blocks from which every path
  // fails (to a fixed point).
  SmallPtrSet<const BasicBlock *, 16> Failing;
  for (bool Grew = true; Grew;) {
    Grew = false;
    for (BasicBlock &Block : Thread) {
      if (Failing.contains(&Block))
        continue;
      Instruction *End = Block.getTerminator();
      auto *Return = dyn_cast<ReturnInst>(End);
      auto *Value = Return ? dyn_cast_or_null<ConstantInt>(Return->getReturnValue()) : nullptr;
      if (isa<UnreachableInst>(End) || (Value && Value->getSExtValue() == ThreadFailed) ||
          (End->getNumSuccessors() > 0 &&
           all_of(successors(&Block), [&](BasicBlock *Next) { return Failing.contains(Next); }))) {
        Failing.insert(&Block);
        Grew = true;
      }
    }
  }
  // Then the post-dominator tree of the CFG without the edges into them:
  // each such successor of a branch is, while the tree is built, another
  // successor of the same branch that does not fail (the IR is restored
  // at once; nothing reads the phis meanwhile).
  SmallVector<std::tuple<Instruction *, unsigned, BasicBlock *>, 8> Redirected;
  for (BasicBlock &Block : Thread) {
    Instruction *End = Block.getTerminator();
    if (Failing.contains(&Block) || End->getNumSuccessors() < 2)
      continue;
    BasicBlock *Staying = nullptr;
    for (BasicBlock *Next : successors(&Block))
      if (!Failing.contains(Next))
        Staying = Next;
    for (unsigned Index = 0; Index < End->getNumSuccessors(); ++Index)
      if (BasicBlock *Next = End->getSuccessor(Index); Failing.contains(Next)) {
        Redirected.emplace_back(End, Index, Next);
        End->setSuccessor(Index, Staying);
      }
  }
  PostDominatorTree PostDominators(Thread);
  for (auto [End, Index, Next] : Redirected)
    End->setSuccessor(Index, Next);
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
      if (!Load->getMetadata(LLVMContext::MD_invariant_load) &&
          !(ReadsUniformMemory && ReadsUniformMemory(*Load)))
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

SmallVector<bool, 8>
findUniformOutcomes(Function &Thread, ArrayRef<const Argument *> DivergentArguments,
                    const Argument *Resume,
                    function_ref<bool(const LoadInst &)> ReadsUniformMemory) {
  SwitchInst *Dispatch = nullptr;
  for (BasicBlock &Block : Thread)
    if (auto *Switch = dyn_cast<SwitchInst>(Block.getTerminator());
        Switch && Switch->getCondition() == Resume)
      Dispatch = Switch;
  if (!Dispatch)
    return {};
  SmallPtrSet<const Value *, 32> Uniform =
      findUniformValues(Thread, DivergentArguments, nullptr, ReadsUniformMemory);
  // The return values reachable from each block, failures (-2, unreachable)
  // left out: none, one (Single), or several (Many); to a fixed point.
  enum class Reach { None, Single, Many };
  struct Returns {
    Reach Kind = Reach::None;
    int64_t Value = 0;
  };
  DenseMap<const BasicBlock *, Returns> Reachable;
  auto Join = [](Returns &Into, const Returns &From) {
    if (From.Kind == Reach::None || Into.Kind == Reach::Many)
      return;
    if (Into.Kind == Reach::None)
      Into = From;
    else if (From.Kind == Reach::Many || From.Value != Into.Value)
      Into.Kind = Reach::Many;
  };
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (BasicBlock &Block : Thread) {
      Returns Now;
      if (auto *Return = dyn_cast<ReturnInst>(Block.getTerminator())) {
        auto *Value = dyn_cast_or_null<ConstantInt>(Return->getReturnValue());
        if (!Value)
          Now.Kind = Reach::Many;
        else if (Value->getSExtValue() != ThreadFailed)
          Now = {Reach::Single, Value->getSExtValue()};
      }
      for (BasicBlock *Next : successors(&Block))
        Join(Now, Reachable.lookup(Next));
      Returns &Was = Reachable[&Block];
      if (Now.Kind != Was.Kind || Now.Value != Was.Value) {
        Was = Now;
        Changed = true;
      }
    }
  }
  auto IsDivergent = [&](const Value *Condition) {
    if (isa<Instruction>(Condition))
      return !Uniform.contains(Condition);
    return is_contained(DivergentArguments, Condition);
  };
  SmallVector<bool, 8> Outcomes;
  for (unsigned Point = 0; Point < Dispatch->getNumCases(); ++Point) {
    ConstantInt *Case = ConstantInt::get(cast<IntegerType>(Resume->getType()), Point);
    BasicBlock *From = Dispatch->findCaseValue(Case)->getCaseSuccessor();
    if (From == Dispatch->getDefaultDest()) {
      Outcomes.push_back(false);
      continue;
    }
    // Threads follow one path until their first divergent branch, from
    // which they all return one value (or fail).
    bool Same = true;
    SmallPtrSet<const BasicBlock *, 32> Seen;
    SmallVector<const BasicBlock *, 16> Work{From};
    while (Same && !Work.empty()) {
      const BasicBlock *Block = Work.pop_back_val();
      if (!Seen.insert(Block).second)
        continue;
      const Instruction *Terminator = Block->getTerminator();
      const Value *Condition = nullptr;
      if (auto *Branch = dyn_cast<BranchInst>(Terminator); Branch && Branch->isConditional())
        Condition = Branch->getCondition();
      else if (auto *Switch = dyn_cast<SwitchInst>(Terminator))
        Condition = Switch->getCondition();
      else if (!isa<BranchInst, ReturnInst, UnreachableInst>(Terminator))
        Same = false; // an invoke, an indirect branch: not followed
      if (Condition && IsDivergent(Condition) &&
          Reachable.lookup(Block).Kind == Reach::Many)
        Same = false;
      append_range(Work, successors(Block));
    }
    Outcomes.push_back(Same);
  }
  return Outcomes;
}

bool mayFinishBeforeSyncPoint(Function &Thread,
                              ArrayRef<const Argument *> DivergentArguments,
                              ArrayRef<SyncPoint> SyncPoints) {
  // Without a block barrier, finished lanes only meet warp collectives,
  // which complete without them already (warp rounds).
  if (none_of(SyncPoints, [](const SyncPoint &P) { return !isWarpSyncPoint(P.Sync); }))
    return false;
  SmallPtrSet<const BasicBlock *, 16> SyncBlocks;
  for (const SyncPoint &Point : SyncPoints)
    if (Point.Call)
      SyncBlocks.insert(Point.Call->getParent());
  SmallPtrSet<const BasicBlock *, 32> Controlled;
  SmallPtrSet<const Value *, 32> Uniform =
      findUniformValues(Thread, DivergentArguments, &Controlled);
  // Every divergent branch joins again (its immediate post-dominator, the
  // paths into failures left out) before any sync point and before the
  // end: the threads pass the same sync points and finish together
  // (n-body's `if i < n:` before its tiles' loop). The walk below would
  // follow such a branch on past its join.
  auto FinishesHere = [](const BasicBlock *Block) {
    auto *Return = dyn_cast<ReturnInst>(Block->getTerminator());
    auto *Value = Return ? dyn_cast_or_null<ConstantInt>(Return->getReturnValue()) : nullptr;
    return Value && Value->getSExtValue() == ThreadFinished;
  };
  if (none_of(Controlled, [&](const BasicBlock *Block) {
        return SyncBlocks.contains(Block) || FinishesHere(Block);
      }))
    return false;
  auto IsDivergent = [&](const Value *Condition) {
    if (isa<Instruction>(Condition))
      return !Uniform.contains(Condition);
    return is_contained(DivergentArguments, Condition);
  };
  for (BasicBlock &Block : Thread) {
    Instruction *Terminator = Block.getTerminator();
    Value *Condition = nullptr;
    if (auto *Branch = dyn_cast<BranchInst>(Terminator); Branch && Branch->isConditional())
      Condition = Branch->getCondition();
    else if (auto *Switch = dyn_cast<SwitchInst>(Terminator))
      Condition = Switch->getCondition();
    if (!Condition || !IsDivergent(Condition))
      continue;
    // Where the threads that take this branch stop next: a sync point, or
    // the end (a failure, -2, stops the block anyway).
    bool ReachesSyncPoint = false, ReachesEnd = false;
    SmallPtrSet<const BasicBlock *, 32> Seen;
    SmallVector<const BasicBlock *, 16> Work(successors(&Block));
    while (!Work.empty() && !(ReachesSyncPoint && ReachesEnd)) {
      const BasicBlock *Next = Work.pop_back_val();
      if (!Seen.insert(Next).second)
        continue;
      if (SyncBlocks.contains(Next)) {
        ReachesSyncPoint = true;
        continue;
      }
      if (auto *Return = dyn_cast<ReturnInst>(Next->getTerminator())) {
        auto *Value = dyn_cast_or_null<ConstantInt>(Return->getReturnValue());
        ReachesEnd |= Value && Value->getSExtValue() == ThreadFinished;
        continue;
      }
      append_range(Work, successors(Next));
    }
    if (ReachesSyncPoint && ReachesEnd) {
      LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Thread.getName()
                        << "': threads may finish early at the branch of '"
                        << Block.getName() << "'\n");
      return true;
    }
  }
  return false;
}

} // namespace tidal::host_lowering
