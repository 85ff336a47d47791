// VectoriseThreadNestsPass (PassClasses.h): a round's thread loop whose
// body is itself a loop (n-body's `for k in range(BODY_TILE)`, the tiled
// matmul's `for j in range(TILE)`) is vectorised across the threads, not
// along its inner loop. LLVM's loop vectoriser only widens innermost loops,
// and these inner loops are strict floating-point reductions (`ax += ...`
// per thread), which it may not reorder: each thread's inner loop ran
// scalar, one `sqrt` and one division per pair of bodies. The threads of a
// round are independent (the thread loops' accesses are parallel), so the
// thread loop can run W threads at once, each lane keeping its own order of
// additions: the same results, bit for bit.
//
// Here such a loop gets `llvm.loop.vectorize.enable`, which LLVM's outer-loop
// vectoriser (the VPlan-native path, `-enable-vplan-native-path`, which
// prepareProcessPipelines turns on for tidal's pipelines) takes as its cue.
// That vectoriser does not predicate and takes no reductions, and a loop
// it is given is no longer searched for inner loops to vectorise, so a loop
// is marked only when it will succeed: a thread loop (its accesses
// parallel) of a block function with no thread loop inside, whose header
// has no phi but its counter (a round with one outcome: no min/max of the
// threads' records), every inner loop's trip count the same for every
// thread, no conditional branch but the loops' own exits, no call but
// intrinsics, and an inner loop that carries a floating-point value (a
// per-thread sum the inner-loop vectoriser leaves scalar; other inner loops
// are left to it).
//
//   opt -load-pass-plugin=TidalPasses.so -passes=tidal-vectorise-thread-nests
//
// Runs at the vectoriser's start (registered in Plugin.cpp), after
// tidal-bound-thread-loops.

#include "PassClasses.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/VectorUtils.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Support/Debug.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

#define DEBUG_TYPE "tidal-vectorise-thread-nests"

using namespace llvm;

namespace tidal {
namespace {

bool isThreadLoop(const Loop &L) {
  return findOptionMDForLoop(&L, "llvm.loop.parallel_accesses") != nullptr;
}

// Whether the outer-loop vectoriser can take L as it is (see above).
bool isVectorisableNest(Loop &L, LoopInfo &Loops, ScalarEvolution &SE) {
  if (L.isInnermost() || !isThreadLoop(L) || !L.getLoopPreheader() || !L.getExitBlock() ||
      L.getExitingBlock() != L.getLoopLatch())
    return false;
  if (std::next(L.getHeader()->phis().begin()) != L.getHeader()->phis().end())
    return false; // a reduction across the threads
  bool Reduces = false; // along an inner loop, in floating point
  for (Loop *Inner : L.getLoopsInPreorder()) {
    if (Inner == &L)
      continue;
    for (PHINode &Phi : Inner->getHeader()->phis())
      Reduces |= Phi.getType()->isFloatingPointTy();
    if (isThreadLoop(*Inner) || !Inner->getExitBlock() ||
        Inner->getExitingBlock() != Inner->getLoopLatch())
      return false;
    const SCEV *Trips = SE.getBackedgeTakenCount(Inner);
    if (isa<SCEVCouldNotCompute>(Trips) || !SE.isLoopInvariant(Trips, &L))
      return false; // the threads would leave the inner loop apart
  }
  if (!Reduces)
    return false; // the inner loops may vectorise as they are
  for (BasicBlock *Block : L.blocks()) {
    auto *Branch = dyn_cast<BranchInst>(Block->getTerminator());
    if (!Branch)
      return false;
    if (Branch->isConditional() && !Loops.getLoopFor(Block)->isLoopLatch(Block))
      return false;
    for (Instruction &I : *Block)
      if (auto *Call = dyn_cast<CallInst>(&I); Call && !isa<IntrinsicInst>(Call))
        return false;
  }
  return true;
}

} // namespace

PreservedAnalyses VectoriseThreadNestsPass::run(Function &F, FunctionAnalysisManager &FAM) {
  StringRef Name = F.getName();
  if (!Name.starts_with("__tidal_block_") && !Name.starts_with("__tidal_fitted_block_"))
    return PreservedAnalyses::all();
  LoopInfo &Loops = FAM.getResult<LoopAnalysis>(F);
  ScalarEvolution &SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
  bool Changed = false;
  for (Loop *L : Loops.getLoopsInPreorder())
    if (isVectorisableNest(*L, Loops, SE)) {
      LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << F.getName() << "': the thread loop at '"
                        << L->getHeader()->getName() << "' is vectorised across threads\n");
      addStringMetadataToLoop(L, "llvm.loop.vectorize.enable", 1);
      Changed = true;
    }
  if (!Changed)
    return PreservedAnalyses::all();
  PreservedAnalyses Preserved;
  Preserved.preserveSet<CFGAnalyses>(); // metadata only
  return Preserved;
}

} // namespace tidal

// ScalariseSplatInductionsPass: the outer-loop vectoriser widens every
// value of the inner loop, its counter too: `k` becomes a vector phi whose
// lanes are all equal (start and step splats), so `tile[k, c]`, the same
// address in every lane, is loaded by gathers (8 per n-body iteration, and
// the exit test reads lane 0 back). Here such a phi becomes a scalar phi
// and its splat; InstCombine, run here on the functions changed, then
// scalarises what is computed from it and loads a splat address once,
// broadcast (a gather of `gep %base, splat(i)` with every lane on becomes
// one load, which InstCombine does only for a plain splat of a pointer).
// At O3's last extension point, after the vectorisers.
//
//   opt -load-pass-plugin=TidalPasses.so -passes=tidal-scalarise-splat-inductions
namespace tidal {
namespace {

bool scalariseSplatInduction(PHINode &Phi, Loop &L) {
  auto *Type = dyn_cast<FixedVectorType>(Phi.getType());
  BasicBlock *Preheader = L.getLoopPreheader(), *Latch = L.getLoopLatch();
  if (!Type || !Type->getElementType()->isIntegerTy() || !Preheader || !Latch ||
      Phi.getNumIncomingValues() != 2)
    return false;
  Value *Start = getSplatValue(Phi.getIncomingValueForBlock(Preheader));
  auto *Next = dyn_cast<BinaryOperator>(Phi.getIncomingValueForBlock(Latch));
  if (!Start || !Next || Next->getOpcode() != Instruction::Add || Next->getOperand(0) != &Phi)
    return false;
  Value *Step = getSplatValue(Next->getOperand(1));
  if (!Step || !L.isLoopInvariant(Step))
    return false;
  IRBuilder<> Builder(&Phi);
  PHINode *Scalar = Builder.CreatePHI(Type->getElementType(), 2, Phi.getName() + ".scalar");
  Builder.SetInsertPoint(Next);
  Value *ScalarNext = Builder.CreateAdd(Scalar, Step, Next->getName() + ".scalar",
                                        Next->hasNoUnsignedWrap(), Next->hasNoSignedWrap());
  Scalar->addIncoming(Start, Preheader);
  Scalar->addIncoming(ScalarNext, Latch);
  Value *NextSplat = Builder.CreateVectorSplat(Type->getNumElements(), ScalarNext);
  Builder.SetInsertPoint(Phi.getParent(), Phi.getParent()->getFirstInsertionPt());
  Value *Splat = Builder.CreateVectorSplat(Type->getNumElements(), Scalar);
  Next->replaceAllUsesWith(NextSplat);
  Phi.replaceAllUsesWith(Splat);
  Next->eraseFromParent();
  Phi.eraseFromParent();
  return true;
}

// A gather whose lanes all read one address (`gep %base, splat(i)`, all
// lanes on) becomes one load, broadcast; InstCombine folds such a gather
// only when its pointer is a plain splat, not a GEP of one.
bool loadSplatGather(IntrinsicInst &Gather) {
  auto *Address = dyn_cast<GetElementPtrInst>(Gather.getArgOperand(0));
  auto *Mask = dyn_cast<Constant>(Gather.getArgOperand(2));
  if (!Address || !Mask || !Mask->isAllOnesValue() || Address->getNumIndices() != 1 ||
      Address->getPointerOperandType()->isVectorTy() || !isSplatValue(Address->getOperand(1)))
    return false;
  IRBuilder<> Builder(&Gather);
  Value *Index = Builder.CreateExtractElement(Address->getOperand(1), uint64_t(0));
  Value *Scalar = Builder.CreateGEP(Address->getSourceElementType(),
                                    Address->getPointerOperand(), Index, "",
                                    Address->isInBounds());
  auto *Type = cast<FixedVectorType>(Gather.getType());
  auto *Alignment = cast<ConstantInt>(Gather.getArgOperand(1));
  LoadInst *Load = Builder.CreateAlignedLoad(Type->getElementType(), Scalar,
                                             Align(Alignment->getZExtValue()));
  Load->copyMetadata(Gather, {LLVMContext::MD_access_group, LLVMContext::MD_tbaa,
                              LLVMContext::MD_alias_scope, LLVMContext::MD_noalias});
  Gather.replaceAllUsesWith(Builder.CreateVectorSplat(Type->getNumElements(), Load));
  Gather.eraseFromParent();
  return true;
}

} // namespace

PreservedAnalyses ScalariseSplatInductionsPass::run(Function &F,
                                                    FunctionAnalysisManager &FAM) {
  StringRef Name = F.getName();
  if (!Name.starts_with("__tidal_block_") && !Name.starts_with("__tidal_fitted_block_"))
    return PreservedAnalyses::all();
  LoopInfo &Loops = FAM.getResult<LoopAnalysis>(F);
  bool Changed = false;
  for (Loop *L : Loops.getLoopsInPreorder())
    for (PHINode &Phi : make_early_inc_range(L->getHeader()->phis()))
      Changed |= scalariseSplatInduction(Phi, *L);
  if (!Changed)
    return PreservedAnalyses::all();
  // What is computed from the splats, scalarised (here only, so that the
  // functions without such a phi, and every other target, are untouched).
  PreservedAnalyses Preserved;
  Preserved.preserveSet<CFGAnalyses>();
  FAM.invalidate(F, Preserved);
  Preserved.intersect(InstCombinePass().run(F, FAM));
  bool Loaded = false;
  for (Instruction &I : make_early_inc_range(instructions(F)))
    if (auto *Gather = dyn_cast<IntrinsicInst>(&I);
        Gather && Gather->getIntrinsicID() == Intrinsic::masked_gather)
      Loaded |= loadSplatGather(*Gather);
  if (Loaded) {
    FAM.invalidate(F, Preserved);
    Preserved.intersect(InstCombinePass().run(F, FAM));
  }
  return Preserved;
}

} // namespace tidal
