// tidal-raise-nvvm: turns the NVVM IR that clang writes for CUDA C++
//   clang-19 -x cuda --cuda-device-only -nocudainc -emit-llvm -O1 k.cu
// back into tidal's marker IR (docs/markers.md), so that tidal-lower-host
// runs a CUDA C++ kernel as it runs a Python one. This file holds the
// module-level half:
//   - !nvvm.annotations "kernel" (or the ptx_kernel calling convention) ->
//     !tidal.kernels; maxntid{x,y,z}/minctasm/maxnreg -> the kernel
//     attributes "tidal-maxntid"/"tidal-minctasm"/"tidal-maxnreg";
//   - addrspace(3) globals (__shared__) -> one tidal.shared.array per kernel
//     and variable (tidal.shared.dynamic for `extern __shared__`), after
//     inlining into the kernels the device functions that use them;
//   - addrspace(1) and addrspace(4) globals (__device__, __constant__) ->
//     ordinary globals (tidal.const.array for a constant one);
//   - the device functions of a module with kernels made internal;
//   - sm_XX "target-cpu"/"target-features" attributes and the NVVM module
//     metadata dropped; "nvvm-reflect-ftz" -> "tidal.ftz".
// RaiseNVVMCalls.cpp raises the calls and atomics. Anything it cannot raise
// is an error naming it.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-raise-nvvm in.ll

#include "Markers.h"
#include "PassClasses.h"
#include "RaiseNVVM.h"

#include "tidal/Contract.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ReplaceConstant.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#define DEBUG_TYPE "tidal-raise-nvvm"

using namespace llvm;

namespace tidal {

void reportUnraisable(const Instruction &I, const Twine &What, const Twine &Why) {
  std::string Where = describeLocation(I);
  reportError(I.getContext(),
              "tidal-raise-nvvm: " + What + " in function '" +
                  I.getFunction()->getName() + "'" +
                  (Where.empty() ? "" : " at " + Where) +
                  " cannot run on the cpu target: " + Why);
}

namespace {

constexpr unsigned GlobalAddressSpace = 1;
constexpr unsigned SharedAddressSpace = 3;
constexpr unsigned ConstantAddressSpace = 4;

std::string describeInstruction(const Instruction &I) {
  std::string Text;
  raw_string_ostream Out(Text);
  I.print(Out);
  return StringRef(Text).trim().str();
}

// Where a kernel's marker calls go: after the allocas of its entry block,
// which stay first (static allocas are the ones the host lowering moves to
// the threads' frames).
Instruction *getEntryPoint(Function &F) {
  BasicBlock::iterator Point = F.getEntryBlock().getFirstInsertionPt();
  while (isa<AllocaInst>(*Point))
    ++Point;
  return &*Point;
}

// Kernels and their launch bounds from !nvvm.annotations (clang 19) or the
// ptx_kernel calling convention (later clangs).
bool raiseKernelAnnotations(Module &M) {
  LLVMContext &Context = M.getContext();
  SetVector<Function *> Kernels;
  DenseMap<Function *, SmallVector<uint64_t, 3>> MaxThreads;
  bool Failed = false;
  if (NamedMDNode *Annotations = M.getNamedMetadata("nvvm.annotations")) {
    for (MDNode *Entry : Annotations->operands()) {
      auto *F = Entry->getNumOperands() > 0
                    ? mdconst::dyn_extract_or_null<Function>(Entry->getOperand(0))
                    : nullptr;
      if (!F)
        continue; // globals' annotations (textures, managed): see below
      for (unsigned I = 1; I + 1 < Entry->getNumOperands(); I += 2) {
        auto *Key = dyn_cast<MDString>(Entry->getOperand(I));
        auto *Value = mdconst::dyn_extract_or_null<ConstantInt>(Entry->getOperand(I + 1));
        if (!Key || !Value)
          continue;
        StringRef Name = Key->getString();
        uint64_t Number = Value->getZExtValue();
        if (Name == "kernel" && Number == 1) {
          Kernels.insert(F);
        } else if (Name == "maxntidx" || Name == "maxntidy" || Name == "maxntidz") {
          auto &Bounds = MaxThreads[F];
          Bounds.resize(3, 1);
          Bounds[Name.back() - 'x'] = Number;
        } else if (Name == "minctasm") {
          F->addFnAttr(MinBlocksAttribute, utostr(Number));
        } else if (Name == "maxnreg") {
          F->addFnAttr(MaxRegistersAttribute, utostr(Number));
        } else if (Name != "align") {
          reportError(Context, "tidal-raise-nvvm: annotation '" + Name + "' of function '" +
                                   F->getName() +
                                   "' in !nvvm.annotations cannot be raised: tidal has no "
                                   "equivalent");
          Failed = true;
        }
      }
    }
    Annotations->eraseFromParent();
  }
  for (Function &F : M) {
    if (F.getCallingConv() == CallingConv::PTX_Kernel)
      Kernels.insert(&F);
    if (F.getCallingConv() == CallingConv::PTX_Kernel ||
        F.getCallingConv() == CallingConv::PTX_Device) {
      F.setCallingConv(CallingConv::C);
      for (User *U : F.users())
        if (auto *Call = dyn_cast<CallBase>(U))
          Call->setCallingConv(CallingConv::C);
    }
  }
  for (auto &[F, Bounds] : MaxThreads) {
    while (Bounds.size() > 1 && Bounds.back() == 1)
      Bounds.pop_back();
    std::string Text;
    for (uint64_t Bound : Bounds)
      Text += (Text.empty() ? "" : ",") + utostr(Bound);
    F->addFnAttr(MaxThreadsAttribute, Text);
  }
  NamedMDNode *List = M.getOrInsertNamedMetadata(KernelsMetadataName);
  SmallVector<Function *, 8> Listed = getKernels(M);
  for (Function *F : Kernels) {
    if (F->getReturnType()->isVoidTy() && !is_contained(Listed, F))
      List->addOperand(MDNode::get(Context, {ValueAsMetadata::get(F)}));
  }
  if (List->getNumOperands() == 0)
    List->eraseFromParent();
  return !Failed;
}

// Replaces the use U of a pointer in a non-generic address space by the
// generic pointer New (which dominates U): casts to generic become New,
// GEPs are rebuilt on New, loads, stores and atomics take New. Anything
// else is reported.
bool rewriteUse(Use &U, Value *New) {
  auto *I = dyn_cast<Instruction>(U.getUser());
  if (!I)
    return true; // a constant user outside any function: left to the caller
  if (auto *Cast = dyn_cast<AddrSpaceCastInst>(I)) {
    if (Cast->getDestAddressSpace() == 0) {
      Cast->replaceAllUsesWith(New);
      Cast->eraseFromParent();
      return true;
    }
  } else if (auto *GEP = dyn_cast<GetElementPtrInst>(I)) {
    if (U.getOperandNo() == GEP->getPointerOperandIndex()) {
      IRBuilder<> B(GEP);
      SmallVector<Value *, 4> Indices(GEP->indices());
      Value *NewGEP = B.CreateGEP(GEP->getSourceElementType(), New, Indices, "",
                                  GEP->isInBounds());
      NewGEP->takeName(GEP);
      bool Ok = true;
      for (Use &Inner : make_early_inc_range(GEP->uses()))
        Ok &= rewriteUse(Inner, NewGEP);
      if (GEP->use_empty())
        GEP->eraseFromParent();
      return Ok;
    }
  } else if ((isa<LoadInst>(I) && U.getOperandNo() == LoadInst::getPointerOperandIndex()) ||
             (isa<StoreInst>(I) && U.getOperandNo() == StoreInst::getPointerOperandIndex()) ||
             (isa<AtomicRMWInst>(I) && U.getOperandNo() == AtomicRMWInst::getPointerOperandIndex()) ||
             (isa<AtomicCmpXchgInst>(I) &&
              U.getOperandNo() == AtomicCmpXchgInst::getPointerOperandIndex())) {
    U.set(New);
    return true;
  }
  reportUnraisable(*I, "'" + describeInstruction(*I) + "'",
                   "tidal-raise-nvvm only raises loads, stores, atomics, GEPs and casts "
                   "of addrspace(" +
                       Twine(U.get()->getType()->getPointerAddressSpace()) + ") pointers");
  return false;
}

bool rewriteUses(Value *Old, Value *New) {
  bool Ok = true;
  for (Use &U : make_early_inc_range(Old->uses()))
    Ok &= rewriteUse(U, New);
  return Ok;
}

// __device__ and __constant__ variables become ordinary globals with the
// same name, initializer and attributes; a constant one is read through
// tidal.const.array, as the frontend's constant arrays are.
bool raiseGlobalVariable(Module &M, GlobalVariable &G) {
  auto *Generic = new GlobalVariable(
      M, G.getValueType(), G.isConstant(), G.getLinkage(),
      G.hasInitializer() ? G.getInitializer() : nullptr, "", &G,
      G.getThreadLocalMode(), 0, G.isExternallyInitialized());
  Generic->copyAttributesFrom(&G);
  Generic->takeName(&G);
  bool WasUsed = false;
  removeFromUsedLists(M, [&](Constant *C) {
    bool Match = C->stripPointerCasts() == &G;
    WasUsed |= Match;
    return Match;
  });
  if (WasUsed)
    appendToCompilerUsed(M, {Generic});
  convertUsersOfConstantsToInstructions({&G});
  bool ReadThroughMarker = G.isConstant() && G.hasInitializer() &&
                           G.getAddressSpace() == ConstantAddressSpace;
  bool Ok = true;
  DenseMap<Function *, Value *> Reads;
  for (Use &U : make_early_inc_range(G.uses())) {
    auto *I = dyn_cast<Instruction>(U.getUser());
    Value *New = Generic;
    if (I && ReadThroughMarker) {
      Value *&Read = Reads[I->getFunction()];
      if (!Read) {
        Function &F = *I->getFunction();
        IRBuilder<> B(getEntryPoint(F));
        FunctionType *Type = getMarkerType("tidal.const.array", M.getContext());
        Read = B.CreateCall(M.getOrInsertFunction("tidal.const.array", Type), {Generic},
                            G.getName() + ".const");
      }
      New = Read;
    }
    Ok &= rewriteUse(U, New);
  }
  // Constant users outside functions (another global's initializer).
  if (!G.use_empty())
    G.replaceAllUsesWith(ConstantExpr::getAddrSpaceCast(Generic, G.getType()));
  G.eraseFromParent();
  return Ok;
}

// Inlines into their callers, up to the kernels, the device functions that
// use a __shared__ variable, so that each kernel's uses of one variable are
// one block's memory (one marker call). The functions are erased
// afterwards: outside a kernel their shared memory would have no block.
bool inlineSharedMemoryUsers(Module &M, ArrayRef<GlobalVariable *> Shared) {
  SmallVector<Function *, 8> Kernels = getKernels(M);
  SetVector<Function *> Users;
  auto Collect = [&]() {
    Users.clear();
    for (GlobalVariable *G : Shared)
      for (User *U : G->users())
        if (auto *I = dyn_cast<Instruction>(U))
          if (!is_contained(Kernels, I->getFunction()))
            Users.insert(I->getFunction());
  };
  unsigned Inlined = 0;
  for (Collect(); !Users.empty(); Collect()) {
    for (Function *F : Users) {
      for (User *U : make_early_inc_range(F->users())) {
        auto *Call = dyn_cast<CallBase>(U);
        if (!Call || Call->getCalledFunction() != F) {
          reportError(M.getContext(),
                      "tidal-raise-nvvm: device function '" + F->getName() +
                          "' uses __shared__ memory and is used other than by a call: its "
                          "shared memory could not be given a block on the cpu target");
          return false;
        }
        if (Call->getFunction() == F || ++Inlined > 10000) {
          reportError(M.getContext(), "tidal-raise-nvvm: device function '" + F->getName() +
                                          "' uses __shared__ memory and is recursive: it "
                                          "cannot be inlined into its kernels");
          return false;
        }
        InlineFunctionInfo Info;
        InlineResult Result = InlineFunction(*Call, Info);
        if (!Result.isSuccess()) {
          reportError(M.getContext(), "tidal-raise-nvvm: device function '" + F->getName() +
                                          "' uses __shared__ memory and cannot be inlined "
                                          "into its caller: " +
                                          Result.getFailureReason());
          return false;
        }
      }
      F->dropAllReferences();
    }
    for (Function *F : Users)
      F->eraseFromParent();
  }
  return true;
}

// Each kernel using a __shared__ variable gets one tidal.shared.array for it
// (tidal.shared.dynamic for an `extern __shared__` array), at its entry.
bool raiseSharedVariables(Module &M) {
  SmallVector<GlobalVariable *, 8> Shared;
  for (GlobalVariable &G : M.globals())
    if (G.getAddressSpace() == SharedAddressSpace)
      Shared.push_back(&G);
  if (Shared.empty())
    return true;
  removeFromUsedLists(M, [&](Constant *C) {
    auto *G = dyn_cast<GlobalVariable>(C->stripPointerCasts());
    return G && G->getAddressSpace() == SharedAddressSpace;
  });
  SmallVector<Constant *, 8> Constants(Shared.begin(), Shared.end());
  convertUsersOfConstantsToInstructions(Constants);
  if (!inlineSharedMemoryUsers(M, Shared))
    return false;
  const DataLayout &Layout = M.getDataLayout();
  LLVMContext &Context = M.getContext();
  bool Ok = true;
  for (GlobalVariable *G : Shared) {
    bool Dynamic = G->isDeclaration();
    DenseMap<Function *, Value *> Arrays;
    for (Use &U : make_early_inc_range(G->uses())) {
      auto *I = dyn_cast<Instruction>(U.getUser());
      if (!I)
        continue;
      Value *&Array = Arrays[I->getFunction()];
      if (!Array) {
        Function &F = *I->getFunction();
        IRBuilder<> B(getEntryPoint(F));
        if (Dynamic) {
          Array = B.CreateCall(M.getOrInsertFunction("tidal.shared.dynamic",
                                                     getMarkerType("tidal.shared.dynamic", Context)),
                               {}, G->getName());
        } else {
          uint64_t Bytes = Layout.getTypeAllocSize(G->getValueType());
          Align Alignment = Layout.getPreferredAlign(G);
          Array = B.CreateCall(
              M.getOrInsertFunction("tidal.shared.array",
                                    getMarkerType("tidal.shared.array", Context)),
              {B.getInt64(Bytes), B.getInt64(Alignment.value())}, G->getName());
        }
      }
      Ok &= rewriteUse(U, Array);
    }
    if (!G->use_empty()) {
      reportError(Context, "tidal-raise-nvvm: __shared__ variable '" + G->getName() +
                               "' is used outside a function (its address in another "
                               "global's initializer)");
      return false;
    }
    G->eraseFromParent();
  }
  return Ok;
}

// The attributes and metadata that name the NVPTX target, and the effects
// clang inferred from NVVM code: the markers (and the host lowering's
// runtime calls) do what the NVVM constructs did not say they do; O3
// infers them again.
void dropNVPTXTarget(Module &M) {
  const Attribute::AttrKind Inferred[] = {Attribute::Memory, Attribute::NoSync,
                                          Attribute::NoFree, Attribute::WillReturn};
  for (Function &F : M) {
    F.removeFnAttr("target-cpu");
    F.removeFnAttr("target-features");
    if (F.isDeclaration())
      continue;
    for (Attribute::AttrKind Kind : Inferred)
      F.removeFnAttr(Kind);
    for (User *U : F.users())
      if (auto *Call = dyn_cast<CallBase>(U))
        for (Attribute::AttrKind Kind : Inferred)
          Call->removeFnAttr(Kind);
  }
  if (NamedMDNode *Version = M.getNamedMetadata("nvvmir.version"))
    Version->eraseFromParent();
  if (auto *FTZ = mdconst::extract_or_null<ConstantInt>(M.getModuleFlag("nvvm-reflect-ftz")))
    if (FTZ->getZExtValue() && !M.getModuleFlag(FlushDenormalsFlag))
      M.addModuleFlag(Module::Override, FlushDenormalsFlag, 1);
}

// In a module with kernels (a program, as CuPy's RawModule), the device
// functions are the kernels' helpers: internal, so that once the host
// lowering has inlined them (markers need their kernel's threads) nothing
// is left of them; the unused ones are erased. A module of device functions only (a library to link)
// keeps its names.
void internalizeDeviceFunctions(Module &M) {
  SmallVector<Function *, 8> Kernels = getKernels(M);
  if (Kernels.empty())
    return;
  SmallVector<GlobalValue *, 8> Used;
  collectUsedGlobalVariables(M, Used, /*CompilerUsed=*/false);
  collectUsedGlobalVariables(M, Used, /*CompilerUsed=*/true);
  for (Function &F : M)
    if (!F.isDeclaration() && !is_contained(Kernels, &F) && !is_contained(Used, &F))
      F.setLinkage(GlobalValue::InternalLinkage);
  // Those clang kept only for their external name (it inlined every call).
  for (bool Erased = true; Erased;) {
    Erased = false;
    for (Function &F : make_early_inc_range(M))
      if (F.hasLocalLinkage() && !F.isDeclaration() && F.use_empty()) {
        F.eraseFromParent();
        Erased = true;
      }
  }
}

// A last look for what still names a GPU address space.
bool checkAddressSpaces(Module &M) {
  for (Function &F : M)
    for (Instruction &I : instructions(F)) {
      auto InSpace = [](Value *V) {
        return V->getType()->isPointerTy() && V->getType()->getPointerAddressSpace() != 0;
      };
      if (InSpace(&I) || any_of(I.operands(), [&](Use &U) { return InSpace(U.get()); })) {
        reportUnraisable(I, "'" + describeInstruction(I) + "'",
                         "it uses a GPU address space that tidal-raise-nvvm could not "
                         "make generic");
        return false;
      }
    }
  return true;
}

} // namespace

bool raiseNVVM(Module &M) {
  if (!raiseKernelAnnotations(M))
    return true;
  // Collected first: raising one variable replaces llvm.compiler.used (it
  // is erased and made again), which an iterator over the globals could be
  // standing on (a __device__ and a __constant__ variable both in that list
  // crashed here).
  SmallVector<GlobalVariable *, 8> ToRaise;
  for (GlobalVariable &G : M.globals()) {
    unsigned Space = G.getAddressSpace();
    if (Space == GlobalAddressSpace || Space == ConstantAddressSpace) {
      ToRaise.push_back(&G);
    } else if (Space != 0 && Space != SharedAddressSpace) {
      reportError(M.getContext(), "tidal-raise-nvvm: global '" + G.getName() +
                                      "' in addrspace(" + Twine(Space) +
                                      ") cannot be raised: only global (1), shared (3) "
                                      "and constant (4) variables can");
      return true;
    }
  }
  for (GlobalVariable *G : ToRaise)
    if (!raiseGlobalVariable(M, *G))
      return true;
  if (!raiseSharedVariables(M))
    return true;
  internalizeDeviceFunctions(M);
  dropNVPTXTarget(M);
  raiseNVVMCalls(M);
  if (!hasReportedErrors(M.getContext()))
    checkAddressSpaces(M);
  return true;
}

} // namespace tidal
