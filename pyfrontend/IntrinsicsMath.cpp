// Math: bit operations, fma, selp, cbrt, the math module and round().
#include "IntrinsicTable.h"

#include "llvm/IR/Intrinsics.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

TypedValue bitOp(IntrinsicCall &Call, const std::string &Python) {
  bindArguments(Call, "cuda." + Python, {"x"}, 1);
  const TypedValue &X = Call.Args[0];
  if (!X.T.isIntegerScalar())
    Call.C.typingError(Call.ArgNodes[0], "cuda." + Python + "() takes an integer, not " + X.T.str());
  if (!Call.C.emitting())
    return TypedValue(X.T);
  IRBuilder<> &B = Call.C.builder();
  Value *V = X.scalar();
  Value *R;
  if (Python == "popc")
    R = B.CreateUnaryIntrinsic(Intrinsic::ctpop, V);
  else if (Python == "brev")
    R = B.CreateUnaryIntrinsic(Intrinsic::bitreverse, V);
  else if (Python == "clz")
    R = B.CreateBinaryIntrinsic(Intrinsic::ctlz, V, B.getFalse());
  else { // ffs: 1 + index of the lowest set bit, 0 for 0
    Value *Trailing = B.CreateBinaryIntrinsic(Intrinsic::cttz, V, B.getTrue());
    R = B.CreateSelect(B.CreateICmpEQ(V, ConstantInt::get(V->getType(), 0)),
                       ConstantInt::get(V->getType(), 0),
                       B.CreateAdd(Trailing, ConstantInt::get(V->getType(), 1)));
  }
  return Call.C.makeScalar(X.T.Dtype, R);
}
TypedValue cudaPopc(IntrinsicCall &Call) { return bitOp(Call, "popc"); }
TypedValue cudaBrev(IntrinsicCall &Call) { return bitOp(Call, "brev"); }
TypedValue cudaClz(IntrinsicCall &Call) { return bitOp(Call, "clz"); }
TypedValue cudaFfs(IntrinsicCall &Call) { return bitOp(Call, "ffs"); }

// The float type of a math call: float32 stays, everything else is float64.
Scalar mathType(IntrinsicCall &Call, const std::string &Name) {
  Scalar Common = Scalar::Bool;
  bool First = true;
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    if (!Call.Args[I].T.isScalar())
      Call.C.typingError(Call.ArgNodes[I], Name + "() takes numbers, not " + Call.Args[I].T.str());
    Common = First ? Call.Args[I].T.Dtype : promoteArithmetic(Common, Call.Args[I].T.Dtype);
    First = false;
  }
  if (isComplex(Common))
    Call.C.typingError(Call.Node, Name + "() takes real numbers: use cmath for complex ones");
  return Common == Scalar::Float32 ? Scalar::Float32 : Scalar::Float64;
}

TypedValue cudaFma(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.fma", {"a", "b", "c"}, 3);
  Scalar F = mathType(Call, "cuda.fma");
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(F));
  Value *A = Call.C.convert(Call.Args[0], Type::scalar(F), Call.ArgNodes[0]).scalar();
  Value *B2 = Call.C.convert(Call.Args[1], Type::scalar(F), Call.ArgNodes[1]).scalar();
  Value *C = Call.C.convert(Call.Args[2], Type::scalar(F), Call.ArgNodes[2]).scalar();
  return Call.C.makeScalar(F, Call.C.builder().CreateIntrinsic(Intrinsic::fma, {A->getType()}, {A, B2, C}));
}

TypedValue cudaSelp(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.selp", {"predicate", "a", "b"}, 3);
  Call.C.truth(Call.Args[0], Call.ArgNodes[0]);
  Type T;
  if (!unify(Call.Args[1].T, Call.Args[2].T, T) || !T.isScalar())
    Call.C.typingError(Call.Node, "the values of cuda.selp() have types " + Call.Args[1].T.str() +
                                      " and " + Call.Args[2].T.str() + ", which cannot unify");
  if (!Call.C.emitting())
    return TypedValue(T);
  Value *P = Call.C.truth(Call.Args[0], Call.ArgNodes[0]);
  Value *A = Call.C.convert(Call.Args[1], T, Call.ArgNodes[1]).scalar();
  Value *B2 = Call.C.convert(Call.Args[2], T, Call.ArgNodes[2]).scalar();
  return Call.C.makeScalar(T.Dtype, Call.C.builder().CreateSelect(P, A, B2));
}


// math.<fn>(x[, y]) -> tidal.math.<marker>.<f32|f64>
TypedValue mathFunction(IntrinsicCall &Call, const std::string &Python, const std::string &Marker,
                    unsigned Arity) {
  if (Arity == 1)
    bindArguments(Call, Python, {"x"}, 1);
  else
    bindArguments(Call, Python, {"x", "y"}, 2);
  Scalar F = mathType(Call, Python);
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(F));
  std::vector<Value *> Args;
  for (size_t I = 0; I < Call.Args.size(); ++I)
    Args.push_back(Call.C.convert(Call.Args[I], Type::scalar(F), Call.ArgNodes[I]).scalar());
  return Call.C.makeScalar(F, Call.C.callMarker("math." + Marker + (F == Scalar::Float32 ? ".f32" : ".f64"),
                                                Call.C.llvmType(F), Args));
}

// The math functions that are one marker: the record's Marker is the
// marker's stem (math.<stem>.<f32|f64>).
TypedValue mathOfOneArgument(IntrinsicCall &Call) {
  return mathFunction(Call, Call.Record->PythonPath, Call.Record->Marker, 1);
}
TypedValue mathOfTwoArguments(IntrinsicCall &Call) {
  return mathFunction(Call, Call.Record->PythonPath, Call.Record->Marker, 2);
}


// math.log(x) and math.log(x, base)
TypedValue math_log(IntrinsicCall &Call) {
  bindArguments(Call, "math.log", {"x", "base"}, 1);
  if (Call.Args.size() == 1)
    return mathFunction(Call, "math.log", "log", 1);
  Scalar F = mathType(Call, "math.log");
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(F));
  const char *Suffix = F == Scalar::Float32 ? ".f32" : ".f64";
  Value *X = Call.C.convert(Call.Args[0], Type::scalar(F), Call.ArgNodes[0]).scalar();
  Value *Base = Call.C.convert(Call.Args[1], Type::scalar(F), Call.ArgNodes[1]).scalar();
  llvm::Type *T = Call.C.llvmType(F);
  Value *LogX = Call.C.callMarker(std::string("math.log") + Suffix, T, {X});
  Value *LogBase = Call.C.callMarker(std::string("math.log") + Suffix, T, {Base});
  return Call.C.makeScalar(F, Call.C.builder().CreateFDiv(LogX, LogBase));
}

// floor, ceil, trunc return int64 in Python 3 (as Numba types them).
TypedValue roundingToInt(IntrinsicCall &Call, const std::string &Python, const std::string &Marker) {
  bindArguments(Call, Python, {"x"}, 1);
  const TypedValue &X = Call.Args[0];
  if (!X.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], Python + "() takes a number, not " + X.T.str());
  if (!isFloat(X.T.Dtype))
    return Call.C.convert(X, Type::scalar(Scalar::Int64), Call.Node);
  TypedValue F = mathFunction(Call, Python, Marker, 1);
  return Call.C.convert(F, Type::scalar(Scalar::Int64), Call.Node);
}
TypedValue math_floor(IntrinsicCall &Call) { return roundingToInt(Call, "math.floor", "floor"); }
TypedValue math_ceil(IntrinsicCall &Call) { return roundingToInt(Call, "math.ceil", "ceil"); }
TypedValue math_trunc(IntrinsicCall &Call) { return roundingToInt(Call, "math.trunc", "trunc"); }

// isnan, isinf, isfinite: comparisons, no marker.
TypedValue classify(IntrinsicCall &Call, const std::string &Python) {
  bindArguments(Call, "math." + Python, {"x"}, 1);
  const TypedValue &X = Call.Args[0];
  if (!X.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "math." + Python + "() takes a number, not " + X.T.str());
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(Scalar::Bool));
  IRBuilder<> &B = Call.C.builder();
  if (!isFloat(X.T.Dtype))
    return Call.C.makeScalar(Scalar::Bool, B.getInt1(Python == "isfinite"));
  Value *V = X.scalar();
  Value *Inf = ConstantFP::getInfinity(V->getType());
  Value *Abs = B.CreateUnaryIntrinsic(Intrinsic::fabs, V);
  Value *R = Python == "isnan"   ? B.CreateFCmpUNO(V, V)
             : Python == "isinf" ? B.CreateFCmpOEQ(Abs, Inf)
                                 : B.CreateFCmpOLT(Abs, Inf);
  return Call.C.makeScalar(Scalar::Bool, R);
}
TypedValue math_isnan(IntrinsicCall &Call) { return classify(Call, "isnan"); }
TypedValue math_isinf(IntrinsicCall &Call) { return classify(Call, "isinf"); }
TypedValue math_isfinite(IntrinsicCall &Call) { return classify(Call, "isfinite"); }

TypedValue angle(IntrinsicCall &Call, const std::string &Python, double Factor) {
  bindArguments(Call, "math." + Python, {"x"}, 1);
  Scalar F = mathType(Call, "math." + Python);
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(F));
  Value *X = Call.C.convert(Call.Args[0], Type::scalar(F), Call.ArgNodes[0]).scalar();
  return Call.C.makeScalar(F, Call.C.builder().CreateFMul(X, ConstantFP::get(X->getType(), Factor)));
}
TypedValue math_radians(IntrinsicCall &Call) { return angle(Call, "radians", 3.14159265358979323846 / 180.0); }
TypedValue math_degrees(IntrinsicCall &Call) { return angle(Call, "degrees", 180.0 / 3.14159265358979323846); }

// round(x): Python 3 rounds half to even and returns int64.
TypedValue builtinRound(IntrinsicCall &Call) {
  bindArguments(Call, "round", {"number"}, 1);
  const TypedValue &X = Call.Args[0];
  if (!X.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "round() takes a number, not " + X.T.str());
  if (!isFloat(X.T.Dtype))
    return Call.C.convert(X, Type::scalar(Scalar::Int64), Call.Node);
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(Scalar::Int64));
  Value *R = Call.C.builder().CreateUnaryIntrinsic(Intrinsic::roundeven, X.scalar());
  return Call.C.convert(Call.C.makeScalar(X.T.Dtype, R), Type::scalar(Scalar::Int64), Call.Node);
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> mathIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.popc", IntrinsicKind::Function, cudaPopc, "",
       "popc(x): the number of set bits."},
      {"cuda.brev", IntrinsicKind::Function, cudaBrev, "",
       "brev(x): the bits in reverse order."},
      {"cuda.clz", IntrinsicKind::Function, cudaClz, "",
       "clz(x): the number of leading zero bits."},
      {"cuda.ffs", IntrinsicKind::Function, cudaFfs, "",
       "ffs(x): 1 + the position of the lowest set bit, 0 for 0."},
      {"cuda.fma", IntrinsicKind::Function, cudaFma, "",
       "fma(a, b, c): a * b + c with one rounding."},
      {"cuda.cbrt", IntrinsicKind::Function, mathOfOneArgument, "cbrt",
       "cbrt(x): the cube root."},
      {"cuda.selp", IntrinsicKind::Function, cudaSelp, "",
       "selp(predicate, a, b): a if predicate else b."},
      {"math.sin", IntrinsicKind::Function, mathOfOneArgument, "sin",
       "math.sin(x): float32 for float32 arguments, else float64."},
      {"math.cos", IntrinsicKind::Function, mathOfOneArgument, "cos",
       "math.cos(x): float32 for float32 arguments, else float64."},
      {"math.tan", IntrinsicKind::Function, mathOfOneArgument, "tan",
       "math.tan(x): float32 for float32 arguments, else float64."},
      {"math.asin", IntrinsicKind::Function, mathOfOneArgument, "asin",
       "math.asin(x): float32 for float32 arguments, else float64."},
      {"math.acos", IntrinsicKind::Function, mathOfOneArgument, "acos",
       "math.acos(x): float32 for float32 arguments, else float64."},
      {"math.atan", IntrinsicKind::Function, mathOfOneArgument, "atan",
       "math.atan(x): float32 for float32 arguments, else float64."},
      {"math.sinh", IntrinsicKind::Function, mathOfOneArgument, "sinh",
       "math.sinh(x): float32 for float32 arguments, else float64."},
      {"math.cosh", IntrinsicKind::Function, mathOfOneArgument, "cosh",
       "math.cosh(x): float32 for float32 arguments, else float64."},
      {"math.tanh", IntrinsicKind::Function, mathOfOneArgument, "tanh",
       "math.tanh(x): float32 for float32 arguments, else float64."},
      {"math.asinh", IntrinsicKind::Function, mathOfOneArgument, "asinh",
       "math.asinh(x): float32 for float32 arguments, else float64."},
      {"math.acosh", IntrinsicKind::Function, mathOfOneArgument, "acosh",
       "math.acosh(x): float32 for float32 arguments, else float64."},
      {"math.atanh", IntrinsicKind::Function, mathOfOneArgument, "atanh",
       "math.atanh(x): float32 for float32 arguments, else float64."},
      {"math.exp", IntrinsicKind::Function, mathOfOneArgument, "exp",
       "math.exp(x): float32 for float32 arguments, else float64."},
      {"math.expm1", IntrinsicKind::Function, mathOfOneArgument, "expm1",
       "math.expm1(x): float32 for float32 arguments, else float64."},
      {"math.exp2", IntrinsicKind::Function, mathOfOneArgument, "exp2",
       "math.exp2(x): float32 for float32 arguments, else float64."},
      {"math.log2", IntrinsicKind::Function, mathOfOneArgument, "log2",
       "math.log2(x): float32 for float32 arguments, else float64."},
      {"math.log10", IntrinsicKind::Function, mathOfOneArgument, "log10",
       "math.log10(x): float32 for float32 arguments, else float64."},
      {"math.log1p", IntrinsicKind::Function, mathOfOneArgument, "log1p",
       "math.log1p(x): float32 for float32 arguments, else float64."},
      {"math.sqrt", IntrinsicKind::Function, mathOfOneArgument, "sqrt",
       "math.sqrt(x): float32 for float32 arguments, else float64."},
      {"math.fabs", IntrinsicKind::Function, mathOfOneArgument, "fabs",
       "math.fabs(x): float32 for float32 arguments, else float64."},
      {"math.erf", IntrinsicKind::Function, mathOfOneArgument, "erf",
       "math.erf(x): float32 for float32 arguments, else float64."},
      {"math.erfc", IntrinsicKind::Function, mathOfOneArgument, "erfc",
       "math.erfc(x): float32 for float32 arguments, else float64."},
      {"math.gamma", IntrinsicKind::Function, mathOfOneArgument, "tgamma",
       "math.gamma(x): float32 for float32 arguments, else float64."},
      {"math.lgamma", IntrinsicKind::Function, mathOfOneArgument, "lgamma",
       "math.lgamma(x): float32 for float32 arguments, else float64."},
      {"math.atan2", IntrinsicKind::Function, mathOfTwoArguments, "atan2",
       "math.atan2(x, y): float32 for float32 arguments, else float64."},
      {"math.pow", IntrinsicKind::Function, mathOfTwoArguments, "pow",
       "math.pow(x, y): float32 for float32 arguments, else float64."},
      {"math.copysign", IntrinsicKind::Function, mathOfTwoArguments, "copysign",
       "math.copysign(x, y): float32 for float32 arguments, else float64."},
      {"math.fmod", IntrinsicKind::Function, mathOfTwoArguments, "fmod",
       "math.fmod(x, y): float32 for float32 arguments, else float64."},
      {"math.hypot", IntrinsicKind::Function, mathOfTwoArguments, "hypot",
       "math.hypot(x, y): float32 for float32 arguments, else float64."},
      {"math.log", IntrinsicKind::Function, math_log, "log",
       "math.log(x[, base])."},
      {"math.floor", IntrinsicKind::Function, math_floor, "floor",
       "math.floor(x): an int64."},
      {"math.ceil", IntrinsicKind::Function, math_ceil, "ceil",
       "math.ceil(x): an int64."},
      {"math.trunc", IntrinsicKind::Function, math_trunc, "trunc",
       "math.trunc(x): an int64."},
      {"math.isnan", IntrinsicKind::Function, math_isnan, "",
       "math.isnan(x)."},
      {"math.isinf", IntrinsicKind::Function, math_isinf, "",
       "math.isinf(x)."},
      {"math.isfinite", IntrinsicKind::Function, math_isfinite, "",
       "math.isfinite(x)."},
      {"math.radians", IntrinsicKind::Function, math_radians, "",
       "math.radians(x)."},
      {"math.degrees", IntrinsicKind::Function, math_degrees, "",
       "math.degrees(x)."},
      {"builtins.round", IntrinsicKind::Function, builtinRound, "",
       "round(x[, ndigits])."},
  };
  return Records;
}

} // namespace tidal::frontend
