// tidal-lower-atomics: replaces tidal.atomic.<op>.<T> by atomicrmw / cmpxchg
// (monotonic, i.e. CUDA's relaxed atomics), returning the old value. The
// instructions are target-neutral: NVPTX selects atom.{global,shared}.* and
// expands what has no instruction (float min/max) into a CAS loop; 32-bit
// inc/dec, which LLVM 19 would also expand, are PTX's atom.inc/dec.u32.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-atomics in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "tidal-lower-atomics"

using namespace llvm;

namespace tidal {
namespace {

using BinOp = AtomicRMWInst::BinOp;

// The atomicrmw operation of "add", "max", ... for values of `Kind`
// (getMarkerType has already refused the combinations CUDA does not have).
std::optional<BinOp> getOperation(StringRef Name, MarkerValueKind Kind) {
  bool Float = Kind == MarkerValueKind::Float;
  bool Signed = Kind == MarkerValueKind::Signed;
  return StringSwitch<std::optional<BinOp>>(Name)
      // arithmetic (sub on floats is an add of the negation, below)
      .Case("add", Float ? BinOp::FAdd : BinOp::Add)
      .Case("sub", Float ? BinOp::FAdd : BinOp::Sub)
      .Case("exch", BinOp::Xchg)
      // order: signedness from the suffix (i32 vs u32)
      .Case("max", Float ? BinOp::FMax : Signed ? BinOp::Max : BinOp::UMax)
      .Case("min", Float ? BinOp::FMin : Signed ? BinOp::Min : BinOp::UMin)
      // bitwise
      .Case("and", BinOp::And)
      .Case("or", BinOp::Or)
      .Case("xor", BinOp::Xor)
      // CUDA's wrapping counters: atomicInc / atomicDec
      .Case("inc", BinOp::UIncWrap)
      .Case("dec", BinOp::UDecWrap)
      .Default(std::nullopt);
}

} // namespace

bool lowerAtomics(Module &M) {
  return lowerMarkerCalls(M, [](CallInst &Call, StringRef) {
    std::optional<TypedMarkerName> Typed =
        parseTypedMarkerName(Call.getCalledFunction()->getName());
    StringRef Operation = Typed ? Typed->Operation : "";
    if (!Operation.consume_front("atomic."))
      return false;
    IRBuilder<> Builder(&Call);
    Value *Pointer = Call.getArgOperand(0);
    Type *ValueType = Call.getType();
    Align Alignment(ValueType->getPrimitiveSizeInBits() / 8);
    Value *Old;
    if ((Operation == "inc" || Operation == "dec") && ValueType->isIntegerTy(32)) {
      // PTX has atom.inc/dec.u32, but LLVM 19 expands uinc_wrap/udec_wrap
      // into a CAS loop: emit the instruction itself (generic address).
      auto *AsmType = FunctionType::get(ValueType, {Pointer->getType(), ValueType}, false);
      InlineAsm *Atom = InlineAsm::get(
          AsmType, ("atom." + Operation + ".u32 $0, [$1], $2;").str(), "=r,l,r,~{memory}",
          /*hasSideEffects=*/true);
      Old = Builder.CreateCall(Atom, {Pointer, Call.getArgOperand(1)});
    } else if (Operation == "cas") {
      Value *Exchange = Builder.CreateAtomicCmpXchg(
          Pointer, Call.getArgOperand(1), Call.getArgOperand(2), Alignment,
          AtomicOrdering::Monotonic, AtomicOrdering::Monotonic);
      Old = Builder.CreateExtractValue(Exchange, 0);
    } else {
      std::optional<BinOp> Op = getOperation(Operation, Typed->Kind);
      if (!Op)
        return false;
      Value *Operand = Call.getArgOperand(1);
      if (Operation == "sub" && Typed->Kind == MarkerValueKind::Float)
        Operand = Builder.CreateFNeg(Operand);
      Old = Builder.CreateAtomicRMW(*Op, Pointer, Operand, Alignment,
                                    AtomicOrdering::Monotonic);
    }
    Old->takeName(&Call);
    Call.replaceAllUsesWith(Old);
    Call.eraseFromParent();
    return true;
  });
}

PreservedAnalyses LowerAtomicsPass::run(Module &M, ModuleAnalysisManager &) {
  return lowerAtomics(M) ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace tidal
