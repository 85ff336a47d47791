// The host lowering's block-shape variant (LowerHost.h): where K.thread
// checks an index that is a thread index against a constant extent
// (`buf[tid] = ...` with `buf` of 256 elements), __tidal_block_K runs a copy
// of its block function whose block-size loads carry the range that a block
// no larger than those extents has, when the launch's block is that small.
// LLVM then proves the checks of the thread loops true and vectorises
// regions that a call in the failure path kept scalar (docs/cpu-target.md,
// "Blocks no larger than the kernel's arrays").

#include "LowerHost.h"
#include "tidal/Contract.h"

#include "llvm/IR/MDBuilder.h"
#include "llvm/Transforms/Utils/Cloning.h"

#define DEBUG_TYPE "tidal-lower-host"

namespace tidal::host_lowering {
namespace {

// The thread-index dimension that V is (through casts and the select that
// wraps a negative index), or none.
std::optional<unsigned> threadIndexDimension(Value *V, Argument *const ThreadIndex[3],
                                             unsigned Depth = 0) {
  if (Depth > 4)
    return std::nullopt;
  for (unsigned Dimension = 0; Dimension < 3; ++Dimension)
    if (V == ThreadIndex[Dimension])
      return Dimension;
  if (auto *Cast = dyn_cast<CastInst>(V))
    return threadIndexDimension(Cast->getOperand(0), ThreadIndex, Depth + 1);
  if (auto *Select = dyn_cast<SelectInst>(V)) // tid < 0 ? tid + n : tid
    return threadIndexDimension(Select->getFalseValue(), ThreadIndex, Depth + 1);
  return std::nullopt;
}

// For each dimension, the largest extent E of a bounds check of K.thread
// that fails when that thread index is E or more (0: none): a block with
// ntid <= E passes every such check of E.
std::array<uint64_t, 3> checkedThreadIndexExtents(Function &Thread,
                                                  Argument *const ThreadIndex[3]) {
  std::array<uint64_t, 3> Extents{0, 0, 0};
  for (Instruction &I : instructions(Thread)) {
    auto *Call = dyn_cast<CallInst>(&I);
    Function *Callee = Call ? Call->getCalledFunction() : nullptr;
    if (!Callee || Callee->getName() != CpuBoundsErrorHook)
      continue;
    BasicBlock *Failure = Call->getParent();
    BasicBlock *Check = Failure->getSinglePredecessor();
    auto *Branch = Check ? dyn_cast<BranchInst>(Check->getTerminator()) : nullptr;
    if (!Branch || !Branch->isConditional())
      continue;
    auto *Compare = dyn_cast<ICmpInst>(Branch->getCondition());
    auto *Extent = Compare ? dyn_cast<ConstantInt>(Compare->getOperand(1)) : nullptr;
    if (!Extent || Extent->getValue().getActiveBits() > 32)
      continue;
    // failure when index u>= E (taken) or when !(index u< E) (not taken)
    bool FailsAtOrAbove =
        (Compare->getPredicate() == ICmpInst::ICMP_UGE && Branch->getSuccessor(0) == Failure) ||
        (Compare->getPredicate() == ICmpInst::ICMP_ULT && Branch->getSuccessor(1) == Failure);
    if (!FailsAtOrAbove)
      continue;
    if (std::optional<unsigned> Dimension =
            threadIndexDimension(Compare->getOperand(0), ThreadIndex))
      Extents[*Dimension] = std::max(Extents[*Dimension], Extent->getZExtValue());
  }
  return Extents;
}

// The loads of ctx->block_dim[Dimension] in F.
SmallVector<LoadInst *, 4> blockDimLoads(Function &F, unsigned Dimension) {
  SmallVector<LoadInst *, 4> Loads;
  for (Instruction &I : instructions(F)) {
    auto *Load = dyn_cast<LoadInst>(&I);
    auto *Address = Load ? dyn_cast<GetElementPtrInst>(Load->getPointerOperand()) : nullptr;
    if (!Address || Address->getPointerOperand() != F.getArg(1) ||
        Address->getSourceElementType() != getContextType(F.getContext()) ||
        Address->getNumIndices() != 3)
      continue;
    auto *Field = dyn_cast<ConstantInt>(Address->getOperand(2));
    auto *Index = dyn_cast<ConstantInt>(Address->getOperand(3));
    if (Field && Index && Field->getZExtValue() == BlockDimField &&
        Index->getZExtValue() == Dimension)
      Loads.push_back(Load);
  }
  return Loads;
}

} // namespace

void addBlockShapeVariant(const LoweredKernel &Lowered, Function &Block) {
  Function &Thread = Lowered.Thread;
  const unsigned First = Lowered.Kernel.arg_size() + 4; // after ctx, shared, frame, uniforms
  Argument *const ThreadIndex[3] = {Thread.getArg(First), Thread.getArg(First + 1),
                                    Thread.getArg(First + 2)};
  std::array<uint64_t, 3> Extents = checkedThreadIndexExtents(Thread, ThreadIndex);
  static const uint32_t MaxBlockDim[3] = {TIDAL_MAX_BLOCK_DIM_X, TIDAL_MAX_BLOCK_DIM_Y,
                                          TIDAL_MAX_BLOCK_DIM_Z};
  bool Narrower = false;
  for (unsigned Dimension = 0; Dimension < 3; ++Dimension) {
    if (Extents[Dimension] >= MaxBlockDim[Dimension])
      Extents[Dimension] = 0;
    Narrower |= Extents[Dimension] != 0;
  }
  if (!Narrower)
    return;

  // 1. The block function as built, and its copy for small blocks, whose
  //    block-size loads say so.
  Module &M = *Block.getParent();
  LLVMContext &Context = M.getContext();
  const std::string Name = Block.getName().str();
  ValueToValueMapTy WideMap, SmallMap;
  Function *Wide = CloneFunction(&Block, WideMap);
  Wide->setName(Name + ".any");
  Wide->setLinkage(GlobalValue::InternalLinkage);
  Function *Small = CloneFunction(&Block, SmallMap);
  Small->setName(Name + ".small");
  Small->setLinkage(GlobalValue::InternalLinkage);
  // Compile time: the copy for any block stays a function of its own,
  // compiled for size (its regions stay scalar, as the checks kept them
  // before this variant existed).
  Wide->addFnAttr(Attribute::NoInline);
  Wide->addFnAttr(Attribute::OptimizeForSize);
  Wide->addFnAttr(Attribute::MinSize);
  MDBuilder Ranges(Context);
  for (unsigned Dimension = 0; Dimension < 3; ++Dimension)
    if (Extents[Dimension])
      for (LoadInst *Load : blockDimLoads(*Small, Dimension))
        Load->setMetadata(LLVMContext::MD_range,
                          Ranges.createRange(APInt(32, 1), APInt(32, Extents[Dimension] + 1)));
  LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Lowered.Kernel.getName()
                    << "': checks of thread indices against extents (" << Extents[0]
                    << ", " << Extents[1] << ", " << Extents[2] << "): "
                    << Small->getName() << " for blocks within them\n");

  // 2. Block becomes the choice between them, by the launch's block size.
  DISubprogram *Scope = Block.getSubprogram(); // debug mode: the calls' scope
  Block.deleteBody();
  Block.setSubprogram(Scope);
  IRBuilder<> B(BasicBlock::Create(Context, "entry", &Block));
  if (Scope)
    B.SetCurrentDebugLocation(DILocation::get(Context, Scope->getScopeLine(), 0, Scope));
  Argument *Params = Block.getArg(0), *BlockContext = Block.getArg(1);
  Value *Fits = nullptr;
  const char *Names[3] = {"ntid.x", "ntid.y", "ntid.z"};
  for (unsigned Dimension = 0; Dimension < 3; ++Dimension) {
    if (!Extents[Dimension])
      continue;
    Value *Within = B.CreateICmpULE(
        loadContextField(B, BlockContext, BlockDimField, Dimension, Names[Dimension]),
        B.getInt32(uint32_t(Extents[Dimension])), Twine(Names[Dimension]) + ".fits");
    Fits = Fits ? B.CreateAnd(Fits, Within, "fits") : Within;
  }
  BasicBlock *RunSmall = BasicBlock::Create(Context, "small", &Block);
  BasicBlock *RunAny = BasicBlock::Create(Context, "any", &Block);
  B.CreateCondBr(Fits, RunSmall, RunAny);
  B.SetInsertPoint(RunAny);
  B.CreateCall(Wide, {Params, BlockContext})->setTailCall();
  B.CreateRetVoid();
  B.SetInsertPoint(RunSmall);
  CallInst *CallSmall = B.CreateCall(Small, {Params, BlockContext});
  B.CreateRetVoid();
  // 3. The small copy inlined now, whatever its size: what proves the checks
  //    is the branch above, which then dominates the copy's loops. (A
  //    function of its own, its narrower loads would be merged by O3 with
  //    those of the inlined K.thread, whose range is any block's.)
  InlineFunctionInfo Inlining;
  if (InlineFunction(*CallSmall, Inlining).isSuccess())
    Small->eraseFromParent();
}

} // namespace tidal::host_lowering
