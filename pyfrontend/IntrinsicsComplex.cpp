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
TypedValue builtinComplex(IntrinsicCall &Call) {
  bindArguments(Call, "complex", {"real", "imag"}, 0);
  Scalar Part = Scalar::Bool;
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    if (!Call.Args[I].T.isScalar() || isComplex(Call.Args[I].T.Dtype))
      Call.C.typingError(Call.ArgNodes[I], "complex() takes real numbers, not " + Call.Args[I].T.str());
    Part = I ? promoteArithmetic(Part, Call.Args[I].T.Dtype) : Call.Args[I].T.Dtype;
  }
  Scalar S = Call.Args.empty() ? Scalar::Complex128 : complexOf(isFloat(Part) ? Part : Scalar::Float64);
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(S));
  Type Component = Type::scalar(componentOf(S));
  llvm::Type *T = Call.C.llvmType(componentOf(S));
  Value *Re = Call.Args.size() > 0 ? Call.C.convert(Call.Args[0], Component, Call.ArgNodes[0]).scalar()
                                   : ConstantFP::get(T, 0.0);
  Value *Im = Call.Args.size() > 1 ? Call.C.convert(Call.Args[1], Component, Call.ArgNodes[1]).scalar()
                                   : ConstantFP::get(T, 0.0);
  return Call.C.makeScalar(S, Call.C.makeComplex(S, Re, Im));
}

// The complex argument of a cmath function (a real one becomes complex128,
// or complex64 from float32, as Numba types it).
Scalar cmathArgument(IntrinsicCall &Call, const std::string &Name) {
  bindArguments(Call, "cmath." + Name, {"z"}, 1);
  const TypedValue &Z = Call.Args[0];
  if (!Z.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "cmath." + Name + "() takes a number, not " + Z.T.str());
  if (isComplex(Z.T.Dtype))
    return Z.T.Dtype;
  return Z.T.Dtype == Scalar::Float32 ? Scalar::Complex64 : Scalar::Complex128;
}

TypedValue cmathFunction(IntrinsicCall &Call, const std::string &Name) {
  Scalar S = cmathArgument(Call, Name);
  Scalar F = componentOf(S);
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(Name == "phase" ? F : S));
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
TypedValue cmathSqrt(IntrinsicCall &Call) { return cmathFunction(Call, "sqrt"); }
TypedValue cmathExp(IntrinsicCall &Call) { return cmathFunction(Call, "exp"); }
TypedValue cmathLog(IntrinsicCall &Call) { return cmathFunction(Call, "log"); }
TypedValue cmathPhase(IntrinsicCall &Call) { return cmathFunction(Call, "phase"); }

} // namespace

llvm::ArrayRef<IntrinsicRecord> complexIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"builtins.complex", IntrinsicKind::Function, builtinComplex, "",
       "complex(re[, im])."},
      {"cmath.sqrt", IntrinsicKind::Function, cmathSqrt, "",
       "cmath.sqrt(z): the principal square root."},
      {"cmath.exp", IntrinsicKind::Function, cmathExp, "",
       "cmath.exp(z)."},
      {"cmath.log", IntrinsicKind::Function, cmathLog, "",
       "cmath.log(z): the principal logarithm."},
      {"cmath.phase", IntrinsicKind::Function, cmathPhase, "",
       "cmath.phase(z): the argument of z."},
  };
  return Records;
}

} // namespace tidal::frontend
