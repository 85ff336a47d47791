// Half precision: cuda.fp16.* (Numba 0.56's set: hadd, hsub, hmul, hfma,
// hneg, habs, the comparisons heq..hlt, hmax, hmin) on float16 scalars, as
// plain LLVM `half` operations: the NVPTX backend gives add.f16, mul.f16,
// setp.*.f16 ...; the cpu target computes them in float and rounds once
// (float holds every half sum, difference and product exactly enough for
// one rounding, docs/language.md). numba-cuda's additions: hdiv, hrcp
// (half division: float's correctly rounded quotient rounds to the
// correctly rounded half one), hmax_nan/hmin_nan, and the math functions
// (hsin ... hrint), computed in float32 through the math.* markers and
// rounded to float16.
#include "IntrinsicTable.h"

#include "llvm/IR/Intrinsics.h"

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// The parameter names of each arity.
void bindHalfArguments(IntrinsicCall &Call, size_t Count) {
  const std::string Python = Call.Record->PythonPath;
  if (Count == 1)
    bindArguments(Call, Python, {"a"}, 1);
  else if (Count == 2)
    bindArguments(Call, Python, {"a", "b"}, 2);
  else
    bindArguments(Call, Python, {"a", "b", "c"}, 3);
}

// Every argument converts to float16, as Numba's float16 signatures take
// any real number (an unsafe conversion); complex numbers, arrays and the
// rest do not.
void expectHalfArguments(IntrinsicCall &Call, size_t Count) {
  bindHalfArguments(Call, Count);
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    const Type &T = Call.Args[I].T;
    if (!T.isScalar() || isComplex(T.Dtype))
      Call.C.typingError(Call.ArgNodes[I], std::string(Call.Record->PythonPath) +
                                               "() takes float16 numbers (or real numbers, "
                                               "converted to float16), not " + T.str());
  }
}

// The arguments as LLVM halves.
std::vector<Value *> halfArguments(IntrinsicCall &Call) {
  std::vector<Value *> Values;
  for (size_t I = 0; I < Call.Args.size(); ++I)
    Values.push_back(
        Call.C.convert(Call.Args[I], Type::scalar(Scalar::Float16), Call.ArgNodes[I]).scalar());
  return Values;
}

// The arity of a record, from its Python path.
size_t arityOf(const std::string &Python) {
  if (Python == "cuda.fp16.hneg" || Python == "cuda.fp16.habs" || Python == "cuda.fp16.hrcp")
    return 1;
  if (Python == "cuda.fp16.hfma")
    return 3;
  return 2;
}

TypedValue typeHalfArithmetic(IntrinsicCall &Call) {
  expectHalfArguments(Call, arityOf(Call.Record->PythonPath));
  return TypedValue(Type::scalar(Scalar::Float16));
}
TypedValue emitHalfArithmetic(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  const std::string Python = Call.Record->PythonPath;
  std::vector<Value *> V = halfArguments(Call);
  Value *R;
  if (Python == "cuda.fp16.hadd")
    R = B.CreateFAdd(V[0], V[1]);
  else if (Python == "cuda.fp16.hsub")
    R = B.CreateFSub(V[0], V[1]);
  else if (Python == "cuda.fp16.hmul")
    R = B.CreateFMul(V[0], V[1]);
  else if (Python == "cuda.fp16.hneg")
    R = B.CreateFNeg(V[0]);
  else if (Python == "cuda.fp16.habs")
    R = B.CreateUnaryIntrinsic(Intrinsic::fabs, V[0]);
  else if (Python == "cuda.fp16.hmax") // a > b ? a : b, as Numba: b when either is NaN
    R = B.CreateSelect(B.CreateFCmpOGT(V[0], V[1]), V[0], V[1]);
  else if (Python == "cuda.fp16.hmin") // a < b ? a : b
    R = B.CreateSelect(B.CreateFCmpOLT(V[0], V[1]), V[0], V[1]);
  else if (Python == "cuda.fp16.hdiv")
    R = B.CreateFDiv(V[0], V[1]);
  else if (Python == "cuda.fp16.hrcp")
    R = B.CreateFDiv(ConstantFP::get(B.getHalfTy(), 1.0), V[0]);
  else if (Python == "cuda.fp16.hmax_nan" || Python == "cuda.fp16.hmin_nan") {
    // CUDA's __hmax_nan/__hmin_nan: NaN when either is NaN, else the
    // larger (smaller) one.
    bool Max = Python == "cuda.fp16.hmax_nan";
    Value *Chosen = B.CreateSelect(Max ? B.CreateFCmpOGT(V[0], V[1]) : B.CreateFCmpOLT(V[0], V[1]),
                                   V[0], V[1]);
    R = B.CreateSelect(B.CreateFCmpUNO(V[0], V[1]), ConstantFP::getNaN(B.getHalfTy()), Chosen);
  }
  else // hfma: one rounding of a*b+c, fma.rn.f16 on NVPTX; the host
         // lowering makes it a float64 fma rounded once (tidal-lower-host).
    R = B.CreateIntrinsic(Intrinsic::fma, {B.getHalfTy()}, {V[0], V[1], V[2]});
  return Call.C.makeScalar(Result.Dtype, R);
}

// numba-cuda's math functions of a float16: the record's Marker is the
// float32 math marker's stem (math.<stem>.f32); hexp10 is pow(10, a), and
// hrint LLVM's roundeven (as builtins.round: math.round rounds halves away
// from zero).
TypedValue typeHalfMath(IntrinsicCall &Call) {
  expectHalfArguments(Call, 1);
  return TypedValue(Type::scalar(Scalar::Float16));
}
TypedValue emitHalfMath(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  Value *X = B.CreateFPExt(halfArguments(Call)[0], B.getFloatTy());
  std::string Stem = Call.Record->Marker;
  Value *Y = Stem == "pow10"
                 ? Call.C.callMarker("math.pow.f32", B.getFloatTy(), {ConstantFP::get(B.getFloatTy(), 10.0), X})
             : Stem == "roundeven" ? B.CreateUnaryIntrinsic(Intrinsic::roundeven, X)
                                   : Call.C.callMarker("math." + Stem + ".f32", B.getFloatTy(), {X});
  return Call.C.makeScalar(Result.Dtype, B.CreateFPTrunc(Y, B.getHalfTy()));
}

TypedValue typeHalfComparison(IntrinsicCall &Call) {
  expectHalfArguments(Call, 2);
  return TypedValue(Type::scalar(Scalar::Bool));
}
// PTX's setp.{eq,ne,ge,gt,le,lt}.f16 are ordered: false when either is NaN.
TypedValue emitHalfComparison(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  const std::string Python = Call.Record->PythonPath;
  std::vector<Value *> V = halfArguments(Call);
  CmpInst::Predicate P = Python == "cuda.fp16.heq"   ? CmpInst::FCMP_OEQ
                         : Python == "cuda.fp16.hne" ? CmpInst::FCMP_ONE
                         : Python == "cuda.fp16.hge" ? CmpInst::FCMP_OGE
                         : Python == "cuda.fp16.hgt" ? CmpInst::FCMP_OGT
                         : Python == "cuda.fp16.hle" ? CmpInst::FCMP_OLE
                                                     : CmpInst::FCMP_OLT;
  return Call.C.makeScalar(Result.Dtype, B.CreateFCmp(P, V[0], V[1]));
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> halfIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.fp16", IntrinsicKind::Namespace, nullptr, nullptr, "",
       "Half-precision (float16) arithmetic and comparisons."},
      {"cuda.fp16.hadd", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "hadd(a, b): a + b in float16, rounded to nearest"},
      {"cuda.fp16.hsub", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "hsub(a, b): a - b in float16, rounded to nearest"},
      {"cuda.fp16.hmul", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "hmul(a, b): a * b in float16, rounded to nearest"},
      {"cuda.fp16.hfma", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "hfma(a, b, c): a * b + c in float16, rounded once"},
      {"cuda.fp16.hneg", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "hneg(a): -a in float16"},
      {"cuda.fp16.habs", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "habs(a): |a| in float16"},
      {"cuda.fp16.hmax", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "hmax(a, b): a if a > b else b (b when either is NaN)"},
      {"cuda.fp16.hmin", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "hmin(a, b): a if a < b else b (b when either is NaN)"},
      {"cuda.fp16.hdiv", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "hdiv(a, b): a / b in float16, rounded to nearest"},
      {"cuda.fp16.hrcp", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "hrcp(a): 1 / a in float16, rounded to nearest"},
      {"cuda.fp16.hmax_nan", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "hmax_nan(a, b): the larger of a and b, NaN when either is NaN"},
      {"cuda.fp16.hmin_nan", IntrinsicKind::Function, typeHalfArithmetic, emitHalfArithmetic, "",
       "hmin_nan(a, b): the smaller of a and b, NaN when either is NaN"},
      {"cuda.fp16.hsin", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "sin",
       "hsin(a): sin(a), computed in float32 and rounded to float16"},
      {"cuda.fp16.hcos", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "cos",
       "hcos(a): cos(a), computed in float32 and rounded to float16"},
      {"cuda.fp16.htanh", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "tanh",
       "htanh(a): tanh(a), computed in float32 and rounded to float16"},
      {"cuda.fp16.htanh_approx", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "tanh",
       "htanh_approx(a): tanh(a), as htanh (tidal computes both in float32)"},
      {"cuda.fp16.hexp", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "exp",
       "hexp(a): e**a, computed in float32 and rounded to float16"},
      {"cuda.fp16.hexp2", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "exp2",
       "hexp2(a): 2**a, computed in float32 and rounded to float16"},
      {"cuda.fp16.hexp10", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "pow10",
       "hexp10(a): 10**a, computed in float32 and rounded to float16"},
      {"cuda.fp16.hlog", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "log",
       "hlog(a): ln(a), computed in float32 and rounded to float16"},
      {"cuda.fp16.hlog2", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "log2",
       "hlog2(a): log2(a), computed in float32 and rounded to float16"},
      {"cuda.fp16.hlog10", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "log10",
       "hlog10(a): log10(a), computed in float32 and rounded to float16"},
      {"cuda.fp16.hsqrt", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "sqrt",
       "hsqrt(a): sqrt(a) in float16, rounded to nearest"},
      {"cuda.fp16.hrsqrt", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "rsqrt",
       "hrsqrt(a): 1 / sqrt(a), computed in float32 and rounded to float16"},
      {"cuda.fp16.hceil", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "ceil",
       "hceil(a): the smallest integer >= a, as a float16"},
      {"cuda.fp16.hfloor", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "floor",
       "hfloor(a): the largest integer <= a, as a float16"},
      {"cuda.fp16.htrunc", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "trunc",
       "htrunc(a): a rounded toward zero to an integer, as a float16"},
      {"cuda.fp16.hrint", IntrinsicKind::Function, typeHalfMath, emitHalfMath, "roundeven",
       "hrint(a): a rounded to the nearest integer, halves to even, as a float16"},
      {"cuda.fp16.heq", IntrinsicKind::Function, typeHalfComparison, emitHalfComparison, "",
       "heq(a, b): a == b on float16 (False when either is NaN)"},
      {"cuda.fp16.hne", IntrinsicKind::Function, typeHalfComparison, emitHalfComparison, "",
       "hne(a, b): a != b on float16 (False when either is NaN)"},
      {"cuda.fp16.hge", IntrinsicKind::Function, typeHalfComparison, emitHalfComparison, "",
       "hge(a, b): a >= b on float16"},
      {"cuda.fp16.hgt", IntrinsicKind::Function, typeHalfComparison, emitHalfComparison, "",
       "hgt(a, b): a > b on float16"},
      {"cuda.fp16.hle", IntrinsicKind::Function, typeHalfComparison, emitHalfComparison, "",
       "hle(a, b): a <= b on float16"},
      {"cuda.fp16.hlt", IntrinsicKind::Function, typeHalfComparison, emitHalfComparison, "",
       "hlt(a, b): a < b on float16"},
  };
  return Records;
}

} // namespace tidal::frontend
