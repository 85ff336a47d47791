// The rest of numba-cuda's cuda.fp16 (its binding of cuda_fp16.h):
// conversions with a rounding mode (__float2half_rz, __int2half_rd,
// __half2int_ru, ...), bit casts (__short_as_half, __half_as_ushort, ...),
// the saturating and unordered forms (__hadd_sat, __hfma_relu, __hequ,
// __hisnan, ...), and the __-named aliases of the functions
// IntrinsicsHalf.cpp has (__hadd is hadd). A conversion to float16 rounds
// in integer code (roundToHalf), so that every mode gives the bits
// cvt.r{n,z,m,p}.f16.* gives, on both targets; a conversion from float16
// rounds its exact float32 value to an integer (roundeven, trunc, floor,
// ceil) and converts with saturation, NaN to 0, as cvt.r*i.*.f16 does.
#include "IntrinsicTable.h"

#include "llvm/IR/Intrinsics.h"

#include <cstring>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

enum class Rounding { Nearest, Zero, Down, Up };

// The mode a name ends with: _rn, _rz, _rd, _ru (none: to nearest).
Rounding roundingOf(const std::string &Name) {
  std::string Tail = Name.size() > 3 ? Name.substr(Name.size() - 3) : "";
  return Tail == "_rz" ? Rounding::Zero : Tail == "_rd" ? Rounding::Down
         : Tail == "_ru" ? Rounding::Up : Rounding::Nearest;
}

// A double (exact for every input here) rounded to a half in mode M:
// the truncated half counted in quanta of its exponent, then one more
// quantum where the dropped bits say so; NaN is 0x7FFF.
Value *roundToHalf(IRBuilder<> &B, Value *X, Rounding M) {
  Value *Bits = B.CreateBitCast(X, B.getInt64Ty());
  Value *Negative = B.CreateICmpSLT(Bits, B.getInt64(0));
  Value *Magnitude = B.CreateAnd(Bits, B.getInt64(0x7FFFFFFFFFFFFFFFULL));
  Value *BiasedExponent = B.CreateLShr(Magnitude, 52);
  Value *Mantissa = B.CreateAnd(Magnitude, B.getInt64((uint64_t(1) << 52) - 1));
  Value *IsNormal = B.CreateICmpNE(BiasedExponent, B.getInt64(0));
  // The significand S (with its implicit bit) and the unbiased exponent E:
  // the value is S * 2^(E - 52).
  Value *S = B.CreateSelect(IsNormal, B.CreateOr(Mantissa, B.getInt64(uint64_t(1) << 52)), Mantissa);
  Value *E = B.CreateSub(B.CreateSelect(IsNormal, BiasedExponent, B.getInt64(1)), B.getInt64(1023));
  // 1. The half's quantum is 2^(max(E, -14) - 10): drop 42 bits of S, more
  // below the normal range (at most 63: all of S is then below half a quantum).
  Value *Below = B.CreateSelect(B.CreateICmpSLT(E, B.getInt64(-14)),
                                B.CreateSub(B.getInt64(-14), E), B.getInt64(0));
  Value *Drop = B.CreateAdd(B.getInt64(42), Below);
  Drop = B.CreateSelect(B.CreateICmpUGT(Drop, B.getInt64(63)), B.getInt64(63), Drop);
  Value *Quanta = B.CreateLShr(S, Drop);
  Value *Exponent = B.CreateSelect(B.CreateICmpSLT(E, B.getInt64(-14)), B.getInt64(0),
                                   B.CreateAdd(E, B.getInt64(14)));
  // E + 14 << 10 plus the quanta (whose implicit bit adds one to the exponent).
  Value *Truncated = B.CreateAdd(B.CreateShl(Exponent, 10), Quanta);
  // 2. What the dropped bits are worth: nothing, under, at or over half a quantum.
  Value *Dropped = B.CreateAnd(S, B.CreateSub(B.CreateShl(B.getInt64(1), Drop), B.getInt64(1)));
  Value *Half = B.CreateShl(B.getInt64(1), B.CreateSub(Drop, B.getInt64(1)));
  Value *Inexact = B.CreateICmpNE(Dropped, B.getInt64(0));
  Value *Up; // one more quantum (of the magnitude)
  switch (M) {
  case Rounding::Nearest:
    Up = B.CreateOr(B.CreateICmpUGT(Dropped, Half),
                    B.CreateAnd(B.CreateICmpEQ(Dropped, Half),
                                B.CreateICmpNE(B.CreateAnd(Truncated, B.getInt64(1)), B.getInt64(0))));
    break;
  case Rounding::Zero:
    Up = B.getFalse();
    break;
  case Rounding::Down:
    Up = B.CreateAnd(Inexact, Negative);
    break;
  case Rounding::Up:
    Up = B.CreateAnd(Inexact, B.CreateNot(Negative));
    break;
  }
  Value *R = B.CreateAdd(Truncated, B.CreateZExt(Up, B.getInt64Ty()));
  // 3. 2^16 and beyond: infinity where the mode rounds away from zero (or
  // the input is infinite), else the largest finite half; NaN.
  Value *Away = M == Rounding::Nearest ? B.getTrue()
                : M == Rounding::Zero  ? B.getFalse()
                : M == Rounding::Down  ? Negative
                                       : B.CreateNot(Negative);
  Value *Huge = B.CreateICmpSGT(E, B.getInt64(15));
  Value *IsInf = B.CreateICmpEQ(Magnitude, B.getInt64(0x7FF0000000000000ULL)); // exact in every mode
  R = B.CreateSelect(Huge, B.CreateSelect(B.CreateOr(Away, IsInf), B.getInt64(0x7C00), B.getInt64(0x7BFF)), R);
  R = B.CreateOr(R, B.CreateSelect(Negative, B.getInt64(0x8000), B.getInt64(0)));
  Value *IsNaN = B.CreateICmpUGT(Magnitude, B.getInt64(0x7FF0000000000000ULL));
  R = B.CreateSelect(IsNaN, B.getInt64(0x7FFF), R);
  return B.CreateBitCast(B.CreateTrunc(R, B.getInt16Ty()), B.getHalfTy());
}

// The C types of the names: __int2half_rn takes an int, __half2ull_rz
// gives an unsigned long long.
bool scalarOfCName(const std::string &C, Scalar &Out) {
  static const std::pair<const char *, Scalar> Names[] = {
      {"float", Scalar::Float32}, {"double", Scalar::Float64}, {"int", Scalar::Int32},
      {"uint", Scalar::UInt32},   {"short", Scalar::Int16},    {"ushort", Scalar::UInt16},
      {"ll", Scalar::Int64},      {"ull", Scalar::UInt64},     {"char", Scalar::Int8},
      {"uchar", Scalar::UInt8}};
  for (const auto &[Name, S] : Names)
    if (C == Name) {
      Out = S;
      return true;
    }
  return false;
}

// __<from>2<to>[_<mode>]: the C type on each side ("half" is float16).
struct ConversionName {
  Scalar From, To;
  Rounding Mode;
};
ConversionName conversionOf(const std::string &Python) {
  std::string Name = Python.substr(Python.rfind('.') + 3); // after "__"
  Rounding Mode = roundingOf(Name);
  if (Name.size() > 3 && Name[Name.size() - 3] == '_')
    Name = Name.substr(0, Name.size() - 3);
  size_t Two = Name.find('2');
  std::string From = Name.substr(0, Two), To = Name.substr(Two + 1);
  ConversionName C{Scalar::Float16, Scalar::Float16, Mode};
  if (From != "half")
    scalarOfCName(From, C.From);
  if (To != "half")
    scalarOfCName(To, C.To);
  return C;
}

std::string shortName(IntrinsicCall &Call) {
  std::string Python = Call.Record->PythonPath;
  return Python.substr(Python.rfind('.') + 1);
}

// One real-number argument (converted to the C type of the name, as
// numba-cuda's signatures convert it).
void expectOneReal(IntrinsicCall &Call, const std::string &What) {
  bindArguments(Call, shortName(Call), {"a"}, 1);
  const Type &T = Call.Args[0].T;
  if (!T.isScalar() || isComplex(T.Dtype) || isDatetime(T.Dtype) || isFp8(T.Dtype))
    Call.C.typingError(Call.ArgNodes[0], shortName(Call) + "() takes " + What + ", not " + T.str());
}

TypedValue typeHalfConversion(IntrinsicCall &Call) {
  ConversionName C = conversionOf(Call.Record->PythonPath);
  expectOneReal(Call, std::string("a ") + scalarName(C.From) + " (or a real number, converted)");
  return TypedValue(Type::scalar(C.To));
}
TypedValue emitHalfConversion(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  ConversionName C = conversionOf(Call.Record->PythonPath);
  Value *X = Call.C.convert(Call.Args[0], Type::scalar(C.From), Call.ArgNodes[0]).scalar();
  if (C.To == Scalar::Float16) {
    // To the exact double first: a 64-bit integer clamped to +-2^17, which
    // every mode rounds as it rounds the integer itself.
    Value *D;
    if (C.From == Scalar::Float64)
      D = X;
    else if (isFloat(C.From))
      D = B.CreateFPExt(X, B.getDoubleTy());
    else {
      if (bitWidth(C.From) == 64) {
        Value *Limit = B.getInt64(1 << 17);
        if (isSigned(C.From)) {
          X = B.CreateBinaryIntrinsic(Intrinsic::smin, X, Limit);
          X = B.CreateBinaryIntrinsic(Intrinsic::smax, X, B.getInt64(-(int64_t(1) << 17)));
        } else {
          X = B.CreateBinaryIntrinsic(Intrinsic::umin, X, Limit);
        }
      }
      D = isSigned(C.From) ? B.CreateSIToFP(X, B.getDoubleTy()) : B.CreateUIToFP(X, B.getDoubleTy());
    }
    return Call.C.makeScalar(Scalar::Float16, roundToHalf(B, D, C.Mode));
  }
  // From float16: exact in float32.
  Value *F = B.CreateFPExt(X, B.getFloatTy());
  if (C.To == Scalar::Float32)
    return Call.C.makeScalar(Scalar::Float32, F);
  Intrinsic::ID Round = C.Mode == Rounding::Nearest ? Intrinsic::roundeven
                        : C.Mode == Rounding::Zero  ? Intrinsic::trunc
                        : C.Mode == Rounding::Down  ? Intrinsic::floor
                                                    : Intrinsic::ceil;
  Value *Rounded = B.CreateUnaryIntrinsic(Round, F);
  return Call.C.makeScalar(
      C.To, B.CreateIntrinsic(isSigned(C.To) ? Intrinsic::fptosi_sat : Intrinsic::fptoui_sat,
                              {Call.C.llvmType(C.To), B.getFloatTy()}, {Rounded}));
}

// __short_as_half, __ushort_as_half, __half_as_short, __half_as_ushort: the
// same 16 bits.
TypedValue typeBitCast(IntrinsicCall &Call) {
  std::string Name = shortName(Call);
  bool ToHalf = Name.find("_as_half") != std::string::npos;
  expectOneReal(Call, ToHalf ? "a 16-bit integer" : "a float16");
  if (ToHalf)
    return TypedValue(Type::scalar(Scalar::Float16));
  return TypedValue(Type::scalar(Name == "__half_as_short" ? Scalar::Int16 : Scalar::UInt16));
}
TypedValue emitBitCast(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  std::string Name = shortName(Call);
  if (Result.Dtype == Scalar::Float16) {
    Scalar From = Name == "__short_as_half" ? Scalar::Int16 : Scalar::UInt16;
    Value *X = Call.C.convert(Call.Args[0], Type::scalar(From), Call.ArgNodes[0]).scalar();
    return Call.C.makeScalar(Scalar::Float16, B.CreateBitCast(X, B.getHalfTy()));
  }
  Value *X = Call.C.convert(Call.Args[0], Type::scalar(Scalar::Float16), Call.ArgNodes[0]).scalar();
  return Call.C.makeScalar(Result.Dtype, B.CreateBitCast(X, B.getInt16Ty()));
}

// __half(x): x as a float16 (numba-cuda's name of the type).
TypedValue typeHalfOf(IntrinsicCall &Call) {
  expectOneReal(Call, "a real number");
  return TypedValue(Type::scalar(Scalar::Float16));
}
TypedValue emitHalfOf(IntrinsicCall &Call, const Type &Result) {
  return Call.C.convert(Call.Args[0], Result, Call.ArgNodes[0]);
}

// The arithmetic and comparison forms on float16 arguments (any real
// number, converted, as the other cuda.fp16 functions take them).
size_t arityOf(const std::string &Name) {
  if (Name == "__hisinf" || Name == "__hisnan")
    return 1;
  if (Name.rfind("__hfma", 0) == 0)
    return 3;
  return 2;
}
TypedValue typeHalfForm(IntrinsicCall &Call) {
  std::string Name = shortName(Call);
  size_t N = arityOf(Name);
  if (N == 1)
    bindArguments(Call, Name, {"a"}, 1);
  else if (N == 2)
    bindArguments(Call, Name, {"a", "b"}, 2);
  else
    bindArguments(Call, Name, {"a", "b", "c"}, 3);
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    const Type &T = Call.Args[I].T;
    if (!T.isScalar() || isComplex(T.Dtype) || isDatetime(T.Dtype) || isFp8(T.Dtype))
      Call.C.typingError(Call.ArgNodes[I], Name + "() takes float16 numbers (or real numbers, "
                                                  "converted to float16), not " + T.str());
  }
  if (Name == "__hisinf")
    return TypedValue(Type::scalar(Scalar::Int32));
  bool Comparison = Name == "__hisnan" || Name.back() == 'u';
  return TypedValue(Type::scalar(Comparison ? Scalar::Bool : Scalar::Float16));
}
TypedValue emitHalfForm(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  std::string Name = shortName(Call);
  std::vector<Value *> V;
  for (size_t I = 0; I < Call.Args.size(); ++I)
    V.push_back(Call.C.convert(Call.Args[I], Type::scalar(Scalar::Float16), Call.ArgNodes[I]).scalar());
  llvm::Type *H = B.getHalfTy();
  Value *Zero = ConstantFP::get(H, 0.0), *One = ConstantFP::get(H, 1.0);
  // Unordered comparisons: true where either is NaN.
  if (Name == "__hequ" || Name == "__hneu" || Name == "__hgeu" || Name == "__hgtu" ||
      Name == "__hleu" || Name == "__hltu") {
    CmpInst::Predicate P = Name == "__hequ"   ? CmpInst::FCMP_UEQ
                           : Name == "__hneu" ? CmpInst::FCMP_UNE
                           : Name == "__hgeu" ? CmpInst::FCMP_UGE
                           : Name == "__hgtu" ? CmpInst::FCMP_UGT
                           : Name == "__hleu" ? CmpInst::FCMP_ULE
                                              : CmpInst::FCMP_ULT;
    return Call.C.makeScalar(Scalar::Bool, B.CreateFCmp(P, V[0], V[1]));
  }
  if (Name == "__hisnan")
    return Call.C.makeScalar(Scalar::Bool, B.CreateFCmpUNO(V[0], V[0]));
  if (Name == "__hisinf") { // -1 for -inf, 1 for +inf, else 0
    Value *PlusInf = B.CreateFCmpOEQ(V[0], ConstantFP::getInfinity(H));
    Value *MinusInf = B.CreateFCmpOEQ(V[0], ConstantFP::getInfinity(H, true));
    return Call.C.makeScalar(
        Scalar::Int32, B.CreateSelect(PlusInf, B.getInt32(1),
                                      B.CreateSelect(MinusInf, B.getInt32(-1), B.getInt32(0))));
  }
  // Arithmetic, rounded to nearest: _rn (behind llvm.arithmetic.fence, which
  // no fma contraction crosses: tidal compiles with fp-contract=fast, so
  // hadd(hmul(a, b), c) may become an fma), _sat (clamped to [0, 1], NaN to
  // +0), _relu (negative to +0, NaN the canonical NaN).
  Value *R;
  if (Name.rfind("__hadd", 0) == 0)
    R = B.CreateFAdd(V[0], V[1]);
  else if (Name.rfind("__hsub", 0) == 0)
    R = B.CreateFSub(V[0], V[1]);
  else if (Name.rfind("__hmul", 0) == 0)
    R = B.CreateFMul(V[0], V[1]);
  else
    R = B.CreateIntrinsic(Intrinsic::fma, {H}, {V[0], V[1], V[2]});
  if (Name.size() > 3 && Name.substr(Name.size() - 3) == "_rn") // no fma contracts it
    R = B.CreateUnaryIntrinsic(Intrinsic::arithmetic_fence, R);
  if (Name.size() > 4 && Name.substr(Name.size() - 4) == "_sat") {
    // max(R, 0) with NaN to 0 (ordered compare), then min(., 1).
    R = B.CreateSelect(B.CreateFCmpOGT(R, Zero), R, Zero);
    R = B.CreateSelect(B.CreateFCmpOLT(R, One), R, One);
  } else if (Name == "__hfma_relu") {
    Value *NaN = B.CreateBitCast(B.getInt16(0x7FFF), H);
    R = B.CreateSelect(B.CreateFCmpUNO(R, R), NaN, B.CreateSelect(B.CreateFCmpOLT(R, Zero), Zero, R));
  }
  return Call.C.makeScalar(Scalar::Float16, R);
}

// __hadd & co.: the row of IntrinsicsHalf.cpp named without the underscores.
const IntrinsicRecord *aliased(IntrinsicCall &Call) {
  std::string Python = Call.Record->PythonPath;
  return findIntrinsic("cuda.fp16." + Python.substr(Python.rfind('.') + 3));
}
TypedValue typeAlias(IntrinsicCall &Call) {
  IntrinsicCall Target = Call;
  Target.Record = aliased(Call);
  return Target.Record->TypeRule(Target);
}
TypedValue emitAlias(IntrinsicCall &Call, const Type &Result) {
  IntrinsicCall Target = Call;
  Target.Record = aliased(Call);
  return Target.Record->Emitter(Target, Result);
}

#define CONVERSION(NAME, DOC)                                                                      \
  {"cuda.fp16." NAME, IntrinsicKind::Function, typeHalfConversion, emitHalfConversion, "", DOC}
#define TO_HALF(FROM, WHAT)                                                                        \
  CONVERSION("__" FROM "2half_rn", WHAT " to float16, rounded to nearest even"),                   \
      CONVERSION("__" FROM "2half_rz", WHAT " to float16, rounded toward zero"),                   \
      CONVERSION("__" FROM "2half_rd", WHAT " to float16, rounded down"),                          \
      CONVERSION("__" FROM "2half_ru", WHAT " to float16, rounded up")
#define FROM_HALF(TO, WHAT)                                                                        \
  CONVERSION("__half2" TO "_rn", "a float16 to " WHAT ", rounded to nearest even (saturated; NaN is 0)"), \
      CONVERSION("__half2" TO "_rz", "a float16 to " WHAT ", rounded toward zero (saturated; NaN is 0)"), \
      CONVERSION("__half2" TO "_rd", "a float16 to " WHAT ", rounded down (saturated; NaN is 0)"),        \
      CONVERSION("__half2" TO "_ru", "a float16 to " WHAT ", rounded up (saturated; NaN is 0)")
#define FORM(NAME, DOC) {"cuda.fp16." NAME, IntrinsicKind::Function, typeHalfForm, emitHalfForm, "", DOC}
#define ALIAS(NAME) {"cuda.fp16.__" NAME, IntrinsicKind::Function, typeAlias, emitAlias, "", NAME "(), by CUDA's name"}

} // namespace

llvm::ArrayRef<IntrinsicRecord> halfConversionIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.fp16.__half", IntrinsicKind::Function, typeHalfOf, emitHalfOf, "",
       "__half(x): x as a float16 (numba-cuda's name of the type)"},
      CONVERSION("__float2half", "a float32 to float16, rounded to nearest even"),
      CONVERSION("__double2half", "a float64 to float16, rounded once to nearest even"),
      CONVERSION("__half2float", "a float16 to float32 (exact)"),
      TO_HALF("float", "a float32"),
      TO_HALF("int", "an int32"),
      TO_HALF("uint", "a uint32"),
      TO_HALF("short", "an int16"),
      TO_HALF("ushort", "a uint16"),
      TO_HALF("ll", "an int64"),
      TO_HALF("ull", "a uint64"),
      FROM_HALF("int", "int32"),
      FROM_HALF("uint", "uint32"),
      FROM_HALF("short", "int16"),
      FROM_HALF("ushort", "uint16"),
      FROM_HALF("ll", "int64"),
      FROM_HALF("ull", "uint64"),
      CONVERSION("__half2char_rz", "a float16 to int8, rounded toward zero (saturated; NaN is 0)"),
      CONVERSION("__half2uchar_rz", "a float16 to uint8, rounded toward zero (saturated; NaN is 0)"),
      {"cuda.fp16.__short_as_half", IntrinsicKind::Function, typeBitCast, emitBitCast, "",
       "__short_as_half(a): the float16 whose bits are the int16 a"},
      {"cuda.fp16.__ushort_as_half", IntrinsicKind::Function, typeBitCast, emitBitCast, "",
       "__ushort_as_half(a): the float16 whose bits are the uint16 a"},
      {"cuda.fp16.__half_as_short", IntrinsicKind::Function, typeBitCast, emitBitCast, "",
       "__half_as_short(a): a float16's bits as an int16"},
      {"cuda.fp16.__half_as_ushort", IntrinsicKind::Function, typeBitCast, emitBitCast, "",
       "__half_as_ushort(a): a float16's bits as a uint16"},
      FORM("__hadd_rn", "__hadd_rn(a, b): a + b rounded to nearest, never contracted into an fma"),
      FORM("__hsub_rn", "__hsub_rn(a, b): a - b rounded to nearest, never contracted into an fma"),
      FORM("__hmul_rn", "__hmul_rn(a, b): a * b rounded to nearest, never contracted into an fma"),
      FORM("__hadd_sat", "__hadd_sat(a, b): a + b clamped to [0, 1] (NaN is +0)"),
      FORM("__hsub_sat", "__hsub_sat(a, b): a - b clamped to [0, 1] (NaN is +0)"),
      FORM("__hmul_sat", "__hmul_sat(a, b): a * b clamped to [0, 1] (NaN is +0)"),
      FORM("__hfma_sat", "__hfma_sat(a, b, c): a * b + c rounded once, clamped to [0, 1] (NaN is +0)"),
      FORM("__hfma_relu", "__hfma_relu(a, b, c): a * b + c rounded once; negative is +0, NaN the canonical NaN"),
      FORM("__hequ", "__hequ(a, b): a == b, or either is NaN"),
      FORM("__hneu", "__hneu(a, b): a != b, or either is NaN"),
      FORM("__hgeu", "__hgeu(a, b): a >= b, or either is NaN"),
      FORM("__hgtu", "__hgtu(a, b): a > b, or either is NaN"),
      FORM("__hleu", "__hleu(a, b): a <= b, or either is NaN"),
      FORM("__hltu", "__hltu(a, b): a < b, or either is NaN"),
      FORM("__hisnan", "__hisnan(a): whether a is NaN"),
      FORM("__hisinf", "__hisinf(a): 1 for +inf, -1 for -inf, else 0 (an int32)"),
      ALIAS("habs"), ALIAS("hadd"), ALIAS("hdiv"), ALIAS("heq"), ALIAS("hfma"), ALIAS("hge"),
      ALIAS("hgt"), ALIAS("hle"), ALIAS("hlt"), ALIAS("hmax"), ALIAS("hmax_nan"), ALIAS("hmin"),
      ALIAS("hmin_nan"), ALIAS("hmul"), ALIAS("hne"), ALIAS("hneg"), ALIAS("hsub"),
  };
  return Records;
}

} // namespace tidal::frontend
