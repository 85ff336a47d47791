// Thread indexing: cuda.threadIdx/blockIdx/blockDim/gridDim, cuda.laneid,
// cuda.warpsize (special-register markers), cuda.grid and cuda.gridsize.
#include "IntrinsicTable.h"

#include "llvm/IR/Intrinsics.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

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

// cuda.grid(ndim) and cuda.gridsize(ndim): an int64 for ndim=1, a tuple of
// ndim int64 otherwise.
TypedValue typePerAxis(IntrinsicCall &Call) {
  std::string Name = Call.Record->PythonPath;
  expectArgCount(Call, Name, 1, 1);
  int64_t NDim = Call.C.constantInt(Call.Args[0], Call.ArgNodes[0],
                                    "the argument of " + Name + "()");
  if (NDim < 1 || NDim > 3)
    Call.C.typingError(Call.ArgNodes[0], Name + "() takes 1, 2 or 3 dimensions, got " +
                                             std::to_string(NDim));
  Type Int64 = Type::scalar(Scalar::Int64);
  return TypedValue(NDim == 1 ? Int64 : Type::tuple(std::vector<Type>(NDim, Int64)));
}
TypedValue emitPerAxis(IntrinsicCall &Call, const Type &Result) {
  auto Compute = std::string(Call.Record->PythonPath) == "cuda.grid" ? globalIndex : gridExtent;
  if (!Result.isTuple())
    return Call.C.makeScalar(Scalar::Int64, Compute(Call.C, 0));
  std::vector<TypedValue> Elements;
  for (unsigned A = 0; A < Result.Elements.size(); ++A)
    Elements.push_back(Call.C.makeScalar(Scalar::Int64, Compute(Call.C, A)));
  return Call.C.makeTuple(std::move(Elements));
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> indexingIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.threadIdx", IntrinsicKind::Dim3, nullptr, nullptr, "tid",
       "The thread's index in its block (int32 .x, .y, .z)."},
      {"cuda.blockIdx", IntrinsicKind::Dim3, nullptr, nullptr, "ctaid",
       "The block's index in the grid (int32 .x, .y, .z)."},
      {"cuda.blockDim", IntrinsicKind::Dim3, nullptr, nullptr, "ntid",
       "The size of a block, in threads (int32 .x, .y, .z)."},
      {"cuda.gridDim", IntrinsicKind::Dim3, nullptr, nullptr, "nctaid",
       "The size of the grid, in blocks (int32 .x, .y, .z)."},
      {"cuda.laneid", IntrinsicKind::Value, nullptr, nullptr, "laneid",
       "The thread's lane in its warp (int32, 0..31)."},
      {"cuda.warpsize", IntrinsicKind::Value, nullptr, nullptr, "warpsize",
       "The number of threads in a warp (int32, 32)."},
      {"cuda.grid", IntrinsicKind::Function, typePerAxis, emitPerAxis, "",
       "grid(ndim): the thread's absolute index in the grid: an int64 for ndim=1, a tuple of ndim int64 otherwise."},
      {"cuda.gridsize", IntrinsicKind::Function, typePerAxis, emitPerAxis, "",
       "gridsize(ndim): the number of threads in the grid along each axis (int64)."},
  };
  return Records;
}

} // namespace tidal::frontend
