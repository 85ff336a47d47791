// Taking floats apart and rounding them to decimal digits: math.frexp,
// math.ldexp, math.modf, math.remainder (libdevice's functions, through the
// libdevice rows, as Numba types them) and round(x, ndigits).
#include "IntrinsicTable.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

#include <cmath>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// The float type of a math call on these arguments: float32 when every
// argument is float32, float64 otherwise (Numba converts integers to
// float64).
Scalar floatTypeOf(IntrinsicCall &Call, const std::string &Name, size_t Count) {
  Scalar Common = Scalar::Float32;
  for (size_t I = 0; I < Count; ++I) {
    const Type &T = Call.Args[I].T;
    if (!T.isScalar() || isComplex(T.Dtype))
      Call.C.typingError(Call.ArgNodes[I], Name + "() takes real numbers, not " + T.str());
    if (T.Dtype != Scalar::Float32)
      Common = Scalar::Float64;
  }
  return Common;
}

// Calls libdevice.<Stem>[f] (f for float32) on Arguments.
TypedValue callLibdevice(IntrinsicCall &Call, const std::string &Stem, Scalar F,
                         std::vector<TypedValue> Arguments) {
  std::string Path = "libdevice." + Stem + (F == Scalar::Float32 ? "f" : "");
  const IntrinsicRecord *Record = findIntrinsic(Path);
  if (!Record)
    throw CompileError("CompileError", "internal error: no intrinsic " + Path,
                       Call.C.location(Call.Node));
  std::vector<PyObject *> Nodes(Arguments.size(), Call.Node);
  for (size_t I = 0; I < Arguments.size() && I < Call.ArgNodes.size(); ++I)
    Nodes[I] = Call.ArgNodes[I];
  std::vector<std::string> NoKeywords;
  IntrinsicCall Inner{Call.C, Call.Node, Arguments, Nodes, NoKeywords, Record, {}};
  return Record->Emitter(Inner, Type());
}

TypedValue converted(IntrinsicCall &Call, size_t Index, Scalar To) {
  return Call.C.convert(Call.Args[Index], Type::scalar(To), Call.ArgNodes[Index]);
}

// math.frexp(x): (mantissa, exponent), the exponent an int32.
TypedValue typeFrexp(IntrinsicCall &Call) {
  bindArguments(Call, "math.frexp", {"x"}, 1);
  Scalar F = floatTypeOf(Call, "math.frexp", 1);
  return TypedValue(Type::tuple({Type::scalar(F), Type::scalar(Scalar::Int32)}));
}
TypedValue emitFrexp(IntrinsicCall &Call, const Type &Result) {
  Scalar F = Result.Elements[0].Dtype;
  return callLibdevice(Call, "frexp", F, {converted(Call, 0, F)});
}

// math.ldexp(x, i): x * 2**i, i converted to int32.
TypedValue typeLdexp(IntrinsicCall &Call) {
  bindArguments(Call, "math.ldexp", {"x", "i"}, 2);
  Scalar F = floatTypeOf(Call, "math.ldexp", 1);
  expectIntegerArgument(Call, 1, "the exponent of math.ldexp()");
  return TypedValue(Type::scalar(F));
}
TypedValue emitLdexp(IntrinsicCall &Call, const Type &Result) {
  Scalar F = Result.Dtype;
  return callLibdevice(Call, "ldexp", F, {converted(Call, 0, F), converted(Call, 1, Scalar::Int32)});
}

// math.modf(x): (fractional part, integral part), both of x's float type.
TypedValue typeModf(IntrinsicCall &Call) {
  bindArguments(Call, "math.modf", {"x"}, 1);
  Scalar F = floatTypeOf(Call, "math.modf", 1);
  return TypedValue(Type::tuple({Type::scalar(F), Type::scalar(F)}));
}
TypedValue emitModf(IntrinsicCall &Call, const Type &Result) {
  Scalar F = Result.Elements[0].Dtype;
  return callLibdevice(Call, "modf", F, {converted(Call, 0, F)});
}

// math.remainder(x, y): IEEE 754's remainder, x - n*y for the n nearest
// x/y (ties to even); NaN for y == 0.
TypedValue typeRemainder(IntrinsicCall &Call) {
  bindArguments(Call, "math.remainder", {"x", "y"}, 2);
  return TypedValue(Type::scalar(floatTypeOf(Call, "math.remainder", 2)));
}
TypedValue emitRemainder(IntrinsicCall &Call, const Type &Result) {
  Scalar F = Result.Dtype;
  return callLibdevice(Call, "remainder", F, {converted(Call, 0, F), converted(Call, 1, F)});
}

// 10**0 .. 10**22: every power of ten that a double holds exactly.
GlobalVariable *exactPowersOfTen(Module &M) {
  if (GlobalVariable *G = M.getNamedGlobal("round.powers_of_ten"))
    return G;
  std::vector<double> Powers;
  double P = 1.0;
  for (int I = 0; I <= 22; ++I, P *= 10.0)
    Powers.push_back(P);
  Constant *Init = ConstantDataArray::get(M.getContext(), Powers);
  auto *G = new GlobalVariable(M, Init->getType(), /*isConstant=*/true,
                               GlobalValue::PrivateLinkage, Init, "round.powers_of_ten");
  G->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  G->setAlignment(Align(8));
  return G;
}

} // namespace

// round(x, ndigits): x rounded to ndigits decimal digits (ties to even),
// in x's float type, as Numba computes it: y = x * 10**ndigits (in two
// steps past 10**22) rounded to an integer and scaled back; x itself where
// y overflows, and x for infinities and NaN.
TypedValue typeRoundToDigits(IntrinsicCall &Call) {
  const TypedValue &X = Call.Args[0];
  if (!X.T.isScalar() || !isFloat(X.T.Dtype))
    Call.C.typingError(Call.ArgNodes[0], "round(x, ndigits) takes a float x (float32 or "
                                         "float64), not " + X.T.str());
  expectIntegerArgument(Call, 1, "the ndigits of round()");
  return TypedValue(Type::scalar(X.T.Dtype == Scalar::Float32 ? Scalar::Float32 : Scalar::Float64));
}

TypedValue emitRoundToDigits(IntrinsicCall &Call, const Type &Result) {
  FunctionCompiler &C = Call.C;
  IRBuilder<> &B = C.builder();
  llvm::Type *Double = B.getDoubleTy();
  Value *X = converted(Call, 0, Scalar::Float64).scalar();
  Value *Digits = converted(Call, 1, Scalar::Int64).scalar();
  Value *DigitsAsDouble = B.CreateSIToFP(Digits, Double);

  Value *NonNegative = B.CreateICmpSGE(Digits, B.getInt64(0));
  Value *Large = B.CreateICmpSGT(Digits, B.getInt64(22));
  // The exponent of the first power: ndigits (less 22 when large) or -ndigits.
  Value *Exponent = B.CreateSelect(
      NonNegative, B.CreateSelect(Large, B.CreateFSub(DigitsAsDouble, ConstantFP::get(Double, 22.0)),
                                  DigitsAsDouble),
      B.CreateFNeg(DigitsAsDouble));
  // 10**Exponent: exact from the table up to 22, else through pow.
  Value *Tabled = B.CreateFCmpOLE(Exponent, ConstantFP::get(Double, 22.0));
  Value *Index = B.CreateFPToSI(
      B.CreateSelect(Tabled, Exponent, ConstantFP::get(Double, 0.0)), B.getInt64Ty());
  GlobalVariable *Table = exactPowersOfTen(C.module());
  Value *FromTable = B.CreateLoad(
      Double, B.CreateInBoundsGEP(Table->getValueType(), Table, {B.getInt64(0), Index}));
  Value *Computed = C.callMarker("math.pow.f64", Double, {ConstantFP::get(Double, 10.0), Exponent});
  Value *Power1 = B.CreateSelect(Tabled, FromTable, Computed);
  Value *Power2 = B.CreateSelect(Large, ConstantFP::get(Double, 1e22), ConstantFP::get(Double, 1.0));

  Value *Y = B.CreateSelect(NonNegative, B.CreateFMul(B.CreateFMul(X, Power1), Power2),
                            B.CreateFDiv(X, Power1));
  Value *Z = B.CreateUnaryIntrinsic(Intrinsic::roundeven, Y);
  Value *R = B.CreateSelect(NonNegative, B.CreateFDiv(B.CreateFDiv(Z, Power2), Power1),
                            B.CreateFMul(Z, Power1));
  Value *Infinity = ConstantFP::getInfinity(Double);
  auto IsInfinite = [&](Value *V) {
    return B.CreateFCmpOEQ(B.CreateUnaryIntrinsic(Intrinsic::fabs, V), Infinity);
  };
  // y overflowed: x as it is; 10**-ndigits overflowed: a zero of x's sign.
  R = B.CreateSelect(B.CreateAnd(NonNegative, IsInfinite(Y)), X, R);
  Value *SignedZero = B.CreateBinaryIntrinsic(Intrinsic::copysign, ConstantFP::get(Double, 0.0), X);
  R = B.CreateSelect(B.CreateAnd(B.CreateNot(NonNegative), IsInfinite(Power1)), SignedZero, R);
  Value *NotFinite = B.CreateFCmpUEQ(B.CreateUnaryIntrinsic(Intrinsic::fabs, X), Infinity);
  R = B.CreateSelect(NotFinite, X, R);
  return C.convert(C.makeScalar(Scalar::Float64, R), Result, Call.Node);
}

llvm::ArrayRef<IntrinsicRecord> floatPartIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"math.frexp", IntrinsicKind::Function, typeFrexp, emitFrexp, "",
       "math.frexp(x): (mantissa, exponent) with x == mantissa * 2**exponent; the exponent an int32."},
      {"math.ldexp", IntrinsicKind::Function, typeLdexp, emitLdexp, "",
       "math.ldexp(x, i): x * 2**i."},
      {"math.modf", IntrinsicKind::Function, typeModf, emitModf, "",
       "math.modf(x): (fractional part, integral part), both with x's sign."},
      {"math.remainder", IntrinsicKind::Function, typeRemainder, emitRemainder, "",
       "math.remainder(x, y): IEEE 754's remainder of x by y."},
  };
  return Records;
}

} // namespace tidal::frontend
