// Math: bit operations, fma, selp, cbrt, the math module and round().
#include "IntrinsicTable.h"

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// cuda.popc, brev, clz, ffs: an integer of the argument's type.
TypedValue typeBitOperation(IntrinsicCall &Call) {
  bindArguments(Call, Call.Record->PythonPath, {"x"}, 1);
  const TypedValue &X = Call.Args[0];
  if (!X.T.isIntegerScalar())
    Call.C.typingError(Call.ArgNodes[0], std::string(Call.Record->PythonPath) +
                                             "() takes an integer, not " + X.T.str());
  return TypedValue(X.T);
}
TypedValue emitBitOperation(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  const std::string Python = Call.Record->PythonPath;
  Value *V = Call.Args[0].scalar();
  Value *R;
  if (Python == "cuda.popc")
    R = B.CreateUnaryIntrinsic(Intrinsic::ctpop, V);
  else if (Python == "cuda.brev")
    R = B.CreateUnaryIntrinsic(Intrinsic::bitreverse, V);
  else if (Python == "cuda.clz")
    R = B.CreateBinaryIntrinsic(Intrinsic::ctlz, V, B.getFalse());
  else { // ffs: 1 + index of the lowest set bit, 0 for 0
    Value *Trailing = B.CreateBinaryIntrinsic(Intrinsic::cttz, V, B.getTrue());
    R = B.CreateSelect(B.CreateICmpEQ(V, ConstantInt::get(V->getType(), 0)),
                       ConstantInt::get(V->getType(), 0),
                       B.CreateAdd(Trailing, ConstantInt::get(V->getType(), 1)));
  }
  return Call.C.makeScalar(Result.Dtype, R);
}

// The float type of a math call: float32 stays, everything else is float64.
Scalar mathType(IntrinsicCall &Call, const std::string &Name) {
  Scalar Common = Scalar::Bool;
  bool First = true;
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    if (!Call.Args[I].T.isScalar() || isFp8(Call.Args[I].T.Dtype))
      Call.C.typingError(Call.ArgNodes[I], Name + "() takes numbers, not " + Call.Args[I].T.str());
    Common = First ? Call.Args[I].T.Dtype : promoteArithmetic(Common, Call.Args[I].T.Dtype);
    First = false;
  }
  if (isComplex(Common))
    Call.C.typingError(Call.Node, Name + "() takes real numbers: use cmath for complex ones");
  return Common == Scalar::Float32 ? Scalar::Float32 : Scalar::Float64;
}

// The arguments converted to the float type of the result.
std::vector<Value *> floatArguments(IntrinsicCall &Call, Scalar F) {
  std::vector<Value *> Values;
  for (size_t I = 0; I < Call.Args.size(); ++I)
    Values.push_back(Call.C.convert(Call.Args[I], Type::scalar(F), Call.ArgNodes[I]).scalar());
  return Values;
}

TypedValue typeFma(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.fma", {"a", "b", "c"}, 3);
  return TypedValue(Type::scalar(mathType(Call, "cuda.fma")));
}
TypedValue emitFma(IntrinsicCall &Call, const Type &Result) {
  std::vector<Value *> Values = floatArguments(Call, Result.Dtype);
  return Call.C.makeScalar(Result.Dtype, Call.C.builder().CreateIntrinsic(
                                             Intrinsic::fma, {Values[0]->getType()}, Values));
}

TypedValue typeSelp(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.selp", {"predicate", "a", "b"}, 3);
  Call.C.checkCondition(Call.Args[0].T, Call.ArgNodes[0]);
  Type T;
  if (!unify(Call.Args[1].T, Call.Args[2].T, T) || !T.isScalar())
    Call.C.typingError(Call.Node, "the values of cuda.selp() have types " + Call.Args[1].T.str() +
                                      " and " + Call.Args[2].T.str() + ", which cannot unify");
  return TypedValue(T);
}
TypedValue emitSelp(IntrinsicCall &Call, const Type &Result) {
  Value *P = Call.C.truth(Call.Args[0], Call.ArgNodes[0]);
  Value *A = Call.C.convert(Call.Args[1], Result, Call.ArgNodes[1]).scalar();
  Value *B2 = Call.C.convert(Call.Args[2], Result, Call.ArgNodes[2]).scalar();
  return Call.C.makeScalar(Result.Dtype, Call.C.builder().CreateSelect(P, A, B2));
}

// numba-cuda's math functions of one float16 that return a float16
// (cudamath.py's Math_unary_with_fp16, fp16.py's overloads: cuda.fp16.hsin
// & co.): computed in float32 and rounded to float16, as the cuda.fp16
// functions are (IntrinsicsHalf.cpp). math.ceil, floor and trunc of a
// float16 are float16 too, not int64.
bool halfResult(IntrinsicCall &Call) {
  static const char *const Functions[] = {"math.sin",  "math.cos",  "math.tanh", "math.exp",
                                          "math.exp2", "math.log",  "math.log2", "math.log10",
                                          "math.sqrt", "math.fabs", "math.ceil", "math.floor",
                                          "math.trunc"};
  if (Call.Args.size() != 1 || Call.Args[0].T != Type::scalar(Scalar::Float16))
    return false;
  for (const char *F : Functions)
    if (std::string(Call.Record->PythonPath) == F)
      return true;
  return false;
}
// The float32 marker math.<Stem>.f32 of the argument, rounded to float16.
TypedValue halfOfFloatMarker(IntrinsicCall &Call, const std::string &Stem) {
  IRBuilder<> &B = Call.C.builder();
  Value *X = B.CreateFPExt(Call.Args[0].scalar(), B.getFloatTy());
  Value *Y = Call.C.callMarker("math." + Stem + ".f32", B.getFloatTy(), {X});
  return Call.C.makeScalar(Scalar::Float16, B.CreateFPTrunc(Y, B.getHalfTy()));
}

// The math functions that are one marker: the record's Marker is the
// marker's stem (math.<stem>.<f32|f64>); float32 for float32 arguments,
// float64 otherwise.
TypedValue typeMathOfOneArgument(IntrinsicCall &Call) {
  bindArguments(Call, Call.Record->PythonPath, {"x"}, 1);
  if (isBFloat16MathOverload(Call))
    return TypedValue(Type::scalar(Scalar::BFloat16));
  Scalar F = mathType(Call, Call.Record->PythonPath);
  return TypedValue(Type::scalar(halfResult(Call) ? Scalar::Float16 : F));
}
TypedValue typeMathOfTwoArguments(IntrinsicCall &Call) {
  bindArguments(Call, Call.Record->PythonPath, {"x", "y"}, 2);
  return TypedValue(Type::scalar(mathType(Call, Call.Record->PythonPath)));
}
// tidal.math.<marker>.<f32|f64> of the arguments in the float type F.
Value *mathMarker(IntrinsicCall &Call, const std::string &Stem, Scalar F) {
  return Call.C.callMarker("math." + Stem + (F == Scalar::Float32 ? ".f32" : ".f64"),
                           Call.C.llvmType(F), floatArguments(Call, F));
}
TypedValue emitMathMarker(IntrinsicCall &Call, const Type &Result) {
  if (Result.Dtype == Scalar::BFloat16)
    return emitBFloat16MathOverload(Call, Result);
  if (Result.Dtype == Scalar::Float16)
    return halfOfFloatMarker(Call, Call.Record->Marker);
  return Call.C.makeScalar(Result.Dtype, mathMarker(Call, Call.Record->Marker, Result.Dtype));
}

// math.nextafter(x, y): libdevice's __nv_nextafter (__nv_nextafterf for
// float32), which both targets link (the cpu target's host libdevice), as
// numba-cuda lowers it; no marker.
TypedValue emitNextafter(IntrinsicCall &Call, const Type &Result) {
  Scalar F = Result.Dtype;
  std::vector<Value *> Values = floatArguments(Call, F);
  llvm::Type *T = Call.C.llvmType(F);
  FunctionCallee Callee = Call.C.module().getOrInsertFunction(
      F == Scalar::Float32 ? "__nv_nextafterf" : "__nv_nextafter", FunctionType::get(T, {T, T}, false));
  if (auto *Declared = dyn_cast<Function>(Callee.getCallee()))
    Declared->addFnAttr(Attribute::NoUnwind);
  return Call.C.makeScalar(F, Call.C.builder().CreateCall(Callee, Values));
}

// math.log(x) and math.log(x, base)
TypedValue typeLog(IntrinsicCall &Call) {
  bindArguments(Call, "math.log", {"x", "base"}, 1);
  if (isBFloat16MathOverload(Call))
    return TypedValue(Type::scalar(Scalar::BFloat16));
  Scalar F = mathType(Call, "math.log");
  return TypedValue(Type::scalar(halfResult(Call) ? Scalar::Float16 : F));
}
TypedValue emitLog(IntrinsicCall &Call, const Type &Result) {
  if (Result.Dtype == Scalar::BFloat16)
    return emitBFloat16MathOverload(Call, Result);
  if (Result.Dtype == Scalar::Float16)
    return halfOfFloatMarker(Call, "log");
  Scalar F = Result.Dtype;
  std::vector<Value *> Values = floatArguments(Call, F);
  std::string Marker = std::string("math.log") + (F == Scalar::Float32 ? ".f32" : ".f64");
  llvm::Type *T = Call.C.llvmType(F);
  Value *LogX = Call.C.callMarker(Marker, T, {Values[0]});
  if (Values.size() == 1)
    return Call.C.makeScalar(F, LogX);
  Value *LogBase = Call.C.callMarker(Marker, T, {Values[1]});
  return Call.C.makeScalar(F, Call.C.builder().CreateFDiv(LogX, LogBase));
}

// floor, ceil, trunc (through their marker) and round (half to even)
// return int64 in Python 3, as Numba types them; an integer stays itself.
TypedValue typeRoundingToInt(IntrinsicCall &Call) {
  bool IsRound = std::string(Call.Record->PythonPath) == "builtins.round";
  std::string Name = IsRound ? "round" : Call.Record->PythonPath;
  if (IsRound) {
    bindArguments(Call, Name, {"number", "ndigits"}, 1);
    if (Call.Args.size() == 2)
      return typeRoundToDigits(Call);
  } else {
    bindArguments(Call, Name, {"x"}, 1);
  }
  const TypedValue &X = Call.Args[0];
  if (!X.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], Name + "() takes a number, not " + X.T.str());
  if (!isFloat(X.T.Dtype))
    return Call.C.convertedType(X, Type::scalar(Scalar::Int64), Call.Node);
  if (!IsRound && isBFloat16MathOverload(Call))
    return TypedValue(Type::scalar(Scalar::BFloat16));
  return TypedValue(Type::scalar(!IsRound && halfResult(Call) ? Scalar::Float16 : Scalar::Int64));
}
TypedValue emitRoundingToInt(IntrinsicCall &Call, const Type &Result) {
  if (Call.Args.size() == 2)
    return emitRoundToDigits(Call, Result);
  if (Result.Dtype == Scalar::BFloat16)
    return emitBFloat16MathOverload(Call, Result);
  const TypedValue &X = Call.Args[0];
  if (!isFloat(X.T.Dtype))
    return Call.C.convert(X, Result, Call.Node);
  if (Result.Dtype == Scalar::Float16) // math.floor(float16) & co.
    return halfOfFloatMarker(Call, Call.Record->Marker);
  TypedValue Rounded;
  if (std::string(Call.Record->PythonPath) == "builtins.round")
    Rounded = Call.C.makeScalar(
        X.T.Dtype, Call.C.builder().CreateUnaryIntrinsic(Intrinsic::roundeven, X.scalar()));
  else {
    Scalar F = X.T.Dtype == Scalar::Float32 ? Scalar::Float32 : Scalar::Float64;
    Rounded = Call.C.makeScalar(F, mathMarker(Call, Call.Record->Marker, F));
  }
  return Call.C.convert(Rounded, Result, Call.Node);
}

// isnan, isinf, isfinite: comparisons, no marker.
TypedValue typeClassify(IntrinsicCall &Call) {
  bindArguments(Call, Call.Record->PythonPath, {"x"}, 1);
  const TypedValue &X = Call.Args[0];
  if (!X.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], std::string(Call.Record->PythonPath) +
                                             "() takes a number, not " + X.T.str());
  return TypedValue(Type::scalar(Scalar::Bool));
}
TypedValue emitClassify(IntrinsicCall &Call, const Type &) {
  IRBuilder<> &B = Call.C.builder();
  const std::string Python = Call.Record->PythonPath;
  const TypedValue &X = Call.Args[0];
  if (!isFloat(X.T.Dtype))
    return Call.C.makeScalar(Scalar::Bool, B.getInt1(Python == "math.isfinite"));
  Value *V = X.scalar();
  Value *Inf = ConstantFP::getInfinity(V->getType());
  Value *Abs = B.CreateUnaryIntrinsic(Intrinsic::fabs, V);
  Value *R = Python == "math.isnan"   ? B.CreateFCmpUNO(V, V)
             : Python == "math.isinf" ? B.CreateFCmpOEQ(Abs, Inf)
                                      : B.CreateFCmpOLT(Abs, Inf);
  return Call.C.makeScalar(Scalar::Bool, R);
}

// math.radians and math.degrees: a product.
TypedValue emitAngle(IntrinsicCall &Call, const Type &Result) {
  constexpr double Pi = 3.14159265358979323846;
  double Factor = std::string(Call.Record->PythonPath) == "math.radians" ? Pi / 180.0 : 180.0 / Pi;
  Value *X = floatArguments(Call, Result.Dtype)[0];
  return Call.C.makeScalar(Result.Dtype,
                           Call.C.builder().CreateFMul(X, ConstantFP::get(X->getType(), Factor)));
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> mathIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.popc", IntrinsicKind::Function, typeBitOperation, emitBitOperation, "",
       "popc(x): the number of set bits."},
      {"cuda.brev", IntrinsicKind::Function, typeBitOperation, emitBitOperation, "",
       "brev(x): the bits in reverse order."},
      {"cuda.clz", IntrinsicKind::Function, typeBitOperation, emitBitOperation, "",
       "clz(x): the number of leading zero bits."},
      {"cuda.ffs", IntrinsicKind::Function, typeBitOperation, emitBitOperation, "",
       "ffs(x): 1 + the position of the lowest set bit, 0 for 0."},
      {"cuda.fma", IntrinsicKind::Function, typeFma, emitFma, "",
       "fma(a, b, c): a * b + c with one rounding."},
      {"cuda.cbrt", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "cbrt",
       "cbrt(x): the cube root."},
      {"cuda.selp", IntrinsicKind::Function, typeSelp, emitSelp, "",
       "selp(predicate, a, b): a if predicate else b."},
      {"math.sin", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "sin",
       "math.sin(x): float32 for float32 arguments, else float64."},
      {"math.cos", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "cos",
       "math.cos(x): float32 for float32 arguments, else float64."},
      {"math.tan", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "tan",
       "math.tan(x): float32 for float32 arguments, else float64."},
      {"math.asin", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "asin",
       "math.asin(x): float32 for float32 arguments, else float64."},
      {"math.acos", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "acos",
       "math.acos(x): float32 for float32 arguments, else float64."},
      {"math.atan", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "atan",
       "math.atan(x): float32 for float32 arguments, else float64."},
      {"math.sinh", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "sinh",
       "math.sinh(x): float32 for float32 arguments, else float64."},
      {"math.cosh", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "cosh",
       "math.cosh(x): float32 for float32 arguments, else float64."},
      {"math.tanh", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "tanh",
       "math.tanh(x): float32 for float32 arguments, else float64."},
      {"math.asinh", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "asinh",
       "math.asinh(x): float32 for float32 arguments, else float64."},
      {"math.acosh", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "acosh",
       "math.acosh(x): float32 for float32 arguments, else float64."},
      {"math.atanh", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "atanh",
       "math.atanh(x): float32 for float32 arguments, else float64."},
      {"math.exp", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "exp",
       "math.exp(x): float32 for float32 arguments, else float64."},
      {"math.expm1", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "expm1",
       "math.expm1(x): float32 for float32 arguments, else float64."},
      {"math.exp2", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "exp2",
       "math.exp2(x): float32 for float32 arguments, else float64."},
      {"math.log2", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "log2",
       "math.log2(x): float32 for float32 arguments, else float64."},
      {"math.log10", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "log10",
       "math.log10(x): float32 for float32 arguments, else float64."},
      {"math.log1p", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "log1p",
       "math.log1p(x): float32 for float32 arguments, else float64."},
      {"math.sqrt", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "sqrt",
       "math.sqrt(x): float32 for float32 arguments, else float64."},
      {"math.fabs", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "fabs",
       "math.fabs(x): float32 for float32 arguments, else float64."},
      {"math.erf", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "erf",
       "math.erf(x): float32 for float32 arguments, else float64."},
      {"math.erfc", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "erfc",
       "math.erfc(x): float32 for float32 arguments, else float64."},
      {"math.gamma", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "tgamma",
       "math.gamma(x): float32 for float32 arguments, else float64."},
      {"math.lgamma", IntrinsicKind::Function, typeMathOfOneArgument, emitMathMarker, "lgamma",
       "math.lgamma(x): float32 for float32 arguments, else float64."},
      {"math.atan2", IntrinsicKind::Function, typeMathOfTwoArguments, emitMathMarker, "atan2",
       "math.atan2(x, y): float32 for float32 arguments, else float64."},
      {"math.pow", IntrinsicKind::Function, typeMathOfTwoArguments, emitMathMarker, "pow",
       "math.pow(x, y): float32 for float32 arguments, else float64."},
      {"math.copysign", IntrinsicKind::Function, typeMathOfTwoArguments, emitMathMarker, "copysign",
       "math.copysign(x, y): float32 for float32 arguments, else float64."},
      {"math.fmod", IntrinsicKind::Function, typeMathOfTwoArguments, emitMathMarker, "fmod",
       "math.fmod(x, y): float32 for float32 arguments, else float64."},
      {"math.hypot", IntrinsicKind::Function, typeMathOfTwoArguments, emitMathMarker, "hypot",
       "math.hypot(x, y): float32 for float32 arguments, else float64."},
      {"math.nextafter", IntrinsicKind::Function, typeMathOfTwoArguments, emitNextafter, "",
       "math.nextafter(x, y): float32 for float32 arguments, else float64."},
      {"math.log", IntrinsicKind::Function, typeLog, emitLog, "log",
       "math.log(x[, base])."},
      {"math.floor", IntrinsicKind::Function, typeRoundingToInt, emitRoundingToInt, "floor",
       "math.floor(x): an int64."},
      {"math.ceil", IntrinsicKind::Function, typeRoundingToInt, emitRoundingToInt, "ceil",
       "math.ceil(x): an int64."},
      {"math.trunc", IntrinsicKind::Function, typeRoundingToInt, emitRoundingToInt, "trunc",
       "math.trunc(x): an int64."},
      {"math.isnan", IntrinsicKind::Function, typeClassify, emitClassify, "",
       "math.isnan(x)."},
      {"math.isinf", IntrinsicKind::Function, typeClassify, emitClassify, "",
       "math.isinf(x)."},
      {"math.isfinite", IntrinsicKind::Function, typeClassify, emitClassify, "",
       "math.isfinite(x)."},
      {"math.radians", IntrinsicKind::Function, typeMathOfOneArgument, emitAngle, "",
       "math.radians(x)."},
      {"math.degrees", IntrinsicKind::Function, typeMathOfOneArgument, emitAngle, "",
       "math.degrees(x)."},
      {"builtins.round", IntrinsicKind::Function, typeRoundingToInt, emitRoundingToInt, "",
       "round(x[, ndigits]): an int64 without ndigits, else x's float type."},
  };
  return Records;
}

} // namespace tidal::frontend
