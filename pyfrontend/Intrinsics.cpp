// The functions and attributes kernels can use, one table each: CUDA names
// (cuda.grid, cuda.threadIdx.x, ...), builtins (len, min, ...) and casts
// (float32(x), numpy.float32(x), int(x)). Each CUDA entry emits markers
// (docs/markers.md) that TidalPasses lowers for each target.
#include "FunctionCompiler.h"

#include "llvm/IR/Intrinsics.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

namespace {

using frontend::Type;

void expectArgCount(IntrinsicCall &Call, const std::string &Name, size_t Min, size_t Max) {
  if (!Call.Keywords.empty())
    Call.C.typingError(Call.Node, Name + "() takes no keyword arguments");
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

// The magnitude of a complex number: hypot of its parts (math marker).
Value *complexMagnitude(FunctionCompiler &C, Scalar S, Value *Z) {
  IRBuilder<> &B = C.builder();
  Scalar F = componentOf(S);
  return C.callMarker(std::string("math.hypot.") + (F == Scalar::Float32 ? "f32" : "f64"),
                      C.llvmType(F), {B.CreateExtractValue(Z, 0), B.CreateExtractValue(Z, 1)});
}

CValue builtinAbs(IntrinsicCall &Call) {
  expectArgCount(Call, "abs", 1, 1);
  const CValue &A = Call.Args[0];
  if (!A.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "abs() of a value of type " + A.T.str());
  if (isComplex(A.T.Elem)) {
    Scalar F = componentOf(A.T.Elem);
    if (!Call.C.emitting())
      return CValue(Type::scalar(F));
    return Call.C.makeScalar(F, complexMagnitude(Call.C, A.T.Elem, A.scalar()));
  }
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
  if (isComplex(Common))
    Call.C.typingError(Call.Node, std::string(Name) + "() of complex numbers: they have no order");
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

// --- arguments ------------------------------------------------------------------

// A constant shape: an int or a tuple of ints, each >= 0.
std::vector<int64_t> constantShape(IntrinsicCall &Call, size_t Index, const std::string &What) {
  const CValue &V = Call.Args[Index];
  std::vector<int64_t> Shape;
  if (V.T.isIntegerScalar() && V.ConstInt) {
    Shape.push_back(*V.ConstInt);
  } else if (V.T.isTuple() && V.TupleConstInts.size() == V.T.Elements.size() &&
             !V.T.Elements.empty()) {
    Shape = V.TupleConstInts;
  } else {
    Call.C.typingError(Call.ArgNodes[Index],
                       What + " must be a constant int or a tuple of constant ints, not " +
                           (V.T.isIntegerScalar() || V.T.isTuple() ? "a value computed at run time"
                                                                   : V.T.str()));
  }
  for (int64_t E : Shape)
    if (E < 0)
      Call.C.typingError(Call.ArgNodes[Index], What + " must not be negative");
  return Shape;
}

const char *suffixOf(Scalar S) {
  switch (S) {
  case Scalar::Int32:
    return "i32";
  case Scalar::Int64:
    return "i64";
  case Scalar::UInt32:
    return "u32";
  case Scalar::UInt64:
    return "u64";
  case Scalar::Float32:
    return "f32";
  case Scalar::Float64:
    return "f64";
  default:
    return nullptr;
  }
}

// --- barriers and fences ---------------------------------------------------------

CValue voidMarker(IntrinsicCall &Call, const std::string &Python, const std::string &Marker) {
  bindArguments(Call, Python, {}, 0);
  if (Call.C.emitting())
    Call.C.callMarker(Marker, Call.C.builder().getVoidTy(), {});
  return CValue(Type::none());
}

CValue cudaSyncthreads(IntrinsicCall &Call) {
  return voidMarker(Call, "cuda.syncthreads", "syncthreads");
}
CValue cudaThreadfenceBlock(IntrinsicCall &Call) {
  return voidMarker(Call, "cuda.threadfence_block", "threadfence.block");
}
CValue cudaThreadfence(IntrinsicCall &Call) {
  return voidMarker(Call, "cuda.threadfence", "threadfence");
}
CValue cudaThreadfenceSystem(IntrinsicCall &Call) {
  return voidMarker(Call, "cuda.threadfence_system", "threadfence.system");
}

// syncthreads_count/and/or(predicate) -> int32
CValue predicateBarrier(IntrinsicCall &Call, const std::string &Which) {
  bindArguments(Call, "cuda.syncthreads_" + Which, {"predicate"}, 1);
  Call.C.truth(Call.Args[0], Call.ArgNodes[0]);
  if (!Call.C.emitting())
    return CValue(Type::scalar(Scalar::Int32));
  IRBuilder<> &B = Call.C.builder();
  Value *Predicate = B.CreateZExt(Call.C.truth(Call.Args[0], Call.ArgNodes[0]), B.getInt32Ty());
  return Call.C.makeScalar(Scalar::Int32,
                           Call.C.callMarker("syncthreads." + Which, B.getInt32Ty(), {Predicate}));
}
CValue cudaSyncthreadsCount(IntrinsicCall &Call) { return predicateBarrier(Call, "count"); }
CValue cudaSyncthreadsAnd(IntrinsicCall &Call) { return predicateBarrier(Call, "and"); }
CValue cudaSyncthreadsOr(IntrinsicCall &Call) { return predicateBarrier(Call, "or"); }

// A lane mask argument as i32 (Numba takes any integer).
Value *maskValue(IntrinsicCall &Call, size_t Index) {
  const CValue &Mask = Call.Args[Index];
  if (!Mask.T.isIntegerScalar())
    Call.C.typingError(Call.ArgNodes[Index], "a lane mask must be an integer, not " + Mask.T.str());
  if (!Call.C.emitting())
    return nullptr;
  return Call.C.builder().CreateIntCast(Mask.scalar(), Call.C.builder().getInt32Ty(), false);
}

CValue cudaSyncwarp(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.syncwarp", {"mask"}, 0);
  Value *Mask = nullptr;
  if (!Call.Args.empty())
    Mask = maskValue(Call, 0);
  if (Call.C.emitting())
    Call.C.callMarker("syncwarp", Call.C.builder().getVoidTy(),
                      {Mask ? Mask : Call.C.builder().getInt32(0xFFFFFFFFu)});
  return CValue(Type::none());
}

// --- memory -------------------------------------------------------------------------

CValue arrayMarker(IntrinsicCall &Call, const std::string &Python, const std::string &Marker,
                   bool DynamicWhenEmpty) {
  bindArguments(Call, Python, {"shape", "dtype"}, 2);
  std::vector<int64_t> Shape = constantShape(Call, 0, "the shape of " + Python + "()");
  Scalar Elem = Call.C.dtypeOf(Call.Args[1], Call.ArgNodes[1]);
  int64_t Count = 1;
  for (int64_t E : Shape)
    Count *= E;
  if (!Call.C.emitting())
    return Call.C.makeArray(Elem, Shape, nullptr);
  IRBuilder<> &B = Call.C.builder();
  Value *Data;
  if (DynamicWhenEmpty && Count == 0)
    Data = Call.C.callMarker("shared.dynamic", B.getPtrTy(), {});
  else
    Data = Call.C.callMarker(Marker, B.getPtrTy(),
                             {B.getInt64(Count * byteSize(Elem)), B.getInt64(byteSize(Elem))});
  return Call.C.makeArray(Elem, Shape, Data);
}

CValue cudaSharedArray(IntrinsicCall &Call) {
  return arrayMarker(Call, "cuda.shared.array", "shared.array", true);
}
CValue cudaLocalArray(IntrinsicCall &Call) {
  return arrayMarker(Call, "cuda.local.array", "local.array", false);
}

// cuda.const.array_like(ary): ary is a global NumPy array, already frozen
// into a constant array by the compiler.
CValue cudaConstArrayLike(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.const.array_like", {"ary"}, 1);
  const CValue &A = Call.Args[0];
  if (!A.T.isArray() || !A.T.ReadOnly)
    Call.C.typingError(Call.ArgNodes[0],
                       "cuda.const.array_like() takes a global NumPy array, not " + A.T.str());
  return A;
}

// --- atomics ----------------------------------------------------------------------

// cuda.atomic.<op>(ary, idx, val): the old value of ary[idx].
CValue atomicOp(IntrinsicCall &Call, const std::string &Python, const std::string &Op) {
  bindArguments(Call, "cuda.atomic." + Python, {"ary", "idx", "val"}, 3);
  const CValue &Array = Call.Args[0];
  if (!Array.T.isArray())
    Call.C.typingError(Call.ArgNodes[0], "cuda.atomic." + Python + "() needs an array, not " +
                                             Array.T.str());
  if (Array.T.ReadOnly)
    Call.C.typingError(Call.ArgNodes[0], "cuda.atomic." + Python + "() on a read-only array");
  Scalar Elem = Array.T.Elem;
  const char *Suffix = suffixOf(Elem);
  bool IntegerOnly = Op == "and" || Op == "or" || Op == "xor";
  bool UnsignedOnly = Op == "inc" || Op == "dec";
  if (!Suffix || (IntegerOnly && isFloat(Elem)) ||
      (UnsignedOnly && (isFloat(Elem) || isSigned(Elem))))
    Call.C.typingError(Call.ArgNodes[0],
                       "cuda.atomic." + Python + "() is not supported on " + Array.T.str() +
                           (UnsignedOnly ? ": it needs uint32 or uint64 elements"
                            : IntegerOnly ? ": it needs int32, int64, uint32 or uint64 elements"
                                          : ": it needs int32, int64, uint32, uint64, float32 or "
                                            "float64 elements"));
  if (!Call.Args[2].T.isScalar())
    Call.C.typingError(Call.ArgNodes[2], "the value of cuda.atomic." + Python +
                                             "() must be a number, not " + Call.Args[2].T.str());
  Value *Ptr = Call.C.elementPointer(Array, Call.ArgNodes[1], Call.Args[1], Call.ArgNodes[0]);
  if (!Call.C.emitting())
    return CValue(Type::scalar(Elem));
  Value *V = Call.C.convert(Call.Args[2], Type::scalar(Elem), Call.ArgNodes[2]).scalar();
  return Call.C.makeScalar(Elem, Call.C.callMarker("atomic." + Op + "." + Suffix,
                                                   Call.C.llvmType(Elem), {Ptr, V}));
}

CValue atomicAdd(IntrinsicCall &Call) { return atomicOp(Call, "add", "add"); }
CValue atomicSub(IntrinsicCall &Call) { return atomicOp(Call, "sub", "sub"); }
CValue atomicAnd(IntrinsicCall &Call) { return atomicOp(Call, "and_", "and"); }
CValue atomicOr(IntrinsicCall &Call) { return atomicOp(Call, "or_", "or"); }
CValue atomicXor(IntrinsicCall &Call) { return atomicOp(Call, "xor", "xor"); }
CValue atomicMax(IntrinsicCall &Call) { return atomicOp(Call, "max", "max"); }
CValue atomicMin(IntrinsicCall &Call) { return atomicOp(Call, "min", "min"); }
CValue atomicInc(IntrinsicCall &Call) { return atomicOp(Call, "inc", "inc"); }
CValue atomicDec(IntrinsicCall &Call) { return atomicOp(Call, "dec", "dec"); }
CValue atomicExch(IntrinsicCall &Call) { return atomicOp(Call, "exch", "exch"); }

// compare_and_swap(ary, old, val) works on ary[0]; cas(ary, idx, old, val).
CValue atomicCompareAndSwap(IntrinsicCall &Call, bool Indexed) {
  std::string Python = Indexed ? "cas" : "compare_and_swap";
  if (Indexed)
    bindArguments(Call, "cuda.atomic.cas", {"ary", "idx", "old", "val"}, 4);
  else
    bindArguments(Call, "cuda.atomic.compare_and_swap", {"ary", "old", "val"}, 3);
  const CValue &Array = Call.Args[0];
  if (!Array.T.isArray() || Array.T.ReadOnly || !isInteger(Array.T.Elem) || !suffixOf(Array.T.Elem))
    Call.C.typingError(Call.ArgNodes[0], "cuda.atomic." + Python +
                                             "() needs a writable array of int32, int64, uint32 "
                                             "or uint64, not " + Array.T.str());
  size_t First = Indexed ? 2 : 1;
  CValue Zero = Call.C.makeScalar(Scalar::Int64,
                                  Call.C.emitting() ? Call.C.builder().getInt64(0) : nullptr);
  Zero.ConstInt = 0;
  CValue Index = Indexed ? Call.Args[1] : Zero;
  if (!Indexed && Array.T.NDim != 1)
    Call.C.typingError(Call.ArgNodes[0], "cuda.atomic.compare_and_swap() needs a 1-D array");
  Value *Ptr = Call.C.elementPointer(Array, Call.ArgNodes[Indexed ? 1 : 0], Index);
  Scalar Elem = Array.T.Elem;
  if (!Call.C.emitting())
    return CValue(Type::scalar(Elem));
  Value *Old = Call.C.convert(Call.Args[First], Type::scalar(Elem), Call.ArgNodes[First]).scalar();
  Value *New = Call.C.convert(Call.Args[First + 1], Type::scalar(Elem), Call.ArgNodes[First + 1]).scalar();
  return Call.C.makeScalar(Elem, Call.C.callMarker(std::string("atomic.cas.") + suffixOf(Elem),
                                                   Call.C.llvmType(Elem), {Ptr, Old, New}));
}
CValue atomicCas(IntrinsicCall &Call) { return atomicCompareAndSwap(Call, true); }
CValue atomicCasFirst(IntrinsicCall &Call) { return atomicCompareAndSwap(Call, false); }

// --- warp collectives -------------------------------------------------------------

CValue shuffle(IntrinsicCall &Call, const std::string &Python, const std::string &Kind,
               const char *Third) {
  bindArguments(Call, "cuda." + Python, {"mask", "value", Third}, 3);
  Value *Mask = maskValue(Call, 0);
  const CValue &V = Call.Args[1];
  Scalar S = V.T.isScalar() ? V.T.Elem : Scalar::Bool;
  // 32-bit and 64-bit values; narrower integers travel as 32 bits.
  Scalar Carrier = S == Scalar::Float32 || S == Scalar::Float64 ? S
                   : (isInteger(S) && bitWidth(S) == 64)        ? Scalar::Int64
                   : isInteger(S) || S == Scalar::Bool           ? Scalar::Int32
                                                                 : Scalar::Float16;
  if (!V.T.isScalar() || Carrier == Scalar::Float16)
    Call.C.typingError(Call.ArgNodes[1], "cuda." + Python +
                                             "() shuffles integers, float32 and float64, not " +
                                             V.T.str());
  if (!Call.Args[2].T.isIntegerScalar())
    Call.C.typingError(Call.ArgNodes[2], std::string("the ") + Third + " of cuda." + Python +
                                             "() must be an integer");
  if (!Call.C.emitting())
    return CValue(V.T);
  IRBuilder<> &B = Call.C.builder();
  Value *Shuffled = Call.C.convert(V, Type::scalar(Carrier), Call.ArgNodes[1]).scalar();
  if (S == Scalar::Bool || (isInteger(S) && !isSigned(S) && bitWidth(S) < 32))
    Shuffled = B.CreateZExt(Call.C.convert(V, Type::scalar(Scalar::UInt32), Call.ArgNodes[1]).scalar(),
                         B.getInt32Ty());
  Value *Lane = B.CreateIntCast(Call.Args[2].scalar(), B.getInt32Ty(), true);
  llvm::Value *Result = Call.C.callMarker("shfl." + Kind + "." + suffixOf(Carrier),
                                          Shuffled->getType(), {Mask, Shuffled, Lane});
  return Call.C.convert(Call.C.makeScalar(Carrier, Result), V.T, Call.Node);
}
CValue cudaShflSync(IntrinsicCall &Call) { return shuffle(Call, "shfl_sync", "idx", "src_lane"); }
CValue cudaShflUpSync(IntrinsicCall &Call) { return shuffle(Call, "shfl_up_sync", "up", "delta"); }
CValue cudaShflDownSync(IntrinsicCall &Call) {
  return shuffle(Call, "shfl_down_sync", "down", "delta");
}
CValue cudaShflXorSync(IntrinsicCall &Call) {
  return shuffle(Call, "shfl_xor_sync", "xor", "lane_mask");
}

CValue vote(IntrinsicCall &Call, const std::string &Python, const std::string &Kind) {
  bindArguments(Call, "cuda." + Python, {"mask", "predicate"}, 2);
  Value *Mask = maskValue(Call, 0);
  Value *Predicate = Call.C.truth(Call.Args[1], Call.ArgNodes[1]);
  bool Ballot = Kind == "ballot";
  Scalar Result = Ballot ? Scalar::UInt32 : Scalar::Bool;
  if (!Call.C.emitting())
    return CValue(Type::scalar(Result));
  IRBuilder<> &B = Call.C.builder();
  return Call.C.makeScalar(Result, Call.C.callMarker("vote." + Kind,
                                                     Ballot ? B.getInt32Ty() : B.getInt1Ty(),
                                                     {Mask, Predicate}));
}
CValue cudaAllSync(IntrinsicCall &Call) { return vote(Call, "all_sync", "all"); }
CValue cudaAnySync(IntrinsicCall &Call) { return vote(Call, "any_sync", "any"); }
CValue cudaEqSync(IntrinsicCall &Call) { return vote(Call, "eq_sync", "uni"); }
CValue cudaBallotSync(IntrinsicCall &Call) { return vote(Call, "ballot_sync", "ballot"); }

CValue match(IntrinsicCall &Call, bool All) {
  std::string Python = All ? "match_all_sync" : "match_any_sync";
  bindArguments(Call, "cuda." + Python, {"mask", "value"}, 2);
  Value *Mask = maskValue(Call, 0);
  const CValue &V = Call.Args[1];
  if (!V.T.isIntegerScalar())
    Call.C.typingError(Call.ArgNodes[1], "cuda." + Python + "() matches integers, not " + V.T.str());
  Scalar Carrier = bitWidth(V.T.Elem) == 64 ? Scalar::Int64 : Scalar::Int32;
  Type MaskType = Type::scalar(Scalar::UInt32);
  if (!Call.C.emitting())
    return All ? CValue(Type::tuple({MaskType, Type::scalar(Scalar::Bool)})) : CValue(MaskType);
  IRBuilder<> &B = Call.C.builder();
  Value *X = Call.C.convert(V, Type::scalar(Carrier), Call.ArgNodes[1]).scalar();
  std::string Marker = std::string(All ? "match.all." : "match.any.") + suffixOf(Carrier);
  if (!All)
    return Call.C.makeScalar(Scalar::UInt32, Call.C.callMarker(Marker, B.getInt32Ty(), {Mask, X}));
  llvm::Type *Pair = StructType::get(B.getContext(), {B.getInt32Ty(), B.getInt1Ty()});
  Value *R = Call.C.callMarker(Marker, Pair, {Mask, X});
  return Call.C.makeTuple({Call.C.makeScalar(Scalar::UInt32, B.CreateExtractValue(R, 0)),
                           Call.C.makeScalar(Scalar::Bool, B.CreateExtractValue(R, 1))});
}
CValue cudaMatchAnySync(IntrinsicCall &Call) { return match(Call, false); }
CValue cudaMatchAllSync(IntrinsicCall &Call) { return match(Call, true); }

CValue laneMask(IntrinsicCall &Call, const std::string &Python, const std::string &Marker) {
  bindArguments(Call, "cuda." + Python, {}, 0);
  if (!Call.C.emitting())
    return CValue(Type::scalar(Scalar::UInt32));
  return Call.C.makeScalar(Scalar::UInt32,
                           Call.C.callMarker(Marker, Call.C.builder().getInt32Ty(), {}));
}
CValue cudaActivemask(IntrinsicCall &Call) { return laneMask(Call, "activemask", "activemask"); }
CValue cudaLanemaskLt(IntrinsicCall &Call) { return laneMask(Call, "lanemask_lt", "lanemask.lt"); }

// --- bit operations and fused arithmetic (LLVM intrinsics, no marker) -------------

CValue bitOp(IntrinsicCall &Call, const std::string &Python) {
  bindArguments(Call, "cuda." + Python, {"x"}, 1);
  const CValue &X = Call.Args[0];
  if (!X.T.isIntegerScalar())
    Call.C.typingError(Call.ArgNodes[0], "cuda." + Python + "() takes an integer, not " + X.T.str());
  if (!Call.C.emitting())
    return CValue(X.T);
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
  return Call.C.makeScalar(X.T.Elem, R);
}
CValue cudaPopc(IntrinsicCall &Call) { return bitOp(Call, "popc"); }
CValue cudaBrev(IntrinsicCall &Call) { return bitOp(Call, "brev"); }
CValue cudaClz(IntrinsicCall &Call) { return bitOp(Call, "clz"); }
CValue cudaFfs(IntrinsicCall &Call) { return bitOp(Call, "ffs"); }

// The float type of a math call: float32 stays, everything else is float64.
Scalar mathType(IntrinsicCall &Call, const std::string &Name) {
  Scalar Common = Scalar::Bool;
  bool First = true;
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    if (!Call.Args[I].T.isScalar())
      Call.C.typingError(Call.ArgNodes[I], Name + "() takes numbers, not " + Call.Args[I].T.str());
    Common = First ? Call.Args[I].T.Elem : promoteArithmetic(Common, Call.Args[I].T.Elem);
    First = false;
  }
  if (isComplex(Common))
    Call.C.typingError(Call.Node, Name + "() takes real numbers: use cmath for complex ones");
  return Common == Scalar::Float32 ? Scalar::Float32 : Scalar::Float64;
}

CValue cudaFma(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.fma", {"a", "b", "c"}, 3);
  Scalar F = mathType(Call, "cuda.fma");
  if (!Call.C.emitting())
    return CValue(Type::scalar(F));
  Value *A = Call.C.convert(Call.Args[0], Type::scalar(F), Call.ArgNodes[0]).scalar();
  Value *B2 = Call.C.convert(Call.Args[1], Type::scalar(F), Call.ArgNodes[1]).scalar();
  Value *C = Call.C.convert(Call.Args[2], Type::scalar(F), Call.ArgNodes[2]).scalar();
  return Call.C.makeScalar(F, Call.C.builder().CreateIntrinsic(Intrinsic::fma, {A->getType()}, {A, B2, C}));
}

CValue cudaSelp(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.selp", {"predicate", "a", "b"}, 3);
  Call.C.truth(Call.Args[0], Call.ArgNodes[0]);
  Type T;
  if (!unify(Call.Args[1].T, Call.Args[2].T, T) || !T.isScalar())
    Call.C.typingError(Call.Node, "the values of cuda.selp() have types " + Call.Args[1].T.str() +
                                      " and " + Call.Args[2].T.str() + ", which cannot unify");
  if (!Call.C.emitting())
    return CValue(T);
  Value *P = Call.C.truth(Call.Args[0], Call.ArgNodes[0]);
  Value *A = Call.C.convert(Call.Args[1], T, Call.ArgNodes[1]).scalar();
  Value *B2 = Call.C.convert(Call.Args[2], T, Call.ArgNodes[2]).scalar();
  return Call.C.makeScalar(T.Elem, Call.C.builder().CreateSelect(P, A, B2));
}

// --- math ----------------------------------------------------------------------------

// math.<fn>(x[, y]) -> tidal.math.<marker>.<f32|f64>
CValue mathFunction(IntrinsicCall &Call, const std::string &Python, const std::string &Marker,
                    unsigned Arity) {
  if (Arity == 1)
    bindArguments(Call, Python, {"x"}, 1);
  else
    bindArguments(Call, Python, {"x", "y"}, 2);
  Scalar F = mathType(Call, Python);
  if (!Call.C.emitting())
    return CValue(Type::scalar(F));
  std::vector<Value *> Args;
  for (size_t I = 0; I < Call.Args.size(); ++I)
    Args.push_back(Call.C.convert(Call.Args[I], Type::scalar(F), Call.ArgNodes[I]).scalar());
  return Call.C.makeScalar(F, Call.C.callMarker("math." + Marker + (F == Scalar::Float32 ? ".f32" : ".f64"),
                                                Call.C.llvmType(F), Args));
}

#define TIDAL_MATH1(Python, Marker)                                                        \
  CValue math_##Python(IntrinsicCall &Call) { return mathFunction(Call, "math." #Python, Marker, 1); }
#define TIDAL_MATH2(Python, Marker)                                                        \
  CValue math_##Python(IntrinsicCall &Call) { return mathFunction(Call, "math." #Python, Marker, 2); }
TIDAL_MATH1(sin, "sin") TIDAL_MATH1(cos, "cos") TIDAL_MATH1(tan, "tan")
TIDAL_MATH1(asin, "asin") TIDAL_MATH1(acos, "acos") TIDAL_MATH1(atan, "atan")
TIDAL_MATH1(sinh, "sinh") TIDAL_MATH1(cosh, "cosh") TIDAL_MATH1(tanh, "tanh")
TIDAL_MATH1(asinh, "asinh") TIDAL_MATH1(acosh, "acosh") TIDAL_MATH1(atanh, "atanh")
TIDAL_MATH1(exp, "exp") TIDAL_MATH1(expm1, "expm1") TIDAL_MATH1(log2, "log2")
TIDAL_MATH1(log10, "log10") TIDAL_MATH1(log1p, "log1p") TIDAL_MATH1(sqrt, "sqrt")
TIDAL_MATH1(fabs, "fabs") TIDAL_MATH1(erf, "erf") TIDAL_MATH1(erfc, "erfc")
TIDAL_MATH1(gamma, "tgamma") TIDAL_MATH1(lgamma, "lgamma")
TIDAL_MATH2(atan2, "atan2") TIDAL_MATH2(pow, "pow") TIDAL_MATH2(copysign, "copysign")
TIDAL_MATH2(fmod, "fmod") TIDAL_MATH2(hypot, "hypot")
#undef TIDAL_MATH1
#undef TIDAL_MATH2

CValue cudaCbrt(IntrinsicCall &Call) { return mathFunction(Call, "cuda.cbrt", "cbrt", 1); }

// math.log(x) and math.log(x, base)
CValue math_log(IntrinsicCall &Call) {
  bindArguments(Call, "math.log", {"x", "base"}, 1);
  if (Call.Args.size() == 1)
    return mathFunction(Call, "math.log", "log", 1);
  Scalar F = mathType(Call, "math.log");
  if (!Call.C.emitting())
    return CValue(Type::scalar(F));
  const char *Suffix = F == Scalar::Float32 ? ".f32" : ".f64";
  Value *X = Call.C.convert(Call.Args[0], Type::scalar(F), Call.ArgNodes[0]).scalar();
  Value *Base = Call.C.convert(Call.Args[1], Type::scalar(F), Call.ArgNodes[1]).scalar();
  llvm::Type *T = Call.C.llvmType(F);
  Value *LogX = Call.C.callMarker(std::string("math.log") + Suffix, T, {X});
  Value *LogBase = Call.C.callMarker(std::string("math.log") + Suffix, T, {Base});
  return Call.C.makeScalar(F, Call.C.builder().CreateFDiv(LogX, LogBase));
}

// floor, ceil, trunc return int64 in Python 3 (as Numba types them).
CValue roundingToInt(IntrinsicCall &Call, const std::string &Python, const std::string &Marker) {
  bindArguments(Call, Python, {"x"}, 1);
  const CValue &X = Call.Args[0];
  if (!X.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], Python + "() takes a number, not " + X.T.str());
  if (!isFloat(X.T.Elem))
    return Call.C.convert(X, Type::scalar(Scalar::Int64), Call.Node);
  CValue F = mathFunction(Call, Python, Marker, 1);
  return Call.C.convert(F, Type::scalar(Scalar::Int64), Call.Node);
}
CValue math_floor(IntrinsicCall &Call) { return roundingToInt(Call, "math.floor", "floor"); }
CValue math_ceil(IntrinsicCall &Call) { return roundingToInt(Call, "math.ceil", "ceil"); }
CValue math_trunc(IntrinsicCall &Call) { return roundingToInt(Call, "math.trunc", "trunc"); }

// isnan, isinf, isfinite: comparisons, no marker.
CValue classify(IntrinsicCall &Call, const std::string &Python) {
  bindArguments(Call, "math." + Python, {"x"}, 1);
  const CValue &X = Call.Args[0];
  if (!X.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "math." + Python + "() takes a number, not " + X.T.str());
  if (!Call.C.emitting())
    return CValue(Type::scalar(Scalar::Bool));
  IRBuilder<> &B = Call.C.builder();
  if (!isFloat(X.T.Elem))
    return Call.C.makeScalar(Scalar::Bool, B.getInt1(Python == "isfinite"));
  Value *V = X.scalar();
  Value *Inf = ConstantFP::getInfinity(V->getType());
  Value *Abs = B.CreateUnaryIntrinsic(Intrinsic::fabs, V);
  Value *R = Python == "isnan"   ? B.CreateFCmpUNO(V, V)
             : Python == "isinf" ? B.CreateFCmpOEQ(Abs, Inf)
                                 : B.CreateFCmpOLT(Abs, Inf);
  return Call.C.makeScalar(Scalar::Bool, R);
}
CValue math_isnan(IntrinsicCall &Call) { return classify(Call, "isnan"); }
CValue math_isinf(IntrinsicCall &Call) { return classify(Call, "isinf"); }
CValue math_isfinite(IntrinsicCall &Call) { return classify(Call, "isfinite"); }

CValue angle(IntrinsicCall &Call, const std::string &Python, double Factor) {
  bindArguments(Call, "math." + Python, {"x"}, 1);
  Scalar F = mathType(Call, "math." + Python);
  if (!Call.C.emitting())
    return CValue(Type::scalar(F));
  Value *X = Call.C.convert(Call.Args[0], Type::scalar(F), Call.ArgNodes[0]).scalar();
  return Call.C.makeScalar(F, Call.C.builder().CreateFMul(X, ConstantFP::get(X->getType(), Factor)));
}
CValue math_radians(IntrinsicCall &Call) { return angle(Call, "radians", 3.14159265358979323846 / 180.0); }
CValue math_degrees(IntrinsicCall &Call) { return angle(Call, "degrees", 180.0 / 3.14159265358979323846); }

// round(x): Python 3 rounds half to even and returns int64.
CValue builtinRound(IntrinsicCall &Call) {
  bindArguments(Call, "round", {"number"}, 1);
  const CValue &X = Call.Args[0];
  if (!X.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "round() takes a number, not " + X.T.str());
  if (!isFloat(X.T.Elem))
    return Call.C.convert(X, Type::scalar(Scalar::Int64), Call.Node);
  if (!Call.C.emitting())
    return CValue(Type::scalar(Scalar::Int64));
  Value *R = Call.C.builder().CreateUnaryIntrinsic(Intrinsic::roundeven, X.scalar());
  return Call.C.convert(Call.C.makeScalar(X.T.Elem, R), Type::scalar(Scalar::Int64), Call.Node);
}

// --- complex numbers ----------------------------------------------------------------

// complex(real=0, imag=0): complex64 from float32 parts, else complex128.
CValue builtinComplex(IntrinsicCall &Call) {
  bindArguments(Call, "complex", {"real", "imag"}, 0);
  Scalar Part = Scalar::Bool;
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    if (!Call.Args[I].T.isScalar() || isComplex(Call.Args[I].T.Elem))
      Call.C.typingError(Call.ArgNodes[I], "complex() takes real numbers, not " + Call.Args[I].T.str());
    Part = I ? promoteArithmetic(Part, Call.Args[I].T.Elem) : Call.Args[I].T.Elem;
  }
  Scalar S = Call.Args.empty() ? Scalar::Complex128 : complexOf(isFloat(Part) ? Part : Scalar::Float64);
  if (!Call.C.emitting())
    return CValue(Type::scalar(S));
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
  const CValue &Z = Call.Args[0];
  if (!Z.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "cmath." + Name + "() takes a number, not " + Z.T.str());
  if (isComplex(Z.T.Elem))
    return Z.T.Elem;
  return Z.T.Elem == Scalar::Float32 ? Scalar::Complex64 : Scalar::Complex128;
}

CValue cmathFunction(IntrinsicCall &Call, const std::string &Name) {
  Scalar S = cmathArgument(Call, Name);
  Scalar F = componentOf(S);
  if (!Call.C.emitting())
    return CValue(Type::scalar(Name == "phase" ? F : S));
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
CValue cmathSqrt(IntrinsicCall &Call) { return cmathFunction(Call, "sqrt"); }
CValue cmathExp(IntrinsicCall &Call) { return cmathFunction(Call, "exp"); }
CValue cmathLog(IntrinsicCall &Call) { return cmathFunction(Call, "log"); }
CValue cmathPhase(IntrinsicCall &Call) { return cmathFunction(Call, "phase"); }

// --- print ---------------------------------------------------------------------------

// print(a, b, "text"): one printf with the format Numba's CUDA print uses:
// integers %lld/%llu, floats %f, bools True/False, separated by spaces.
CValue builtinPrint(IntrinsicCall &Call) {
  for (const std::string &K : Call.Keywords)
    Call.C.unsupported(Call.Node, "print() in kernels takes no keyword arguments ('" + K + "')");
  std::string Format;
  std::vector<Value *> Values;
  IRBuilder<> &B = Call.C.builder();
  for (size_t I = 0; I < Call.Args.size(); ++I) {
    if (I)
      Format += " ";
    PyObject *ArgNode = Call.ArgNodes[I];
    if (typeName(ArgNode) == "Constant") {
      PyRef Value = PyRef::borrow(ArgNode).attr("value");
      if (PyUnicode_Check(Value.get())) {
        for (char Ch : Value.str())
          Format += Ch == '%' ? std::string("%%") : std::string(1, Ch);
        continue;
      }
    }
    const CValue &V = Call.Args[I];
    if (!V.T.isScalar())
      Call.C.typingError(ArgNode, "print() in kernels prints numbers and string literals, not " +
                                      V.T.str());
    Scalar S = V.T.Elem;
    if (isComplex(S))
      Call.C.typingError(ArgNode, "print() in kernels prints real numbers: print .real and .imag");
    if (S == Scalar::Bool) {
      Format += "%s";
      if (Call.C.emitting())
        Values.push_back(B.CreateSelect(V.scalar(), Call.C.constantString("True", "print.true"),
                                        Call.C.constantString("False", "print.false")));
    } else if (isFloat(S)) {
      Format += "%f";
      if (Call.C.emitting())
        Values.push_back(Call.C.convert(V, Type::scalar(Scalar::Float64), ArgNode).scalar());
    } else {
      Format += isSigned(S) ? "%lld" : "%llu";
      if (Call.C.emitting())
        Values.push_back(Call.C.convert(V, Type::scalar(isSigned(S) ? Scalar::Int64 : Scalar::UInt64),
                                        ArgNode).scalar());
    }
  }
  Format += "\n";
  if (Call.C.emitting()) {
    Values.insert(Values.begin(), Call.C.constantString(Format, "print.format"));
    Call.C.callMarker("print", B.getVoidTy(), Values, /*VarArg=*/true);
  }
  return CValue(Type::none());
}

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
      {"builtins.round", builtinRound},
      {"builtins.complex", builtinComplex},
      // complex math
      {"cmath.sqrt", cmathSqrt},
      {"cmath.exp", cmathExp},
      {"cmath.log", cmathLog},
      {"cmath.phase", cmathPhase},
      {"builtins.print", builtinPrint},
      // barriers and fences
      {"cuda.syncthreads", cudaSyncthreads},
      {"cuda.syncthreads_count", cudaSyncthreadsCount},
      {"cuda.syncthreads_and", cudaSyncthreadsAnd},
      {"cuda.syncthreads_or", cudaSyncthreadsOr},
      {"cuda.syncwarp", cudaSyncwarp},
      {"cuda.threadfence_block", cudaThreadfenceBlock},
      {"cuda.threadfence", cudaThreadfence},
      {"cuda.threadfence_system", cudaThreadfenceSystem},
      // memory
      {"cuda.shared.array", cudaSharedArray},
      {"cuda.local.array", cudaLocalArray},
      {"cuda.const.array_like", cudaConstArrayLike},
      // atomics
      {"cuda.atomic.add", atomicAdd},
      {"cuda.atomic.sub", atomicSub},
      {"cuda.atomic.and_", atomicAnd},
      {"cuda.atomic.or_", atomicOr},
      {"cuda.atomic.xor", atomicXor},
      {"cuda.atomic.max", atomicMax},
      {"cuda.atomic.min", atomicMin},
      {"cuda.atomic.inc", atomicInc},
      {"cuda.atomic.dec", atomicDec},
      {"cuda.atomic.exch", atomicExch},
      {"cuda.atomic.cas", atomicCas},
      {"cuda.atomic.compare_and_swap", atomicCasFirst},
      // warp collectives
      {"cuda.shfl_sync", cudaShflSync},
      {"cuda.shfl_up_sync", cudaShflUpSync},
      {"cuda.shfl_down_sync", cudaShflDownSync},
      {"cuda.shfl_xor_sync", cudaShflXorSync},
      {"cuda.all_sync", cudaAllSync},
      {"cuda.any_sync", cudaAnySync},
      {"cuda.eq_sync", cudaEqSync},
      {"cuda.ballot_sync", cudaBallotSync},
      {"cuda.match_any_sync", cudaMatchAnySync},
      {"cuda.match_all_sync", cudaMatchAllSync},
      {"cuda.activemask", cudaActivemask},
      {"cuda.lanemask_lt", cudaLanemaskLt},
      // bit operations and fused arithmetic
      {"cuda.popc", cudaPopc},
      {"cuda.brev", cudaBrev},
      {"cuda.clz", cudaClz},
      {"cuda.ffs", cudaFfs},
      {"cuda.fma", cudaFma},
      {"cuda.cbrt", cudaCbrt},
      {"cuda.selp", cudaSelp},
      // math
      {"math.sin", math_sin}, {"math.cos", math_cos}, {"math.tan", math_tan},
      {"math.asin", math_asin}, {"math.acos", math_acos}, {"math.atan", math_atan},
      {"math.atan2", math_atan2}, {"math.sinh", math_sinh}, {"math.cosh", math_cosh},
      {"math.tanh", math_tanh}, {"math.asinh", math_asinh}, {"math.acosh", math_acosh},
      {"math.atanh", math_atanh}, {"math.exp", math_exp}, {"math.expm1", math_expm1},
      {"math.log", math_log}, {"math.log2", math_log2}, {"math.log10", math_log10},
      {"math.log1p", math_log1p}, {"math.sqrt", math_sqrt}, {"math.pow", math_pow},
      {"math.fabs", math_fabs}, {"math.floor", math_floor}, {"math.ceil", math_ceil},
      {"math.trunc", math_trunc}, {"math.copysign", math_copysign}, {"math.fmod", math_fmod},
      {"math.hypot", math_hypot}, {"math.erf", math_erf}, {"math.erfc", math_erfc},
      {"math.gamma", math_gamma}, {"math.lgamma", math_lgamma}, {"math.isnan", math_isnan},
      {"math.isinf", math_isinf}, {"math.isfinite", math_isfinite},
      {"math.radians", math_radians}, {"math.degrees", math_degrees},
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

void bindArguments(IntrinsicCall &Call, const std::string &Name,
                   std::initializer_list<const char *> Params, size_t Required) {
  std::vector<std::string> Names(Params.begin(), Params.end());
  size_t Positional = Call.Args.size() - Call.Keywords.size();
  if (Positional > Names.size())
    Call.C.typingError(Call.Node, Name + "() takes at most " + std::to_string(Names.size()) +
                                      " arguments, got " + std::to_string(Positional));
  std::vector<std::optional<CValue>> Bound(Names.size());
  std::vector<PyObject *> BoundNodes(Names.size(), nullptr);
  for (size_t I = 0; I < Positional; ++I) {
    Bound[I] = Call.Args[I];
    BoundNodes[I] = Call.ArgNodes[I];
  }
  for (size_t K = 0; K < Call.Keywords.size(); ++K) {
    auto It = std::find(Names.begin(), Names.end(), Call.Keywords[K]);
    if (It == Names.end())
      Call.C.typingError(Call.ArgNodes[Positional + K],
                         Name + "() got an unexpected keyword argument '" + Call.Keywords[K] + "'");
    size_t Slot = static_cast<size_t>(It - Names.begin());
    if (Bound[Slot])
      Call.C.typingError(Call.ArgNodes[Positional + K],
                         Name + "() got multiple values for argument '" + Call.Keywords[K] + "'");
    Bound[Slot] = Call.Args[Positional + K];
    BoundNodes[Slot] = Call.ArgNodes[Positional + K];
  }
  std::vector<CValue> Args;
  std::vector<PyObject *> Nodes;
  for (size_t I = 0; I < Names.size(); ++I) {
    if (!Bound[I]) {
      if (I < Required)
        Call.C.typingError(Call.Node, Name + "() missing required argument '" + Names[I] + "'");
      break; // optional arguments after a missing one stay absent
    }
    Args.push_back(*Bound[I]);
    Nodes.push_back(BoundNodes[I]);
  }
  Call.Args = std::move(Args);
  Call.ArgNodes = std::move(Nodes);
  Call.Keywords.clear();
}

IntrinsicHandler findCallIntrinsic(const std::string &Name) {
  auto It = callTable().find(Name);
  return It == callTable().end() ? nullptr : It->second;
}

bool valueIntrinsic(FunctionCompiler &C, const std::string &Name, CValue &Out) {
  // cuda.laneid and cuda.warpsize: int32, as in Numba.
  std::string Marker = Name == "cuda.laneid" ? "laneid" : Name == "cuda.warpsize" ? "warpsize" : "";
  if (Marker.empty())
    return false;
  Out = C.makeScalar(Scalar::Int32, C.emitting() ? C.markerI32(Marker) : nullptr);
  return true;
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
