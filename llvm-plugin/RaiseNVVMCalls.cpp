// The call half of tidal-raise-nvvm: each NVVM construct that clang writes
// for CUDA C++ as a call or an atomic instruction becomes the marker of
// docs/markers.md that means the same (the table: docs/plugin.md,
// "tidal-raise-nvvm"). Special registers, barriers, fences, warp shuffles,
// votes and matches, atomics (atomicrmw, cmpxchg and the nvvm atomic
// intrinsics), vprintf, __ldg, and libdevice's __nv_* functions that have a
// math marker (the others that libdevice has stay calls). Anything else named llvm.nvvm.*, __nv_* or __nvvm_*, and
// inline PTX assembly, is an error naming it.

#include "Markers.h"
#include "RaiseNVVM.h"

#include "tidal/Contract.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"

using namespace llvm;

namespace tidal {
namespace {

// "tidal.<Base>[.<Suffix>]" called with Arguments before B's insertion point.
CallInst *callMarker(IRBuilder<> &B, StringRef Base, StringRef Suffix,
                     ArrayRef<Value *> Arguments) {
  Module &M = *B.GetInsertBlock()->getModule();
  std::string Name = (Twine(MarkerPrefix) + Base).str();
  if (!Suffix.empty())
    Name += ("." + Suffix).str();
  FunctionType *Type = getMarkerType(Name, M.getContext());
  assert(Type && "raise-nvvm names a marker that is not in Markers.def");
  return B.CreateCall(M.getOrInsertFunction(Name, Type), Arguments);
}

// The marker suffix of an atomic's or a shuffle's value type: i32 i64 (or
// u32 u64 when Unsigned) f32 f64; "" for any other type.
StringRef getSuffix(Type *T, bool Unsigned) {
  if (T->isIntegerTy(32))
    return Unsigned ? "u32" : "i32";
  if (T->isIntegerTy(64))
    return Unsigned ? "u64" : "i64";
  if (T->isFloatTy())
    return "f32";
  if (T->isDoubleTy())
    return "f64";
  return "";
}

std::string describeType(Type *T) {
  std::string Text;
  raw_string_ostream Out(Text);
  T->print(Out);
  return Text;
}

// llvm.nvvm.read.ptx.sreg.<name> -> the marker without "tidal.".
const StringMap<StringRef> &getRegisterMarkers() {
  static const StringMap<StringRef> Markers = {
      {"tid.x", "tid.x"},       {"tid.y", "tid.y"},
      {"tid.z", "tid.z"},       {"ntid.x", "ntid.x"},
      {"ntid.y", "ntid.y"},     {"ntid.z", "ntid.z"},
      {"ctaid.x", "ctaid.x"},   {"ctaid.y", "ctaid.y"},
      {"ctaid.z", "ctaid.z"},   {"nctaid.x", "nctaid.x"},
      {"nctaid.y", "nctaid.y"}, {"nctaid.z", "nctaid.z"},
      {"laneid", "laneid"},     {"warpsize", "warpsize"},
      {"lanemask.lt", "lanemask.lt"},
  };
  return Markers;
}

// The math markers of one and of two arguments; libdevice's __nv_<fn>f is
// the f32 one, __nv_<fn> the f64 one.
bool isMathMarker(StringRef Function) {
  static const char *const Names[] = {
      "sin",   "cos",   "tan",   "asin",     "acos",  "atan",  "sinh",
      "cosh",  "tanh",  "asinh", "acosh",    "atanh", "exp",   "exp2",
      "expm1", "log",   "log2",  "log10",    "log1p", "sqrt",  "rsqrt",
      "cbrt",  "fabs",  "floor", "ceil",     "trunc", "round", "erf",
      "erfc",  "tgamma", "lgamma", "atan2",  "pow",   "copysign",
      "fmod",  "hypot", "fmin",  "fmax"};
  return is_contained(Names, Function);
}

// The atomic marker of an atomicrmw operation, or "" when there is none.
StringRef getAtomicBase(AtomicRMWInst::BinOp Operation, bool &Unsigned) {
  Unsigned = false;
  switch (Operation) {
  case AtomicRMWInst::Xchg:
    return "atomic.exch";
  case AtomicRMWInst::Add:
  case AtomicRMWInst::FAdd:
    return "atomic.add";
  case AtomicRMWInst::Sub:
  case AtomicRMWInst::FSub:
    return "atomic.sub";
  case AtomicRMWInst::And:
    return "atomic.and";
  case AtomicRMWInst::Or:
    return "atomic.or";
  case AtomicRMWInst::Xor:
    return "atomic.xor";
  case AtomicRMWInst::Max:
  case AtomicRMWInst::Min:
  case AtomicRMWInst::FMax:
  case AtomicRMWInst::FMin:
    return Operation == AtomicRMWInst::Max || Operation == AtomicRMWInst::FMax
               ? "atomic.max"
               : "atomic.min";
  case AtomicRMWInst::UMax:
    Unsigned = true;
    return "atomic.max";
  case AtomicRMWInst::UMin:
    Unsigned = true;
    return "atomic.min";
  case AtomicRMWInst::UIncWrap:
    Unsigned = true;
    return "atomic.inc";
  case AtomicRMWInst::UDecWrap:
    Unsigned = true;
    return "atomic.dec";
  default:
    return "";
  }
}

class CallRaiser {
  Module &M;

public:
  explicit CallRaiser(Module &M) : M(M) {}

  // Replaces I (a call, an atomicrmw or a cmpxchg) by markers; false after
  // reporting why it cannot.
  bool raise(Instruction &I) {
    if (auto *RMW = dyn_cast<AtomicRMWInst>(&I))
      return raiseAtomicRMW(*RMW);
    if (auto *CAS = dyn_cast<AtomicCmpXchgInst>(&I))
      return raiseCompareExchange(*CAS);
    auto &Call = cast<CallInst>(I);
    if (auto *Asm = dyn_cast<InlineAsm>(Call.getCalledOperand())) {
      reportUnraisable(Call, "inline PTX assembly '" + Asm->getAsmString() + "'",
                       "it has no host equivalent");
      return false;
    }
    StringRef Name = Call.getCalledFunction()->getName();
    if (Name == "vprintf")
      return raisePrint(Call);
    if (Name.consume_front("__nv_"))
      return raiseLibdevice(Call, Name);
    if (Name.consume_front("llvm.nvvm."))
      return raiseIntrinsic(Call, Name);
    reportUnraisable(Call, "call of '" + Call.getCalledFunction()->getName() + "'",
                     "tidal-raise-nvvm knows no marker for it");
    return false;
  }

private:
  static void replace(Instruction &Old, Value *New) {
    if (New) {
      New->takeName(&Old);
      Old.replaceAllUsesWith(New);
    }
    Old.eraseFromParent();
  }

  bool raiseIntrinsic(CallInst &Call, StringRef Name) {
    IRBuilder<> B(&Call);
    SmallVector<Value *, 4> Arguments(Call.args());
    auto Simple = [&](StringRef Base, ArrayRef<Value *> Operands) {
      replace(Call, callMarker(B, Base, "", Operands));
      return true;
    };
    StringRef Register = Name;
    if (Register.consume_front("read.ptx.sreg.")) {
      auto Found = getRegisterMarkers().find(Register);
      if (Found != getRegisterMarkers().end())
        return Simple(Found->second, {});
      if (Register.starts_with("lanemask."))
        return raiseLaneMask(Call, Register.drop_front(strlen("lanemask.")));
      reportUnraisable(Call, "special register '" + Call.getCalledFunction()->getName() + "'",
                       "tidal has no marker for it (the cpu target has no " +
                           Register + ")");
      return false;
    }
    // Barriers and fences.
    if (Name == "barrier0")
      return Simple("syncthreads", {});
    if (Name == "barrier0.popc")
      return Simple("syncthreads.count", Arguments);
    if (Name == "barrier0.and")
      return Simple("syncthreads.and", Arguments);
    if (Name == "barrier0.or")
      return Simple("syncthreads.or", Arguments);
    if (Name == "barrier.sync" || Name == "bar.sync") {
      auto *Id = dyn_cast<ConstantInt>(Arguments[0]);
      if (Id && Id->isZero())
        return Simple("syncthreads", {});
      reportUnraisable(Call, "named barrier '" + Call.getCalledFunction()->getName() + "'",
                       "only barrier 0 (__syncthreads) has a marker");
      return false;
    }
    if (Name == "bar.warp.sync")
      return Simple("syncwarp", Arguments);
    if (Name == "membar.cta")
      return Simple("threadfence.block", {});
    if (Name == "membar.gl")
      return Simple("threadfence", {});
    if (Name == "membar.sys")
      return Simple("threadfence.system", {});
    if (Name == "nanosleep")
      return Simple("nanosleep", Arguments);
    // Warp collectives.
    if (Name == "activemask")
      return Simple("activemask", {});
    if (Name.starts_with("shfl.sync."))
      return raiseShuffle(Call, Name.drop_front(strlen("shfl.sync.")));
    if (Name == "vote.all.sync" || Name == "vote.any.sync" || Name == "vote.uni.sync")
      return Simple(("vote." + Name.substr(5, 3)).str(), Arguments);
    if (Name == "vote.ballot.sync")
      return Simple("vote.ballot", Arguments);
    if (Name == "match.any.sync.i32" || Name == "match.any.sync.i64")
      return raiseSuffixed(Call, "match.any", Name.take_back(3));
    if (Name == "match.all.sync.i32p" || Name == "match.all.sync.i64p")
      return raiseSuffixed(Call, "match.all", Name.drop_back().take_back(3));
    // Atomics.
    if (Name.starts_with("atomic."))
      return raiseAtomicIntrinsic(Call, Name.drop_front(strlen("atomic.")));
    // Read-only loads (__ldg, __ldu).
    if (Name.starts_with("ldg.global.") || Name.starts_with("ldu.global."))
      return raiseReadOnlyLoad(Call);
    reportUnraisable(Call, "NVVM intrinsic '" + Call.getCalledFunction()->getName() + "'",
                     "tidal has no marker for it");
    return false;
  }

  // lanemask.eq/le/gt/ge from laneid and lanemask.lt (lane 31's le and gt
  // need no shift by 32 this way).
  bool raiseLaneMask(CallInst &Call, StringRef Which) {
    IRBuilder<> B(&Call);
    if (Which != "eq" && Which != "le" && Which != "gt" && Which != "ge") {
      reportUnraisable(Call, "special register '" + Call.getCalledFunction()->getName() + "'",
                       "tidal has no marker for it");
      return false;
    }
    auto Equal = [&] { return B.CreateShl(B.getInt32(1), callMarker(B, "laneid", "", {})); };
    auto Less = [&] { return callMarker(B, "lanemask.lt", "", {}); };
    Value *Result;
    if (Which == "eq") {
      Result = Equal();
    } else if (Which == "ge") {
      Result = B.CreateNot(Less());
    } else {
      Value *Below = Less();
      Result = B.CreateOr(Below, Equal());
      if (Which == "gt")
        Result = B.CreateNot(Result);
    }
    replace(Call, Result);
    return true;
  }

  // shfl.sync.<mode>.<i32|f32>(mask, value, lane, clamp): the markers
  // shuffle whole warps, which clang's __shfl_*_sync write as clamp 31
  // (0 for up); a narrower width is refused.
  bool raiseShuffle(CallInst &Call, StringRef ModeAndType) {
    auto [Mode, Type] = ModeAndType.split('.');
    StringRef Base = StringSwitch<StringRef>(Mode)
                         .Case("idx", "shfl.idx")
                         .Case("up", "shfl.up")
                         .Case("down", "shfl.down")
                         .Case("bfly", "shfl.xor")
                         .Default("");
    if (Base.empty() || (Type != "i32" && Type != "f32")) {
      reportUnraisable(Call, "warp shuffle '" + Call.getCalledFunction()->getName() + "'",
                       "only the value forms of shfl.sync.{idx,up,down,bfly} have markers");
      return false;
    }
    auto *Clamp = dyn_cast<ConstantInt>(Call.getArgOperand(3));
    uint64_t WholeWarp = Mode == "up" ? 0 : 31;
    if (!Clamp || Clamp->getZExtValue() != WholeWarp) {
      reportUnraisable(Call, "warp shuffle '" + Call.getCalledFunction()->getName() + "'",
                       "only whole-warp shuffles (width 32) have markers");
      return false;
    }
    IRBuilder<> B(&Call);
    replace(Call, callMarker(B, Base, Type,
                             {Call.getArgOperand(0), Call.getArgOperand(1),
                              Call.getArgOperand(2)}));
    return true;
  }

  bool raiseSuffixed(CallInst &Call, StringRef Base, StringRef Suffix) {
    IRBuilder<> B(&Call);
    SmallVector<Value *, 4> Arguments(Call.args());
    replace(Call, callMarker(B, Base, Suffix, Arguments));
    return true;
  }

  // llvm.nvvm.atomic.load.{inc,dec}.32 and the scoped
  // llvm.nvvm.atomic.<op>.gen.<i|f>.<cta|sys>: the host has one scope.
  bool raiseAtomicIntrinsic(CallInst &Call, StringRef Name) {
    IRBuilder<> B(&Call);
    Value *Pointer = Call.getArgOperand(0);
    Type *ValueType = Call.getType();
    if (Name.starts_with("load.inc.32") || Name.starts_with("load.dec.32")) {
      StringRef Base = Name.starts_with("load.inc") ? "atomic.inc" : "atomic.dec";
      replace(Call, callMarker(B, Base, "u32", {Pointer, Call.getArgOperand(1)}));
      return true;
    }
    auto [Operation, Rest] = Name.split('.');
    StringRef Base = StringSwitch<StringRef>(Operation)
                         .Case("add", "atomic.add")
                         .Case("exch", "atomic.exch")
                         .Case("and", "atomic.and")
                         .Case("or", "atomic.or")
                         .Case("xor", "atomic.xor")
                         .Case("inc", "atomic.inc")
                         .Case("dec", "atomic.dec")
                         .Case("cas", "atomic.cas")
                         .Default("");
    bool Unsigned = Operation == "inc" || Operation == "dec";
    StringRef Suffix = getSuffix(ValueType, Unsigned);
    if (Base.empty() || Suffix.empty() || !Rest.starts_with("gen.")) {
      StringRef Why = Operation == "max" || Operation == "min"
                          ? "its signedness is not in the intrinsic"
                          : "tidal has no marker for it";
      reportUnraisable(Call, "scoped atomic '" + Call.getCalledFunction()->getName() + "'", Why);
      return false;
    }
    SmallVector<Value *, 3> Arguments(Call.args());
    replace(Call, callMarker(B, Base, Suffix, Arguments));
    return true;
  }

  // atomicrmw <op> ptr, T -> tidal.atomic.<op>.<T> (relaxed; the host
  // lowering decides the ordering the host needs).
  bool raiseAtomicRMW(AtomicRMWInst &RMW) {
    bool Unsigned;
    StringRef Base = getAtomicBase(RMW.getOperation(), Unsigned);
    Type *ValueType = RMW.getValOperand()->getType();
    StringRef Suffix = getSuffix(ValueType, Unsigned);
    std::string Name =
        (Twine(MarkerPrefix) + Base + "." + Suffix).str();
    if (Base.empty() || Suffix.empty() || !getMarkerType(Name, M.getContext())) {
      reportUnraisable(RMW,
                       "'atomicrmw " + AtomicRMWInst::getOperationName(RMW.getOperation()) +
                           "' of " + describeType(ValueType),
                       "tidal's atomic markers take i32, i64, float and double "
                       "(and/or/xor/inc/dec/cas integers only)");
      return false;
    }
    IRBuilder<> B(&RMW);
    replace(RMW, callMarker(B, Base, Suffix, {RMW.getPointerOperand(), RMW.getValOperand()}));
    return true;
  }

  // cmpxchg ptr, T, T -> {tidal.atomic.cas.<T>, old == compare}.
  bool raiseCompareExchange(AtomicCmpXchgInst &CAS) {
    Type *ValueType = CAS.getNewValOperand()->getType();
    if (!ValueType->isIntegerTy(32) && !ValueType->isIntegerTy(64)) {
      reportUnraisable(CAS, "'cmpxchg' of " + describeType(ValueType),
                       "tidal.atomic.cas takes i32 and i64");
      return false;
    }
    IRBuilder<> B(&CAS);
    Value *Old = callMarker(B, "atomic.cas", getSuffix(ValueType, false),
                            {CAS.getPointerOperand(), CAS.getCompareOperand(),
                             CAS.getNewValOperand()});
    Value *Swapped = B.CreateICmpEQ(Old, CAS.getCompareOperand());
    Value *Pair = B.CreateInsertValue(PoisonValue::get(CAS.getType()), Old, 0);
    replace(CAS, B.CreateInsertValue(Pair, Swapped, 1));
    return true;
  }

  // vprintf(format, args): args is null or clang's alloca of a struct
  // holding the promoted arguments; tidal.print takes them as C varargs.
  bool raisePrint(CallInst &Call) {
    IRBuilder<> B(&Call);
    SmallVector<Value *, 8> Arguments{Call.getArgOperand(0)};
    Value *Packed = Call.getArgOperand(1)->stripPointerCasts();
    if (!isa<ConstantPointerNull>(Packed)) {
      auto *Alloca = dyn_cast<AllocaInst>(Packed);
      auto *Struct = Alloca ? dyn_cast<StructType>(Alloca->getAllocatedType()) : nullptr;
      if (!Struct) {
        reportUnraisable(Call, "'vprintf' call",
                         "its arguments are not a local struct (as clang's printf writes them)");
        return false;
      }
      for (unsigned Field = 0; Field < Struct->getNumElements(); ++Field)
        Arguments.push_back(B.CreateLoad(Struct->getElementType(Field),
                                         B.CreateStructGEP(Struct, Alloca, Field)));
    }
    callMarker(B, "print", "", Arguments);
    // vprintf returns the number of arguments it was given.
    replace(Call, Call.use_empty() ? nullptr : B.getInt32(Arguments.size() - 1));
    return true;
  }

  // __nv_<fn>f / __nv_<fn> -> tidal.math.<fn>.f32/f64 where the marker
  // exists; any other libdevice function that tidal's host libdevice
  // defines stays a call, for tidal-link-host-libdevice on the cpu target
  // and libdevice itself on NVPTX.
  bool raiseLibdevice(CallInst &Call, StringRef Function) {
    Type *T = Call.getType();
    StringRef Math = Function;
    if (T->isFloatTy() && !Math.consume_back("f"))
      Math = "";
    if (isMathMarker(Math) && (T->isFloatTy() || T->isDoubleTy()) &&
        all_of(Call.args(), [&](Value *A) { return A->getType() == T; }))
      return raiseSuffixed(Call, ("math." + Math).str(), T->isFloatTy() ? "f32" : "f64");
    StringRef Name = Call.getCalledFunction()->getName();
    switch (matchHostLibdevice(Name, Call.getFunctionType())) {
    case HostLibdeviceMatch::Found:
      return true;
    case HostLibdeviceMatch::WrongType:
      reportUnraisable(Call, "libdevice function '" + Name + "'",
                       "its declaration's types differ from libdevice's");
      return false;
    case HostLibdeviceMatch::Missing:
      break;
    }
    reportUnraisable(Call, "libdevice function '" + Name + "'",
                     "libdevice has no function of that name");
    return false;
  }

  // ldg/ldu.global.<kind>.<T>.p1(ptr addrspace(1) p, i32 align): a load
  // from the generic pointer that clang cast to the global space.
  bool raiseReadOnlyLoad(CallInst &Call) {
    Value *Pointer = Call.getArgOperand(0);
    if (auto *Cast = dyn_cast<AddrSpaceCastOperator>(Pointer))
      if (Cast->getSrcAddressSpace() == 0)
        Pointer = Cast->getPointerOperand();
    auto *Alignment = dyn_cast<ConstantInt>(Call.getArgOperand(1));
    if (Pointer->getType()->getPointerAddressSpace() != 0 || !Alignment ||
        !isPowerOf2_64(Alignment->getZExtValue())) {
      reportUnraisable(Call, "read-only load '" + Call.getCalledFunction()->getName() + "'",
                       "its address is not a generic pointer cast to the global space");
      return false;
    }
    IRBuilder<> B(&Call);
    replace(Call, B.CreateAlignedLoad(Call.getType(), Pointer,
                                      Align(Alignment->getZExtValue())));
    return true;
  }
};

// True for the instructions raiseNVVMCalls handles.
bool isNVVMConstruct(Instruction &I) {
  if (isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I))
    return true;
  auto *Call = dyn_cast<CallInst>(&I);
  if (!Call)
    return false;
  if (Call->isInlineAsm())
    return true;
  Function *Callee = Call->getCalledFunction();
  if (!Callee)
    return false;
  StringRef Name = Callee->getName();
  return Name == "vprintf" || Name.starts_with("llvm.nvvm.") ||
         Name.starts_with("__nv_") || Name.starts_with("__nvvm_");
}

} // namespace

bool raiseNVVMCalls(Module &M) {
  SmallVector<Instruction *, 32> Constructs;
  for (Function &F : M)
    for (Instruction &I : instructions(F))
      if (isNVVMConstruct(I))
        Constructs.push_back(&I);
  CallRaiser Raiser(M);
  for (Instruction *I : Constructs)
    if (!Raiser.raise(*I))
      return true; // reported; the rest is left as it is
  // Declarations of what was raised.
  for (Function &F : make_early_inc_range(M))
    if (F.isDeclaration() && F.use_empty() &&
        (F.getName() == "vprintf" || F.getName().starts_with("llvm.nvvm.") ||
         F.getName().starts_with("__nv_")))
      F.eraseFromParent();
  return !Constructs.empty();
}

} // namespace tidal
