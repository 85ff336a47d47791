// The host lowering's coarsened block function (LowerHost.h), built in the
// fitted module beside __tidal_fitted_block_K (tidal.host.fitted):
//   uint32_t __tidal_coarse_block_K(ptr %params, ptr %ctx, i32 %count)
// runs the blocks ctx->block_idx.x .. + count - 1 of one row of the grid as
// one block count times as wide: for tid.z, for tid.y, for t < n * ntid.x,
// the fitted K.thread with tid.x = t, where n is the number of leading
// blocks that pass the fitted function's conditions, which it returns (the
// runtime runs the others one by one). With 16-wide blocks the x loop of a
// block is two vectors; coarsened it is n times longer.
//
// This is K exactly when nothing can tell the wide block from the blocks it
// stands for: K has no sync points (its threads are independent, any order
// goes), no shared memory and no atomics, and tid.x, ctaid.x and ntid.x are
// used only in cuda.grid's ctaid.x * ntid.x + tid.x, which with ctaid.x the
// first block of the run and tid.x < n * ntid.x is the right index; and the
// fitted K.thread passes its context to no runtime call: no check or assert
// is left that could report a thread (a report must name its own block and
// thread), so only a fault can stop it (the runtime names the run).
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-host in.ll
// on marker IR with the module flag tidal.host.fitted shows it.

#include "LowerHost.h"
#include "tidal/Contract.h"

#include "llvm/IR/PatternMatch.h"

#define DEBUG_TYPE "tidal-lower-host"

TIDAL_STATISTIC(NumCoarsened, "Kernels given a coarsened block function");

namespace tidal::host_lowering {
namespace {

using namespace llvm::PatternMatch;

// A comparison of K.thread's x index (cuda.grid's) with a value V the run
// cannot change (a constant, a parameter, a parameter plus a constant, as
// K computes it: wrapping): along the x loop it flips once, so it holds on
// a range of t (x = base + t, base the run's first index, ctaid.x *
// ntid.x): `x >= V` (`x > V`: x >= V + 1) for t from V - base (+ 1), `x <
// V` (`x <= V`: x < V + 1) for t below V - base (+ 1), these computed
// without wrapping.
struct RangeTest {
  ICmpInst *Compare;
  bool Lower;        // x >= V (+ 1), else x < V (+ 1)
  bool PlusOne;      // the + 1 (x > V, x <= V)
  Value *Parameter;  // V's parameter of K, or null (V a constant)
  int64_t Constant;  // V's constant (added to the parameter)
};

// V as a parameter of K plus a constant (Parameter null: a constant).
bool splitValue(Value *V, unsigned Parameters, Value *&Parameter, int64_t &Constant) {
  Parameter = nullptr;
  Constant = 0;
  if (auto *C = dyn_cast<ConstantInt>(V)) {
    if (C->getBitWidth() > 64)
      return false;
    Constant = C->getSExtValue();
    return true;
  }
  Value *Base = V;
  const APInt *Added;
  if (match(V, m_Add(m_Value(Base), m_APInt(Added))) && Added->getSignificantBits() <= 32)
    Constant = Added->getSExtValue();
  else if (match(V, m_Sub(m_Value(Base), m_APInt(Added))) && Added->getSignificantBits() <= 32)
    Constant = -Added->getSExtValue();
  else
    Base = V;
  auto *Argument = dyn_cast<llvm::Argument>(Base);
  if (!Argument || Argument->getArgNo() >= Parameters || !Argument->getType()->isIntegerTy(64))
    return false;
  Parameter = Argument;
  return true;
}

// The comparisons of Thread's x index that hold on a range of the x loop:
// the 5-point stencil's `x > 0 and x < m - 1`, tested per lane (64-bit
// compares and mask arithmetic, as much work per element as the stencil's
// own) unless the loop is split where they flip.
SmallVector<RangeTest, 4> rangeTests(Function &Thread, unsigned Parameters) {
  Argument *Context = Thread.getArg(Parameters);
  Argument *const ThreadIndex[3] = {Thread.getArg(Parameters + 4), Thread.getArg(Parameters + 5),
                                    Thread.getArg(Parameters + 6)};
  SmallVector<RangeTest, 4> Tests;
  for (Instruction &I : instructions(Thread)) {
    auto *Compare = dyn_cast<ICmpInst>(&I);
    if (!Compare || !Compare->isSigned() || Compare->use_empty())
      continue;
    Value *Index = Compare->getOperand(0), *Bound = Compare->getOperand(1);
    ICmpInst::Predicate Predicate = Compare->getPredicate();
    if (gridIndexOf(Index, Context, ThreadIndex) != 0u) {
      std::swap(Index, Bound);
      Predicate = ICmpInst::getSwappedPredicate(Predicate);
      if (gridIndexOf(Index, Context, ThreadIndex) != 0u)
        continue;
    }
    RangeTest Test{Compare, false, false, nullptr, 0};
    if (!splitValue(Bound, Parameters, Test.Parameter, Test.Constant))
      continue;
    switch (Predicate) {
    case ICmpInst::ICMP_SLT: break;                                        // x < V
    case ICmpInst::ICMP_SLE: Test.PlusOne = true; break;                   // x < V + 1
    case ICmpInst::ICMP_SGT: Test.Lower = Test.PlusOne = true; break;      // x >= V + 1
    case ICmpInst::ICMP_SGE: Test.Lower = true; break;                     // x >= V
    default: continue;
    }
    // The index is never negative: against a constant below 1 (below 0
    // with the + 1) the test has one outcome everywhere (a negative index's
    // wrap, `x < 0`), which LLVM folds; it bounds no range.
    if (!Test.Parameter && Test.Constant < (Test.PlusOne ? 0 : 1))
      continue;
    Tests.push_back(Test);
  }
  return Tests;
}

// Folds the branches that the fitted copy made constant and drops what they
// left unreachable or unused, so that the failure paths of the checks the
// conditions imply no longer use the thread index.
void dropFoldedChecks(Function &Thread) {
  for (BasicBlock &Block : Thread)
    ConstantFoldTerminator(&Block);
  removeUnreachableBlocks(Thread);
  SmallVector<WeakTrackingVH, 16> Dead;
  for (Instruction &I : instructions(Thread))
    if (isInstructionTriviallyDead(&I))
      Dead.push_back(&I);
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(Dead);
}

bool allUsersIn(Value *V, const SmallPtrSetImpl<Value *> &Allowed) {
  return all_of(V->users(), [&](User *U) { return Allowed.contains(U); });
}

// Why the fitted Thread cannot be coarsened, or empty: its context is only
// read (fields), and tid.x, ctaid.x and ntid.x appear only in cuda.grid's x
// index.
std::string whyNotCoarsenable(Function &Thread, unsigned Parameters) {
  Argument *Context = Thread.getArg(Parameters);
  Argument *const ThreadIndex[3] = {Thread.getArg(Parameters + 4), Thread.getArg(Parameters + 5),
                                    Thread.getArg(Parameters + 6)};
  SmallPtrSet<Value *, 16> GridIndices, Products;
  for (Instruction &I : instructions(Thread))
    if (gridIndexOf(&I, Context, ThreadIndex) == 0u) {
      GridIndices.insert(&I);
      for (Value *Operand : I.operands())
        if (isa<BinaryOperator>(Operand))
          Products.insert(Operand); // zext(ctaid.x) * zext(ntid.x)
    }
  // tid.x: zext(tid.x), only added to ctaid.x * ntid.x
  for (User *U : ThreadIndex[0]->users())
    if (!isa<ZExtInst>(U) || !allUsersIn(U, GridIndices))
      return "tid.x is used other than in cuda.grid's x index";
  for (User *U : Context->users()) {
    auto *Address = dyn_cast<GetElementPtrInst>(U);
    if (!Address || Address->getSourceElementType() != getContextType(Thread.getContext()) ||
        Address->getNumIndices() != 3 || !all_of(Address->users(), [](User *Load) {
          return isa<LoadInst>(Load);
        }))
      return "the thread passes its context on (a check, an assert or a runtime call)";
    auto *Field = dyn_cast<ConstantInt>(Address->getOperand(2));
    auto *Dimension = dyn_cast<ConstantInt>(Address->getOperand(3));
    if (!Field || !Dimension)
      return "a context field read at a variable index";
    if ((Field->getZExtValue() != BlockDimField && Field->getZExtValue() != BlockIndexField) ||
        Dimension->getZExtValue() != 0)
      continue;
    // ctaid.x, ntid.x: zext, only multiplied into cuda.grid's x index
    for (User *Load : Address->users())
      for (User *Extended : Load->users())
        if (!isa<ZExtInst>(Extended) || !allUsersIn(Extended, Products))
          return "ctaid.x or ntid.x is used other than in cuda.grid's x index";
  }
  for (Value *Product : Products)
    if (!allUsersIn(Product, GridIndices))
      return "ctaid.x * ntid.x is used other than in cuda.grid's x index";
  return "";
}

// The artificial subprogram of a new function at the kernel's line, so that
// the inlined K.thread's locations stay meaningful (as in the block
// function); null without debug info.
DISubprogram *addSubprogram(Function &Kernel, Function &F, IRBuilder<> &Builder) {
  DISubprogram *KernelScope = Kernel.getSubprogram();
  if (!KernelScope)
    return nullptr;
  DIBuilder Debugging(*F.getParent(), /*AllowUnresolved=*/false, KernelScope->getUnit());
  DISubprogram *Scope = Debugging.createFunction(
      KernelScope->getFile(), F.getName(), StringRef(), KernelScope->getFile(),
      KernelScope->getLine(), Debugging.createSubroutineType(Debugging.getOrCreateTypeArray({})),
      KernelScope->getScopeLine(), DINode::FlagArtificial, DISubprogram::SPFlagDefinition);
  F.setSubprogram(Scope);
  Builder.SetCurrentDebugLocation(DILocation::get(F.getContext(), KernelScope->getLine(), 0, Scope));
  Debugging.finalizeSubprogram(Scope);
  return Scope;
}

} // namespace

void addCoarseBlockFunction(const LoweredKernel &Fitted, ArrayRef<BlockCondition> Conditions,
                            const std::string &FittedName) {
  Function &Kernel = Fitted.Kernel;
  const unsigned Parameters = Kernel.arg_size();
  std::string Problem;
  if (!Fitted.Markers.SyncPoints.empty())
    Problem = "it has sync points";
  else if (Fitted.Markers.UsesShared)
    Problem = "it uses shared memory";
  else if (Fitted.Frame.SlotBytes || Fitted.Frame.UniformBytes)
    Problem = "it keeps values in a frame";
  else if (any_of(instructions(Fitted.Thread),
                  [](Instruction &I) { return isa<AtomicRMWInst, AtomicCmpXchgInst>(I); }))
    Problem = "it has atomics";
  // 1. A copy of the fitted K.thread without the checks it passes, if
  //    nothing in it tells the blocks of a run apart.
  Function *Copy = nullptr;
  if (Problem.empty()) {
    ValueToValueMapTy Map;
    if (Fitted.ThreadAccesses) // the same access group as the loops declare
      Map.MD()[Fitted.ThreadAccesses].reset(Fitted.ThreadAccesses);
    Copy = CloneFunction(&Fitted.Thread, Map);
    Copy->setName(Kernel.getName() + ".thread.coarse");
    dropFoldedChecks(*Copy);
    Problem = whyNotCoarsenable(*Copy, Parameters);
  }
  if (!Problem.empty()) {
    if (Copy)
      Copy->eraseFromParent();
    LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Kernel.getName() << "': not coarsened: " << Problem
                      << "\n");
    return;
  }
  Function &Thread = *Copy;

  Module &M = *Thread.getParent();
  LLVMContext &Context = M.getContext();
  Type *Pointer = PointerType::getUnqual(Context);
  Type *I32 = Type::getInt32Ty(Context), *I64 = Type::getInt64Ty(Context);
  const std::string Name =
      TIDAL_COARSE_BLOCK_PREFIX + FittedName.substr(sizeof(TIDAL_FITTED_BLOCK_PREFIX) - 1);
  Function *Coarse = Function::Create(FunctionType::get(I32, {Pointer, Pointer, I32}, false),
                                      GlobalValue::ExternalLinkage, Name, M);
  if (Function *FittedEntry = M.getFunction(FittedName))
    Coarse->copyAttributesFrom(FittedEntry);
  Argument *Params = Coarse->getArg(0), *BlockContext = Coarse->getArg(1),
           *Count = Coarse->getArg(2);
  Params->setName("params");
  BlockContext->setName("ctx");
  Count->setName("count");
  IRBuilder<> B(BasicBlock::Create(Context, "entry", Coarse));
  addSubprogram(Kernel, *Coarse, B);

  // 2. The parameter values: params[i] points at the i-th.
  SmallVector<Value *, 16> Arguments;
  for (Argument &Parameter : Kernel.args()) {
    Value *Slot = B.CreateConstInBoundsGEP1_64(Pointer, Params, Parameter.getArgNo());
    Value *Address = B.CreateLoad(Pointer, Slot, Parameter.getName() + ".addr");
    Arguments.push_back(B.CreateLoad(Parameter.getType(), Address, Parameter.getName()));
  }

  // 3. How many leading blocks of the run pass the conditions: those of x
  //    per block ((ctaid.x + 1) * ntid.x <= n: blocks below n / ntid.x),
  //    the others alike for the whole row.
  const char *Dims[3] = {"x", "y", "z"};
  Value *BlockDim[3], *BlockIndex[3];
  for (unsigned Dimension = 0; Dimension < 3; ++Dimension) {
    BlockDim[Dimension] = loadContextField(B, BlockContext, BlockDimField, Dimension,
                                           Twine("ntid.") + Dims[Dimension]);
    BlockIndex[Dimension] = loadContextField(B, BlockContext, BlockIndexField, Dimension,
                                             Twine("ctaid.") + Dims[Dimension]);
  }
  Value *Fit = B.CreateZExt(Count, I64, "fit");
  Value *RowFits = B.getTrue();
  for (const BlockCondition &C : Conditions) {
    Value *Width = B.CreateZExt(BlockDim[C.Dimension], I64);
    if (C.ParameterNumber < 0) {
      RowFits = B.CreateAnd(RowFits, B.CreateICmpULE(BlockDim[C.Dimension],
                                                     B.getInt32(uint32_t(C.Extent))));
      continue;
    }
    // at least 0: a guard `i < n` with n < 0 holds for no thread
    Value *Extent = B.CreateBinaryIntrinsic(Intrinsic::smax, Arguments[C.ParameterNumber],
                                            B.getInt64(0));
    Value *First = B.CreateZExt(BlockIndex[C.Dimension], I64);
    if (C.Dimension == 0) {
      Value *Limit = B.CreateUDiv(Extent, Width, "blocks.within");
      Value *Available = B.CreateSelect(B.CreateICmpUGT(Limit, First),
                                        B.CreateNUWSub(Limit, First), B.getInt64(0));
      Fit = B.CreateBinaryIntrinsic(Intrinsic::umin, Fit, Available, nullptr, "fit");
    } else {
      Value *End = B.CreateNUWMul(B.CreateNUWAdd(First, B.getInt64(1)), Width);
      RowFits = B.CreateAnd(RowFits, B.CreateICmpULE(End, Extent));
    }
  }
  Value *Blocks = B.CreateSelect(RowFits, B.CreateTrunc(Fit, I32), B.getInt32(0), "blocks");
  BasicBlock *Run = BasicBlock::Create(Context, "run", Coarse);
  BasicBlock *Done = BasicBlock::Create(Context, "done", Coarse);
  B.CreateCondBr(B.CreateICmpEQ(Blocks, B.getInt32(0)), Done, Run);

  // 4. for tid.z, for tid.y, for t < blocks * ntid.x: the fitted K.thread
  //    (y innermost for kernels whose accesses are contiguous along y).
  B.SetInsertPoint(Run);
  Value *Wide[3] = {B.CreateNUWMul(Blocks, BlockDim[0], "ntid.x.coarse"), BlockDim[1],
                    BlockDim[2]};
  Value *Null = ConstantPointerNull::get(cast<PointerType>(Pointer));
  Arguments.append({BlockContext, Null, Null, Null});
  const bool YInnermost = prefersYInnermost(Thread, Thread.getArg(Parameters + 4),
                                            Thread.getArg(Parameters + 5));
  auto RunThread = [&](Function &Copy, Value *X, Value *Y, Value *Z) {
    SmallVector<Value *, 16> ThreadArguments(Arguments);
    ThreadArguments.append({X, Y, Z, B.getInt32(0), B.getInt32(0)});
    CallInst *Call = B.CreateCall(&Copy, ThreadArguments);
    if (Fitted.ThreadAccesses)
      Call->setMetadata(LLVMContext::MD_access_group, Fitted.ThreadAccesses);
  };
  SmallVector<RangeTest, 4> Tests = YInnermost ? SmallVector<RangeTest, 4>()
                                               : rangeTests(Thread, Parameters);
  if (Tests.empty()) {
    emitThreadLoops(B, Wide, YInnermost, Fitted.threadLoopHints(),
                    [&](Value *X, Value *Y, Value *Z) { RunThread(Thread, X, Y, Z); });
  } else {
    // The x loop in three: [0, Low) and [High, n * ntid.x) run the copy as
    // it is, [Low, High), where every range test holds, a copy with them
    // true (its loop vectorised without their masks).
    ValueToValueMapTy Map;
    if (Fitted.ThreadAccesses)
      Map.MD()[Fitted.ThreadAccesses].reset(Fitted.ThreadAccesses);
    Function *Inside = CloneFunction(&Thread, Map);
    Inside->setName(Thread.getName() + ".inside");
    // Each test true in the copy, and assumed where it is computed: what
    // LLVM derived from its branch (x > 0: the index x - 1 is not negative,
    // no wrap) it then derives from the assumption.
    for (const RangeTest &Test : Tests) {
      auto *Compare = cast<Instruction>(Map[Test.Compare]);
      IRBuilder<> At(Compare->getNextNode());
      CallInst *Assumed = At.CreateAssumption(Compare);
      Compare->replaceUsesWithIf(At.getTrue(), [&](Use &U) { return U.getUser() != Assumed; });
    }
    Value *First = B.CreateNUWMul(B.CreateZExt(BlockIndex[0], I64), B.CreateZExt(BlockDim[0], I64),
                                  "x.first");
    Value *Width = B.CreateZExt(Wide[0], I64);
    Value *Low = B.getInt64(0), *High = Width;
    for (const RangeTest &Test : Tests) {
      // t = V - First (+ 1), saturated (V near the ends of int64: x < V
      // with V = INT64_MIN + 1 holds for no x, not for all), clamped to
      // [0, n * ntid.x]; V itself as K computes it (its add wraps)
      Value *V = B.getInt64(Test.Constant);
      if (Test.Parameter)
        V = B.CreateAdd(Arguments[cast<Argument>(Test.Parameter)->getArgNo()], V);
      Value *Flip = B.CreateBinaryIntrinsic(Intrinsic::ssub_sat, V, First);
      if (Test.PlusOne)
        Flip = B.CreateBinaryIntrinsic(Intrinsic::sadd_sat, Flip, B.getInt64(1));
      Flip = B.CreateBinaryIntrinsic(
          Intrinsic::smin, B.CreateBinaryIntrinsic(Intrinsic::smax, Flip, B.getInt64(0)), Width);
      if (Test.Lower)
        Low = B.CreateBinaryIntrinsic(Intrinsic::umax, Low, Flip, nullptr, "x.inside.low");
      else
        High = B.CreateBinaryIntrinsic(Intrinsic::umin, High, Flip, nullptr, "x.inside.high");
    }
    High = B.CreateBinaryIntrinsic(Intrinsic::umax, High, Low, nullptr, "x.inside.end");
    Value *Ranges[4] = {B.getInt32(0), B.CreateTrunc(Low, I32), B.CreateTrunc(High, I32), Wide[0]};
    Value *Once[3] = {B.getInt32(1), Wide[1], Wide[2]};
    const ThreadLoopHints Hints = Fitted.threadLoopHints();
    ThreadLoopHints Edges = Hints;
    Edges.Scalar = true; // a few threads (the stencil's: one at each end of a row)
    emitThreadLoops(B, Once, false, Hints, [&](Value *, Value *Y, Value *Z) {
      for (unsigned Part = 0; Part < 3; ++Part) {
        CountedLoop Each = beginLoop(B, B.CreateSub(Ranges[Part + 1], Ranges[Part]),
                                     Part == 1 ? "tid.x.inside" : "tid.x.edge");
        RunThread(Part == 1 ? *Inside : Thread, B.CreateAdd(Ranges[Part], Each.Counter), Y, Z);
        endLoop(B, Each, Part == 1 ? Hints : Edges, /*Innermost=*/true);
      }
    });
  }
  BasicBlock *LoopsDone = B.GetInsertBlock();
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
  PHINode *Ran = B.CreatePHI(I32, 2, "ran");
  Ran->addIncoming(B.getInt32(0), &Coarse->getEntryBlock());
  Ran->addIncoming(Blocks, LoopsDone);
  B.CreateRet(Ran);

  // 5. The fitted entry runs its one block through it too (count 1), else
  //    the block function as built: one copy of the kernel's body in the
  //    fitted module, not two, for a cheaper build.
  Function *Entry = M.getFunction(FittedName);
  Function *General = M.getFunction(TIDAL_BLOCK_PREFIX + Kernel.getName().str());
  if (Entry && General) {
    Entry->deleteBody();
    Argument *EntryParams = Entry->getArg(0), *EntryContext = Entry->getArg(1);
    IRBuilder<> E(BasicBlock::Create(Context, "entry", Entry));
    addSubprogram(Kernel, *Entry, E);
    CallInst *One = E.CreateCall(Coarse, {EntryParams, EntryContext, E.getInt32(1)});
    One->setIsNoInline(); // a copy of the body inlined here would undo the saving
    Value *Fits = E.CreateICmpNE(One, E.getInt32(0), "fits");
    BasicBlock *Done = BasicBlock::Create(Context, "done", Entry);
    BasicBlock *Other = BasicBlock::Create(Context, "general", Entry);
    E.CreateCondBr(Fits, Done, Other);
    E.SetInsertPoint(Done);
    E.CreateRetVoid();
    E.SetInsertPoint(Other);
    E.CreateCall(General, {EntryParams, EntryContext})->setTailCall();
    E.CreateRetVoid();
    if (Fitted.Thread.use_empty())
      Fitted.Thread.eraseFromParent();
  }
  ++NumCoarsened;
  LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Kernel.getName() << "': " << Name << ", "
                    << (YInnermost ? "y" : "x") << " innermost\n");
}

} // namespace tidal::host_lowering
