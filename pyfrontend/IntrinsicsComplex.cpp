// Complex numbers: complex() and the cmath functions. The cmath functions
// are tidal device functions written in Python (python/tidal/cuda/_cmath.py,
// compiled through LibraryFunctions.cpp), so that both targets share one
// implementation with CPython's special values; the rules here check and
// type the call, and the emitters convert the arguments to complex128 (or
// float64), call the function and round its result to the call's type.
#include "IntrinsicTable.h"

#include <cstring>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

const char *const CmathLibrary = "tidal.cuda._cmath";

// complex(real=0, imag=0): complex64 from float32 parts, else complex128;
// complex(z) of a complex number is z as complex128 (or complex64).
TypedValue typeComplex(IntrinsicCall &Call) {
  bindArguments(Call, "complex", {"real", "imag"}, 0);
  if (Call.Args.size() == 1 && Call.Args[0].T.isComplexScalar())
    return TypedValue(Call.Args[0].T);
  Scalar Part = Scalar::Bool;
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    if (!Call.Args[I].T.isScalar() || isComplex(Call.Args[I].T.Dtype))
      Call.C.typingError(Call.ArgNodes[I], "complex() takes real numbers (or one complex "
                                           "number), not " + Call.Args[I].T.str());
    Part = I ? promoteArithmetic(Part, Call.Args[I].T.Dtype) : Call.Args[I].T.Dtype;
  }
  Scalar S = Call.Args.empty() ? Scalar::Complex128 : complexOf(isFloat(Part) ? Part : Scalar::Float64);
  return TypedValue(Type::scalar(S));
}
TypedValue emitComplex(IntrinsicCall &Call, const Type &Result) {
  Scalar S = Result.Dtype;
  if (Call.Args.size() == 1 && Call.Args[0].T.isComplexScalar())
    return Call.C.convert(Call.Args[0], Result, Call.ArgNodes[0]);
  Type Component = Type::scalar(componentOf(S));
  llvm::Type *T = Call.C.llvmType(componentOf(S));
  Value *Re = Call.Args.size() > 0 ? Call.C.convert(Call.Args[0], Component, Call.ArgNodes[0]).scalar()
                                   : ConstantFP::get(T, 0.0);
  Value *Im = Call.Args.size() > 1 ? Call.C.convert(Call.Args[1], Component, Call.ArgNodes[1]).scalar()
                                   : ConstantFP::get(T, 0.0);
  return Call.C.makeScalar(S, Call.C.makeComplex(S, Re, Im));
}

// The function's name in _cmath.py: "acos" for cmath.acos.
std::string cmathName(IntrinsicCall &Call) {
  return std::string(Call.Record->PythonPath).substr(std::strlen("cmath."));
}

// Checks that argument I is a number; a real one is taken as complex, as
// CPython's cmath does. Returns whether it is single precision (complex64,
// float32, float16), which makes the result single precision.
bool expectNumber(IntrinsicCall &Call, size_t I) {
  const Type &T = Call.Args[I].T;
  if (!T.isScalar() || T.isBool())
    Call.C.typingError(Call.ArgNodes[I], std::string(Call.Record->PythonPath) +
                                             "() takes a number, not " + T.str());
  return T.Dtype == Scalar::Complex64 || T.Dtype == Scalar::Float32 ||
         T.Dtype == Scalar::Float16;
}
bool expectReal(IntrinsicCall &Call, size_t I) {
  const Type &T = Call.Args[I].T;
  if (!T.isScalar() || T.isBool() || isComplex(T.Dtype))
    Call.C.typingError(Call.ArgNodes[I], std::string(Call.Record->PythonPath) +
                                             "() takes real numbers, not " + T.str());
  return T.Dtype == Scalar::Float32 || T.Dtype == Scalar::Float16;
}

// The parameter types of the library function: complex128 for numbers,
// float64 for rect's reals.
std::vector<Type> libraryParameters(IntrinsicCall &Call) {
  Scalar S = cmathName(Call) == "rect" ? Scalar::Float64 : Scalar::Complex128;
  return std::vector<Type>(Call.Args.size(), Type::scalar(S));
}
std::string libraryName(IntrinsicCall &Call) {
  std::string Name = cmathName(Call);
  return Name == "log" && Call.Args.size() == 2 ? "log_base" : Name;
}

// cmath.<fn>(z): complex64 for single-precision arguments, else complex128;
// phase: a real; polar: a pair of reals; isnan/isinf/isfinite: bool;
// log(z[, base]); rect(r, phi) of reals.
TypedValue typeCmathFunction(IntrinsicCall &Call) {
  std::string Name = cmathName(Call);
  bool Single;
  if (Name == "rect") {
    bindArguments(Call, Call.Record->PythonPath, {"r", "phi"}, 2);
    Single = expectReal(Call, 0) & expectReal(Call, 1);
  } else if (Name == "log") {
    bindArguments(Call, Call.Record->PythonPath, {"x", "base"}, 1);
    Single = expectNumber(Call, 0);
    if (Call.Args.size() == 2)
      Single &= expectNumber(Call, 1);
  } else {
    bindArguments(Call, Call.Record->PythonPath, {"z"}, 1);
    Single = expectNumber(Call, 0);
  }
  // Compile the library function now, so that emission only calls it.
  Call.C.libraryFunction(CmathLibrary, libraryName(Call), libraryParameters(Call), Call.Node);
  Scalar Real = Single ? Scalar::Float32 : Scalar::Float64;
  if (Name == "isnan" || Name == "isinf" || Name == "isfinite")
    return TypedValue(Type::scalar(Scalar::Bool));
  if (Name == "phase")
    return TypedValue(Type::scalar(Real));
  if (Name == "polar")
    return TypedValue(Type::tuple({Type::scalar(Real), Type::scalar(Real)}));
  return TypedValue(Type::scalar(complexOf(Real)));
}
TypedValue emitCmathFunction(IntrinsicCall &Call, const Type &Result) {
  std::vector<Type> Params = libraryParameters(Call);
  DeviceFunctionCache::Entry Callee =
      Call.C.libraryFunction(CmathLibrary, libraryName(Call), Params, Call.Node);
  std::vector<TypedValue> Args;
  for (size_t I = 0; I < Call.Args.size(); ++I)
    Args.push_back(Call.C.convert(Call.Args[I], Params[I], Call.ArgNodes[I]));
  return Call.C.convert(Call.C.callCompiled(Callee, Args), Result, Call.Node);
}
} // namespace

llvm::ArrayRef<IntrinsicRecord> complexIntrinsics() {
#define CMATH(NAME, DOC)                                                                      \
  {"cmath." NAME, IntrinsicKind::Function, typeCmathFunction, emitCmathFunction, "", DOC}
  static const IntrinsicRecord Records[] = {
      {"builtins.complex", IntrinsicKind::Function, typeComplex, emitComplex, "",
       "complex(re[, im])."},
      CMATH("sqrt", "cmath.sqrt(z): the principal square root."),
      CMATH("exp", "cmath.exp(z)."),
      CMATH("log", "cmath.log(z[, base]): the principal logarithm."),
      CMATH("log10", "cmath.log10(z)."),
      CMATH("phase", "cmath.phase(z): the argument of z, in [-pi, pi]."),
      CMATH("polar", "cmath.polar(z): (abs(z), phase(z))."),
      CMATH("rect", "cmath.rect(r, phi): the complex number of modulus r and phase phi."),
      CMATH("isnan", "cmath.isnan(z): whether either part is a NaN."),
      CMATH("isinf", "cmath.isinf(z): whether either part is infinite."),
      CMATH("isfinite", "cmath.isfinite(z): whether both parts are finite."),
      CMATH("acos", "cmath.acos(z)."),
      CMATH("asin", "cmath.asin(z)."),
      CMATH("atan", "cmath.atan(z)."),
      CMATH("cos", "cmath.cos(z)."),
      CMATH("sin", "cmath.sin(z)."),
      CMATH("tan", "cmath.tan(z)."),
      CMATH("acosh", "cmath.acosh(z)."),
      CMATH("asinh", "cmath.asinh(z)."),
      CMATH("atanh", "cmath.atanh(z)."),
      CMATH("cosh", "cmath.cosh(z)."),
      CMATH("sinh", "cmath.sinh(z)."),
      CMATH("tanh", "cmath.tanh(z)."),
  };
#undef CMATH
  return Records;
}

} // namespace tidal::frontend
