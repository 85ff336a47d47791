// The operation rules of the atomic and math markers (OperationRules.h).

#include "OperationRules.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace tidal {

std::optional<AtomicRule> getAtomicRule(MarkerName Marker) {
  using BinOp = AtomicRMWInst::BinOp;
  MarkerValueKind Kind = getValueKind(Marker.Suffix);
  bool Float = Kind == MarkerValueKind::Float;
  bool Signed = Kind == MarkerValueKind::Signed;
  bool Wide = Marker.Suffix == MarkerSuffix::I64 ||
              Marker.Suffix == MarkerSuffix::U64;
  auto RMW = [](BinOp Operation, bool Loop = false, bool Negate = false) {
    return AtomicRule{AtomicRule::ReadModifyWrite, Operation, Negate, Loop};
  };
  auto OrderedLoop = [](BinOp Operation) {
    return AtomicRule{AtomicRule::OrderedFloatLoop, Operation, false, true};
  };
  switch (Marker.Kind) {
  // arithmetic: sub on floats is an add of the negation
  case MarkerKind::AtomicAdd:
    return RMW(Float ? BinOp::FAdd : BinOp::Add);
  case MarkerKind::AtomicSub:
    return Float ? RMW(BinOp::FAdd, false, /*Negate=*/true) : RMW(BinOp::Sub);
  case MarkerKind::AtomicExchange:
    return RMW(BinOp::Xchg);
  // order: signedness from the suffix (i32 vs u32); floats as Numba's, where
  // a NaN element stays and a NaN operand changes nothing (as Python's
  // max(a, b), which returns a when either is NaN)
  case MarkerKind::AtomicMax:
    return Float ? OrderedLoop(BinOp::FMax) : RMW(Signed ? BinOp::Max : BinOp::UMax);
  case MarkerKind::AtomicMin:
    return Float ? OrderedLoop(BinOp::FMin) : RMW(Signed ? BinOp::Min : BinOp::UMin);
  // NaN as missing: atomicrmw fmax/fmin are maxnum/minnum, whose result is
  // the operand that is not NaN (NaN only when both are)
  case MarkerKind::AtomicNanMax:
    return RMW(Float ? BinOp::FMax : Signed ? BinOp::Max : BinOp::UMax, Float);
  case MarkerKind::AtomicNanMin:
    return RMW(Float ? BinOp::FMin : Signed ? BinOp::Min : BinOp::UMin, Float);
  // bitwise
  case MarkerKind::AtomicAnd:
    return RMW(BinOp::And);
  case MarkerKind::AtomicOr:
    return RMW(BinOp::Or);
  case MarkerKind::AtomicXor:
    return RMW(BinOp::Xor);
  // CUDA's wrapping counters: atomicInc / atomicDec (PTX: 32-bit only)
  case MarkerKind::AtomicIncrement:
    return RMW(BinOp::UIncWrap, Wide);
  case MarkerKind::AtomicDecrement:
    return RMW(BinOp::UDecWrap, Wide);
  case MarkerKind::AtomicCompareExchange:
    return AtomicRule{AtomicRule::CompareExchange, BinOp::BAD_BINOP, false,
                      false};
  default:
    return std::nullopt;
  }
}

Value *formAtomicOperand(IRBuilderBase &Builder, const AtomicRule &Rule,
                         Value *V) {
  return Rule.NegateOperand ? Builder.CreateFNeg(V) : V;
}

Value *emitOrderedMinMaxValue(IRBuilderBase &Builder, const AtomicRule &Rule,
                              Value *Old, Value *V) {
  Value *Replace = Rule.Operation == AtomicRMWInst::FMax
                       ? Builder.CreateFCmpOGT(V, Old)
                       : Builder.CreateFCmpOLT(V, Old);
  return Builder.CreateSelect(Replace, V, Old);
}

namespace {

// The helper of an OrderedFloatLoop rule for values of type T behind
// pointers of type PointerType, made once per module:
//   T @tidal_atomic_ordered_{max,min}_{f32,f64}_p<addrspace>(ptr %p, T %v)
// loads the element, and while %v is ordered-greater (less) than it, tries
// to exchange it for %v; returns the element it replaced (or last saw).
// Internal and always inlined: the caller's blocks stay as they are, which
// the host lowering, counting its sync points, relies on.
Function *getOrderedMinMaxHelper(Module &M, const AtomicRule &Rule, Type *T,
                                 Type *PointerType, Align Alignment) {
  bool Max = Rule.Operation == AtomicRMWInst::FMax;
  std::string Name = (Twine("tidal_atomic_ordered_") + (Max ? "max" : "min") +
                      (T->isFloatTy() ? "_f32" : "_f64") + "_p" +
                      Twine(PointerType->getPointerAddressSpace()))
                         .str();
  if (Function *Existing = M.getFunction(Name))
    return Existing;
  LLVMContext &Context = M.getContext();
  auto *HelperType = FunctionType::get(T, {PointerType, T}, false);
  Function *Helper = Function::Create(HelperType, GlobalValue::InternalLinkage, Name, M);
  Helper->addFnAttr(Attribute::AlwaysInline);
  Helper->addFnAttr(Attribute::NoUnwind);
  Argument *Pointer = Helper->getArg(0), *V = Helper->getArg(1);
  Pointer->setName("p");
  V->setName("v");
  IntegerType *Bits = IntegerType::get(Context, T->getPrimitiveSizeInBits());
  BasicBlock *Entry = BasicBlock::Create(Context, "entry", Helper);
  BasicBlock *Compare = BasicBlock::Create(Context, "compare", Helper);
  BasicBlock *Exchange = BasicBlock::Create(Context, "exchange", Helper);
  BasicBlock *Done = BasicBlock::Create(Context, "done", Helper);
  IRBuilder<> B(Entry);
  LoadInst *First = B.CreateAlignedLoad(Bits, Pointer, Alignment, "first");
  First->setAtomic(AtomicMarkerOrdering);
  Value *NewBits = B.CreateBitCast(V, Bits, "v.bits");
  B.CreateBr(Compare);
  B.SetInsertPoint(Compare);
  PHINode *SeenBits = B.CreatePHI(Bits, 2, "seen.bits");
  SeenBits->addIncoming(First, Entry);
  Value *Seen = B.CreateBitCast(SeenBits, T, "seen");
  Value *Replace = Max ? B.CreateFCmpOGT(V, Seen) : B.CreateFCmpOLT(V, Seen);
  B.CreateCondBr(Replace, Exchange, Done);
  B.SetInsertPoint(Exchange);
  Value *Pair = B.CreateAtomicCmpXchg(Pointer, SeenBits, NewBits, Alignment,
                                      AtomicMarkerOrdering, AtomicMarkerOrdering);
  Value *Found = B.CreateExtractValue(Pair, 0, "found.bits");
  SeenBits->addIncoming(Found, Exchange);
  B.CreateCondBr(B.CreateExtractValue(Pair, 1, "exchanged"), Done, Compare);
  B.SetInsertPoint(Done);
  B.CreateRet(Seen); // the element as it was before the exchange, or left
  return Helper;
}

} // namespace

Value *emitAtomic(IRBuilderBase &Builder, const AtomicRule &Rule,
                  Value *Pointer, ArrayRef<Value *> Arguments, Align Alignment) {
  if (Rule.Shape == AtomicRule::OrderedFloatLoop) {
    Module &M = *Builder.GetInsertBlock()->getModule();
    Function *Helper = getOrderedMinMaxHelper(M, Rule, Arguments[0]->getType(),
                                              Pointer->getType(), Alignment);
    return Builder.CreateCall(Helper, {Pointer, Arguments[0]});
  }
  if (Rule.Shape == AtomicRule::CompareExchange) {
    Value *Pair = Builder.CreateAtomicCmpXchg(
        Pointer, Arguments[0], Arguments[1], Alignment, AtomicMarkerOrdering,
        AtomicMarkerOrdering);
    return Builder.CreateExtractValue(Pair, 0);
  }
  return Builder.CreateAtomicRMW(Rule.Operation, Pointer,
                                 formAtomicOperand(Builder, Rule, Arguments[0]),
                                 Alignment, AtomicMarkerOrdering);
}

std::optional<MathRule> getMathRule(MarkerKind Kind) {
  using namespace Intrinsic;
  auto Native = [](ID Intrinsic, StringRef Name) {
    return MathRule{Intrinsic, Intrinsic, Name};
  };
  auto HostOnly = [](ID Intrinsic, StringRef Name) {
    return MathRule{not_intrinsic, Intrinsic, Name};
  };
  auto Library = [](StringRef Name) {
    return MathRule{not_intrinsic, not_intrinsic, Name};
  };
  switch (Kind) {
  // an NVPTX instruction (or a short exact expansion) on the GPU
  case MarkerKind::MathSqrt: return Native(sqrt, "sqrt");       // sqrt.rn
  case MarkerKind::MathFabs: return Native(fabs, "fabs");       // abs
  case MarkerKind::MathFloor: return Native(floor, "floor");    // cvt.rmi
  case MarkerKind::MathCeil: return Native(ceil, "ceil");       // cvt.rpi
  case MarkerKind::MathTrunc: return Native(trunc, "trunc");    // cvt.rzi
  case MarkerKind::MathRound: return Native(round, "round");    // half away from zero
  case MarkerKind::MathCopysign: return Native(copysign, "copysign");
  case MarkerKind::MathFmin: return Native(Intrinsic::minnum, "fmin");     // the non-NaN operand
  case MarkerKind::MathFmax: return Native(Intrinsic::maxnum, "fmax");
  // LLVM intrinsics on the host, libdevice on the GPU
  case MarkerKind::MathSin: return HostOnly(sin, "sin");
  case MarkerKind::MathCos: return HostOnly(cos, "cos");
  case MarkerKind::MathExp: return HostOnly(exp, "exp");
  case MarkerKind::MathExp2: return HostOnly(exp2, "exp2");
  case MarkerKind::MathLog: return HostOnly(log, "log");
  case MarkerKind::MathLog2: return HostOnly(log2, "log2");
  case MarkerKind::MathLog10: return HostOnly(log10, "log10");
  case MarkerKind::MathPow: return HostOnly(pow, "pow");
  // a library function on both (the host expands rsqrt and fmod itself)
  case MarkerKind::MathTan: return Library("tan");
  case MarkerKind::MathAsin: return Library("asin");
  case MarkerKind::MathAcos: return Library("acos");
  case MarkerKind::MathAtan: return Library("atan");
  case MarkerKind::MathSinh: return Library("sinh");
  case MarkerKind::MathCosh: return Library("cosh");
  case MarkerKind::MathTanh: return Library("tanh");
  case MarkerKind::MathAsinh: return Library("asinh");
  case MarkerKind::MathAcosh: return Library("acosh");
  case MarkerKind::MathAtanh: return Library("atanh");
  case MarkerKind::MathExpm1: return Library("expm1");
  case MarkerKind::MathLog1p: return Library("log1p");
  case MarkerKind::MathRsqrt: return Library("rsqrt");
  case MarkerKind::MathCbrt: return Library("cbrt");
  case MarkerKind::MathErf: return Library("erf");
  case MarkerKind::MathErfc: return Library("erfc");
  case MarkerKind::MathTgamma: return Library("tgamma");
  case MarkerKind::MathLgamma: return Library("lgamma");
  case MarkerKind::MathAtan2: return Library("atan2");
  case MarkerKind::MathFmod: return Library("fmod");
  case MarkerKind::MathHypot: return Library("hypot");
  default:
    return std::nullopt;
  }
}

} // namespace tidal
