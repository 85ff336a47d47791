// bfloat16: cuda.bf16.* (numba-cuda's names, from cuda_bf16.h) on LLVM's
// `bfloat`. Arithmetic, fma, neg and abs are plain LLVM operations: the
// NVPTX backend gives add/sub/mul.bf16 and setp.bf16 on sm_90, fma.rn.bf16,
// neg/abs.bf16 and cvt.rn.bf16.f32 on sm_80, and computes in float32
// with one rounding below; the host computes in float32 and rounds
// to nearest even (__truncsfbf2, runtime/CpuCompilerBuiltins.cpp), with fma
// expanded by tidal-lower-host. float32 holds every bfloat16 sum,
// difference, product and quotient closely enough for that one rounding to
// be the correctly rounded result, so both targets give the same bits.
// What a target could round twice is written here bit by bit: integers to
// bfloat16, the directed roundings (_rz, _rd, _ru) and the conversions to
// integers (saturating, NaN to 0, as PTX's cvt).
// min/max follow CUDA (the number when the other is NaN, +0 above -0) as
// compares and selects: LLVM's maxnum leaves the zeros' order open. The
// math functions compute in float32 through the math.* markers, as fp16's.
#include "BFloat16.h"
#include "IntrinsicTable.h"

#include "llvm/IR/Intrinsics.h"

#include <cmath>
#include <deque>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

enum class Operation {
  Add, Subtract, Multiply, Divide, Fma, // rounded to nearest
  Negate, Absolute,
  Max, Min, MaxNaN, MinNaN,             // CUDA's __hmax & co.
  Compare, IsInf, IsNaN,
  Math,                                 // float32 math marker, rounded
  Extend,                               // bfloat16 -> float32, exact
  FromFloat, FromInteger,               // to bfloat16, with a rounding mode
  ToInteger,                            // from bfloat16, with a rounding mode
  AsBits, FromBits,                     // reinterpretations
};
enum class Rounding { Nearest, TowardZero, Down, Up };
// After the operation: [0, 1] (NaN to +0) or max(x, 0) (NaN stays NaN).
enum class Clamp { None, Saturate, Relu };

struct BFloat16Function {
  std::string Name; // after cuda.bf16.
  Operation Op;
  std::vector<Scalar> Params;
  Scalar Result;
  Rounding Mode = Rounding::Nearest;
  Clamp After = Clamp::None;
  CmpInst::Predicate Predicate = CmpInst::BAD_FCMP_PREDICATE;
  std::string Stem; // Math: the marker's stem (math.<stem>.f32)
  std::string Doc;
};

const Scalar BF = Scalar::BFloat16;

const char *roundingSuffix(Rounding R) {
  return R == Rounding::Nearest ? "rn" : R == Rounding::TowardZero ? "rz" : R == Rounding::Down ? "rd" : "ru";
}
const char *roundingWords(Rounding R) {
  return R == Rounding::Nearest      ? "rounded to nearest, ties to even"
         : R == Rounding::TowardZero ? "rounded toward zero"
         : R == Rounding::Down       ? "rounded down"
                                     : "rounded up";
}

// Every function of cuda.bf16, as numba-cuda names them.
const std::vector<BFloat16Function> &functions() {
  static const std::vector<BFloat16Function> Table = [] {
    std::vector<BFloat16Function> T;
    auto Binary = [&](const char *Name, Operation Op, Clamp C, const char *Doc) {
      T.push_back({Name, Op, {BF, BF}, BF, Rounding::Nearest, C, CmpInst::BAD_FCMP_PREDICATE, "", Doc});
    };
    // 1. Arithmetic.
    Binary("hadd", Operation::Add, Clamp::None, "hadd(a, b): a + b in bfloat16, rounded to nearest");
    Binary("hsub", Operation::Subtract, Clamp::None, "hsub(a, b): a - b in bfloat16, rounded to nearest");
    Binary("hmul", Operation::Multiply, Clamp::None, "hmul(a, b): a * b in bfloat16, rounded to nearest");
    Binary("hadd_rn", Operation::Add, Clamp::None, "hadd_rn(a, b): a + b, rounded to nearest, never fused into an fma");
    Binary("hsub_rn", Operation::Subtract, Clamp::None, "hsub_rn(a, b): a - b, rounded to nearest, never fused into an fma");
    Binary("hmul_rn", Operation::Multiply, Clamp::None, "hmul_rn(a, b): a * b, rounded to nearest, never fused into an fma");
    Binary("hdiv", Operation::Divide, Clamp::None, "hdiv(a, b): a / b in bfloat16, rounded to nearest");
    Binary("hadd_sat", Operation::Add, Clamp::Saturate, "hadd_sat(a, b): a + b clamped to [0, 1] (NaN gives +0)");
    Binary("hsub_sat", Operation::Subtract, Clamp::Saturate, "hsub_sat(a, b): a - b clamped to [0, 1] (NaN gives +0)");
    Binary("hmul_sat", Operation::Multiply, Clamp::Saturate, "hmul_sat(a, b): a * b clamped to [0, 1] (NaN gives +0)");
    T.push_back({"hfma", Operation::Fma, {BF, BF, BF}, BF, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "hfma(a, b, c): a * b + c in bfloat16, rounded once"});
    T.push_back({"hfma_sat", Operation::Fma, {BF, BF, BF}, BF, Rounding::Nearest, Clamp::Saturate,
                 CmpInst::BAD_FCMP_PREDICATE, "", "hfma_sat(a, b, c): a * b + c rounded once, clamped to [0, 1]"});
    T.push_back({"hfma_relu", Operation::Fma, {BF, BF, BF}, BF, Rounding::Nearest, Clamp::Relu,
                 CmpInst::BAD_FCMP_PREDICATE, "", "hfma_relu(a, b, c): a * b + c rounded once, 0 where negative (NaN stays NaN)"});
    T.push_back({"hneg", Operation::Negate, {BF}, BF, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "hneg(a): -a"});
    T.push_back({"habs", Operation::Absolute, {BF}, BF, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "habs(a): |a|"});
    // 2. Comparisons, min and max, classification.
    Binary("hmax", Operation::Max, Clamp::None, "hmax(a, b): the larger of a and b (the number when one is NaN; +0 above -0)");
    Binary("hmin", Operation::Min, Clamp::None, "hmin(a, b): the smaller of a and b (the number when one is NaN; -0 below +0)");
    Binary("hmax_nan", Operation::MaxNaN, Clamp::None, "hmax_nan(a, b): the larger of a and b, NaN when either is NaN");
    Binary("hmin_nan", Operation::MinNaN, Clamp::None, "hmin_nan(a, b): the smaller of a and b, NaN when either is NaN");
    const std::pair<const char *, CmpInst::Predicate> Comparisons[] = {
        {"heq", CmpInst::FCMP_OEQ}, {"hne", CmpInst::FCMP_ONE}, {"hge", CmpInst::FCMP_OGE},
        {"hgt", CmpInst::FCMP_OGT}, {"hle", CmpInst::FCMP_OLE}, {"hlt", CmpInst::FCMP_OLT},
        {"hequ", CmpInst::FCMP_UEQ}, {"hneu", CmpInst::FCMP_UNE}, {"hgeu", CmpInst::FCMP_UGE},
        {"hgtu", CmpInst::FCMP_UGT}, {"hleu", CmpInst::FCMP_ULE}, {"hltu", CmpInst::FCMP_ULT}};
    const char *Symbols[] = {"==", "!=", ">=", ">", "<=", "<"};
    for (size_t I = 0; I < std::size(Comparisons); ++I) {
      bool Unordered = I >= 6;
      std::string Doc = std::string(Comparisons[I].first) + "(a, b): a " + Symbols[I % 6] + " b on bfloat16 (" +
                        (Unordered ? "True" : "False") + " when either is NaN)";
      T.push_back({Comparisons[I].first, Operation::Compare, {BF, BF}, Scalar::Bool, Rounding::Nearest,
                   Clamp::None, Comparisons[I].second, "", Doc});
    }
    T.push_back({"hisinf", Operation::IsInf, {BF}, Scalar::Int32, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "hisinf(a): 1 for +inf, -1 for -inf, 0 otherwise (an int32)"});
    T.push_back({"hisnan", Operation::IsNaN, {BF}, Scalar::Bool, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "hisnan(a): whether a is NaN"});
    // 3. Math functions, computed in float32 and rounded once.
    const std::pair<const char *, const char *> Math[] = {
        {"htrunc", "trunc"}, {"hceil", "ceil"},   {"hfloor", "floor"}, {"hrint", "roundeven"},
        {"hsqrt", "sqrt"},   {"hrsqrt", "rsqrt"}, {"hrcp", "rcp"},     {"hlog", "log"},
        {"hlog2", "log2"},   {"hlog10", "log10"}, {"hcos", "cos"},     {"hsin", "sin"},
        {"hexp", "exp"},     {"hexp2", "exp2"},   {"hexp10", "pow10"}, {"htanh", "tanh"},
        {"htanh_approx", "tanh"}};
    for (const auto &[Name, Stem] : Math)
      T.push_back({Name, Operation::Math, {BF}, BF, Rounding::Nearest, Clamp::None, CmpInst::BAD_FCMP_PREDICATE,
                   Stem, std::string(Name) + "(a): " + Stem + "(a), computed in float32 and rounded to bfloat16"});
    // 4. Conversions: CUDA's C type names.
    T.push_back({"bfloat162float", Operation::Extend, {BF}, Scalar::Float32, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "bfloat162float(a): a as a float32 (exact)"});
    T.push_back({"float2bfloat16", Operation::FromFloat, {Scalar::Float32}, BF, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "float2bfloat16(a): a float32 as a bfloat16, rounded to nearest"});
    T.push_back({"double2bfloat16", Operation::FromFloat, {Scalar::Float64}, BF, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "double2bfloat16(a): a float64 as a bfloat16, rounded once to nearest"});
    const Rounding Modes[] = {Rounding::Nearest, Rounding::TowardZero, Rounding::Down, Rounding::Up};
    for (Rounding R : Modes)
      T.push_back({std::string("float2bfloat16_") + roundingSuffix(R), Operation::FromFloat, {Scalar::Float32}, BF,
                   R, Clamp::None, CmpInst::BAD_FCMP_PREDICATE, "",
                   std::string("float2bfloat16_") + roundingSuffix(R) + "(a): a float32 as a bfloat16, " +
                       roundingWords(R)});
    T.push_back({"bfloat162char_rz", Operation::ToInteger, {BF}, Scalar::Int8, Rounding::TowardZero, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "bfloat162char_rz(a): a as an int8, rounded toward zero, saturated (NaN: 0)"});
    T.push_back({"bfloat162uchar_rz", Operation::ToInteger, {BF}, Scalar::UInt8, Rounding::TowardZero, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "bfloat162uchar_rz(a): a as a uint8, rounded toward zero, saturated (NaN: 0)"});
    const std::pair<const char *, Scalar> Integers[] = {
        {"int", Scalar::Int32},     {"short", Scalar::Int16}, {"ushort", Scalar::UInt16},
        {"uint", Scalar::UInt32},   {"ll", Scalar::Int64},    {"ull", Scalar::UInt64}};
    for (const auto &[C, S] : Integers)
      for (Rounding R : Modes) {
        std::string From = std::string(C) + "2bfloat16_" + roundingSuffix(R);
        T.push_back({From, Operation::FromInteger, {S}, BF, R, Clamp::None, CmpInst::BAD_FCMP_PREDICATE, "",
                     From + "(a): an " + scalarName(S) + " as a bfloat16, " + roundingWords(R)});
        std::string To = std::string("bfloat162") + C + "_" + roundingSuffix(R);
        T.push_back({To, Operation::ToInteger, {BF}, S, R, Clamp::None, CmpInst::BAD_FCMP_PREDICATE, "",
                     To + "(a): a as an " + scalarName(S) + ", " + roundingWords(R) + ", saturated (NaN: 0)"});
      }
    // 5. The bits.
    T.push_back({"bfloat16_as_short", Operation::AsBits, {BF}, Scalar::Int16, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "bfloat16_as_short(a): the 16 bits of a as an int16"});
    T.push_back({"bfloat16_as_ushort", Operation::AsBits, {BF}, Scalar::UInt16, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "bfloat16_as_ushort(a): the 16 bits of a as a uint16"});
    T.push_back({"short_as_bfloat16", Operation::FromBits, {Scalar::Int16}, BF, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "short_as_bfloat16(bits): the bfloat16 whose bits an int16 holds"});
    T.push_back({"ushort_as_bfloat16", Operation::FromBits, {Scalar::UInt16}, BF, Rounding::Nearest, Clamp::None,
                 CmpInst::BAD_FCMP_PREDICATE, "", "ushort_as_bfloat16(bits): the bfloat16 whose bits a uint16 holds"});
    return T;
  }();
  return Table;
}

const BFloat16Function &functionOf(const IntrinsicCall &Call) {
  static const std::string Prefix = "cuda.bf16.";
  std::string Name = std::string(Call.Record->PythonPath).substr(Prefix.size());
  for (const BFloat16Function &F : functions())
    if (F.Name == Name)
      return F;
  Call.C.typingError(Call.Node, "tidal has no cuda.bf16 function " + Name);
}

// Each argument is a real number, converted to the parameter's type (as
// numba-cuda's bindings convert, unsafely); complex numbers, arrays and the
// rest are refused.
TypedValue typeBFloat16Function(IntrinsicCall &Call) {
  const BFloat16Function &F = functionOf(Call);
  const std::string Python = Call.Record->PythonPath;
  if (F.Params.size() == 1)
    bindArguments(Call, Python, {"a"}, 1);
  else if (F.Params.size() == 2)
    bindArguments(Call, Python, {"a", "b"}, 2);
  else
    bindArguments(Call, Python, {"a", "b", "c"}, 3);
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    const Type &T = Call.Args[I].T;
    if (!T.isScalar() || isComplex(T.Dtype) || isDatetime(T.Dtype))
      Call.C.typingError(Call.ArgNodes[I], Python + "() takes " + scalarName(F.Params[I]) +
                                               " numbers (or real numbers, converted to " +
                                               scalarName(F.Params[I]) + "), not " + T.str());
  }
  return TypedValue(Type::scalar(F.Result));
}

Value *bitsOf(IRBuilder<> &B, Value *X) { return B.CreateBitCast(X, B.getInt16Ty()); }
Value *fromBits(IRBuilder<> &B, Value *Bits) { return B.CreateBitCast(Bits, B.getBFloatTy()); }
// CUDA's canonical bfloat16 NaN.
Value *canonicalNaN(IRBuilder<> &B) { return fromBits(B, B.getInt16(0x7FFF)); }

// The next float (of X's type: float or double) above (Up) or below X, on
// its bits: the smallest subnormal of either sign after a zero.
Value *nextFloat(IRBuilder<> &B, Value *X, bool Up) {
  unsigned Width = X->getType()->getPrimitiveSizeInBits();
  llvm::Type *Int = B.getIntNTy(Width);
  Value *Bits = B.CreateBitCast(X, Int);
  Value *Negative = B.CreateICmpSLT(Bits, ConstantInt::get(Int, 0));
  // Away from zero when the step goes the way of the sign.
  Value *Away = Up ? B.CreateNot(Negative) : Negative;
  Value *Stepped = B.CreateSelect(Away, B.CreateAdd(Bits, ConstantInt::get(Int, 1)),
                                  B.CreateSub(Bits, ConstantInt::get(Int, 1)));
  APInt Smallest = APInt(Width, 1);
  if (!Up)
    Smallest.setSignBit();
  Value *IsZero = B.CreateFCmpOEQ(X, ConstantFP::get(X->getType(), 0.0));
  return B.CreateBitCast(B.CreateSelect(IsZero, ConstantInt::get(Int, Smallest), Stepped), X->getType());
}

// A float32 rounded to bfloat16 in a directed mode, on its bits: the low
// 16 bits dropped (toward zero), and the magnitude one step up where the
// mode goes away from zero and a dropped bit was set. NaN: CUDA's canonical
// NaN.
Value *floatToBFloat16Directed(IRBuilder<> &B, Value *X, Rounding Mode) {
  Value *Bits = B.CreateBitCast(X, B.getInt32Ty());
  Value *Truncated = B.CreateTrunc(B.CreateLShr(Bits, 16), B.getInt16Ty());
  Value *Inexact = B.CreateICmpNE(B.CreateAnd(Bits, 0xFFFF), B.getInt32(0));
  Value *Negative = B.CreateICmpSLT(Bits, B.getInt32(0));
  Value *Away = Mode == Rounding::TowardZero ? B.getFalse()
                : Mode == Rounding::Down     ? Negative
                                             : B.CreateNot(Negative);
  Value *Result = B.CreateSelect(B.CreateAnd(Inexact, Away), B.CreateAdd(Truncated, B.getInt16(1)), Truncated);
  return B.CreateSelect(B.CreateFCmpUNO(X, X), canonicalNaN(B), fromBits(B, Result));
}

// A float64 rounded to float32 in a directed mode: the nearest float32,
// then one step back where it went past X the wrong way. (Rounding in one
// direction twice is rounding once, so bfloat16's directed rounding can
// follow.)
Value *doubleToFloatDirected(IRBuilder<> &B, Value *X, Rounding Mode) {
  Value *Nearest = B.CreateFPTrunc(X, B.getFloatTy());
  Value *Back = B.CreateFPExt(Nearest, B.getDoubleTy());
  switch (Mode) {
  case Rounding::Down:
    return B.CreateSelect(B.CreateFCmpOGT(Back, X), nextFloat(B, Nearest, false), Nearest);
  case Rounding::Up:
    return B.CreateSelect(B.CreateFCmpOLT(Back, X), nextFloat(B, Nearest, true), Nearest);
  default: { // toward zero: back where the magnitude grew
    Value *Grew = B.CreateFCmpOGT(B.CreateUnaryIntrinsic(Intrinsic::fabs, Back),
                                  B.CreateUnaryIntrinsic(Intrinsic::fabs, X));
    Value *Negative = B.CreateFCmpOLT(Nearest, ConstantFP::get(B.getFloatTy(), 0.0));
    return B.CreateSelect(Grew, B.CreateSelect(Negative, nextFloat(B, Nearest, true), nextFloat(B, Nearest, false)),
                          Nearest);
  }
  }
}

// A float32 or float64 as a bfloat16 in Mode.
Value *floatToBFloat16(IRBuilder<> &B, Value *X, Rounding Mode) {
  if (Mode == Rounding::Nearest) // cvt.rn.bf16.f32 / .f64 (sm_80 rounds a float64 to odd first)
    return B.CreateFPTrunc(X, B.getBFloatTy());
  if (X->getType()->isDoubleTy())
    X = doubleToFloatDirected(B, X, Mode);
  return floatToBFloat16Directed(B, X, Mode);
}

// An integer as a bfloat16 in Mode, with integer operations: no float
// type between them that LLVM could fold away (InstCombine turns an exact
// sitofp to float64 followed by fptrunc into one sitofp to bfloat, which
// x86 and NVPTX before sm_90 compute through float32, rounding twice).
Value *integerToBFloat16In(IRBuilder<> &B, Value *X, bool Signed, Rounding Mode) {
  llvm::Type *I64 = B.getInt64Ty();
  auto C = [&](int64_t V) { return ConstantInt::get(I64, V); };
  if (X->getType()->getIntegerBitWidth() < 64)
    X = Signed ? B.CreateSExt(X, I64) : B.CreateZExt(X, I64);
  Value *Negative = Signed ? B.CreateICmpSLT(X, C(0)) : B.getFalse();
  Value *Magnitude = B.CreateSelect(Negative, B.CreateNeg(X), X); // INT64_MIN: 2^63, unsigned
  // 1. The top bit's position, and the shift that brings it to bit 7.
  Value *Top = B.CreateSub(C(63), B.CreateBinaryIntrinsic(Intrinsic::ctlz, Magnitude, B.getFalse()));
  Value *Shift = B.CreateSub(Top, C(7));
  Value *Right = B.CreateSelect(B.CreateICmpSGT(Shift, C(0)), Shift, C(0));
  Value *Left = B.CreateSelect(B.CreateICmpSLT(Shift, C(0)), B.CreateNeg(Shift), C(0));
  // 2. The 8 significant bits, and what is dropped below them.
  Value *Significand = B.CreateShl(B.CreateLShr(Magnitude, Right), Left);
  Value *Unit = B.CreateShl(C(1), Right);
  Value *Dropped = B.CreateAnd(Magnitude, B.CreateSub(Unit, C(1)));
  Value *Half = B.CreateLShr(Unit, C(1));
  Value *Inexact = B.CreateICmpNE(Dropped, C(0));
  // 3. Rounded in the mode; a carry out of the 8 bits is the next exponent.
  Value *Up;
  if (Mode == Rounding::Nearest) {
    Value *Odd = B.CreateICmpNE(B.CreateAnd(Significand, C(1)), C(0));
    Up = B.CreateOr(B.CreateICmpUGT(Dropped, Half),
                    B.CreateAnd(B.CreateAnd(B.CreateICmpEQ(Dropped, Half), Inexact), Odd));
  } else if (Mode == Rounding::TowardZero) {
    Up = B.getFalse();
  } else {
    Up = B.CreateAnd(Inexact, Mode == Rounding::Down ? Negative : B.CreateNot(Negative));
  }
  Significand = B.CreateAdd(Significand, B.CreateZExt(Up, I64));
  Value *Carry = B.CreateICmpEQ(Significand, C(256));
  Significand = B.CreateSelect(Carry, C(128), Significand);
  Top = B.CreateAdd(Top, B.CreateZExt(Carry, I64));
  Value *Bits = B.CreateOr(B.CreateShl(B.CreateAdd(Top, C(127)), C(7)), B.CreateSub(Significand, C(128)));
  Bits = B.CreateOr(Bits, B.CreateSelect(Negative, C(0x8000), C(0)));
  Bits = B.CreateSelect(B.CreateICmpEQ(Magnitude, C(0)), C(0), Bits);
  return fromBits(B, B.CreateTrunc(Bits, B.getInt16Ty()));
}

// A bfloat16 as an integer of type To in Mode, as PTX's cvt.r*i: rounded to
// an integer in float32, NaN to 0, saturated to To's range.
Value *bfloat16ToInteger(IntrinsicCall &Call, Value *X, Scalar To, Rounding Mode) {
  IRBuilder<> &B = Call.C.builder();
  Value *F = B.CreateFPExt(X, B.getFloatTy());
  Value *R = Mode == Rounding::Nearest      ? B.CreateUnaryIntrinsic(Intrinsic::roundeven, F)
             : Mode == Rounding::TowardZero ? Call.C.callMarker("math.trunc.f32", B.getFloatTy(), {F})
             : Mode == Rounding::Down       ? Call.C.callMarker("math.floor.f32", B.getFloatTy(), {F})
                                            : Call.C.callMarker("math.ceil.f32", B.getFloatTy(), {F});
  unsigned Bits = bitWidth(To);
  bool Signed = isSigned(To);
  llvm::Type *Int = B.getIntNTy(Bits);
  // The first float above the range is a power of two, exactly a float.
  double Above = std::ldexp(1.0, int(Signed ? Bits - 1 : Bits));
  double Lowest = Signed ? -Above : 0.0;
  APInt Max = Signed ? APInt::getSignedMaxValue(Bits) : APInt::getMaxValue(Bits);
  APInt Min = Signed ? APInt::getSignedMinValue(Bits) : APInt::getMinValue(Bits);
  Value *InRange = B.CreateAnd(B.CreateFCmpOGE(R, ConstantFP::get(B.getFloatTy(), Lowest)),
                               B.CreateFCmpOLT(R, ConstantFP::get(B.getFloatTy(), Above)));
  Value *Safe = B.CreateSelect(InRange, R, ConstantFP::get(B.getFloatTy(), 0.0));
  Value *Converted = Signed ? B.CreateFPToSI(Safe, Int) : B.CreateFPToUI(Safe, Int);
  Value *Saturated = B.CreateSelect(B.CreateFCmpOGE(R, ConstantFP::get(B.getFloatTy(), Above)),
                                    ConstantInt::get(Int, Max),
                                    B.CreateSelect(B.CreateFCmpOLT(R, ConstantFP::get(B.getFloatTy(), Lowest)),
                                                   ConstantInt::get(Int, Min), ConstantInt::get(Int, 0)));
  return B.CreateSelect(InRange, Converted, Saturated); // NaN: neither, 0
}

// CUDA's __hmax/__hmin: the number when the other is NaN (the canonical
// NaN when both are), and +0 above -0.
Value *maxOrMin(IRBuilder<> &B, Value *A, Value *C, bool Max, bool PropagateNaN) {
  Value *SignOfA = B.CreateICmpSLT(bitsOf(B, A), B.getInt16(0));
  Value *SignOfC = B.CreateICmpSLT(bitsOf(B, C), B.getInt16(0));
  Value *PickA = Max ? B.CreateOr(B.CreateFCmpOGT(A, C), B.CreateAnd(B.CreateFCmpOEQ(A, C), SignOfC))
                     : B.CreateOr(B.CreateFCmpOLT(A, C), B.CreateAnd(B.CreateFCmpOEQ(A, C), SignOfA));
  Value *Chosen = B.CreateSelect(PickA, A, C);
  Value *NaNA = B.CreateFCmpUNO(A, A), *NaNC = B.CreateFCmpUNO(C, C);
  if (PropagateNaN)
    return B.CreateSelect(B.CreateOr(NaNA, NaNC), canonicalNaN(B), Chosen);
  return B.CreateSelect(B.CreateAnd(NaNA, NaNC), canonicalNaN(B),
                        B.CreateSelect(NaNA, C, B.CreateSelect(NaNC, A, Chosen)));
}

TypedValue emitBFloat16Function(IntrinsicCall &Call, const Type &Result) {
  const BFloat16Function &F = functionOf(Call);
  IRBuilder<> &B = Call.C.builder();
  std::vector<Value *> V;
  for (size_t I = 0; I < Call.Args.size(); ++I)
    V.push_back(Call.C.convert(Call.Args[I], Type::scalar(F.Params[I]), Call.ArgNodes[I]).scalar());
  Value *R = nullptr;
  switch (F.Op) {
  // Rounded to nearest, then clamped.
  case Operation::Add: R = B.CreateFAdd(V[0], V[1]); break;
  case Operation::Subtract: R = B.CreateFSub(V[0], V[1]); break;
  case Operation::Multiply: R = B.CreateFMul(V[0], V[1]); break;
  case Operation::Divide: R = B.CreateFDiv(V[0], V[1]); break;
  case Operation::Fma: R = B.CreateIntrinsic(Intrinsic::fma, {B.getBFloatTy()}, V); break;
  // Sign bit only.
  case Operation::Negate: R = B.CreateFNeg(V[0]); break;
  case Operation::Absolute: R = B.CreateUnaryIntrinsic(Intrinsic::fabs, V[0]); break;
  case Operation::Max: R = maxOrMin(B, V[0], V[1], true, false); break;
  case Operation::Min: R = maxOrMin(B, V[0], V[1], false, false); break;
  case Operation::MaxNaN: R = maxOrMin(B, V[0], V[1], true, true); break;
  case Operation::MinNaN: R = maxOrMin(B, V[0], V[1], false, true); break;
  // Predicates.
  case Operation::Compare: R = B.CreateFCmp(F.Predicate, V[0], V[1]); break;
  case Operation::IsNaN: R = B.CreateFCmpUNO(V[0], V[0]); break;
  case Operation::IsInf: {
    Value *Infinity = ConstantFP::getInfinity(B.getBFloatTy());
    R = B.CreateSelect(B.CreateFCmpOEQ(V[0], Infinity), B.getInt32(1),
                       B.CreateSelect(B.CreateFCmpOEQ(V[0], B.CreateFNeg(Infinity)), B.getInt32(-1), B.getInt32(0)));
    break;
  }
  case Operation::Math: {
    Value *X = B.CreateFPExt(V[0], B.getFloatTy());
    Value *Y = F.Stem == "pow10"       ? Call.C.callMarker("math.pow.f32", B.getFloatTy(),
                                                         {ConstantFP::get(B.getFloatTy(), 10.0), X})
               : F.Stem == "roundeven" ? B.CreateUnaryIntrinsic(Intrinsic::roundeven, X)
               : F.Stem == "rcp"       ? B.CreateFDiv(ConstantFP::get(B.getFloatTy(), 1.0), X)
                                       : Call.C.callMarker("math." + F.Stem + ".f32", B.getFloatTy(), {X});
    R = B.CreateFPTrunc(Y, B.getBFloatTy());
    break;
  }
  // Conversions.
  case Operation::Extend: R = B.CreateFPExt(V[0], B.getFloatTy()); break;
  case Operation::FromFloat: R = floatToBFloat16(B, V[0], F.Mode); break;
  case Operation::FromInteger: R = integerToBFloat16In(B, V[0], isSigned(F.Params[0]), F.Mode); break;
  case Operation::ToInteger: R = bfloat16ToInteger(Call, V[0], F.Result, F.Mode); break;
  case Operation::AsBits: R = bitsOf(B, V[0]); break;
  case Operation::FromBits: R = fromBits(B, V[0]); break;
  }
  if (F.After == Clamp::Saturate) {
    Value *Zero = ConstantFP::get(B.getBFloatTy(), 0.0), *One = ConstantFP::get(B.getBFloatTy(), 1.0);
    R = B.CreateSelect(B.CreateFCmpOGT(R, Zero), B.CreateSelect(B.CreateFCmpOLT(R, One), R, One), Zero);
  } else if (F.After == Clamp::Relu) {
    Value *Zero = ConstantFP::get(B.getBFloatTy(), 0.0);
    R = B.CreateSelect(B.CreateFCmpUNO(R, R), canonicalNaN(B), B.CreateSelect(B.CreateFCmpOLT(R, Zero), Zero, R));
  }
  return Call.C.makeScalar(Result.Dtype, R);
}

} // namespace

bool isBFloat16MathOverload(IntrinsicCall &Call) {
  static const char *const Overloaded[] = {"math.trunc", "math.ceil", "math.floor", "math.sqrt",
                                           "math.log",   "math.log10", "math.cos",  "math.sin",
                                           "math.tanh",  "math.exp",  "math.exp2"};
  if (Call.Args.size() != 1 || !Call.Args[0].T.isScalar() || Call.Args[0].T.Dtype != Scalar::BFloat16)
    return false;
  for (const char *Path : Overloaded)
    if (Call.Record->PythonPath == std::string(Path))
      return true;
  return false;
}

TypedValue emitBFloat16MathOverload(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  std::string Stem = std::string(Call.Record->PythonPath).substr(5); // after "math."
  Value *X = B.CreateFPExt(Call.Args[0].scalar(), B.getFloatTy());
  Value *Y = Call.C.callMarker("math." + Stem + ".f32", B.getFloatTy(), {X});
  return Call.C.makeScalar(Result.Dtype, B.CreateFPTrunc(Y, B.getBFloatTy()));
}

Value *integerToBFloat16(IRBuilder<> &B, Value *X, bool Signed) {
  return integerToBFloat16In(B, X, Signed, Rounding::Nearest);
}

llvm::ArrayRef<IntrinsicRecord> bfloat16Intrinsics() {
  static const std::vector<IntrinsicRecord> Records = [] {
    // The records point into these strings, which live as long as the table.
    static std::deque<std::string> Paths;
    std::vector<IntrinsicRecord> R = {{"cuda.bf16", IntrinsicKind::Namespace, nullptr, nullptr, "",
                                       "bfloat16 arithmetic, comparisons, math and conversions (numba-cuda's cuda.bf16)."}};
    for (const BFloat16Function &F : functions()) {
      Paths.push_back("cuda.bf16." + F.Name);
      R.push_back({Paths.back().c_str(), IntrinsicKind::Function, typeBFloat16Function, emitBFloat16Function, "",
                   F.Doc.c_str()});
    }
    return R;
  }();
  return Records;
}

} // namespace tidal::frontend
