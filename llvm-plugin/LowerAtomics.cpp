// tidal-lower-atomics: replaces tidal.atomic.<op>.<T> by atomicrmw / cmpxchg
// (monotonic, i.e. CUDA's relaxed atomics; the rules shared with the host
// lowering: OperationRules.h), returning the old value. The
// instructions are target-neutral: NVPTX selects atom.{global,shared}.* and
// expands what has no instruction (float nanmin/nanmax) into a CAS loop;
// float min/max are CAS loops of tidal's own (Numba's NaN rule, a helper per
// type: OperationRules.cpp); 32-bit inc/dec, which LLVM 19 would also
// expand, are PTX's atom.inc/dec.u32.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-atomics in.ll

#include "DebugOutput.h"
#include "Markers.h"
#include "OperationRules.h"
#include "PassClasses.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "tidal-lower-atomics"

using namespace llvm;

TIDAL_STATISTIC(NumAtomics, "Atomic markers lowered");
TIDAL_STATISTIC(NumCompareExchangeLoops,
          "Atomics that NVPTX will expand into a compare-exchange loop");

namespace tidal {

bool lowerAtomics(Module &M) {
  return lowerMarkerCalls(M, [](CallInst &Call, MarkerName Marker) {
    std::optional<AtomicRule> Rule = getAtomicRule(Marker);
    if (!Rule)
      return false;
    IRBuilder<> Builder(&Call);
    Value *Pointer = Call.getArgOperand(0);
    Type *ValueType = Call.getType();
    Align Alignment(ValueType->getPrimitiveSizeInBits() / 8);
    SmallVector<Value *, 2> Arguments(drop_begin(Call.args()));
    Value *Old;
    bool UnsignedCounter = Marker.Kind == MarkerKind::AtomicIncrement ||
                           Marker.Kind == MarkerKind::AtomicDecrement;
    if (UnsignedCounter && ValueType->isIntegerTy(32)) {
      // PTX has atom.inc/dec.u32, but LLVM 19 expands uinc_wrap/udec_wrap
      // into a CAS loop: emit the instruction itself (generic address).
      StringRef Operation =
          Marker.Kind == MarkerKind::AtomicIncrement ? "inc" : "dec";
      auto *AsmType = FunctionType::get(ValueType, {Pointer->getType(), ValueType}, false);
      InlineAsm *Atom = InlineAsm::get(
          AsmType, ("atom." + Operation + ".u32 $0, [$1], $2;").str(), "=r,l,r,~{memory}",
          /*hasSideEffects=*/true);
      Old = Builder.CreateCall(Atom, {Pointer, Arguments[0]});
    } else {
      Old = emitAtomic(Builder, *Rule, Pointer, Arguments, Alignment);
    }
    ++NumAtomics;
    printStatisticsAtShutdown();
    LLVM_DEBUG(dbgs() << DEBUG_TYPE ": " << Call.getCalledFunction()->getName()
                      << " in '" << Call.getFunction()->getName() << "' becomes "
                      << *Old << "\n");
    if (Rule->IsCompareExchangeLoopOnNVPTX) {
      ++NumCompareExchangeLoops;
      LLVM_DEBUG(dbgs() << DEBUG_TYPE ": " << Call.getCalledFunction()->getName()
                        << " in '" << Call.getFunction()->getName()
                        << "' becomes a compare-exchange loop on NVPTX\n");
    }
    Old->takeName(&Call);
    Call.replaceAllUsesWith(Old);
    Call.eraseFromParent();
    return true;
  });
}


} // namespace tidal
