// The operation rules both lowerings share, so that the NVPTX passes
// (LowerAtomics.cpp, LowerMath.cpp) and the host lowering (LowerHost*.cpp)
// cannot drift apart: which LLVM operation an atomic marker is, how its
// operand is formed, and which math markers are an LLVM intrinsic on every
// target.
#ifndef TIDAL_OPERATIONRULES_H
#define TIDAL_OPERATIONRULES_H

#include "Markers.h"

#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"

namespace llvm {
class IRBuilderBase;
class Value;
} // namespace llvm

namespace tidal {

// An atomic marker (tidal.atomic.*) as LLVM sees it.
struct AtomicRule {
  enum Form {
    ReadModifyWrite, // atomicrmw Operation (BAD_BINOP for no other form)
    CompareExchange, // cmpxchg, field 0 of the result
    // Numba's float max/min: a cmpxchg loop (in a helper function of the
    // module) that stores the operand only where it is ordered-greater (FMax)
    // or ordered-less (FMin) than the element, so that a NaN on either side
    // leaves the element as it is. Operation is FMax or FMin.
    OrderedFloatLoop,
  } Shape;
  llvm::AtomicRMWInst::BinOp Operation;
  // Float sub: an fadd of the negated operand on both targets (NVPTX has
  // atom.add.f32/f64 but no atomic float sub).
  bool NegateOperand;
  // NVPTX has no instruction for it: LLVM expands it into a CAS loop
  // (float max/min; 64-bit inc/dec). For LLVM_DEBUG and the docs.
  bool IsCompareExchangeLoopOnNVPTX;
};

// The rule of the atomic marker `Marker`; nullopt for a non-atomic one.
std::optional<AtomicRule> getAtomicRule(MarkerName Marker);

// The operand the atomicrmw of `Rule` takes for the marker's operand `V`
// (negated for float sub), emitted at `Builder`.
llvm::Value *formAtomicOperand(llvm::IRBuilderBase &Builder,
                               const AtomicRule &Rule, llvm::Value *V);

// CUDA's atomics are relaxed: every atomic of either lowering is monotonic.
inline constexpr llvm::AtomicOrdering AtomicMarkerOrdering =
    llvm::AtomicOrdering::Monotonic;

// The value an OrderedFloatLoop rule stores over `Old` for the operand `V`:
// V where V > Old (FMax) or V < Old (FMin), compared ordered, else Old.
llvm::Value *emitOrderedMinMaxValue(llvm::IRBuilderBase &Builder,
                                    const AtomicRule &Rule, llvm::Value *Old,
                                    llvm::Value *V);

// Emits the atomic of `Rule` on `Pointer` (atomicrmw or cmpxchg, monotonic,
// aligned to the value's size, or the call of an OrderedFloatLoop's helper)
// at `Builder`; returns the old value.
// Arguments are the marker call's arguments after the pointer.
llvm::Value *emitAtomic(llvm::IRBuilderBase &Builder, const AtomicRule &Rule,
                        llvm::Value *Pointer,
                        llvm::ArrayRef<llvm::Value *> Arguments,
                        llvm::Align Alignment);

// A math marker (tidal.math.*) as LLVM sees it.
struct MathRule {
  // The LLVM intrinsic of the function on every target (sqrt, fabs, floor,
  // ceil, trunc, round, copysign, fmin/minnum, fmax/maxnum: NVPTX has an
  // instruction for each); not_intrinsic otherwise.
  llvm::Intrinsic::ID NativeIntrinsic;
  // On the host also an intrinsic (LLVM folds and vectorises them: sin cos
  // exp exp2 log log2 log10 pow); not_intrinsic otherwise.
  llvm::Intrinsic::ID HostIntrinsic;
  // The C library name of the function without the float suffix ("tgamma"):
  // libdevice's __nv_<name>[f] on NVPTX, libm's <name>[f] on the host.
  llvm::StringRef LibraryName;
};

// The rule of the math marker kind `Kind`; nullopt for a non-math one.
std::optional<MathRule> getMathRule(MarkerKind Kind);

} // namespace tidal

#endif
