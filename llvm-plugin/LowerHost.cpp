// tidal-lower-host: turns each kernel K of !tidal.kernels into the host
// function `void @__tidal_block_K(ptr %params, ptr %ctx)` that runs every
// thread of one block (include/tidal/HostABI.h, docs/cpu-target.md). The
// named pipeline tidal-lower-host runs it and then tidal-verify-markers.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-host in.ll
//
// K's body becomes the resumable thread function
//   i32 @K.thread(K's params..., ptr %ctx, ptr %shared, ptr %frame, ptr %uniforms,
//                 i32 %tid.x, i32 %tid.y, i32 %tid.z, i32 %resume, i32 %phase)
// that runs one thread from sync point %resume (0: the start) to the next
// sync point k (a barrier or a warp collective), where it returns k, or to
// its end (-1), or to a failed bounds check or assert (-2). Values that live
// across a sync point are kept per thread in %frame (struct of arrays indexed
// by the linear thread index). The block function runs rounds: every thread
// from the same resume point, one loop over the threads per resume point,
// so that each loop can be vectorised.
//
// The stages, plain functions with a small struct between each and the
// next (LowerHost.h): createThreadFunction and lowerMarkers
// (LowerHostMarkers.cpp), makeResumable and markParallelAccesses
// (LowerHostSyncPoints.cpp), createBlockFunction (LowerHostRounds.cpp),
// addAloneVariant and recordPrivateAtomics (LowerHostPrivateAtomics.cpp);
// the analyses in LowerHostUniformity.cpp. This file
// expands half and bfloat16 fma (expandHalfFma, expandBFloat16Fma), inlines
// what the kernels call and runs the stages over each kernel.
// `-debug-only=tidal-lower-host` prints their decisions and `-stats` their
// counters (docs/plugin.md).

#include "LowerHost.h"

#define DEBUG_TYPE "tidal-lower-host"

TIDAL_STATISTIC(NumKernelsLowered, "Kernels lowered for the host");
TIDAL_STATISTIC(NumFunctionsInlined, "Functions with markers inlined into kernels");

namespace tidal {
namespace host_lowering {
namespace {

// Defined functions that call a marker, directly or through direct calls.
SmallPtrSet<Function *, 16> findMarkerUsers(Module &M) {
  SmallPtrSet<Function *, 16> Users;
  SmallVector<Function *, 16> Worklist;
  auto Add = [&](Function *F) {
    if (Users.insert(F).second)
      Worklist.push_back(F);
  };
  for (Function &Marker : M)
    if (isMarker(Marker))
      for (User *U : Marker.users())
        if (auto *I = dyn_cast<Instruction>(U))
          Add(I->getFunction());
  while (!Worklist.empty())
    for (User *U : Worklist.pop_back_val()->users())
      if (auto *Call = dyn_cast<CallBase>(U))
        if (Call->getCalledFunction() && Users.contains(Call->getCalledFunction()))
          Add(Call->getFunction());
  return Users;
}

SmallPtrSet<Function *, 16> findRecursiveFunctions(Module &M) {
  SmallPtrSet<Function *, 16> Recursive;
  CallGraph Graph(M);
  for (auto SCC = scc_begin(&Graph); !SCC.isAtEnd(); ++SCC)
    if (SCC.hasCycle())
      for (CallGraphNode *Node : *SCC)
        if (Function *F = Node->getFunction())
          Recursive.insert(F);
  return Recursive;
}

// True if `Call` passes a pointer into one of its function's local arrays.
bool passesLocalArray(const CallBase &Call) {
  return any_of(Call.args(), [](const Use &Argument) {
    if (!Argument->getType()->isPointerTy())
      return false;
    const auto *Base = dyn_cast<CallInst>(getUnderlyingObject(Argument.get()));
    std::optional<MarkerName> Name = Base ? getMarkerCall(*Base) : std::nullopt;
    return Name && Name->Kind == MarkerKind::LocalArray;
  });
}

// Inlines into `Kernel`, transitively, every call of a function in
// `Inlinable`, so that the kernel's markers are all in its own body; and
// every call of a non-recursive defined function that is given a local
// array, so that guardLocalArrays sees every access to it.
void inlineMarkerUsers(Function &Kernel,
                       const SmallPtrSetImpl<Function *> &Inlinable,
                       const SmallPtrSetImpl<Function *> &Recursive,
                       SmallPtrSetImpl<Function *> &Inlined) {
  bool Progress = true;
  while (Progress) {
    SmallVector<CallBase *, 8> Calls;
    for (Instruction &I : instructions(Kernel))
      if (auto *Call = dyn_cast<CallBase>(&I)) {
        Function *Callee = Call->getCalledFunction();
        if (Inlinable.contains(Callee) ||
            (Callee && !Callee->isDeclaration() && !Recursive.contains(Callee) &&
             passesLocalArray(*Call)))
          Calls.push_back(Call);
      }
    Progress = false;
    for (CallBase *Call : Calls) {
      Function *Callee = Call->getCalledFunction();
      InlineFunctionInfo Info;
      if (InlineFunction(*Call, Info).isSuccess()) {
        Inlined.insert(Callee);
        Progress = true;
      }
    }
  }
}

// True if every marker `F` refers to is a well-formed call of a marker of
// the contract with arguments it allows; otherwise the kernel is left alone
// for tidal-check-marker-arguments and tidal-verify-markers.
bool hasOnlyHostLowerableMarkers(Function &F) {
  for (Instruction &I : instructions(F))
    for (Value *Operand : I.operand_values())
      if (auto *Callee = dyn_cast<Function>(Operand); Callee && isMarker(*Callee)) {
        auto *Call = dyn_cast<CallInst>(&I);
        if (!Call || Call->getCalledOperand() != Callee || !getCalledMarker(*Call) ||
            !hasValidMarkerArguments(*Call))
          return false;
      }
  return true;
}


// Rewrites !tidal.kernels without the kernels in `Lowered`; drops it if none
// remain.
void removeFromKernelList(Module &M, const SmallPtrSetImpl<Function *> &Lowered) {
  NamedMDNode *List = M.getNamedMetadata(KernelsMetadataName);
  if (!List)
    return;
  SmallVector<MDNode *, 8> Remaining;
  for (MDNode *Entry : List->operands())
    if (Entry->getNumOperands() == 0 ||
        !Lowered.contains(
            mdconst::dyn_extract_or_null<Function>(Entry->getOperand(0))))
      Remaining.push_back(Entry);
  List->clearOperands();
  for (MDNode *Entry : Remaining)
    List->addOperand(Entry);
  if (Remaining.empty())
    List->eraseFromParent();
}


// The calls of M's function Name (none where M has no such function),
// collected before they are rewritten.
SmallVector<CallInst *, 8> callsTo(Module &M, StringRef Name) {
  SmallVector<CallInst *, 8> Calls;
  if (Function *F = M.getFunction(Name))
    for (User *U : F->users())
      if (auto *Call = dyn_cast<CallInst>(U))
        Calls.push_back(Call);
  return Calls;
}

// llvm.fma.f16 (cuda.fp16.hfma; NVPTX's fma.rn.f16) as one float64 fma
// rounded to half: x86 without AVX512-FP16 would compute it in float and
// round twice. The float64 fma is exact where it matters (the product of
// two halves fits; the sum rounds where half cannot tell), so this rounds
// once, as fma.rn.f16 does.
bool expandHalfFma(Module &M) {
  SmallVector<CallInst *, 8> Calls = callsTo(M, "llvm.fma.f16");
  for (CallInst *Call : Calls) {
    IRBuilder<> B(Call);
    Type *Double = B.getDoubleTy();
    Value *Wide = B.CreateIntrinsic(Intrinsic::fma, {Double},
                                    {B.CreateFPExt(Call->getArgOperand(0), Double),
                                     B.CreateFPExt(Call->getArgOperand(1), Double),
                                     B.CreateFPExt(Call->getArgOperand(2), Double)});
    Call->replaceAllUsesWith(B.CreateFPTrunc(Wide, Call->getType()));
    Call->eraseFromParent();
  }
  return !Calls.empty();
}

// llvm.fma.bf16 (cuda.bf16.hfma; NVPTX's fma.rn.bf16) rounded once: x86
// would compute it in float and round twice. The product of two bfloat16s
// is exact in float64, but their sum with the third need not be (the
// exponents may be far apart), so the float64 sum is made round-to-odd
// (its exact error, from Knuth's two-sum, moves an even result one step
// toward the exact value), which the rounding to bfloat16 then rounds
// correctly.
bool expandBFloat16Fma(Module &M) {
  SmallVector<CallInst *, 8> Calls = callsTo(M, "llvm.fma.bf16");
  for (CallInst *Call : Calls) {
    IRBuilder<> B(Call);
    Type *Double = B.getDoubleTy(), *I64 = B.getInt64Ty();
    Value *A = B.CreateFPExt(Call->getArgOperand(0), Double);
    Value *Multiplier = B.CreateFPExt(Call->getArgOperand(1), Double);
    Value *Product = B.CreateFMul(A, Multiplier);
    Value *Addend = B.CreateFPExt(Call->getArgOperand(2), Double);
    Value *Sum = B.CreateFAdd(Product, Addend);
    Value *AddendPart = B.CreateFSub(Sum, Product);
    Value *ProductPart = B.CreateFSub(Sum, AddendPart);
    Value *ProductError = B.CreateFSub(Product, ProductPart);
    Value *AddendError = B.CreateFSub(Addend, AddendPart);
    Value *Error = B.CreateFAdd(ProductError, AddendError);
    Value *Bits = B.CreateBitCast(Sum, I64);
    Value *Even = B.CreateICmpEQ(B.CreateAnd(Bits, 1), ConstantInt::get(I64, 0));
    Value *Finite = B.CreateFCmpOLT(B.CreateUnaryIntrinsic(Intrinsic::fabs, Sum),
                                    ConstantFP::getInfinity(Double));
    Value *Zero = ConstantFP::get(Double, 0.0);
    Value *Inexact = B.CreateFCmpONE(Error, Zero);
    Value *ErrorAbove = B.CreateFCmpOGT(Error, Zero);
    Value *SumAbove = B.CreateFCmpOGT(Sum, Zero);
    Value *Away = B.CreateICmpEQ(ErrorAbove, SumAbove); // the exact value is farther from zero
    Value *Larger = B.CreateAdd(Bits, ConstantInt::get(I64, 1));
    Value *Smaller = B.CreateSub(Bits, ConstantInt::get(I64, 1));
    Value *Odd = B.CreateSelect(Away, Larger, Smaller);
    Value *Adjust = B.CreateAnd(B.CreateAnd(Even, Finite), Inexact);
    Value *RoundedToOdd = B.CreateSelect(Adjust, Odd, Bits);
    Call->replaceAllUsesWith(B.CreateFPTrunc(B.CreateBitCast(RoundedToOdd, Double), Call->getType()));
    Call->eraseFromParent();
  }
  return !Calls.empty();
}

// `i64 TIDAL_STATIC_SHARED_PREFIX "K"`: the static shared bytes of kernel
// K's block, which the runtime reads from the linked module to check a
// launch's dynamic shared memory (include/tidal/HostABI.h).
void addStaticSharedBytes(Module &M, StringRef Kernel, uint64_t Bytes) {
  Type *I64 = Type::getInt64Ty(M.getContext());
  auto *Global = new GlobalVariable(M, I64, /*isConstant=*/true, GlobalValue::ExternalLinkage,
                                    ConstantInt::get(I64, Bytes),
                                    TIDAL_STATIC_SHARED_PREFIX + Kernel.str());
  Global->setAlignment(Align(8));
}

} // namespace
} // namespace host_lowering

using namespace host_lowering;

bool lowerHost(Module &M) {
  SmallVector<Function *, 8> Kernels = getKernels(M);
  bool Debug = isDebugModule(M);
  // The runtime's second lowering, for the fitted block functions.
  const auto *FittedFlag =
      mdconst::extract_or_null<ConstantInt>(M.getModuleFlag(HostFittedFlag));
  bool Fitted = FittedFlag && !FittedFlag->isZero();

  // 0. Half-precision fma, rounded once (expandHalfFma).
  bool ExpandedFma = expandHalfFma(M);
  ExpandedFma |= expandBFloat16Fma(M);

  // 1. Inline the functions that use markers into the kernels calling them.
  //    Recursive ones cannot be; their markers stay, and are reported.
  //    So are the functions given a local array (guardLocalArrays).
  SmallPtrSet<Function *, 16> Inlinable = findMarkerUsers(M);
  SmallPtrSet<Function *, 16> Recursive = findRecursiveFunctions(M);
  for (Function *F : Recursive)
    Inlinable.erase(F);
  for (Function *Kernel : Kernels) {
    Inlinable.erase(Kernel);
    Recursive.insert(Kernel); // a kernel is never inlined
  }
  SmallPtrSet<Function *, 16> Inlined;
  for (Function *Kernel : Kernels)
    if (!Kernel->isDeclaration())
      inlineMarkerUsers(*Kernel, Inlinable, Recursive, Inlined);

  // 2. K -> K.thread + __tidal_block_K.
  SmallPtrSet<Function *, 8> Lowered;
  for (Function *Kernel : Kernels) {
    std::string BlockName = (TIDAL_BLOCK_PREFIX + Kernel->getName()).str();
    if (Kernel->isDeclaration() || !hasOnlyHostLowerableMarkers(*Kernel))
      continue;
    std::string Problem;
    if (!Kernel->use_empty())
      Problem = "it is used other than from !" +
                std::string(KernelsMetadataName) + " (kernels cannot be called)";
    else if (Kernel->isVarArg())
      Problem = "kernels cannot be variadic";
    else if (M.getNamedValue(BlockName))
      Problem = "the module already has a global named '" + BlockName + "'";
    else if (M.getNamedValue(TIDAL_STATIC_SHARED_PREFIX + Kernel->getName().str()))
      Problem = "the module already has a global named '" TIDAL_STATIC_SHARED_PREFIX +
                Kernel->getName().str() + "'";
    if (!Problem.empty()) {
      reportError(M.getContext(),
                  "cannot lower kernel '" + Kernel->getName() + "': " + Problem);
      continue;
    }
    ThreadFunction Thread = createThreadFunction(*Kernel);
    EntryValues Values(Thread);
    guardLocalArrays(Thread);
    MarkerLowering Markers = lowerMarkers(Thread, Values);
    splitIndexWraps(*Thread.Thread);
    FrameLayout Frame = makeResumable(Thread, Values, Markers);
    MDNode *ThreadAccesses =
        markParallelAccesses(*Thread.Thread, Markers.SerialisedAtomics);
    LoweredKernel Stages{*Kernel, *Thread.Thread, Markers,
                         Frame,   ThreadAccesses, Debug,
                         serialThreadUnroll(*Thread.Thread, ThreadAccesses)};
    if (Fitted) {
      addFittedBlockFunction(Stages, BlockName);
    } else {
      createBlockFunction(Stages, BlockName);
      addAloneVariant(Stages, BlockName);
      recordPrivateAtomics(Stages, BlockName);
      recordBlockConditions(Stages, BlockName);
      addStaticSharedBytes(M, Kernel->getName(), Markers.StaticSharedBytes);
    }
    Lowered.insert(Kernel);
    ++NumKernelsLowered;
  }

  // 3. Erase the kernels, then the inlined functions nobody calls any more
  //    (markers mean nothing outside a kernel), then unused markers.
  NumFunctionsInlined += Inlined.size();
  printStatisticsAtShutdown(); // after a counter counted: see DebugOutput.cpp
  bool Changed = ExpandedFma || !Inlined.empty() || !Lowered.empty();
  removeFromKernelList(M, Lowered);
  for (Function *Kernel : Lowered)
    Kernel->eraseFromParent();
  // Inlining prunes the branches that constant arguments decide, so a
  // function called only from such a branch is never inlined: it goes too
  // when nothing calls it any more.
  for (Function *F : Inlinable)
    if (F->hasLocalLinkage())
      Inlined.insert(F);
  for (bool Erased = true; Erased;) {
    SmallVector<Function *, 8> Dead;
    for (Function *F : Inlined)
      if (F->use_empty())
        Dead.push_back(F);
    for (Function *F : Dead) {
      Inlined.erase(F);
      F->eraseFromParent();
    }
    Erased = !Dead.empty();
  }
  for (Function &Marker : make_early_inc_range(M))
    if (isMarker(Marker) && Marker.isDeclaration() && Marker.use_empty()) {
      Marker.eraseFromParent();
      Changed = true;
    }
  return Changed;
}


} // namespace tidal

