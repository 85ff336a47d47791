// The functions and attributes kernels can use, one table each: CUDA names
// (cuda.grid, cuda.threadIdx.x, ...), builtins (len, min, ...) and casts
// (float32(x), numpy.float32(x), int(x)). Each CUDA entry emits markers
// (docs/markers.md) that TidalPasses lowers for each target.
#include "FunctionCompiler.h"

#include "llvm/IR/Intrinsics.h"

using namespace llvm;

namespace tidal::frontend {

namespace {

using frontend::Type;

void expectArgCount(IntrinsicCall &Call, const std::string &Name, size_t Min, size_t Max) {
  size_t N = Call.Args.size();
  if (N >= Min && N <= Max)
    return;
  std::string Expected = Min == Max ? std::to_string(Min)
                                    : std::to_string(Min) + " to " + std::to_string(Max);
  Call.C.typingError(Call.Node, Name + "() takes " + Expected + " argument" +
                                    (Max == 1 ? "" : "s") + ", got " + std::to_string(N));
}

const char *const Axes[] = {"x", "y", "z"};

// --- thread indexing --------------------------------------------------------

// The global index along each axis: ctaid * ntid + tid, in int64 so that
// grids of more than 2^31 threads index correctly.
Value *globalIndex(FunctionCompiler &C, unsigned Axis) {
  IRBuilder<> &B = C.builder();
  std::string A = Axes[Axis];
  Value *Tid = B.CreateZExt(C.markerI32("tid." + A), B.getInt64Ty());
  Value *Ctaid = B.CreateZExt(C.markerI32("ctaid." + A), B.getInt64Ty());
  Value *Ntid = B.CreateZExt(C.markerI32("ntid." + A), B.getInt64Ty());
  return B.CreateAdd(B.CreateMul(Ctaid, Ntid), Tid, std::string("grid.") + A);
}

Value *gridExtent(FunctionCompiler &C, unsigned Axis) {
  IRBuilder<> &B = C.builder();
  std::string A = Axes[Axis];
  Value *Ntid = B.CreateZExt(C.markerI32("ntid." + A), B.getInt64Ty());
  Value *Nctaid = B.CreateZExt(C.markerI32("nctaid." + A), B.getInt64Ty());
  return B.CreateMul(Ntid, Nctaid, std::string("gridsize.") + A);
}

CValue perAxis(IntrinsicCall &Call, const std::string &Name,
               Value *(*Compute)(FunctionCompiler &, unsigned)) {
  expectArgCount(Call, Name, 1, 1);
  int64_t NDim = Call.C.constantInt(Call.Args[0], Call.ArgNodes[0],
                                    "the argument of " + Name + "()");
  if (NDim < 1 || NDim > 3)
    Call.C.typingError(Call.ArgNodes[0], Name + "() takes 1, 2 or 3 dimensions, got " +
                                             std::to_string(NDim));
  std::vector<CValue> Elements;
  for (unsigned A = 0; A < NDim; ++A)
    Elements.push_back(Call.C.makeScalar(
        Scalar::Int64, Call.C.emitting() ? Compute(Call.C, A) : nullptr));
  return NDim == 1 ? Elements[0] : Call.C.makeTuple(std::move(Elements));
}

CValue cudaGrid(IntrinsicCall &Call) { return perAxis(Call, "cuda.grid", globalIndex); }
CValue cudaGridSize(IntrinsicCall &Call) {
  return perAxis(Call, "cuda.gridsize", gridExtent);
}

// --- builtins ------------------------------------------------------------------

CValue builtinLen(IntrinsicCall &Call) {
  expectArgCount(Call, "len", 1, 1);
  const CValue &A = Call.Args[0];
  if (A.T.isTuple()) {
    CValue R = Call.C.makeScalar(Scalar::Int64, Call.C.emitting()
                                                     ? Call.C.builder().getInt64(A.T.Elements.size())
                                                     : nullptr);
    R.ConstInt = static_cast<int64_t>(A.T.Elements.size());
    return R;
  }
  if (!A.T.isArray())
    Call.C.typingError(Call.ArgNodes[0], "len() of a value of type " + A.T.str());
  return Call.C.makeScalar(Scalar::Int64, Call.C.emitting() ? A.Parts[1] : nullptr);
}

CValue builtinAbs(IntrinsicCall &Call) {
  expectArgCount(Call, "abs", 1, 1);
  const CValue &A = Call.Args[0];
  if (!A.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "abs() of a value of type " + A.T.str());
  Scalar S = A.T.Elem == Scalar::Bool ? Scalar::Int64 : A.T.Elem;
  CValue X = Call.C.convert(A, Type::scalar(S), Call.Node);
  if (!Call.C.emitting() || !isSigned(S) && !isFloat(S))
    return X;
  IRBuilder<> &B = Call.C.builder();
  Value *V = X.scalar();
  if (isFloat(S))
    return Call.C.makeScalar(S, B.CreateUnaryIntrinsic(Intrinsic::fabs, V));
  return Call.C.makeScalar(S, B.CreateBinaryIntrinsic(Intrinsic::abs, V, B.getFalse()));
}

CValue minOrMax(IntrinsicCall &Call, bool IsMax) {
  const char *Name = IsMax ? "max" : "min";
  if (Call.Args.size() < 2)
    Call.C.typingError(Call.Node, std::string(Name) +
                                      "() in kernels takes two or more numbers");
  Scalar Common = Call.Args[0].T.isScalar() ? Call.Args[0].T.Elem : Scalar::Int64;
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    if (!Call.Args[I].T.isScalar())
      Call.C.typingError(Call.ArgNodes[I], std::string(Name) + "() of a value of type " +
                                               Call.Args[I].T.str());
    if (I)
      Common = promoteArithmetic(Common, Call.Args[I].T.Elem);
  }
  // min/max of bools and small ints keep Numba's promotion.
  Type CT = Type::scalar(Common);
  if (!Call.C.emitting())
    return CValue(CT);
  IRBuilder<> &B = Call.C.builder();
  Value *Best = Call.C.convert(Call.Args[0], CT, Call.ArgNodes[0]).scalar();
  for (size_t I = 1; I < Call.Args.size(); ++I) {
    Value *X = Call.C.convert(Call.Args[I], CT, Call.ArgNodes[I]).scalar();
    Value *Better;
    if (isFloat(Common))
      Better = IsMax ? B.CreateFCmpOGT(X, Best) : B.CreateFCmpOLT(X, Best);
    else if (isSigned(Common))
      Better = IsMax ? B.CreateICmpSGT(X, Best) : B.CreateICmpSLT(X, Best);
    else
      Better = IsMax ? B.CreateICmpUGT(X, Best) : B.CreateICmpULT(X, Best);
    Best = B.CreateSelect(Better, X, Best);
  }
  return Call.C.makeScalar(Common, Best);
}

CValue builtinMin(IntrinsicCall &Call) { return minOrMax(Call, false); }
CValue builtinMax(IntrinsicCall &Call) { return minOrMax(Call, true); }

CValue builtinRange(IntrinsicCall &Call) {
  Call.C.unsupported(Call.Node, "range() can only be used as the iterable of a for loop");
}

// --- casts ----------------------------------------------------------------------

template <Scalar S> CValue castTo(IntrinsicCall &Call) {
  std::string Name = scalarName(S);
  expectArgCount(Call, Name, 1, 1);
  if (!Call.Args[0].T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "cannot convert " + Call.Args[0].T.str() +
                                             " to " + Name);
  return Call.C.convert(Call.Args[0], Type::scalar(S), Call.Node);
}

// int(x), float(x), bool(x) as Numba types them: int64, float64, bool.
CValue builtinInt(IntrinsicCall &Call) { return castTo<Scalar::Int64>(Call); }
CValue builtinFloat(IntrinsicCall &Call) { return castTo<Scalar::Float64>(Call); }
CValue builtinBool(IntrinsicCall &Call) { return castTo<Scalar::Bool>(Call); }

const std::unordered_map<std::string, IntrinsicHandler> &callTable() {
  static const std::unordered_map<std::string, IntrinsicHandler> Table = {
      // thread indexing
      {"cuda.grid", cudaGrid},
      {"cuda.gridsize", cudaGridSize},
      // builtins
      {"builtins.len", builtinLen},
      {"builtins.abs", builtinAbs},
      {"builtins.min", builtinMin},
      {"builtins.max", builtinMax},
      {"builtins.range", builtinRange},
      {"builtins.int", builtinInt},
      {"builtins.float", builtinFloat},
      {"builtins.bool", builtinBool},
      // casts: tidal.float32(x) and numpy.float32(x)
      {"cast.bool", castTo<Scalar::Bool>},
      {"cast.int8", castTo<Scalar::Int8>},
      {"cast.int16", castTo<Scalar::Int16>},
      {"cast.int32", castTo<Scalar::Int32>},
      {"cast.int64", castTo<Scalar::Int64>},
      {"cast.uint8", castTo<Scalar::UInt8>},
      {"cast.uint16", castTo<Scalar::UInt16>},
      {"cast.uint32", castTo<Scalar::UInt32>},
      {"cast.uint64", castTo<Scalar::UInt64>},
      {"cast.float16", castTo<Scalar::Float16>},
      {"cast.float32", castTo<Scalar::Float32>},
      {"cast.float64", castTo<Scalar::Float64>},
  };
  return Table;
}

} // namespace

IntrinsicHandler findCallIntrinsic(const std::string &Name) {
  auto It = callTable().find(Name);
  return It == callTable().end() ? nullptr : It->second;
}

bool attributeIntrinsic(FunctionCompiler &C, const std::string &Object,
                        const std::string &Attr, PyObject *Node, CValue &Out) {
  // cuda.threadIdx.x and friends: int32, as in Numba.
  static const std::unordered_map<std::string, std::string> Registers = {
      {"cuda.threadIdx", "tid"},
      {"cuda.blockDim", "ntid"},
      {"cuda.blockIdx", "ctaid"},
      {"cuda.gridDim", "nctaid"},
  };
  auto It = Registers.find(Object);
  if (It == Registers.end())
    return false;
  if (Attr != "x" && Attr != "y" && Attr != "z")
    C.typingError(Node, Object + " has no attribute '" + Attr + "': use .x, .y or .z");
  Out = C.makeScalar(Scalar::Int32,
                     C.emitting() ? C.markerI32(It->second + "." + Attr) : nullptr);
  return true;
}

} // namespace tidal::frontend
