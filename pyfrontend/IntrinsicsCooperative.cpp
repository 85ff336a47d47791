// Cooperative groups (Numba's cuda.cg): cuda.cg.this_grid() gives the grid
// group, a compile-time object (tidal.cuda's cg.GridGroup) whose sync()
// is the grid-wide barrier. A kernel that calls this_grid() is launched
// cooperatively (every block at once): the marker tidal.grid.group says so.
#include "IntrinsicTable.h"

using namespace llvm;

namespace tidal::frontend {

namespace {

// tidal.cuda's cg.GridGroup object (the intrinsics module keeps it alive).
PyObject *gridGroupObject(IntrinsicCall &Call) {
  PyRef Module = PyRef::check(PyImport_ImportModule("tidal.cuda.intrinsics"));
  PyRef Namespace = Module.attrOrNull("cg");
  PyRef Group = Namespace ? Namespace.attrOrNull("GridGroup") : PyRef();
  if (!Group)
    throw CompileError("CompileError",
                       "internal error: tidal.cuda.cg.GridGroup is missing", Call.C.location(Call.Node));
  return Group.get();
}

// cuda.cg.this_grid() -> the grid group (a compile-time object).
TypedValue typeThisGrid(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.cg.this_grid", {}, 0);
  return TypedValue(Type::pyObject(gridGroupObject(Call)));
}
TypedValue emitThisGrid(IntrinsicCall &Call, const Type &Result) {
  Call.C.callMarker(Call.Record->Marker, Call.C.builder().getVoidTy(), {});
  return TypedValue(Result);
}

// grid.sync() -> int32 0 (Numba's is cudaCGSynchronize's status, 0).
TypedValue typeGridSync(IntrinsicCall &Call) {
  bindArguments(Call, "GridGroup.sync", {}, 0);
  return TypedValue(Type::scalar(Scalar::Int32));
}
TypedValue emitGridSync(IntrinsicCall &Call, const Type &) {
  IRBuilder<> &B = Call.C.builder();
  Call.C.callMarker(Call.Record->Marker, B.getVoidTy(), {});
  return Call.C.makeScalar(Scalar::Int32, B.getInt32(0));
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> cooperativeIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.cg", IntrinsicKind::Namespace, nullptr, nullptr, "",
       "Cooperative groups: cg.this_grid()."},
      {"cuda.cg.this_grid", IntrinsicKind::Function, typeThisGrid, emitThisGrid, "grid.group",
       "this_grid(): the group of every thread of the launch; its kernel is launched "
       "cooperatively (all blocks at once)."},
      {"cuda.cg.GridGroup", IntrinsicKind::Namespace, nullptr, nullptr, "",
       "The grid group that cg.this_grid() returns."},
      {"cuda.cg.GridGroup.sync", IntrinsicKind::Function, typeGridSync, emitGridSync, "grid.sync",
       "sync(): waits until every thread of every block of the launch reaches a grid.sync()."},
  };
  return Records;
}

} // namespace tidal::frontend
