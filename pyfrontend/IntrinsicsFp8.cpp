// CUDA's 8-bit floats as numba-cuda binds cuda_fp8.h
// (numba.cuda._internal.cuda_fp8; tidal.cuda.fp8 and
// tidal.cuda._internal.cuda_fp8): the constructors fp8_e4m3(x),
// fp8_e5m2(x), fp8_e8m0(x) of fp8 values, which convert back with
// float32(v) & co. (Fp8Conversions.cpp), and the cvt_* functions between
// numbers and raw fp8 bits (uint8, two of them in a uint16), with a
// saturation_t, an fp8_interpretation_t or a cudaRoundMode member.
#include "Fp8.h"
#include "IntrinsicTable.h"

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

Scalar constructedType(const std::string &Python) {
  return Python == "cuda.fp8.fp8_e4m3"   ? Scalar::Fp8E4M3
         : Python == "cuda.fp8.fp8_e5m2" ? Scalar::Fp8E5M2
                                         : Scalar::Fp8E8M0;
}

// fp8_e4m3(), fp8_e4m3(x): x any real number (an fp8 value too); no
// argument is zero.
TypedValue typeFp8Constructor(IntrinsicCall &Call) {
  std::string Python = Call.Record->PythonPath;
  std::string Name = Python.substr(Python.rfind('.') + 1);
  expectArgCount(Call, Name, 0, 1);
  if (!Call.Args.empty()) {
    const Type &T = Call.Args[0].T;
    if (!T.isScalar() || isComplex(T.Dtype) || isDatetime(T.Dtype))
      Call.C.typingError(Call.ArgNodes[0], Name + "() takes a real number (an integer, "
                                                  "float16, float32 or float64), not " + T.str());
  }
  return TypedValue(Type::scalar(constructedType(Python)));
}
TypedValue emitFp8Constructor(IntrinsicCall &Call, const Type &Result) {
  if (Call.Args.empty())
    return Call.C.makeScalar(Result.Dtype, Call.C.builder().getInt8(0));
  if (Call.Args[0].T.Dtype == Result.Dtype)
    return Call.Args[0];
  return Call.C.makeScalar(Result.Dtype, fp8::convert(Call.C, Call.Args[0], Result.Dtype));
}

// The cvt_* functions: what each takes first, and which enum its mode is.
enum class Source { Float, Double, Float2, Double2, BFloat16Raw, E8M0Bits };
struct Conversion {
  const char *Name;
  Source From;
  bool ToE8M0; // the third argument is a cudaRoundMode (else an fp8_interpretation_t)
};
const Conversion Conversions[] = {
    {"cvt_float_to_fp8", Source::Float, false},
    {"cvt_double_to_fp8", Source::Double, false},
    {"cvt_float2_to_fp8x2", Source::Float2, false},
    {"cvt_double2_to_fp8x2", Source::Double2, false},
    {"cvt_bfloat16raw_to_fp8", Source::BFloat16Raw, false},
    {"cvt_bfloat16raw_to_e8m0", Source::BFloat16Raw, true},
    {"cvt_float_to_e8m0", Source::Float, true},
    {"cvt_float2_to_e8m0x2", Source::Float2, true},
    {"cvt_double_to_e8m0", Source::Double, true},
    {"cvt_double2_to_e8m0x2", Source::Double2, true},
    {"cvt_e8m0_to_bf16raw", Source::E8M0Bits, false},
};
const Conversion &conversionOf(const std::string &Python) {
  std::string Name = Python.substr(Python.rfind('.') + 1);
  for (const Conversion &C : Conversions)
    if (Name == C.Name)
      return C;
  return Conversions[0];
}

// numba-cuda's bfloat16_raw: CUDA's struct of the bits, whose .x tidal's
// uint16x1 (ushort1) has.
Type bfloat16RawType() { return Type::vector(Scalar::UInt16, 1); }

// An argument that must be a member of the IntEnum class named Enum
// (numba-cuda types it IntEnumMember(saturation_t, int64)).
void expectEnumMember(IntrinsicCall &Call, size_t Index, const std::string &Function,
                      const std::string &Parameter, const std::string &Enum,
                      const std::string &Members) {
  const Type &T = Call.Args[Index].T;
  if (T.isEnum() && T.Enum->ClassName == Enum && T.isIntegerScalar())
    return;
  Call.C.typingError(Call.ArgNodes[Index], Function + "() argument '" + Parameter + "' takes a " +
                                               Enum + " member (" + Members + "), not " +
                                               T.str());
}

TypedValue typeFp8Conversion(IntrinsicCall &Call) {
  const Conversion &Conv = conversionOf(Call.Record->PythonPath);
  std::string Name = Conv.Name;
  if (Conv.From == Source::E8M0Bits) {
    bindArguments(Call, Name, {"x"}, 1);
    if (!Call.Args[0].T.isIntegerScalar())
      Call.C.typingError(Call.ArgNodes[0], Name + "() takes the e8m0 bits as an integer (uint8), not " +
                                               Call.Args[0].T.str());
    return TypedValue(bfloat16RawType());
  }
  bindArguments(Call, Name, {"x", "saturate", Conv.ToE8M0 ? "rounding" : "fp8_interpretation"}, 3);
  const Type &X = Call.Args[0].T;
  bool Fits;
  std::string Expected;
  switch (Conv.From) {
  case Source::Float:
  case Source::Double:
    Fits = X.isScalar() && !isComplex(X.Dtype) && !isDatetime(X.Dtype) && !isFp8(X.Dtype);
    Expected = Conv.From == Source::Float ? "a float32 (or a real number, converted)"
                                          : "a float64 (or a real number, converted)";
    break;
  case Source::Float2:
    Fits = X == Type::vector(Scalar::Float32, 2);
    Expected = "a float32x2 (float2)";
    break;
  case Source::Double2:
    Fits = X == Type::vector(Scalar::Float64, 2);
    Expected = "a float64x2 (double2)";
    break;
  default: // BFloat16Raw
    Fits = X == bfloat16RawType() || X.isIntegerScalar();
    Expected = "a bfloat16_raw (what cvt_e8m0_to_bf16raw returns) or the bits as a uint16";
    break;
  }
  if (!Fits)
    Call.C.typingError(Call.ArgNodes[0], Name + "() takes " + Expected + ", not " + X.str());
  expectEnumMember(Call, 1, Name, "saturate", "saturation_t",
                   "saturation_t.NOSAT or saturation_t.SATFINITE");
  if (Conv.ToE8M0)
    expectEnumMember(Call, 2, Name, "rounding", "cudaRoundMode",
                     "cudaRoundMode.cudaRoundZero or cudaRoundMode.cudaRoundPosInf");
  else
    expectEnumMember(Call, 2, Name, "fp8_interpretation", "fp8_interpretation_t",
                     "fp8_interpretation_t.E4M3 or fp8_interpretation_t.E5M2");
  bool Pair = Conv.From == Source::Float2 || Conv.From == Source::Double2;
  return TypedValue(Type::scalar(Pair ? Scalar::UInt16 : Scalar::UInt8));
}

TypedValue emitFp8Conversion(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  const Conversion &Conv = conversionOf(Call.Record->PythonPath);
  if (Conv.From == Source::E8M0Bits) {
    Value *Bits = Call.C.convert(Call.Args[0], Type::scalar(Scalar::UInt8), Call.ArgNodes[0]).scalar();
    Value *Raw = UndefValue::get(StructType::get(B.getContext(), ArrayRef<llvm::Type *>(B.getInt16Ty())));
    TypedValue R(Result);
    R.Parts.push_back(B.CreateInsertValue(Raw, fp8::e8m0ToBFloat16Raw(B, Bits), 0));
    return R;
  }
  auto Int64 = [&](size_t I) {
    return Call.C.convert(Call.Args[I], Type::scalar(Scalar::Int64), Call.ArgNodes[I]).scalar();
  };
  Value *SatFinite = B.CreateICmpNE(Int64(1), B.getInt64(0)); // SATFINITE = 1
  Value *Mode = Int64(2); // E5M2 = 1; cudaRoundMode's value
  Value *E5M2 = B.CreateICmpEQ(Mode, B.getInt64(1));
  // One number to its bits.
  auto One = [&](Value *X, bool Double) -> Value * {
    if (Conv.ToE8M0)
      return Double ? fp8::e8m0FromDouble(B, X, SatFinite, Mode)
                    : fp8::e8m0FromFloat(B, X, SatFinite, Mode);
    return Double ? fp8::fromDoubleAs(B, X, SatFinite, E5M2)
                  : fp8::fromFloatAs(B, X, SatFinite, E5M2);
  };
  Value *R;
  switch (Conv.From) {
  case Source::Float:
  case Source::Double: {
    Scalar F = Conv.From == Source::Float ? Scalar::Float32 : Scalar::Float64;
    Value *X = Call.C.convert(Call.Args[0], Type::scalar(F), Call.ArgNodes[0]).scalar();
    R = One(X, F == Scalar::Float64);
    break;
  }
  case Source::Float2:
  case Source::Double2: { // x in the low byte, y in the high one
    Value *V = Call.Args[0].scalar();
    bool Double = Conv.From == Source::Double2;
    Value *Low = B.CreateZExt(One(B.CreateExtractValue(V, 0), Double), B.getInt16Ty());
    Value *High = B.CreateZExt(One(B.CreateExtractValue(V, 1), Double), B.getInt16Ty());
    R = B.CreateOr(Low, B.CreateShl(High, 8));
    break;
  }
  default: { // BFloat16Raw: its float, or (to e8m0) its bits directly
    const TypedValue &X = Call.Args[0];
    Value *Raw = X.T.isVector()
                     ? B.CreateExtractValue(X.scalar(), 0)
                     : Call.C.convert(X, Type::scalar(Scalar::UInt16), Call.ArgNodes[0]).scalar();
    if (Conv.ToE8M0)
      R = fp8::e8m0FromBFloat16Raw(B, Raw, SatFinite, B.CreateICmpEQ(Mode, B.getInt64(2)));
    else
      R = One(fp8::bfloat16RawToFloat(B, Raw), false);
    break;
  }
  }
  return Call.C.makeScalar(Result.Dtype, R);
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> fp8Intrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.fp8", IntrinsicKind::Namespace, nullptr, nullptr, "",
       "CUDA's 8-bit floats (cuda_fp8.h): fp8_e4m3, fp8_e5m2, fp8_e8m0 and the cvt_* functions."},
      {"cuda.fp8.fp8_e4m3", IntrinsicKind::Function, typeFp8Constructor, emitFp8Constructor, "",
       "fp8_e4m3(x): x as an fp8 E4M3 value (4 exponent bits, 3 mantissa bits), rounded to "
       "nearest even and saturated to +-448; float32(v) & co. convert back."},
      {"cuda.fp8.fp8_e5m2", IntrinsicKind::Function, typeFp8Constructor, emitFp8Constructor, "",
       "fp8_e5m2(x): x as an fp8 E5M2 value (5 exponent bits, 2 mantissa bits), rounded to "
       "nearest even and saturated to +-57344; float32(v) & co. convert back."},
      {"cuda.fp8.fp8_e8m0", IntrinsicKind::Function, typeFp8Constructor, emitFp8Constructor, "",
       "fp8_e8m0(x): |x| rounded up to a power of two 2^-127..2^127 (an exponent-only scale); "
       "float32(v) & co. convert back."},
      {"cuda.fp8.cvt_float_to_fp8", IntrinsicKind::Function, typeFp8Conversion, emitFp8Conversion, "",
       "cvt_float_to_fp8(x, saturate, fp8_interpretation): a float32's fp8 bits (uint8), rounded "
       "to nearest even."},
      {"cuda.fp8.cvt_double_to_fp8", IntrinsicKind::Function, typeFp8Conversion, emitFp8Conversion, "",
       "cvt_double_to_fp8(x, saturate, fp8_interpretation): a float64's fp8 bits (uint8), rounded "
       "to nearest even."},
      {"cuda.fp8.cvt_float2_to_fp8x2", IntrinsicKind::Function, typeFp8Conversion, emitFp8Conversion,
       "", "cvt_float2_to_fp8x2(x, saturate, fp8_interpretation): a float32x2's fp8 bits, x in "
           "the low byte of the uint16."},
      {"cuda.fp8.cvt_double2_to_fp8x2", IntrinsicKind::Function, typeFp8Conversion, emitFp8Conversion,
       "", "cvt_double2_to_fp8x2(x, saturate, fp8_interpretation): a float64x2's fp8 bits, x in "
           "the low byte of the uint16."},
      {"cuda.fp8.cvt_bfloat16raw_to_fp8", IntrinsicKind::Function, typeFp8Conversion,
       emitFp8Conversion, "",
       "cvt_bfloat16raw_to_fp8(x, saturate, fp8_interpretation): a bfloat16's (raw bits) fp8 bits."},
      {"cuda.fp8.cvt_bfloat16raw_to_e8m0", IntrinsicKind::Function, typeFp8Conversion,
       emitFp8Conversion, "",
       "cvt_bfloat16raw_to_e8m0(x, saturate, rounding): a bfloat16's (raw bits) e8m0 bits, "
       "toward zero or up (cudaRoundPosInf)."},
      {"cuda.fp8.cvt_float_to_e8m0", IntrinsicKind::Function, typeFp8Conversion, emitFp8Conversion, "",
       "cvt_float_to_e8m0(x, saturate, rounding): a float32's e8m0 bits (uint8), toward zero "
       "(cudaRoundZero) or up (cudaRoundPosInf)."},
      {"cuda.fp8.cvt_float2_to_e8m0x2", IntrinsicKind::Function, typeFp8Conversion, emitFp8Conversion,
       "", "cvt_float2_to_e8m0x2(x, saturate, rounding): a float32x2's e8m0 bits, x in the low "
           "byte of the uint16."},
      {"cuda.fp8.cvt_double_to_e8m0", IntrinsicKind::Function, typeFp8Conversion, emitFp8Conversion, "",
       "cvt_double_to_e8m0(x, saturate, rounding): a float64's e8m0 bits (uint8)."},
      {"cuda.fp8.cvt_double2_to_e8m0x2", IntrinsicKind::Function, typeFp8Conversion,
       emitFp8Conversion, "",
       "cvt_double2_to_e8m0x2(x, saturate, rounding): a float64x2's e8m0 bits, x in the low byte "
       "of the uint16."},
      {"cuda.fp8.cvt_e8m0_to_bf16raw", IntrinsicKind::Function, typeFp8Conversion, emitFp8Conversion,
       "", "cvt_e8m0_to_bf16raw(x): the bfloat16 (raw bits in .x, a uint16x1) of e8m0 bits."},
  };
  return Records;
}

} // namespace tidal::frontend
