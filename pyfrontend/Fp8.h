// CUDA's 8-bit floats (cuda_fp8.h, as numba-cuda binds them): fp8_e4m3,
// fp8_e5m2 and fp8_e8m0 values are their bits in an i8 and have no
// arithmetic; they convert explicitly to and from the other numbers
// (float32(v), fp8_e4m3(x)), and the cvt_* functions of
// tidal.cuda.fp8 convert to and from raw bits with a saturation mode and an
// interpretation or rounding mode. Every conversion is integer and float
// code that computes the bits of CUDA's own definition (cuda_fp8.hpp's
// portable path), the same on both targets (Fp8Conversions.cpp).
#ifndef TIDAL_FRONTEND_FP8_H
#define TIDAL_FRONTEND_FP8_H

#include "FunctionCompiler.h"

#include "llvm/IR/IRBuilder.h"

namespace tidal::frontend::fp8 {

// __nv_cvt_double_to_fp8: a double to e4m3 (E5M2 false) or e5m2 bits (i8),
// rounded to nearest even; SatFinite (i1) makes overflow the largest
// finite value (else NaN for e4m3, infinity for e5m2).
llvm::Value *fromDouble(llvm::IRBuilder<> &B, llvm::Value *X, llvm::Value *SatFinite, bool E5M2);
// __nv_cvt_float_to_fp8: a float (its NaNs made the canonical one first).
llvm::Value *fromFloat(llvm::IRBuilder<> &B, llvm::Value *X, llvm::Value *SatFinite, bool E5M2);
// Either interpretation, chosen by E5M2 (i1) at run time.
llvm::Value *fromFloatAs(llvm::IRBuilder<> &B, llvm::Value *X, llvm::Value *SatFinite,
                         llvm::Value *E5M2);
llvm::Value *fromDoubleAs(llvm::IRBuilder<> &B, llvm::Value *X, llvm::Value *SatFinite,
                          llvm::Value *E5M2);
// e4m3 or e5m2 bits to the float they hold (exact; NaN stays NaN).
llvm::Value *toFloat(llvm::IRBuilder<> &B, llvm::Value *Bits, bool E5M2);

// e8m0 (a power of two 2^(bits - 127); 0xFF is NaN).
// __nv_cvt_bfloat16raw_to_e8m0: RoundUp (i1) rounds up to the next power.
llvm::Value *e8m0FromBFloat16Raw(llvm::IRBuilder<> &B, llvm::Value *Raw, llvm::Value *SatFinite,
                                 llvm::Value *RoundUp);
// __nv_cvt_float_to_e8m0 and __nv_cvt_double_to_e8m0 with a cudaRoundMode
// value (i64: 0 nearest, 1 toward zero, 2 up, 3 down) as CUDA's portable
// code reads it.
llvm::Value *e8m0FromFloat(llvm::IRBuilder<> &B, llvm::Value *X, llvm::Value *SatFinite,
                           llvm::Value *RoundMode);
llvm::Value *e8m0FromDouble(llvm::IRBuilder<> &B, llvm::Value *X, llvm::Value *SatFinite,
                            llvm::Value *RoundMode);
// __nv_cvt_e8m0_to_bf16raw (i16 bits), and the float it is.
llvm::Value *e8m0ToBFloat16Raw(llvm::IRBuilder<> &B, llvm::Value *Bits);
llvm::Value *e8m0ToFloat(llvm::IRBuilder<> &B, llvm::Value *Bits);
// A bfloat16's raw bits (i16) as a float (exact).
llvm::Value *bfloat16RawToFloat(llvm::IRBuilder<> &B, llvm::Value *Raw);

// The explicit conversions of the fp8 types: V (an fp8 value, or a number
// when To is an fp8 type) to To, as the constructors and conversion
// operators of __nv_fp8_e4m3 & co. compute them.
llvm::Value *convert(FunctionCompiler &C, const TypedValue &V, Scalar To);
// `if v:` and bool(v): a bit other than the sign set (NaN is true); an
// e8m0 value is always true.
llvm::Value *truth(FunctionCompiler &C, const TypedValue &V);
// A TypingError for an fp8 operand of an operator or math function, which
// numba-cuda does not define: convert the value first.
void rejectOperands(FunctionCompiler &C, const std::string &What, const Type &L, const Type &R,
                    PyObject *Node);

} // namespace tidal::frontend::fp8

#endif
