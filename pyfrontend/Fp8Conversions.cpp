// The conversions of CUDA's 8-bit floats (Fp8.h): each is branch-free
// integer and float IR that computes the bits cuda_fp8.hpp's portable code
// defines (the code a GPU below sm_89 runs, and every GPU for the modes the
// hardware lacks), so that both targets give the same bits. The cases of
// each conversion are selects, in the order CUDA tests them.
#include "Fp8.h"

#include "llvm/IR/Intrinsics.h"

using namespace llvm;

namespace tidal::frontend::fp8 {

namespace {

Constant *i8c(IRBuilder<> &B, uint64_t V) { return B.getInt8(uint8_t(V)); }
Constant *i16c(IRBuilder<> &B, uint64_t V) { return B.getInt16(uint16_t(V)); }
Constant *i32c(IRBuilder<> &B, uint64_t V) { return B.getInt32(uint32_t(V)); }
Constant *i64c(IRBuilder<> &B, uint64_t V) { return B.getInt64(V); }

// The constants of one interpretation, on a double's bits.
struct Format {
  unsigned Bias, SignificandBits; // with the implicit bit: e4m3 4, e5m2 3
  uint64_t MantissaMask, MinDenormalHalf, OverflowThreshold, MinNormal;
  uint8_t MaxNormal, Overflow; // the largest finite value; what overflow gives without saturation
};
const Format E4M3Format = {7, 4, 0x7, 0x3F50000000000000ULL, 0x407D000000000000ULL,
                           0x3F90000000000000ULL, 0x7E, 0x7F};
// e5m2: 0x1.Ep+15, the largest finite value plus half an ulp, is a tie
// that rounds to even, which is infinity: the threshold is one below it.
const Format E5M2Format = {15, 3, 0x3, 0x3EE0000000000000ULL, 0x40EE000000000000ULL - 1,
                           0x3F10000000000000ULL, 0x7B, 0x7C};

} // namespace

Value *fromDouble(IRBuilder<> &B, Value *X, Value *SatFinite, bool E5M2) {
  const Format &F = E5M2 ? E5M2Format : E4M3Format;
  unsigned SB = F.SignificandBits;
  uint64_t HalfUlp = uint64_t(1) << (53 - SB - 1);
  Value *Bits = B.CreateBitCast(X, B.getInt64Ty());
  Value *Sign = B.CreateShl(B.CreateTrunc(B.CreateLShr(Bits, 63), B.getInt8Ty()), 7);
  // The exponent in the target's bias (wrapping below its range) and the
  // mantissa truncated to the target's width.
  Value *Exponent16 = B.CreateAdd(
      B.CreateAnd(B.CreateTrunc(B.CreateLShr(Bits, 52), B.getInt16Ty()), i16c(B, 0x7FF)),
      i16c(B, uint16_t(F.Bias - 1023)));
  Value *Exponent = B.CreateTrunc(Exponent16, B.getInt8Ty());
  Value *Mantissa = B.CreateAnd(B.CreateTrunc(B.CreateLShr(Bits, 53 - SB), B.getInt8Ty()),
                                i8c(B, F.MantissaMask));
  Value *Magnitude = B.CreateAnd(Bits, i64c(B, 0x7FFFFFFFFFFFFFFFULL));

  // 1. Normal: exponent and mantissa, rounded to nearest even.
  Value *Normal = B.CreateOr(B.CreateShl(Exponent, SB - 1), Mantissa);
  Value *RoundBits = B.CreateAnd(Bits, i64c(B, 2 * HalfUlp - 1));
  Value *Odd = B.CreateICmpNE(B.CreateAnd(Mantissa, i8c(B, 1)), i8c(B, 0));
  Value *Up = B.CreateOr(B.CreateICmpUGT(RoundBits, i64c(B, HalfUlp)),
                         B.CreateAnd(B.CreateICmpEQ(RoundBits, i64c(B, HalfUlp)), Odd));
  Normal = B.CreateAdd(Normal, B.CreateZExt(Up, B.getInt8Ty()));

  // 2. Subnormal: the significand with its implicit bit, shifted right by
  // 1 - exponent (1 to 4 where this case is taken; clamped so that the
  // shifts of the other cases stay defined).
  Value *Shift = B.CreateSub(i8c(B, 1), Exponent);
  Shift = B.CreateSelect(B.CreateICmpUGT(Shift, i8c(B, 7)), i8c(B, 7), Shift);
  Value *Significand = B.CreateOr(Mantissa, i8c(B, 1u << (SB - 1)));
  Value *Subnormal = B.CreateLShr(Significand, Shift);
  Value *Shift64 = B.CreateZExt(Shift, B.getInt64Ty());
  Value *Half = B.CreateShl(i64c(B, HalfUlp), Shift64);
  Value *SubRoundBits = B.CreateAnd(B.CreateOr(Bits, i64c(B, uint64_t(1) << 52)),
                                    B.CreateSub(B.CreateShl(Half, 1), i64c(B, 1)));
  Value *SubOdd = B.CreateICmpNE(B.CreateAnd(Subnormal, i8c(B, 1)), i8c(B, 0));
  Value *SubUp = B.CreateOr(B.CreateICmpUGT(SubRoundBits, Half),
                            B.CreateAnd(B.CreateICmpEQ(SubRoundBits, Half), SubOdd));
  Subnormal = B.CreateAdd(Subnormal, B.CreateZExt(SubUp, B.getInt8Ty()));

  // 3. NaN (e5m2 keeps the top mantissa bits, made quiet), overflow.
  Value *NaN = E5M2 ? B.CreateOr(Mantissa, i8c(B, 0x7E)) : i8c(B, 0x7F);
  Value *Overflow = B.CreateSelect(SatFinite, i8c(B, F.MaxNormal), i8c(B, F.Overflow));

  Value *R = B.CreateSelect(B.CreateICmpUGE(Magnitude, i64c(B, F.MinNormal)), Normal, Subnormal);
  R = B.CreateSelect(B.CreateICmpUGT(Magnitude, i64c(B, F.OverflowThreshold)), Overflow, R);
  R = B.CreateSelect(B.CreateICmpUGT(Magnitude, i64c(B, 0x7FF0000000000000ULL)), NaN, R);
  R = B.CreateSelect(B.CreateICmpULE(Magnitude, i64c(B, F.MinDenormalHalf)), i8c(B, 0), R);
  return B.CreateOr(R, Sign);
}

Value *fromFloat(IRBuilder<> &B, Value *X, Value *SatFinite, bool E5M2) {
  Value *Bits = B.CreateBitCast(X, B.getInt32Ty());
  Value *IsNaN = B.CreateICmpUGT(B.CreateAnd(Bits, i32c(B, 0x7FFFFFFF)), i32c(B, 0x7F800000));
  Bits = B.CreateSelect(IsNaN, i32c(B, 0x7FFFFFFF), Bits); // the canonical NaN
  Value *Wide = B.CreateFPExt(B.CreateBitCast(Bits, B.getFloatTy()), B.getDoubleTy());
  return fromDouble(B, Wide, SatFinite, E5M2);
}

Value *fromFloatAs(IRBuilder<> &B, Value *X, Value *SatFinite, Value *E5M2) {
  return B.CreateSelect(E5M2, fromFloat(B, X, SatFinite, true), fromFloat(B, X, SatFinite, false));
}
Value *fromDoubleAs(IRBuilder<> &B, Value *X, Value *SatFinite, Value *E5M2) {
  return B.CreateSelect(E5M2, fromDouble(B, X, SatFinite, true),
                        fromDouble(B, X, SatFinite, false));
}

Value *toFloat(IRBuilder<> &B, Value *Bits, bool E5M2) {
  if (E5M2) { // the top byte of a half; its NaNs become the canonical one
    Value *Half = B.CreateShl(B.CreateZExt(Bits, B.getInt16Ty()), 8);
    Value *IsNaN = B.CreateICmpUGT(B.CreateAnd(Half, i16c(B, 0x7FFF)), i16c(B, 0x7C00));
    Half = B.CreateSelect(IsNaN, i16c(B, 0x7FFF), Half);
    return B.CreateFPExt(B.CreateBitCast(Half, B.getHalfTy()), B.getFloatTy());
  }
  // e4m3: 1.m * 2^(e - 7), or m * 2^-9 for e == 0; S.1111.111 is NaN.
  Value *Wide = B.CreateZExt(Bits, B.getInt32Ty());
  Value *Sign = B.CreateShl(B.CreateAnd(Wide, i32c(B, 0x80)), 24);
  Value *Exponent = B.CreateAnd(B.CreateLShr(Wide, 3), i32c(B, 0xF));
  Value *Mantissa = B.CreateAnd(Wide, i32c(B, 0x7));
  Value *Normal = B.CreateOr(B.CreateShl(B.CreateAdd(Exponent, i32c(B, 120)), 23),
                             B.CreateShl(Mantissa, 20));
  Value *Subnormal = B.CreateBitCast(
      B.CreateFMul(B.CreateUIToFP(Mantissa, B.getFloatTy()),
                   ConstantFP::get(B.getFloatTy(), 1.0 / 512)),
      B.getInt32Ty());
  Value *R = B.CreateSelect(B.CreateICmpEQ(Exponent, i32c(B, 0)), Subnormal, Normal);
  R = B.CreateOr(R, Sign);
  R = B.CreateSelect(B.CreateICmpEQ(B.CreateAnd(Wide, i32c(B, 0x7F)), i32c(B, 0x7F)),
                     i32c(B, 0x7FFFFFFF), R);
  return B.CreateBitCast(R, B.getFloatTy());
}

Value *e8m0FromBFloat16Raw(IRBuilder<> &B, Value *Raw, Value *SatFinite, Value *RoundUp) {
  // The exponent field, then up by one if asked and anything below it is
  // set in a finite value above 2^-127; saturated: 0xFF of a non-NaN is 0xFE.
  Value *R = B.CreateTrunc(B.CreateLShr(Raw, 7), B.getInt8Ty());
  Value *Magnitude = B.CreateAnd(Raw, i16c(B, 0x7FFF));
  Value *Inexact = B.CreateICmpNE(B.CreateAnd(Raw, i16c(B, 0x7F)), i16c(B, 0));
  Value *Up = B.CreateAnd(
      B.CreateAnd(RoundUp, Inexact),
      B.CreateAnd(B.CreateICmpUGT(Magnitude, i16c(B, 0x40)), B.CreateICmpULT(Magnitude, i16c(B, 0x7F80))));
  R = B.CreateAdd(R, B.CreateZExt(Up, B.getInt8Ty()));
  Value *Saturate = B.CreateAnd(
      SatFinite, B.CreateAnd(B.CreateICmpULE(Magnitude, i16c(B, 0x7F80)), B.CreateICmpEQ(R, i8c(B, 0xFF))));
  return B.CreateSub(R, B.CreateZExt(Saturate, B.getInt8Ty()));
}

namespace {
// __internal_float_to_bf16raw_rz and _ru (the latter of a magnitude): NaN
// is 0x7FFF.
Value *bfloat16RawTowardZero(IRBuilder<> &B, Value *Bits) {
  Value *IsNaN = B.CreateICmpUGT(B.CreateAnd(Bits, i32c(B, 0x7FFFFFFF)), i32c(B, 0x7F800000));
  return B.CreateSelect(IsNaN, i16c(B, 0x7FFF), B.CreateTrunc(B.CreateLShr(Bits, 16), B.getInt16Ty()));
}
Value *bfloat16RawUp(IRBuilder<> &B, Value *Bits) {
  Value *IsNaN = B.CreateICmpUGT(B.CreateAnd(Bits, i32c(B, 0x7FFFFFFF)), i32c(B, 0x7F800000));
  Value *Truncated = B.CreateTrunc(B.CreateLShr(Bits, 16), B.getInt16Ty());
  Value *Inexact = B.CreateAnd(B.CreateICmpULT(Bits, i32c(B, 0x7F800000)),
                               B.CreateICmpNE(B.CreateAnd(Bits, i32c(B, 0xFFFF)), i32c(B, 0)));
  Value *R = B.CreateAdd(Truncated, B.CreateZExt(Inexact, B.getInt16Ty()));
  return B.CreateSelect(IsNaN, i16c(B, 0x7FFF), R);
}
} // namespace

Value *e8m0FromFloat(IRBuilder<> &B, Value *X, Value *SatFinite, Value *RoundMode) {
  // Toward zero: the exponent of x; any other mode: of |x| rounded up to a
  // bfloat16, and up again to a power of two only for cudaRoundPosInf (as
  // CUDA's portable code reads the modes it does not document).
  Value *Bits = B.CreateBitCast(X, B.getInt32Ty());
  Value *Zero = e8m0FromBFloat16Raw(B, bfloat16RawTowardZero(B, Bits), SatFinite, B.getFalse());
  Value *Magnitude = B.CreateAnd(Bits, i32c(B, 0x7FFFFFFF));
  Value *Other = e8m0FromBFloat16Raw(B, bfloat16RawUp(B, Magnitude), SatFinite,
                                     B.CreateICmpEQ(RoundMode, i64c(B, 2)));
  return B.CreateSelect(B.CreateICmpEQ(RoundMode, i64c(B, 1)), Zero, Other);
}

Value *e8m0FromDouble(IRBuilder<> &B, Value *X, Value *SatFinite, Value *RoundMode) {
  // __internal_double_to_float_with_sticky: x rounded to a float, moved one
  // step toward zero where that rounded away from it, and its last bit set
  // where it is inexact.
  Value *F = B.CreateFPTrunc(X, B.getFloatTy());
  Value *D = B.CreateFPExt(F, B.getDoubleTy());
  Value *Bits = B.CreateBitCast(F, B.getInt32Ty());
  Value *NotNaN = B.CreateICmpULE(B.CreateShl(Bits, 1), i32c(B, 0xFF000000));
  Value *ZeroD = ConstantFP::get(B.getDoubleTy(), 0.0);
  Value *Away = B.CreateOr(B.CreateAnd(B.CreateFCmpOGT(X, ZeroD), B.CreateFCmpOGT(D, X)),
                           B.CreateAnd(B.CreateFCmpOLT(X, ZeroD), B.CreateFCmpOLT(D, X)));
  Bits = B.CreateSub(Bits, B.CreateZExt(Away, B.getInt32Ty()));
  Value *Sticky = B.CreateAnd(B.CreateFCmpUNE(D, X), NotNaN);
  Bits = B.CreateOr(Bits, B.CreateZExt(Sticky, B.getInt32Ty()));
  return e8m0FromFloat(B, B.CreateBitCast(Bits, B.getFloatTy()), SatFinite, RoundMode);
}

Value *e8m0ToBFloat16Raw(IRBuilder<> &B, Value *Bits) {
  Value *R = B.CreateShl(B.CreateZExt(Bits, B.getInt16Ty()), 7);
  R = B.CreateSelect(B.CreateICmpEQ(Bits, i8c(B, 0xFF)), i16c(B, 0x7FFF), R);
  return B.CreateSelect(B.CreateICmpEQ(Bits, i8c(B, 0)), i16c(B, 0x0040), R); // 2^-127
}

Value *bfloat16RawToFloat(IRBuilder<> &B, Value *Raw) {
  return B.CreateBitCast(B.CreateShl(B.CreateZExt(Raw, B.getInt32Ty()), 16), B.getFloatTy());
}

Value *e8m0ToFloat(IRBuilder<> &B, Value *Bits) {
  return bfloat16RawToFloat(B, e8m0ToBFloat16Raw(B, Bits));
}

namespace {

// The float an fp8 value holds (exact for every one).
Value *fp8ToFloat(IRBuilder<> &B, Value *Bits, Scalar From) {
  if (From == Scalar::Fp8E8M0)
    return e8m0ToFloat(B, Bits);
  return toFloat(B, Bits, From == Scalar::Fp8E5M2);
}

// e8m0 of an integer: the smallest power of two at least its magnitude
// (what CUDA's constructors give through float, double or bfloat16 rounded
// up), 2^-127 for 0.
Value *e8m0FromInteger(IRBuilder<> &B, Value *V, bool Signed) {
  Value *Wide = Signed ? B.CreateSExt(V, B.getInt64Ty()) : B.CreateZExt(V, B.getInt64Ty());
  Value *Magnitude = Signed ? B.CreateBinaryIntrinsic(Intrinsic::abs, Wide, B.getFalse()) : Wide;
  // 2^k >= m for k = 64 - clz(m - 1) (m >= 1); 127 + k.
  Value *Leading = B.CreateBinaryIntrinsic(Intrinsic::ctlz, B.CreateSub(Magnitude, i64c(B, 1)),
                                           B.getFalse());
  Value *R = B.CreateTrunc(B.CreateSub(i64c(B, 127 + 64), Leading), B.getInt8Ty());
  return B.CreateSelect(B.CreateICmpEQ(Magnitude, i64c(B, 0)), i8c(B, 0), R);
}

} // namespace

Value *convert(FunctionCompiler &C, const TypedValue &V, Scalar To) {
  IRBuilder<> &B = C.builder();
  Scalar From = V.T.Dtype;
  Value *X = V.scalar();
  if (isFp8(From)) {
    // The conversion operators: through the float the value holds; integers
    // toward zero, saturated, NaN 0 (__half2int_rz & co.); half rounded
    // to nearest.
    if (To == Scalar::Bool)
      return truth(C, V);
    Value *F = fp8ToFloat(B, X, From);
    if (To == Scalar::Float32)
      return F;
    if (isFloat(To))
      return B.CreateFPCast(F, C.llvmType(To));
    if (isInteger(To))
      return B.CreateIntrinsic(isSigned(To) ? Intrinsic::fptosi_sat : Intrinsic::fptoui_sat,
                               {C.llvmType(To), B.getFloatTy()}, {F});
    // Another fp8 type (complex numbers take their parts from here, and
    // datetimes refuse fp8 while typing).
    return convert(C, C.makeScalar(Scalar::Float32, F), To);
  }
  // The constructors: from float16, float32 and float64 saturated to the
  // finite range (e8m0: rounded up to a power of two); from integers
  // through float32 (e4m3, e5m2) or exactly (e8m0).
  Value *SatFinite = B.getTrue();
  if (To == Scalar::Fp8E8M0) {
    Value *Up = i64c(B, 2); // cudaRoundPosInf
    if (From == Scalar::Float64)
      return e8m0FromDouble(B, X, SatFinite, Up);
    if (isFloat(From))
      return e8m0FromFloat(B, B.CreateFPCast(X, B.getFloatTy()), SatFinite, Up);
    return e8m0FromInteger(B, X, isSigned(From));
  }
  bool E5M2 = To == Scalar::Fp8E5M2;
  if (From == Scalar::Float64)
    return fromDouble(B, X, SatFinite, E5M2);
  Value *F = isFloat(From)     ? B.CreateFPCast(X, B.getFloatTy())
             : isSigned(From)  ? B.CreateSIToFP(X, B.getFloatTy())
                               : B.CreateUIToFP(X, B.getFloatTy()); // unsigned and bool
  return fromFloat(B, F, SatFinite, E5M2);
}

Value *truth(FunctionCompiler &C, const TypedValue &V) {
  IRBuilder<> &B = C.builder();
  if (V.T.Dtype == Scalar::Fp8E8M0) // every e8m0 value is a power of two or NaN
    return B.getTrue();
  return B.CreateICmpNE(B.CreateAnd(V.scalar(), i8c(B, 0x7F)), i8c(B, 0));
}

void rejectOperands(FunctionCompiler &C, const std::string &What, const Type &L, const Type &R,
                    PyObject *Node) {
  for (const Type *T : {&L, &R})
    if (T->isScalar() && isFp8(T->Dtype))
      C.typingError(Node, What + " is not defined on " + T->str() +
                              ", which only converts: write float32(v) to compute with its value");
}

} // namespace tidal::frontend::fp8
