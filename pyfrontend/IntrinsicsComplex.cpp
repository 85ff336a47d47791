// Complex numbers: complex() and the cmath functions.
#include "IntrinsicTable.h"

#include "llvm/IR/Intrinsics.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// complex(real=0, imag=0): complex64 from float32 parts, else complex128.
TypedValue typeComplex(IntrinsicCall &Call) {
  bindArguments(Call, "complex", {"real", "imag"}, 0);
  Scalar Part = Scalar::Bool;
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    if (!Call.Args[I].T.isScalar() || isComplex(Call.Args[I].T.Dtype))
      Call.C.typingError(Call.ArgNodes[I], "complex() takes real numbers, not " + Call.Args[I].T.str());
    Part = I ? promoteArithmetic(Part, Call.Args[I].T.Dtype) : Call.Args[I].T.Dtype;
  }
  Scalar S = Call.Args.empty() ? Scalar::Complex128 : complexOf(isFloat(Part) ? Part : Scalar::Float64);
  return TypedValue(Type::scalar(S));
}
TypedValue emitComplex(IntrinsicCall &Call, const Type &Result) {
  Scalar S = Result.Dtype;
  Type Component = Type::scalar(componentOf(S));
  llvm::Type *T = Call.C.llvmType(componentOf(S));
  Value *Re = Call.Args.size() > 0 ? Call.C.convert(Call.Args[0], Component, Call.ArgNodes[0]).scalar()
                                   : ConstantFP::get(T, 0.0);
  Value *Im = Call.Args.size() > 1 ? Call.C.convert(Call.Args[1], Component, Call.ArgNodes[1]).scalar()
                                   : ConstantFP::get(T, 0.0);
  return Call.C.makeScalar(S, Call.C.makeComplex(S, Re, Im));
}

// The complex type of a cmath function's argument (a real one becomes
// complex128, or complex64 from float32, as Numba types it).
Scalar cmathArgumentType(const Type &Z) {
  if (isComplex(Z.Dtype))
    return Z.Dtype;
  return Z.Dtype == Scalar::Float32 ? Scalar::Complex64 : Scalar::Complex128;
}

// cmath.<fn>(z): a complex number; phase: a real one.
TypedValue typeCmathFunction(IntrinsicCall &Call) {
  std::string Python = Call.Record->PythonPath;
  bindArguments(Call, Python, {"z"}, 1);
  const TypedValue &Z = Call.Args[0];
  if (!Z.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], Python + "() takes a number, not " + Z.T.str());
  Scalar S = cmathArgumentType(Z.T);
  return TypedValue(Type::scalar(Python == "cmath.phase" ? componentOf(S) : S));
}
TypedValue emitCmathFunction(IntrinsicCall &Call, const Type &) {
  std::string Name = std::string(Call.Record->PythonPath).substr(6); // after "cmath."
  Scalar S = cmathArgumentType(Call.Args[0].T);
  Scalar F = componentOf(S);
  IRBuilder<> &B = Call.C.builder();
  Value *Z = Call.C.convert(Call.Args[0], Type::scalar(S), Call.ArgNodes[0]).scalar();
  Value *Re = B.CreateExtractValue(Z, 0), *Im = B.CreateExtractValue(Z, 1);
  llvm::Type *T = Call.C.llvmType(F);
  std::string Suffix = F == Scalar::Float32 ? ".f32" : ".f64";
  auto Math = [&](const char *Fn, std::vector<Value *> Args) {
    return Call.C.callMarker(std::string("math.") + Fn + Suffix, T, Args);
  };
  if (Name == "phase")
    return Call.C.makeScalar(F, Math("atan2", {Im, Re}));
  if (Name == "exp") { // e^re (cos im + i sin im)
    Value *Scale = Math("exp", {Re});
    return Call.C.makeScalar(S, Call.C.makeComplex(S, B.CreateFMul(Scale, Math("cos", {Im})),
                                                   B.CreateFMul(Scale, Math("sin", {Im}))));
  }
  if (Name == "log") // log |z| + i arg z
    return Call.C.makeScalar(S, Call.C.makeComplex(S, Math("log", {Math("hypot", {Re, Im})}),
                                                   Math("atan2", {Im, Re})));
  // sqrt: t = sqrt((|z| + |re|) / 2); the principal root, sign of im kept.
  Value *Zero = ConstantFP::get(T, 0.0), *Half = ConstantFP::get(T, 0.5);
  Value *Magnitude = Math("hypot", {Re, Im});
  Value *AbsRe = B.CreateUnaryIntrinsic(Intrinsic::fabs, Re);
  Value *Root = Math("sqrt", {B.CreateFMul(B.CreateFAdd(Magnitude, AbsRe), Half)});
  Value *Other = B.CreateFDiv(Im, B.CreateFAdd(Root, Root));
  Value *NonNegative = B.CreateFCmpOGE(Re, Zero);
  Value *ResultRe = B.CreateSelect(NonNegative, Root, B.CreateUnaryIntrinsic(Intrinsic::fabs, Other));
  Value *ResultIm = B.CreateSelect(NonNegative, Other, B.CreateBinaryIntrinsic(Intrinsic::copysign, Root, Im));
  // sqrt(0 + i*im) for im = +-0 is (0, im).
  Value *IsZero = B.CreateFCmpOEQ(Magnitude, Zero);
  ResultRe = B.CreateSelect(IsZero, Zero, ResultRe);
  ResultIm = B.CreateSelect(IsZero, Im, ResultIm);
  return Call.C.makeScalar(S, Call.C.makeComplex(S, ResultRe, ResultIm));
}
} // namespace

llvm::ArrayRef<IntrinsicRecord> complexIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"builtins.complex", IntrinsicKind::Function, typeComplex, emitComplex, "",
       "complex(re[, im])."},
      {"cmath.sqrt", IntrinsicKind::Function, typeCmathFunction, emitCmathFunction, "",
       "cmath.sqrt(z): the principal square root."},
      {"cmath.exp", IntrinsicKind::Function, typeCmathFunction, emitCmathFunction, "",
       "cmath.exp(z)."},
      {"cmath.log", IntrinsicKind::Function, typeCmathFunction, emitCmathFunction, "",
       "cmath.log(z): the principal logarithm."},
      {"cmath.phase", IntrinsicKind::Function, typeCmathFunction, emitCmathFunction, "",
       "cmath.phase(z): the argument of z."},
  };
  return Records;
}

} // namespace tidal::frontend
