// tidal-lower-host: turns each kernel K of !tidal.kernels into the host
// function `void @__tidal_block_K(ptr %params, ptr %ctx)` that runs every
// thread of one block (include/tidal/HostABI.h). The named pipeline
// tidal-lower-host runs it and then tidal-verify-markers.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-host in.ll

#include "Markers.h"
#include "PassClasses.h"
#include "tidal/HostABI.h"

#include "llvm/ADT/SCCIterator.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Analysis/CallGraph.h"
#include "llvm/IR/DIBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include <cstddef>

#define DEBUG_TYPE "tidal-lower-host"

using namespace llvm;

namespace tidal {
namespace {

// Fields of TidalBlockContext read by index: {block_dim, grid_dim,
// block_idx, reserved, dynamic_shared, dynamic_shared_bytes}.
enum ContextField : unsigned {
  BlockDimField = 0,
  GridDimField = 1,
  BlockIndexField = 2,
};
static_assert(offsetof(TidalBlockContext, block_dim) == 0 &&
                  offsetof(TidalBlockContext, grid_dim) == 12 &&
                  offsetof(TidalBlockContext, block_idx) == 24 &&
                  offsetof(TidalBlockContext, reserved) == 36 &&
                  offsetof(TidalBlockContext, dynamic_shared) == 40 &&
                  offsetof(TidalBlockContext, dynamic_shared_bytes) == 48 &&
                  sizeof(TidalBlockContext) == 56,
              "getContextType() no longer matches include/tidal/HostABI.h");

StructType *getContextType(LLVMContext &Context) {
  if (StructType *Existing =
          StructType::getTypeByName(Context, "tidal.BlockContext"))
    return Existing;
  Type *I32 = Type::getInt32Ty(Context);
  Type *Dim3 = ArrayType::get(I32, 3);
  return StructType::create(Context,
                            {Dim3, Dim3, Dim3, I32,
                             PointerType::getUnqual(Context),
                             Type::getInt64Ty(Context)},
                            "tidal.BlockContext");
}

// ctx->Field[Dimension]. The runtime never changes a block's context while
// the block runs, so the load is invariant: LICM may hoist it out of the
// thread loops even though the kernel stores through other pointers.
Value *loadContextField(IRBuilder<> &Builder, Value *ContextPointer,
                        ContextField Field, unsigned Dimension,
                        const Twine &Name) {
  Value *Address = Builder.CreateInBoundsGEP(
      getContextType(Builder.getContext()), ContextPointer,
      {Builder.getInt32(0), Builder.getInt32(Field),
       Builder.getInt32(Dimension)},
      Name + ".addr");
  LoadInst *Load =
      Builder.CreateAlignedLoad(Builder.getInt32Ty(), Address, Align(4), Name);
  Load->setMetadata(LLVMContext::MD_invariant_load,
                    MDNode::get(Builder.getContext(), {}));
  // The runtime enforces CUDA's launch limits (HostABI.h), so the fields
  // have CUDA's ranges: LLVM can then prove indices non-negative.
  static const uint32_t MaxBlockDim[3] = {TIDAL_MAX_BLOCK_DIM_X, TIDAL_MAX_BLOCK_DIM_Y,
                                          TIDAL_MAX_BLOCK_DIM_Z};
  static const uint32_t MaxGridDim[3] = {TIDAL_MAX_GRID_DIM_X, TIDAL_MAX_GRID_DIM_Y,
                                         TIDAL_MAX_GRID_DIM_Z};
  uint64_t Low = Field == BlockIndexField ? 0 : 1;
  uint64_t High = Field == BlockDimField    ? uint64_t(MaxBlockDim[Dimension]) + 1
                  : Field == GridDimField   ? uint64_t(MaxGridDim[Dimension]) + 1
                                            : uint64_t(MaxGridDim[Dimension]);
  MDBuilder Ranges(Builder.getContext());
  Load->setMetadata(LLVMContext::MD_range,
                    Ranges.createRange(APInt(32, Low), APInt(32, High)));
  return Load;
}

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

// Inlines into `Kernel`, transitively, every call of a function in
// `Inlinable`, so that the kernel's markers are all in its own body.
void inlineMarkerUsers(Function &Kernel,
                       const SmallPtrSetImpl<Function *> &Inlinable,
                       SmallPtrSetImpl<Function *> &Inlined) {
  bool Progress = true;
  while (Progress) {
    SmallVector<CallBase *, 8> Calls;
    for (Instruction &I : instructions(Kernel))
      if (auto *Call = dyn_cast<CallBase>(&I))
        if (Inlinable.contains(Call->getCalledFunction()))
          Calls.push_back(Call);
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

// True if every marker `F` refers to is a well-formed call that this pass
// lowers; otherwise the kernel is left alone for tidal-verify-markers.
bool hasOnlyHostLowerableMarkers(Function &F) {
  for (Instruction &I : instructions(F))
    for (Value *Operand : I.operand_values())
      if (auto *Callee = dyn_cast<Function>(Operand); Callee && isMarker(*Callee)) {
        auto *Call = dyn_cast<CallInst>(&I);
        if (!Call || !getSpecialRegisterCall(*Call))
          return false;
      }
  return true;
}

// K.thread: K's body, taking K's parameters and (ctx, tid.x, tid.y, tid.z),
// with the markers replaced by those parameters and loads of ctx.
Function *createThreadFunction(Function &Kernel) {
  LLVMContext &Context = Kernel.getContext();
  Type *I32 = Type::getInt32Ty(Context);
  SmallVector<Type *, 8> Parameters(Kernel.getFunctionType()->params());
  Parameters.append({PointerType::getUnqual(Context), I32, I32, I32});
  Function *Thread = Function::Create(
      FunctionType::get(Kernel.getReturnType(), Parameters, /*isVarArg=*/false),
      GlobalValue::InternalLinkage, Kernel.getName() + ".thread",
      Kernel.getParent());

  unsigned First = Kernel.arg_size();
  Argument *ContextPointer = Thread->getArg(First);
  Argument *ThreadIndex[3] = {Thread->getArg(First + 1),
                              Thread->getArg(First + 2),
                              Thread->getArg(First + 3)};
  ContextPointer->setName("ctx");
  ThreadIndex[0]->setName("tid.x");
  ThreadIndex[1]->setName("tid.y");
  ThreadIndex[2]->setName("tid.z");

  ValueToValueMapTy Map;
  for (auto [From, To] : zip_first(Kernel.args(), Thread->args())) {
    To.setName(From.getName());
    Map[&From] = &To;
  }
  SmallVector<ReturnInst *, 4> Returns;
  CloneFunctionInto(Thread, &Kernel, Map,
                    CloneFunctionChangeType::LocalChangesOnly, Returns);
  Thread->setLinkage(GlobalValue::InternalLinkage);
  Thread->setVisibility(GlobalValue::DefaultVisibility);
  Thread->removeFnAttr(Attribute::NoInline);
  Thread->removeFnAttr(Attribute::OptimizeNone);
  Thread->addFnAttr(Attribute::AlwaysInline);

  for (Instruction &I : make_early_inc_range(instructions(*Thread))) {
    auto *Call = dyn_cast<CallInst>(&I);
    std::optional<SpecialRegisterMarker> Marker =
        Call ? getSpecialRegisterCall(*Call) : std::nullopt;
    if (!Marker)
      continue;
    // A load keeps the call's name, else takes the register's ("ntid.x").
    std::string Name = Call->hasName()
                           ? Call->getName().str()
                           : Call->getCalledFunction()
                                 ->getName()
                                 .drop_front(StringRef(MarkerPrefix).size())
                                 .str();
    Call->setName("");
    IRBuilder<> Builder(Call);
    Value *Value = nullptr;
    switch (Marker->Register) {
    // index within block: the loop counters of the block entry
    case SpecialRegister::ThreadIndex:
      Value = ThreadIndex[Marker->Dimension];
      break;
    // block size, block index, grid size: fields of the block's context
    case SpecialRegister::BlockDim:
      Value = loadContextField(Builder, ContextPointer, BlockDimField,
                               Marker->Dimension, Name);
      break;
    case SpecialRegister::BlockIndex:
      Value = loadContextField(Builder, ContextPointer, BlockIndexField,
                               Marker->Dimension, Name);
      break;
    case SpecialRegister::GridDim:
      Value = loadContextField(Builder, ContextPointer, GridDimField,
                               Marker->Dimension, Name);
      break;
    }
    Call->replaceAllUsesWith(Value);
    Call->eraseFromParent();
  }
  return Thread;
}

// A counted loop `for (Counter = 0; Counter < Count; ++Counter)`.
struct CountedLoop {
  PHINode *Counter;
  BasicBlock *Condition;
  BasicBlock *Exit;
};

// Emits the loop's head at the builder and leaves the builder in its body.
CountedLoop beginLoop(IRBuilder<> &Builder, Value *Count, const Twine &Name) {
  LLVMContext &Context = Builder.getContext();
  Function *F = Builder.GetInsertBlock()->getParent();
  BasicBlock *Preheader = Builder.GetInsertBlock();
  BasicBlock *Condition = BasicBlock::Create(Context, Name + ".cond", F);
  BasicBlock *Body = BasicBlock::Create(Context, Name + ".body", F);
  BasicBlock *Exit = BasicBlock::Create(Context, Name + ".end");
  Builder.CreateBr(Condition);
  Builder.SetInsertPoint(Condition);
  PHINode *Counter = Builder.CreatePHI(Builder.getInt32Ty(), 2, Name);
  Counter->addIncoming(Builder.getInt32(0), Preheader);
  Builder.CreateCondBr(Builder.CreateICmpULT(Counter, Count, Name + ".inrange"),
                       Body, Exit);
  Builder.SetInsertPoint(Body);
  return {Counter, Condition, Exit};
}

// Closes the loop where the builder is and leaves the builder after it.
void endLoop(IRBuilder<> &Builder, const CountedLoop &Loop) {
  Value *Next = Builder.CreateNUWAdd(Loop.Counter, Builder.getInt32(1),
                                     Loop.Counter->getName() + ".next");
  Loop.Counter->addIncoming(Next, Builder.GetInsertBlock());
  Builder.CreateBr(Loop.Condition);
  Loop.Exit->insertInto(Builder.GetInsertBlock()->getParent());
  Builder.SetInsertPoint(Loop.Exit);
}

// void @__tidal_block_K(ptr %params, ptr %ctx): loads K's parameters from
// params[i] (cuLaunchKernel's kernelParams) and calls K.thread for every
// thread of the block, x innermost so that the x loop can be vectorised.
Function *createBlockFunction(Function &Kernel, Function &Thread,
                              const Twine &Name) {
  Module &M = *Kernel.getParent();
  LLVMContext &Context = M.getContext();
  Type *Pointer = PointerType::getUnqual(Context);
  Function *Block = Function::Create(
      FunctionType::get(Type::getVoidTy(Context), {Pointer, Pointer}, false),
      GlobalValue::ExternalLinkage, Name, M);
  AttrBuilder KernelAttributes(Context, Kernel.getAttributes().getFnAttrs());
  KernelAttributes.removeAttribute(Attribute::NoInline)
      .removeAttribute(Attribute::OptimizeNone)
      .removeAttribute(Attribute::AlwaysInline);
  Block->addFnAttrs(KernelAttributes);
  Argument *Params = Block->getArg(0);
  Argument *ContextPointer = Block->getArg(1);
  Params->setName("params");
  ContextPointer->setName("ctx");
  Block->addParamAttr(0, Attribute::NoCapture);
  Block->addParamAttr(0, Attribute::ReadOnly);
  Block->addParamAttr(1, Attribute::NoAlias);
  Block->addParamAttr(1, Attribute::NoCapture);
  Block->addParamAttr(1, Attribute::ReadOnly);

  IRBuilder<> Builder(BasicBlock::Create(Context, "entry", Block));
  // With debug info, an artificial subprogram at the kernel's line, so that
  // K.thread's locations stay meaningful once it is inlined here.
  std::optional<DIBuilder> Debug;
  DISubprogram *Scope = nullptr;
  if (DISubprogram *KernelScope = Kernel.getSubprogram()) {
    Debug.emplace(M, /*AllowUnresolved=*/false, KernelScope->getUnit());
    Scope = Debug->createFunction(
        KernelScope->getFile(), Name.str(), StringRef(), KernelScope->getFile(),
        KernelScope->getLine(),
        Debug->createSubroutineType(Debug->getOrCreateTypeArray({})),
        KernelScope->getScopeLine(), DINode::FlagArtificial,
        DISubprogram::SPFlagDefinition);
    Block->setSubprogram(Scope);
    Builder.SetCurrentDebugLocation(
        DILocation::get(Context, KernelScope->getLine(), 0, Scope));
  }

  // 1. The parameter values: params[i] points at the i-th.
  SmallVector<Value *, 12> Arguments;
  for (Argument &Parameter : Kernel.args()) {
    StringRef ParameterName = Parameter.getName();
    Value *Slot = Builder.CreateConstInBoundsGEP1_64(
        Pointer, Params, Parameter.getArgNo(), ParameterName + ".slot");
    Value *Address =
        Builder.CreateLoad(Pointer, Slot, ParameterName + ".addr");
    Arguments.push_back(
        Builder.CreateLoad(Parameter.getType(), Address, ParameterName));
  }
  Arguments.push_back(ContextPointer);

  // 2. The trip counts: the block's size.
  const char *BlockDimNames[3] = {"ntid.x", "ntid.y", "ntid.z"};
  Value *BlockDim[3];
  for (unsigned Dimension = 0; Dimension < 3; ++Dimension)
    BlockDim[Dimension] = loadContextField(Builder, ContextPointer, BlockDimField,
                                           Dimension, BlockDimNames[Dimension]);

  // 3. for tid.z, for tid.y, for tid.x: K.thread(params..., ctx, x, y, z).
  CountedLoop Z = beginLoop(Builder, BlockDim[2], "tid.z");
  CountedLoop Y = beginLoop(Builder, BlockDim[1], "tid.y");
  CountedLoop X = beginLoop(Builder, BlockDim[0], "tid.x");
  Arguments.append({X.Counter, Y.Counter, Z.Counter});
  Builder.CreateCall(&Thread, Arguments);
  endLoop(Builder, X);
  endLoop(Builder, Y);
  endLoop(Builder, Z);
  Builder.CreateRetVoid();
  if (Debug)
    Debug->finalizeSubprogram(Scope);
  return Block;
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

} // namespace

bool lowerHost(Module &M) {
  SmallVector<Function *, 8> Kernels = getKernels(M);

  // 1. Inline the functions that use markers into the kernels calling them.
  //    Recursive ones cannot be; their markers stay, and are reported.
  SmallPtrSet<Function *, 16> Inlinable = findMarkerUsers(M);
  for (Function *F : findRecursiveFunctions(M))
    Inlinable.erase(F);
  for (Function *Kernel : Kernels)
    Inlinable.erase(Kernel);
  SmallPtrSet<Function *, 16> Inlined;
  for (Function *Kernel : Kernels)
    if (!Kernel->isDeclaration())
      inlineMarkerUsers(*Kernel, Inlinable, Inlined);

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
    if (!Problem.empty()) {
      reportError(M.getContext(),
                  "cannot lower kernel '" + Kernel->getName() + "': " + Problem);
      continue;
    }
    Function *Thread = createThreadFunction(*Kernel);
    createBlockFunction(*Kernel, *Thread, BlockName);
    Lowered.insert(Kernel);
  }

  // 3. Erase the kernels, then the inlined functions nobody calls any more
  //    (markers mean nothing outside a kernel), then unused markers.
  bool Changed = !Inlined.empty() || !Lowered.empty();
  removeFromKernelList(M, Lowered);
  for (Function *Kernel : Lowered)
    Kernel->eraseFromParent();
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

PreservedAnalyses LowerHostPass::run(Module &M, ModuleAnalysisManager &) {
  return lowerHost(M) ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace tidal
