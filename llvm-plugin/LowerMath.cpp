// tidal-lower-math: replaces tidal.math.<fn>.<f32|f64> by LLVM intrinsics
// where NVPTX has an instruction (sqrt fabs floor ceil trunc round copysign
// fmin fmax; OperationRules.h, shared with the host lowering), else by libdevice's __nv_<fn>f / __nv_<fn>, linked from the
// toolkit (only what is used), internalised, and with __nvvm_reflect resolved
// (__CUDA_FTZ, __CUDA_ARCH, __CUDA_PREC_SQRT). The module's own calls of
// __nv_* functions (tidal.cuda.libdevice) are linked the same way. Also applies the module flags
// "tidal.prec-div"=0 / "tidal.prec-sqrt"=0 (f32 div.approx / sqrt.approx).
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes='tidal-lower-math<sm=90;libdevice=/usr/local/cuda/nvvm/libdevice/libdevice.10.bc>' in.ll

#include "Libdevice.h"
#include "Markers.h"
#include "OperationRules.h"
#include "PassClasses.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#define DEBUG_TYPE "tidal-lower-math"

using namespace llvm;

namespace tidal {
namespace {

std::string describeCall(const CallInst &Call) {
  std::string Text = ("marker '" + Call.getCalledFunction()->getName() +
                      "' in function '" + Call.getFunction()->getName() + "'")
                         .str();
  std::string Location = describeLocation(Call);
  return Location.empty() ? Text : Text + " at " + Location;
}

int getModuleFlag(const Module &M, StringRef Name, int Default) {
  if (auto *Value = mdconst::extract_or_null<ConstantInt>(M.getModuleFlag(Name)))
    return Value->getSExtValue();
  return Default;
}

// Links the libdevice functions M declares (and what they use) from the
// file's cached bytes; makes them internal. False after reporting an error.
bool linkLibdevice(Module &M, StringRef Path) {
  LLVMContext &Context = M.getContext();
  std::string Error;
  const MemoryBuffer *Bytes = getLibdeviceBytes(Path, Error);
  if (!Bytes) {
    reportError(Context, Error);
    return false;
  }
  Expected<std::unique_ptr<Module>> Library =
      getLazyBitcodeModule(Bytes->getMemBufferRef(), Context);
  if (!Library) {
    reportError(Context, "cannot read libdevice '" + Path + "': " +
                             toString(Library.takeError()));
    return false;
  }
  (*Library)->setTargetTriple(M.getTargetTriple());
  (*Library)->setDataLayout(M.getDataLayout());
  StringSet<> DefinedBefore;
  for (GlobalValue &GV : M.global_values())
    if (!GV.isDeclaration())
      DefinedBefore.insert(GV.getName());
  if (Linker::linkModules(M, std::move(*Library), Linker::LinkOnlyNeeded)) {
    reportError(Context, "cannot link libdevice '" + Path + "'");
    return false;
  }
  for (GlobalValue &GV : M.global_values())
    if (!GV.isDeclaration() && !DefinedBefore.contains(GV.getName()))
      GV.setLinkage(GlobalValue::InternalLinkage);
  return true;
}

// __nvvm_reflect("__CUDA_FTZ") etc. -> constants, as nvvm-reflect does.
void resolveReflect(Module &M, const NVPTXOptions &Options, bool FTZ,
                    bool PreciseSqrt) {
  for (StringRef Name : {"__nvvm_reflect", "llvm.nvvm.reflect"}) {
    Function *Reflect = M.getFunction(Name);
    if (!Reflect)
      continue;
    for (User *U : make_early_inc_range(Reflect->users())) {
      auto *Call = dyn_cast<CallInst>(U);
      if (!Call || Call->arg_size() != 1)
        continue;
      StringRef Key;
      getConstantStringInfo(Call->getArgOperand(0)->stripPointerCasts(), Key);
      int Value = StringSwitch<int>(Key)
                      .Case("__CUDA_FTZ", FTZ)
                      .Case("__CUDA_ARCH", Options.SM * 10)
                      .Case("__CUDA_PREC_SQRT", PreciseSqrt)
                      .Default(0);
      Call->replaceAllUsesWith(ConstantInt::get(Call->getType(), Value));
      Call->eraseFromParent();
    }
    if (Reflect->use_empty())
      Reflect->eraseFromParent();
  }
}

// "tidal.prec-div"=0 / "tidal.prec-sqrt"=0: the f32 divisions and square
// roots of the module's code (not libdevice's) become PTX's approximate ones.
// NVPTX in LLVM 19 picks div.approx / sqrt.approx only from llc options or
// the TargetMachine, not per instruction, so the intrinsics are explicit.
void useApproximateDivSqrt(Module &M, bool Div, bool Sqrt, bool FTZ) {
  if (!Div && !Sqrt)
    return;
  Intrinsic::ID DivID = FTZ ? Intrinsic::nvvm_div_approx_ftz_f
                            : Intrinsic::nvvm_div_approx_f;
  Intrinsic::ID SqrtID = FTZ ? Intrinsic::nvvm_sqrt_approx_ftz_f
                             : Intrinsic::nvvm_sqrt_approx_f;
  for (Function &F : M) {
    for (Instruction &I : make_early_inc_range(instructions(F))) {
      Value *Approximate = nullptr;
      IRBuilder<> Builder(&I);
      if (Div && I.getOpcode() == Instruction::FDiv && I.getType()->isFloatTy())
        Approximate = Builder.CreateIntrinsic(
            DivID, {}, {I.getOperand(0), I.getOperand(1)});
      else if (auto *Call = dyn_cast<IntrinsicInst>(&I);
               Sqrt && Call && Call->getIntrinsicID() == Intrinsic::sqrt &&
               Call->getType()->isFloatTy())
        Approximate =
            Builder.CreateIntrinsic(SqrtID, {}, {Call->getArgOperand(0)});
      if (!Approximate)
        continue;
      Approximate->takeName(&I);
      I.replaceAllUsesWith(Approximate);
      I.eraseFromParent();
    }
  }
}

// Whether libdevice has a fast (approximate) float variant of the C function
// `Name`, __nv_fast_<name>f, which fastmath=True uses as Numba does.
bool hasFastVariant(StringRef Name) {
  return StringSwitch<bool>(Name)
      .Cases("cos", "sin", "tan", "exp", "exp10", true)
      .Cases("log", "log2", "log10", "pow", true)
      .Default(false);
}

} // namespace

bool lowerMath(Module &M, const NVPTXOptions &Options) {
  bool FTZ = Options.FTZ || getModuleFlag(M, FlushDenormalsFlag, 0) != 0;
  bool PreciseDiv = getModuleFlag(M, PreciseDivisionFlag, 1) != 0;
  bool PreciseSqrt = getModuleFlag(M, PreciseSqrtFlag, 1) != 0;
  bool FastFunctions = getModuleFlag(M, FastFunctionsFlag, 0) != 0;

  // 1. Markers with a native lowering become intrinsics; the others are
  //    collected for libdevice.
  SmallVector<CallInst *, 16> NeedLibdevice;
  bool Changed = lowerMarkerCalls(M, [&](CallInst &Call, MarkerName Marker) {
    std::optional<MathRule> Rule = getMathRule(Marker.Kind);
    if (!Rule)
      return false;
    Intrinsic::ID ID = Rule->NativeIntrinsic;
    if (ID == Intrinsic::not_intrinsic) {
      NeedLibdevice.push_back(&Call);
      return false;
    }
    IRBuilder<> Builder(&Call);
    SmallVector<Value *, 2> Arguments(Call.args());
    Value *Result =
        Builder.CreateIntrinsic(ID, {Call.getType()}, Arguments);
    Result->takeName(&Call);
    Call.replaceAllUsesWith(Result);
    Call.eraseFromParent();
    return true;
  });
  useApproximateDivSqrt(M, !PreciseDiv, !PreciseSqrt, FTZ);
  // Calls of libdevice's functions themselves (tidal.cuda.libdevice, or
  // code from clang) need it too.
  SmallVector<CallInst *, 16> CallLibdevice;
  for (Function &F : M)
    if (F.isDeclaration() && F.getName().starts_with("__nv_"))
      for (User *U : F.users())
        if (auto *Call = dyn_cast<CallInst>(U))
          CallLibdevice.push_back(Call);
  if (NeedLibdevice.empty() && CallLibdevice.empty())
    return Changed;

  // 2. The rest needs libdevice: without one, each is an error.
  std::string Path = findLibdevice(Options.Libdevice);
  if (Path.empty()) {
    const char *Missing = "needs libdevice from a CUDA toolkit, and none was "
                          "found (set CUDA_HOME, or TIDAL_LIBDEVICE to the "
                          "libdevice.10.bc file)";
    for (CallInst *Call : NeedLibdevice)
      reportError(M.getContext(),
                  describeCall(*Call) + ": this math function " + Missing);
    for (CallInst *Call : CallLibdevice) {
      std::string Location = describeLocation(*Call);
      reportError(M.getContext(),
                  ("call of libdevice's '" + Call->getCalledFunction()->getName() +
                   "' in function '" + Call->getFunction()->getName() + "'" +
                   (Location.empty() ? "" : " at " + Location) + ": it " + Missing)
                      .str());
    }
    return Changed;
  }

  // 3. Calls of __nv_<fn>[f], then libdevice linked and its reflection
  //    resolved for this compile.
  setNVPTXTargetIfUnset(M);
  for (CallInst *Call : NeedLibdevice) {
    Function *Marker = Call->getCalledFunction();
    std::optional<MarkerName> Parsed = parseMarkerName(Marker->getName());
    StringRef Library = getMathRule(Parsed->Kind)->LibraryName;
    bool Fast = FastFunctions && Call->getType()->isFloatTy() && hasFastVariant(Library);
    std::string Name = ((Fast ? "__nv_fast_" : "__nv_") + Library).str();
    if (Call->getType()->isFloatTy())
      Name += "f";
    FunctionCallee Libdevice =
        M.getOrInsertFunction(Name, Marker->getFunctionType());
    IRBuilder<> Builder(Call);
    SmallVector<Value *, 2> Arguments(Call->args());
    CallInst *Result = Builder.CreateCall(Libdevice, Arguments);
    Result->takeName(Call);
    Call->replaceAllUsesWith(Result);
    Call->eraseFromParent();
    if (Marker->use_empty())
      Marker->eraseFromParent();
  }
  if (linkLibdevice(M, Path))
    resolveReflect(M, Options, FTZ, PreciseSqrt);
  return true;
}


} // namespace tidal
