// BoundThreadLoopsPass (PassClasses.h): the thread loops of a block function
// (__tidal_block_K, __tidal_fitted_block_K and their variants) whose body
// runs only for the threads below a block-uniform bound end at that bound.
// After O3 has unswitched a round's uniform branches (the tree reduction's
// `while s > 0`), its thread loop is
//
//   for tid in 0..ntid.x:  if tid < s: buf[tid] += buf[tid + s]
//
// whose iterations past s do nothing. Vectorised as it is, every round runs
// all ntid.x threads with masked loads and stores, and the masked lanes of
// `buf[tid + s]` reach past the shared array, into the guard pages after
// the block's shared memory (docs/cpu-target.md, "Faults"): the reduction
// took twice as long as the scalar loop (most likely a microcode assist
// per such load; inferred from the profile). Here the loop's trip count becomes
// min(ntid.x, max(s, 1)): the rounds cost s thread iterations (128 + 64 +
// ... + 1 instead of 9 x 256), unmasked; `if tid == 0:` one iteration.
// cuda.grid's guard `base + tid < n` (the add without wrap) is `tid < n -
// base`, saturated. Where s >= 1 is not known, the loop is entered only for
// s >= 1 (for s < 1 it ran one iteration that did nothing), so the test
// goes in every case: the histogram's `i < x.size` costs nothing per thread.
//
// Runs at the vectoriser's start (registered in Plugin.cpp). The loop must
// be an innermost loop with a preheader, one latch that is its only
// exiting block, a counter from 0 by 1 without wrapping, compared in the
// latch with a loop-invariant trip count; its header must branch on
// `counter < s` (s loop-invariant; or the counter's extension, plus a
// loop-invariant offset, or `counter == 0`) straight to the latch for the
// threads past s, and the
// iterations past s must do nothing: no side effect in the header or the
// latch (assumptions aside), no value of theirs used after the loop, and
// every phi of the latch keeps, on that edge, the value its header phi had.

#include "PassClasses.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

#define DEBUG_TYPE "tidal-bound-thread-loops"

using namespace llvm;
using namespace llvm::PatternMatch;

namespace tidal {
namespace {

bool usedOutside(const Instruction &I, const Loop &L) {
  return any_of(I.users(), [&](const User *U) {
    return !L.contains(cast<Instruction>(U)->getParent());
  });
}

// The bound of `Guard` (the header's branch) on `Counter`: the value B such
// that the body runs for Counter < B (nullptr if the branch is not such a
// test), the successor taken past it, and how to clamp B.
struct GuardBound {
  Value *Bound = nullptr;
  BasicBlock *Skip = nullptr;
  bool Signed = false;
  // For `counter + Offset < n` (cuda.grid's `ctaid * ntid + tid < n`): the
  // bound is n - Offset, saturated (exact: the add does not wrap).
  Value *Offset = nullptr;
};

GuardBound guardBound(BranchInst *Guard, PHINode *Counter, const BinaryOperator *Step,
                      const Loop &L) {
  GuardBound Result;
  auto *Compare = Guard->isConditional() ? dyn_cast<ICmpInst>(Guard->getCondition()) : nullptr;
  if (!Compare)
    return Result;
  Value *Left = Compare->getOperand(0), *Right = Compare->getOperand(1);
  CmpInst::Predicate Predicate = Compare->getPredicate();
  auto IsCounter = [&](Value *V) {
    if (V == Counter)
      return true;
    if (match(V, m_ZExt(m_Specific(Counter))))
      return Step->hasNoUnsignedWrap();
    if (match(V, m_SExt(m_Specific(Counter))))
      return Step->hasNoSignedWrap();
    return false;
  };
  // The counter plus a loop-invariant offset, without wrapping in the
  // compare's signedness (checked below, once the predicate is known).
  // Returns the operand that is the offset.
  auto OffsetOf = [&](Value *V) -> Value * {
    auto *Add = dyn_cast<BinaryOperator>(V);
    if (!Add || Add->getOpcode() != Instruction::Add)
      return nullptr;
    for (unsigned Side : {0u, 1u})
      if (IsCounter(Add->getOperand(Side)) && L.isLoopInvariant(Add->getOperand(1 - Side)))
        return Add->getOperand(1 - Side);
    return nullptr;
  };
  auto IsCounted = [&](Value *V) { return IsCounter(V) || OffsetOf(V); };
  if (!IsCounted(Left)) {
    std::swap(Left, Right);
    Predicate = CmpInst::getSwappedPredicate(Predicate);
  }
  if (!IsCounted(Left) || !L.isLoopInvariant(Right))
    return Result;
  if (Value *Offset = OffsetOf(Left)) {
    auto *Add = cast<BinaryOperator>(Left);
    bool Signed = ICmpInst::isSigned(Predicate);
    if (!(Predicate == CmpInst::ICMP_ULT || Predicate == CmpInst::ICMP_SLT ||
          Predicate == CmpInst::ICMP_UGE || Predicate == CmpInst::ICMP_SGE) ||
        !(Signed ? Add->hasNoSignedWrap() : Add->hasNoUnsignedWrap()))
      return Result;
    Result.Offset = Offset;
    Left = Add->getOperand(Add->getOperand(0) == Offset ? 1 : 0);
  }
  // Counter itself compared: its own flags must say it never wraps.
  if (Left == Counter && !(ICmpInst::isSigned(Predicate) ? Step->hasNoSignedWrap()
                                                          : Step->hasNoUnsignedWrap()))
    return Result;
  BasicBlock *True = Guard->getSuccessor(0), *False = Guard->getSuccessor(1);
  switch (Predicate) {
  case CmpInst::ICMP_ULT:
  case CmpInst::ICMP_SLT:
    Result = {Right, False, ICmpInst::isSigned(Predicate), Result.Offset};
    break;
  case CmpInst::ICMP_UGE:
  case CmpInst::ICMP_SGE:
    Result = {Right, True, ICmpInst::isSigned(Predicate), Result.Offset};
    break;
  case CmpInst::ICMP_EQ:
  case CmpInst::ICMP_NE:
    // `counter == 0`: only the first iteration runs the body.
    if (match(Right, m_Zero()))
      Result = {ConstantInt::get(Right->getType(), 1),
                Predicate == CmpInst::ICMP_EQ ? False : True, false};
    break;
  default:
    break;
  }
  return Result;
}

// True if a branch that dominates `Where` says that S >= 1 (S > 0 signed,
// S != 0 unsigned): the reduction's `while s > 0:`, unswitched around its
// round's thread loops.
bool knownPositive(Value *S, bool Signed, BasicBlock *Where, DominatorTree &DT,
                   const DataLayout &DL) {
  if (auto *Constant = dyn_cast<ConstantInt>(S))
    return Signed ? Constant->getValue().sge(1) : !Constant->isZero();
  // S >= 1 itself, or, for S = X >> C, X >= 2^C (`(s >> 1) > 0` after
  // InstCombine made the loop's `s > 0` into `s >= 2`).
  SmallVector<std::tuple<CmpInst::Predicate, Value *, Value *>, 2> Facts;
  Facts.emplace_back(Signed ? CmpInst::ICMP_SGT : CmpInst::ICMP_UGT, S,
                     ConstantInt::get(S->getType(), 0));
  Value *X;
  const APInt *Shift;
  unsigned Bits = S->getType()->getIntegerBitWidth();
  // (a shift by at least 1 for a signed S: the result is then not negative)
  if (match(S, m_LShr(m_Value(X), m_APInt(Shift))) && Shift->ult(Bits) &&
      (!Signed || !Shift->isZero()))
    Facts.emplace_back(CmpInst::ICMP_UGE, X,
                       ConstantInt::get(S->getType(), APInt::getOneBitSet(Bits, Shift->getZExtValue())));
  else if (match(S, m_AShr(m_Value(X), m_APInt(Shift))) && Shift->ult(Bits - 1))
    Facts.emplace_back(CmpInst::ICMP_SGE, X,
                       ConstantInt::get(S->getType(), APInt::getOneBitSet(Bits, Shift->getZExtValue())));
  for (DomTreeNode *Node = DT.getNode(Where); Node && Node->getIDom();
       Node = Node->getIDom()) {
    BasicBlock *Dominator = Node->getIDom()->getBlock();
    auto *Branch = dyn_cast<BranchInst>(Dominator->getTerminator());
    if (!Branch || !Branch->isConditional() ||
        Branch->getSuccessor(0) == Branch->getSuccessor(1))
      continue;
    for (unsigned Side : {0u, 1u}) {
      if (!DT.dominates(BasicBlockEdge(Dominator, Branch->getSuccessor(Side)), Where))
        continue;
      for (auto &[Predicate, Left, Right] : Facts)
        if (std::optional<bool> Implied = isImpliedCondition(
                Branch->getCondition(), Predicate, Left, Right, DL, /*LHSIsTrue=*/Side == 0);
            Implied && *Implied)
          return true;
    }
  }
  return false;
}

// What a loop got: nothing, a new trip count, or also fewer edges.
enum class Bounded { No, Bound, BoundAndGuard };

// The value each phi of `Exit` would take had the loop been left before its
// first iteration ran the body: its latch value, where that is a latch phi
// that keeps its header phi's value on the skipping edge (the header phi's
// value from the preheader), or loop-invariant. Empty if some phi has none.
SmallVector<Value *, 4> valuesBeforeTheLoop(BasicBlock *Exit, const Loop &L) {
  BasicBlock *Header = L.getHeader(), *Latch = L.getLoopLatch(),
             *Preheader = L.getLoopPreheader();
  SmallVector<Value *, 4> Values;
  for (PHINode &Phi : Exit->phis()) {
    Value *V = Phi.getIncomingValueForBlock(Latch);
    if (auto *LatchPhi = dyn_cast<PHINode>(V); LatchPhi && LatchPhi->getParent() == Latch)
      V = LatchPhi->getIncomingValueForBlock(Header);
    if (auto *HeaderPhi = dyn_cast<PHINode>(V); HeaderPhi && HeaderPhi->getParent() == Header)
      V = HeaderPhi->getIncomingValueForBlock(Preheader);
    if (!L.isLoopInvariant(V))
      return {};
    Values.push_back(V);
  }
  return Values;
}

Bounded boundLoop(Loop &L, DominatorTree &DT, LoopInfo &Loops) {
  BasicBlock *Header = L.getHeader(), *Latch = L.getLoopLatch(),
             *Preheader = L.getLoopPreheader(), *Exit = L.getExitBlock();
  if (!Latch || !Preheader || !Exit || Latch == Header || L.getExitingBlock() != Latch)
    return Bounded::No;
  auto *Guard = dyn_cast<BranchInst>(Header->getTerminator());
  auto *Back = dyn_cast<BranchInst>(Latch->getTerminator());
  if (!Guard || !Back || !Back->isConditional())
    return Bounded::No;
  // The latch's test: `counter + 1` against the trip count N.
  auto *Exiting = dyn_cast<ICmpInst>(Back->getCondition());
  if (!Exiting || !L.isLoopInvariant(Exiting->getOperand(1)))
    return Bounded::No;
  auto *Step = dyn_cast<BinaryOperator>(Exiting->getOperand(0));
  PHINode *Counter = nullptr;
  if (!Step || Step->getOpcode() != Instruction::Add || !match(Step->getOperand(1), m_One()) ||
      !(Counter = dyn_cast<PHINode>(Step->getOperand(0))) || Counter->getParent() != Header ||
      Counter->getIncomingValueForBlock(Latch) != Step ||
      !match(Counter->getIncomingValueForBlock(Preheader), m_Zero()))
    return Bounded::No;
  const bool ExitsWhenTrue = Back->getSuccessor(0) == Exit;
  switch (Exiting->getPredicate()) {
  case CmpInst::ICMP_EQ:
    if (!ExitsWhenTrue)
      return Bounded::No;
    break;
  case CmpInst::ICMP_NE:
  case CmpInst::ICMP_ULT: // (an unsigned trip count, as the bound below)
    if (ExitsWhenTrue)
      return Bounded::No;
    break;
  default:
    return Bounded::No;
  }
  GuardBound Bound = guardBound(Guard, Counter, Step, L);
  if (!Bound.Bound || Bound.Skip != Latch)
    return Bounded::No;
  // The iterations past the bound: the header, then the latch, nothing else.
  for (BasicBlock *Block : {Header, Latch})
    for (Instruction &I : *Block) {
      if (I.mayHaveSideEffects() && !isa<AssumeInst>(I)) // (an assumption: no effect)
        return Bounded::No;
      auto *Phi = dyn_cast<PHINode>(&I);
      if (Phi && Block == Latch) {
        // Unchanged on the skipping edge: the header phi it feeds back.
        auto *Before = dyn_cast<PHINode>(Phi->getIncomingValueForBlock(Header));
        if (!Before || Before->getParent() != Header ||
            Before->getIncomingValueForBlock(Latch) != Phi)
          return Bounded::No;
        continue;
      }
      if (Phi && Block == Header && any_of(Latch->phis(), [&](PHINode &Q) {
            return Phi->getIncomingValueForBlock(Latch) == &Q;
          }))
        continue; // its latch phi above
      if (usedOutside(I, L))
        return Bounded::No;
    }
  // min(N, max(s, 1)), in the type of the guard's compare, then the
  // counter's: at least one iteration (the rotated loop runs one anyway).
  Value *Trips = Exiting->getOperand(1);
  Type *CounterType = Counter->getType(), *BoundType = Bound.Bound->getType();
  if (!CounterType->isIntegerTy() || !BoundType->isIntegerTy() ||
      BoundType->getIntegerBitWidth() < CounterType->getIntegerBitWidth())
    return Bounded::No;
  IRBuilder<> Builder(Preheader->getTerminator());
  if (Bound.Offset)
    Bound.Bound = Builder.CreateBinaryIntrinsic(
        Bound.Signed ? Intrinsic::ssub_sat : Intrinsic::usub_sat, Bound.Bound, Bound.Offset,
        nullptr, "threads.past.offset");
  Value *One = ConstantInt::get(BoundType, 1);
  Value *AtLeastOne = Builder.CreateBinaryIntrinsic(
      Bound.Signed ? Intrinsic::smax : Intrinsic::umax, Bound.Bound, One);
  Value *Limit = Builder.CreateBinaryIntrinsic(
      Intrinsic::umin, AtLeastOne, Builder.CreateZExt(Trips, BoundType));
  Value *Limited = Builder.CreateTrunc(Limit, CounterType, "threads.bounded");
  Exiting->setOperand(1, Limited);
  LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Header->getParent()->getName() << "': loop '"
                    << Header->getName() << "' ends at its guard's bound\n");
  // With s >= 1 known where the loop starts, every remaining iteration runs
  // the body: the guard goes, so that the vectoriser needs no mask.
  BasicBlock *Body = Guard->getSuccessor(0) == Latch ? Guard->getSuccessor(1)
                                                     : Guard->getSuccessor(0);
  if (Body == Latch)
    return Bounded::Bound;
  if (!knownPositive(Bound.Bound, Bound.Signed, Preheader, DT, Header->getDataLayout())) {
    // Else the loop is entered only when s >= 1 (the one iteration it ran
    // for s < 1 did nothing): cuda.grid's `i < n`, whose last block alone
    // has threads past n, leaves the loop (the histogram, saxpy).
    // (values of the loop used past it, an outer thread loop's carried
    // values, get their phi in Exit first)
    formLCSSA(L, DT, &Loops, nullptr);
    SmallVector<Value *, 4> Before = valuesBeforeTheLoop(Exit, L);
    if (Before.size() != size_t(std::distance(Exit->phis().begin(), Exit->phis().end())))
      return Bounded::Bound;
    Value *Enter = Bound.Signed ? Builder.CreateICmpSGE(Bound.Bound, One, "threads.any")
                                : Builder.CreateICmpNE(Bound.Bound, ConstantInt::get(BoundType, 0),
                                                       "threads.any");
    BranchInst *Entry = cast<BranchInst>(Preheader->getTerminator());
    BranchInst::Create(Header, Exit, Enter, Entry->getIterator());
    Entry->eraseFromParent();
    for (auto [Phi, Value] : zip(Exit->phis(), Before))
      Phi.addIncoming(Value, Preheader);
    DT.insertEdge(Preheader, Exit);
    formDedicatedExitBlocks(&L, &DT, &Loops, nullptr, /*PreserveLCSSA=*/false);
  }
  Latch->removePredecessor(Header);
  BranchInst::Create(Body, Guard->getIterator());
  Guard->eraseFromParent();
  DT.deleteEdge(Header, Latch);
  return Bounded::BoundAndGuard;
}

} // namespace

PreservedAnalyses BoundThreadLoopsPass::run(Function &F, FunctionAnalysisManager &FAM) {
  StringRef Name = F.getName();
  if (!Name.starts_with("__tidal_block_") && !Name.starts_with("__tidal_fitted_block_"))
    return PreservedAnalyses::all();
  LoopInfo &Loops = FAM.getResult<LoopAnalysis>(F);
  DominatorTree &DT = FAM.getResult<DominatorTreeAnalysis>(F);
  Bounded Changed = Bounded::No;
  for (Loop *L : Loops.getLoopsInPreorder()) {
    if (!L->isInnermost())
      continue;
    // A preheader and a dedicated exit, as the vectoriser makes them too.
    if (!L->isLoopSimplifyForm() &&
        simplifyLoop(L, &DT, &Loops, nullptr, nullptr, nullptr, false))
      Changed = Bounded::BoundAndGuard; // edges changed
    Changed = std::max(Changed, boundLoop(*L, DT, Loops));
  }
  if (Changed == Bounded::No)
    return PreservedAnalyses::all();
  PreservedAnalyses Preserved;
  if (Changed == Bounded::Bound)
    Preserved.preserveSet<CFGAnalyses>(); // an operand changed, no edge
  return Preserved;
}

} // namespace tidal
