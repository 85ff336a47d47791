// splitIndexWraps (LowerHost.h): the bounds checks of K.thread test the
// index as given first, and wrap a negative one only when that test fails.
//
// The frontend checks `a[k]` as Python indexes: k < 0 counts from the end,
//
//   w = k < 0 ? k + n : k;   if w u>= n: report;   a + w
//
// which costs every access the wrap (on x86 a shift, an and and an add
// before the compare) even though k is almost never negative. Here it
// becomes
//
//   if k u< n: a + k   else: w = ...; if w u>= n: report; a + w
//
// (exact: n, an extent, is never negative, so k u< n means 0 <= k < n and
// w = k). The histogram's `bins[x[i]]` then costs a compare and a branch.
// The hook's report is unchanged (it names k, as before).

#include "LowerHost.h"

#include "llvm/IR/Dominators.h"
#include "llvm/IR/PatternMatch.h"

#define DEBUG_TYPE "tidal-lower-host"

TIDAL_STATISTIC(NumIndexWrapsSplit, "Bounds checks that wrap a negative index only past the check");

namespace tidal::host_lowering {

using namespace llvm::PatternMatch;

namespace {

// A bounds check: `Branch` to `Failure` (which calls the bounds hook) when
// Wrapped u>= Extent, else to `Passed`; Wrapped is the wrap of Index.
struct WrappedCheck {
  BranchInst *Branch;
  BasicBlock *Failure, *Passed;
  Value *Index, *Wrapped, *Extent;
};

std::optional<WrappedCheck> wrappedCheckOf(CallInst &Call) {
  BasicBlock *Failure = Call.getParent();
  BasicBlock *Check = Failure->getSinglePredecessor();
  auto *Branch = Check ? dyn_cast<BranchInst>(Check->getTerminator()) : nullptr;
  auto *Compare = Branch && Branch->isConditional()
                      ? dyn_cast<ICmpInst>(Branch->getCondition()) : nullptr;
  if (!Compare || Branch->getSuccessor(0) == Branch->getSuccessor(1) ||
      !Failure->phis().empty())
    return std::nullopt;
  bool FailsWhenTrue = Branch->getSuccessor(0) == Failure;
  if (Compare->getPredicate() != (FailsWhenTrue ? ICmpInst::ICMP_UGE : ICmpInst::ICMP_ULT))
    return std::nullopt;
  Value *Wrapped = Compare->getOperand(0), *Extent = Compare->getOperand(1), *Index;
  // w = select(k < 0, k + n, k)
  if (!match(Wrapped, m_Select(m_SpecificICmp(ICmpInst::ICMP_SLT, m_Value(Index), m_Zero()),
                               m_c_Add(m_Deferred(Index), m_Specific(Extent)),
                               m_Deferred(Index))))
    return std::nullopt;
  BasicBlock *Passed = Branch->getSuccessor(FailsWhenTrue ? 1 : 0);
  if (Passed->getSinglePredecessor() != Check || !Passed->phis().empty())
    return std::nullopt;
  return WrappedCheck{Branch, Failure, Passed, Index, Wrapped, Extent};
}

} // namespace

void splitIndexWraps(Function &Thread) {
  SmallVector<WrappedCheck, 8> Checks;
  for (Instruction &I : instructions(Thread))
    if (auto *Call = dyn_cast<CallInst>(&I);
        Call && Call->getCalledFunction() &&
        Call->getCalledFunction()->getName() == CpuBoundsErrorHook)
      if (std::optional<WrappedCheck> Check = wrappedCheckOf(*Call))
        Checks.push_back(*Check);
  if (Checks.empty())
    return;
  // The blocks each `Passed` dominates stay the same below (its new
  // predecessor is dominated by its old one).
  DominatorTree DT(Thread);
  for (WrappedCheck &C : Checks) {
    BasicBlock *Check = C.Branch->getParent();
    // 1. The wrap's test moves to a block of its own, reached when k u>= n.
    BasicBlock *Wrap = BasicBlock::Create(Thread.getContext(), "index.negative",
                                          &Thread, C.Passed);
    C.Branch->moveBefore(*Wrap, Wrap->end());
    IRBuilder<> Builder(Check);
    Value *InRange = Builder.CreateICmpULT(C.Index, C.Extent, "index.in.range");
    MDNode *Likely = MDBuilder(Thread.getContext()).createLikelyBranchWeights();
    Builder.CreateCondBr(InRange, C.Passed, Wrap, Likely);
    // 2. Past the check the index is k, or w from the wrap's block.
    PHINode *Index = PHINode::Create(C.Wrapped->getType(), 2, "index",
                                     C.Passed->getFirstNonPHIIt());
    Index->addIncoming(C.Index, Check);
    Index->addIncoming(C.Wrapped, Wrap);
    C.Wrapped->replaceUsesWithIf(Index, [&](Use &U) {
      auto *User = cast<Instruction>(U.getUser());
      if (User == Index)
        return false;
      BasicBlock *Where = User->getParent();
      if (auto *Phi = dyn_cast<PHINode>(User))
        Where = Phi->getIncomingBlock(U);
      return Where != Wrap && DT.dominates(C.Passed, Where);
    });
    // 3. What only the wrap's test uses moves there too, out of the path
    //    of an index in range.
    auto *Compare = cast<Instruction>(C.Branch->getCondition());
    auto *Select = cast<Instruction>(C.Wrapped);
    auto MoveToWrap = [&](Instruction *I, Instruction *Before) {
      bool OnlyThere = all_of(I->users(), [&](User *U) {
        return U == Index || cast<Instruction>(U)->getParent() == Wrap;
      });
      if (I->getParent() == Check && OnlyThere && !I->mayHaveSideEffects())
        I->moveBefore(Before);
      return I->getParent() == Wrap;
    };
    if (MoveToWrap(Compare, C.Branch) && MoveToWrap(Select, Compare))
      for (Value *Operand : Select->operands())
        if (auto *I = dyn_cast<Instruction>(Operand); I && I->hasOneUse())
          MoveToWrap(I, Select);
    ++NumIndexWrapsSplit;
  }
}

} // namespace tidal::host_lowering
