// The host lowering's fitted block function (LowerHost.h): the index checks
// of K.thread's stores (tidal.bounds.fault, and debug mode's checks) that a
// whole block passes when the launch's block is small enough or lies inside
// the array: `buf[tid]` with `buf` of 256 elements when ntid.x <= 256,
// `out[cuda.grid(1)]` when (ctaid.x + 1) * ntid.x <= out.shape[0]. Their
// failure path calls the runtime, and that call keeps the whole region's
// thread loop scalar.
//
// The block function as built keeps every check. The conditions under which
// a block passes some of them are recorded in !tidal.block.conditions; the
// runtime tests them at a launch and, at the first launch that meets them,
// lowers the kernel again with the module flag tidal.host.fitted, which
// makes this file build `__tidal_fitted_block_K` instead: the conditions
// tested per block, then a block function over a copy of K.thread whose
// implied checks are constant (vectorised by O3), else a call of
// `__tidal_block_K`, where a thread past an array gets its IndexError
// (docs/cpu-speed.md, "Blocks that pass their checks"). With the module flag
// tidal.host.fitted.shape (the runtime's, for blocks of more than one row),
// the fitted function is also specialised to that block shape: its test
// requires it, and its reads of the block's size are constants.

#include "LowerHost.h"
#include "tidal/Contract.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/Transforms/Utils/Cloning.h"

#define DEBUG_TYPE "tidal-lower-host"

namespace tidal::host_lowering {
namespace {

using namespace llvm::PatternMatch;

// A check of K.thread that a condition implies, and its branch; or a
// comparison of the kernel's own (a guard `if i < n:`) whose outcome the
// condition decides: Guard, true unless FailsWhenTrue.
struct ImpliedCheck {
  BranchInst *Branch;
  bool FailsWhenTrue;
  BlockCondition Condition;
  ICmpInst *Guard = nullptr;
};

// V without the wrap of a negative index (`i < 0 ? i + n : i`), whose
// condition never holds for the non-negative values matched below.
Value *withoutNegativeWrap(Value *V) {
  Value *Index;
  if (match(V, m_Select(m_SpecificICmp(ICmpInst::ICMP_SLT, m_Value(Index), m_Zero()),
                        m_Value(), m_Deferred(Index))))
    return Index;
  return V;
}

// The dimension d if V is thread index d of K.thread (an i32 below 1024),
// possibly extended.
std::optional<unsigned> threadIndexOf(Value *V, Argument *const ThreadIndex[3]) {
  Value *Inner = V;
  if (!match(V, m_ZExtOrSExt(m_Value(Inner))))
    Inner = V;
  for (unsigned Dimension = 0; Dimension < 3; ++Dimension)
    if (Inner == ThreadIndex[Dimension])
      return Dimension;
  return std::nullopt;
}

// True if V is the load of ctx->Field[Dimension] in K.thread.
bool isContextField(Value *V, Argument *Context, ContextField Field, unsigned Dimension) {
  auto *Load = dyn_cast<LoadInst>(V);
  auto *Address = Load ? dyn_cast<GetElementPtrInst>(Load->getPointerOperand()) : nullptr;
  if (!Address || Address->getPointerOperand() != Context ||
      Address->getSourceElementType() != getContextType(V->getContext()) ||
      Address->getNumIndices() != 3)
    return false;
  auto *FieldIndex = dyn_cast<ConstantInt>(Address->getOperand(2));
  auto *DimensionIndex = dyn_cast<ConstantInt>(Address->getOperand(3));
  return FieldIndex && DimensionIndex && FieldIndex->getZExtValue() == Field &&
         DimensionIndex->getZExtValue() == Dimension;
}

} // namespace

// The dimension d if V is cuda.grid's zext(ctaid.d) * zext(ntid.d) +
// zext(tid.d) (i64: never negative, never wrapping).
std::optional<unsigned> gridIndexOf(Value *V, Argument *Context,
                                    Argument *const ThreadIndex[3]) {
  Value *Left, *Right;
  if (!V->getType()->isIntegerTy(64) || !match(V, m_Add(m_Value(Left), m_Value(Right))))
    return std::nullopt;
  for (auto [Thread, Base] : {std::pair(Left, Right), std::pair(Right, Left)}) {
    std::optional<unsigned> Dimension = threadIndexOf(Thread, ThreadIndex);
    Value *BlockIndex, *BlockDim;
    if (!Dimension || !isa<ZExtInst>(Thread) ||
        !match(Base, m_c_Mul(m_ZExt(m_Value(BlockIndex)), m_ZExt(m_Value(BlockDim)))))
      continue;
    if (isContextField(BlockIndex, Context, BlockIndexField, *Dimension) &&
        isContextField(BlockDim, Context, BlockDimField, *Dimension))
      return Dimension;
  }
  return std::nullopt;
}

namespace {

// The checks of K.thread (a branch to a block that calls the bounds hook,
// taken when index u>= extent) whose passing a block condition implies.
SmallVector<ImpliedCheck, 8> findImpliedChecks(const LoweredKernel &Lowered) {
  Function &Thread = Lowered.Thread;
  const unsigned Parameters = Lowered.Kernel.arg_size();
  Argument *Context = Thread.getArg(Parameters);
  Argument *const ThreadIndex[3] = {Thread.getArg(Parameters + 4), Thread.getArg(Parameters + 5),
                                    Thread.getArg(Parameters + 6)};
  static const uint32_t MaxBlockDim[3] = {TIDAL_MAX_BLOCK_DIM_X, TIDAL_MAX_BLOCK_DIM_Y,
                                          TIDAL_MAX_BLOCK_DIM_Z};
  SmallVector<ImpliedCheck, 8> Checks;
  for (Instruction &I : instructions(Thread)) {
    auto *Call = dyn_cast<CallInst>(&I);
    Function *Callee = Call ? Call->getCalledFunction() : nullptr;
    if (!Callee || Callee->getName() != CpuBoundsErrorHook)
      continue;
    BasicBlock *Failure = Call->getParent();
    BasicBlock *Check = Failure->getSinglePredecessor();
    auto *Branch = Check ? dyn_cast<BranchInst>(Check->getTerminator()) : nullptr;
    auto *Compare = Branch && Branch->isConditional()
                        ? dyn_cast<ICmpInst>(Branch->getCondition()) : nullptr;
    if (!Compare || Branch->getSuccessor(0) == Branch->getSuccessor(1))
      continue;
    bool FailsWhenTrue = Branch->getSuccessor(0) == Failure;
    // failure when index u>= extent: taken for uge, not taken for ult
    if (Compare->getPredicate() != (FailsWhenTrue ? ICmpInst::ICMP_UGE : ICmpInst::ICMP_ULT))
      continue;
    Value *Index = withoutNegativeWrap(Compare->getOperand(0));
    Value *Extent = Compare->getOperand(1);
    std::optional<BlockCondition> Condition;
    if (auto *Constant = dyn_cast<ConstantInt>(Extent)) {
      std::optional<unsigned> Dimension = threadIndexOf(Index, ThreadIndex);
      if (Dimension && Constant->getValue().ult(MaxBlockDim[*Dimension]))
        Condition = BlockCondition{*Dimension, Constant->getZExtValue(), -1};
    } else if (auto *Parameter = dyn_cast<Argument>(Extent)) {
      // an array's extent, a parameter of the kernel
      std::optional<unsigned> Dimension = gridIndexOf(Index, Context, ThreadIndex);
      if (Dimension && Parameter->getArgNo() < Parameters && Extent->getType()->isIntegerTy(64))
        Condition = BlockCondition{*Dimension, 0, int(Parameter->getArgNo())};
    }
    if (Condition)
      Checks.push_back({Branch, FailsWhenTrue, *Condition});
  }
  // The kernel's guards: cuda.grid's index d compared with an integer
  // parameter n of the kernel (`if i < x.size:`, `if i >= n: return`). A
  // block with (ctaid.d + 1) * ntid.d <= n (the fitted entry tests it
  // signed: n >= 0 too) has every thread's index below n, so the guard has
  // one outcome in it: without it, a guard with an else (the tree
  // reduction's `buf[tid] = x[i] if i < x.size else 0`) is a masked load
  // per element in a vectorised loop.
  for (Instruction &I : instructions(Thread)) {
    auto *Compare = dyn_cast<ICmpInst>(&I);
    if (!Compare || Compare->getOperand(0)->getType() != Type::getInt64Ty(Thread.getContext()))
      continue;
    // index < n, or n > index (the same, swapped)
    ICmpInst::Predicate Predicate = Compare->getPredicate();
    Value *Index = Compare->getOperand(0), *Extent = Compare->getOperand(1);
    if (isa<Argument>(Index)) {
      std::swap(Index, Extent);
      Predicate = ICmpInst::getSwappedPredicate(Predicate);
    }
    bool Below; // the outcome for an index below n
    if (Predicate == ICmpInst::ICMP_SLT || Predicate == ICmpInst::ICMP_ULT)
      Below = true;
    else if (Predicate == ICmpInst::ICMP_SGE || Predicate == ICmpInst::ICMP_UGE)
      Below = false;
    else
      continue;
    auto *Parameter = dyn_cast<Argument>(Extent);
    if (!Parameter || Parameter->getArgNo() >= Parameters)
      continue;
    std::optional<unsigned> Dimension = gridIndexOf(Index, Context, ThreadIndex);
    if (!Dimension)
      continue;
    ImpliedCheck Guard{nullptr, !Below, BlockCondition{*Dimension, 0, int(Parameter->getArgNo())}};
    Guard.Guard = Compare;
    Checks.push_back(Guard);
  }
  return Checks;
}

// One condition per dimension and kind: the largest constant extent (the
// checks of smaller ones stay), every parameter.
SmallVector<BlockCondition, 4> mergeConditions(ArrayRef<ImpliedCheck> Checks) {
  SmallVector<BlockCondition, 4> Conditions;
  for (const ImpliedCheck &Check : Checks) {
    const BlockCondition &C = Check.Condition;
    auto Same = find_if(Conditions, [&](BlockCondition &Other) {
      return Other.Dimension == C.Dimension && Other.ParameterNumber == C.ParameterNumber;
    });
    if (Same == Conditions.end())
      Conditions.push_back(C);
    else
      Same->Extent = std::max(Same->Extent, C.Extent);
  }
  return Conditions;
}

bool isImplied(const BlockCondition &C, ArrayRef<BlockCondition> Conditions) {
  return any_of(Conditions, [&](const BlockCondition &Taken) {
    return Taken.Dimension == C.Dimension && Taken.ParameterNumber == C.ParameterNumber &&
           C.Extent >= Taken.Extent;
  });
}

// The loads of ctx->block_dim[Dimension] in F, whose context pointer is
// Context.
SmallVector<LoadInst *, 4> blockDimLoads(Function &F, Value *Context, unsigned Dimension) {
  SmallVector<LoadInst *, 4> Loads;
  for (Instruction &I : instructions(F)) {
    auto *Load = dyn_cast<LoadInst>(&I);
    auto *Address = Load ? dyn_cast<GetElementPtrInst>(Load->getPointerOperand()) : nullptr;
    if (!Address || Address->getPointerOperand() != Context ||
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

// F's loads of the block's size along Dimension get the range [Low, High).
void setBlockDimRange(Function &F, Value *Context, unsigned Dimension, uint64_t Low,
                      uint64_t High) {
  MDNode *Range = MDBuilder(F.getContext()).createRange(APInt(32, Low), APInt(32, High));
  for (LoadInst *Load : blockDimLoads(F, Context, Dimension))
    Load->setMetadata(LLVMContext::MD_range, Range);
}

// The block sizes that Conditions allow, as the range of F's loads of them:
// trip counts LLVM then knows to be short (a 16x16 tile's loops).
void narrowBlockDims(Function &F, Value *Context, ArrayRef<BlockCondition> Conditions) {
  for (const BlockCondition &C : Conditions)
    if (C.ParameterNumber < 0)
      setBlockDimRange(F, Context, C.Dimension, 1, C.Extent + 1);
}

// The block shape the runtime asks the fitted function to be specialised to
// (the module flag tidal.host.fitted.shape: !{i32 x, i32 y, i32 z}), if
// any. A flag that is not three sizes of 1 to 1024 is not used.
std::optional<std::array<uint32_t, 3>> fittedShape(const Module &M) {
  auto *Node = dyn_cast_or_null<MDNode>(M.getModuleFlag(HostFittedShapeFlag));
  if (!Node || Node->getNumOperands() != 3)
    return std::nullopt;
  std::array<uint32_t, 3> Shape;
  for (unsigned Dimension = 0; Dimension < 3; ++Dimension) {
    auto *Size = mdconst::dyn_extract<ConstantInt>(Node->getOperand(Dimension));
    if (!Size || Size->isZero() || Size->getValue().ugt(1024))
      return std::nullopt;
    Shape[Dimension] = uint32_t(Size->getZExtValue());
  }
  return Shape;
}

// F's loads of the block's size, each one constant: Shape's (under the
// fitted function's test that the block has that shape). LLVM then knows
// the thread loops' trip counts: a 16-wide row is one vector, with no
// remainder loop or tests of how many lanes are left.
void fixBlockDims(Function &F, Value *Context, const std::array<uint32_t, 3> &Shape) {
  for (unsigned Dimension = 0; Dimension < 3; ++Dimension)
    setBlockDimRange(F, Context, Dimension, Shape[Dimension], Shape[Dimension] + 1);
}

// F's thread loops (latches whose loop ID declares parallel accesses) are
// not unrolled: with constant trip counts, LLVM's full unroll runs before
// the loop vectoriser and leaves straight-line rows that the SLP vectoriser
// reassembles with gathers (the 16x16 matmul with its inner loop cut to one
// step: 1.8 ms with this, 14.4 ms without, 4.3 ms unspecialised).
void keepThreadLoops(Function &F) {
  LLVMContext &Context = F.getContext();
  for (BasicBlock &Block : F) {
    Instruction *Latch = Block.getTerminator();
    MDNode *LoopID = Latch ? Latch->getMetadata(LLVMContext::MD_loop) : nullptr;
    if (!LoopID || !findOptionMDForLoopID(LoopID, "llvm.loop.parallel_accesses"))
      continue;
    SmallVector<Metadata *, 4> Operands{nullptr};
    for (unsigned I = 1; I < LoopID->getNumOperands(); ++I)
      Operands.push_back(LoopID->getOperand(I));
    Operands.push_back(MDNode::get(Context, MDString::get(Context, "llvm.loop.unroll.disable")));
    MDNode *Kept = MDNode::getDistinct(Context, Operands);
    Kept->replaceOperandWith(0, Kept);
    Latch->setMetadata(LLVMContext::MD_loop, Kept);
  }
}

// Moves Entry's static allocas (the uniform slots, ...) to the front of New,
// which becomes the function's entry block, so that they stay static.
void moveStaticAllocas(BasicBlock &Entry, BasicBlock &New) {
  for (Instruction &I : make_early_inc_range(Entry))
    if (auto *Alloca = dyn_cast<AllocaInst>(&I); Alloca && Alloca->isStaticAlloca())
      Alloca->moveBefore(New, New.end());
}

} // namespace

void recordBlockConditions(const LoweredKernel &Lowered, StringRef BlockName) {
  SmallVector<ImpliedCheck, 8> Checks = findImpliedChecks(Lowered);
  if (Checks.empty())
    return;
  Module &M = *Lowered.Thread.getParent();
  LLVMContext &Context = M.getContext();
  NamedMDNode *Table = M.getOrInsertNamedMetadata(BlockConditionsMetadataName);
  Type *I32 = Type::getInt32Ty(Context), *I64 = Type::getInt64Ty(Context);
  for (const BlockCondition &C : mergeConditions(Checks))
    Table->addOperand(MDNode::get(
        Context, {MDString::get(Context, BlockName),
                  ConstantAsMetadata::get(ConstantInt::get(I32, C.Dimension)),
                  ConstantAsMetadata::get(ConstantInt::get(I64, C.Extent)),
                  ConstantAsMetadata::get(
                      ConstantInt::get(I32, C.ParameterNumber, /*IsSigned=*/true))}));
  LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Lowered.Kernel.getName() << "': " << Checks.size()
                    << " checks that a block passes under conditions: recorded for "
                    << TIDAL_FITTED_BLOCK_PREFIX << Lowered.Kernel.getName() << "\n");
}

void addFittedBlockFunction(const LoweredKernel &Lowered, const std::string &BlockName) {
  SmallVector<ImpliedCheck, 8> Checks = findImpliedChecks(Lowered);
  if (Checks.empty())
    return;
  SmallVector<BlockCondition, 4> Conditions = mergeConditions(Checks);

  // 1. K.thread without the checks that the conditions imply.
  Function &Thread = Lowered.Thread;
  Module &M = *Thread.getParent();
  LLVMContext &Context = M.getContext();
  ValueToValueMapTy Map;
  // The copy's accesses stay in the access group that the thread loops
  // declare parallel (a distinct node, which cloning would copy).
  if (Lowered.ThreadAccesses)
    Map.MD()[Lowered.ThreadAccesses].reset(Lowered.ThreadAccesses);
  Function *Fitted = CloneFunction(&Thread, Map);
  Fitted->setName(Thread.getName() + ".fitted");
  unsigned Dropped = 0;
  for (const ImpliedCheck &Check : Checks) {
    if (!isImplied(Check.Condition, Conditions))
      continue;
    Constant *Outcome = ConstantInt::getBool(Context, !Check.FailsWhenTrue);
    if (Check.Guard)
      cast<Instruction>(Map[Check.Guard])->replaceAllUsesWith(Outcome);
    else
      cast<BranchInst>(Map[Check.Branch])->setCondition(Outcome);
    ++Dropped;
  }
  narrowBlockDims(*Fitted, Fitted->getArg(Lowered.Kernel.arg_size()), Conditions);
  // Specialised to one block shape: K.thread's reads of the block's size
  // too, unless the kernel may be coarsened (addCoarseBlockFunction runs
  // this copy over wider blocks; a kernel with sync points or shared memory
  // never is, the first two of its conditions).
  const std::optional<std::array<uint32_t, 3>> Shape = fittedShape(M);
  if (Shape && (!Lowered.Markers.SyncPoints.empty() || Lowered.Markers.UsesShared))
    fixBlockDims(*Fitted, Fitted->getArg(Lowered.Kernel.arg_size()), *Shape);

  // 2. Its block function (and the copy for launches that run alone, for
  //    global atomics), under the fitted name.
  const std::string Name =
      TIDAL_FITTED_BLOCK_PREFIX + BlockName.substr(sizeof(TIDAL_BLOCK_PREFIX) - 1);
  LoweredKernel FittedLowered{Lowered.Kernel, *Fitted,
                              Lowered.Markers, Lowered.Frame,
                              Lowered.ThreadAccesses, Lowered.Debug,
                              Lowered.SerialUnroll};
  Function *Built = createBlockFunction(FittedLowered, Name);
  addAloneVariant(FittedLowered, Name);
  Function *Entry = M.getFunction(Name);
  for (Function *F : {Built, M.getFunction(Name + ".alone")})
    if (F) {
      narrowBlockDims(*F, F->getArg(1), Conditions);
      if (Shape) {
        fixBlockDims(*F, F->getArg(1), *Shape);
        keepThreadLoops(*F);
      }
    }
  LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Lowered.Kernel.getName() << "': " << Dropped
                    << " checks that a block passes under " << Conditions.size()
                    << " conditions: " << Name << "\n");

  // 3. Its entry first tests the conditions; a block that does not meet them
  //    runs the block function as built (another module's, linked by name).
  Function *General = cast<Function>(
      M.getOrInsertFunction(BlockName, Entry->getFunctionType()).getCallee());
  BasicBlock &Body = Entry->getEntryBlock();
  BasicBlock *Test = BasicBlock::Create(Context, "fits.test", Entry, &Body);
  moveStaticAllocas(Body, *Test);
  IRBuilder<> B(Test);
  if (DISubprogram *Scope = Entry->getSubprogram())
    B.SetCurrentDebugLocation(DILocation::get(Context, Scope->getScopeLine(), 0, Scope));
  Argument *Params = Entry->getArg(0), *BlockContext = Entry->getArg(1);
  const char *Dims[3] = {"x", "y", "z"};
  Value *Fits = nullptr;
  Type *Pointer = B.getPtrTy(), *I64 = B.getInt64Ty();
  for (const BlockCondition &C : Conditions) {
    Value *BlockDim = loadContextField(B, BlockContext, BlockDimField, C.Dimension,
                                       Twine("fit.ntid.") + Dims[C.Dimension]);
    Value *Within;
    if (C.ParameterNumber < 0) {
      Within = B.CreateICmpULE(BlockDim, B.getInt32(uint32_t(C.Extent)),
                               Twine("ntid.") + Dims[C.Dimension] + ".fits");
    } else {
      // the block's last index below the parameter, as the block function
      // reads it: params[i] points at it
      Argument *Parameter = Lowered.Kernel.getArg(C.ParameterNumber);
      Value *Slot = B.CreateConstInBoundsGEP1_64(Pointer, Params, C.ParameterNumber);
      Value *Extent = B.CreateAlignedLoad(I64, B.CreateAlignedLoad(Pointer, Slot, Align(8)),
                                          Align(8), "fit." + Parameter->getName());
      Value *BlockIndex = loadContextField(B, BlockContext, BlockIndexField, C.Dimension,
                                           Twine("fit.ctaid.") + Dims[C.Dimension]);
      Value *End = B.CreateNUWMul(B.CreateNUWAdd(B.CreateZExt(BlockIndex, I64), B.getInt64(1)),
                                  B.CreateZExt(BlockDim, I64));
      // signed: a guard `i < n` with n < 0 holds for no thread
      Within = B.CreateICmpSLE(End, Extent, Parameter->getName() + ".fits");
    }
    Fits = Fits ? B.CreateAnd(Fits, Within, "fits") : Within;
  }
  for (unsigned Dimension = 0; Shape && Dimension < 3; ++Dimension) {
    Value *BlockDim = loadContextField(B, BlockContext, BlockDimField, Dimension,
                                       Twine("fit.shape.") + Dims[Dimension]);
    Fits = B.CreateAnd(Fits, B.CreateICmpEQ(BlockDim, B.getInt32((*Shape)[Dimension])),
                       "fits");
  }
  BasicBlock *Other = BasicBlock::Create(Context, "general", Entry);
  B.CreateCondBr(Fits, &Body, Other);
  B.SetInsertPoint(Other);
  B.CreateCall(General, {Params, BlockContext})->setTailCall();
  B.CreateRetVoid();

  // 4. Runs of consecutive blocks as one wider block, where the kernel allows.
  addCoarseBlockFunction(FittedLowered, Conditions, Name);
}

} // namespace tidal::host_lowering
