// Synchronisation: block barriers (with predicates), the warp barrier,
// memory fences and sleep.
#include "IntrinsicTable.h"

#include "llvm/IR/Intrinsics.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// A marker without arguments or result: barriers and fences.
TypedValue typeMarkerWithoutArguments(IntrinsicCall &Call) {
  bindArguments(Call, Call.Record->PythonPath, {}, 0);
  return TypedValue(Type::none());
}
TypedValue emitMarkerWithoutArguments(IntrinsicCall &Call, const Type &) {
  Call.C.callMarker(Call.Record->Marker, Call.C.builder().getVoidTy(), {});
  return TypedValue(Type::none());
}

// syncthreads_count/and/or(predicate) -> int32
TypedValue typePredicateBarrier(IntrinsicCall &Call) {
  bindArguments(Call, Call.Record->PythonPath, {"predicate"}, 1);
  Call.C.checkCondition(Call.Args[0].T, Call.ArgNodes[0]);
  return TypedValue(Type::scalar(Scalar::Int32));
}
TypedValue emitPredicateBarrier(IntrinsicCall &Call, const Type &) {
  IRBuilder<> &B = Call.C.builder();
  Value *Predicate = B.CreateZExt(Call.C.truth(Call.Args[0], Call.ArgNodes[0]), B.getInt32Ty());
  return Call.C.makeScalar(Scalar::Int32,
                           Call.C.callMarker(Call.Record->Marker, B.getInt32Ty(), {Predicate}));
}

// syncwarp(mask=0xffffffff)
TypedValue typeSyncwarp(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.syncwarp", {"mask"}, 0);
  if (!Call.Args.empty())
    expectMask(Call, 0);
  return TypedValue(Type::none());
}
TypedValue emitSyncwarp(IntrinsicCall &Call, const Type &) {
  Value *Mask = Call.Args.empty() ? Call.C.builder().getInt32(0xFFFFFFFFu) : unsigned32Value(Call, 0);
  Call.C.callMarker("syncwarp", Call.C.builder().getVoidTy(), {Mask});
  return TypedValue(Type::none());
}

// nanosleep(ns): the marker with ns as an unsigned 32-bit integer.
TypedValue typeNanosleep(IntrinsicCall &Call) {
  bindArguments(Call, "cuda.nanosleep", {"ns"}, 1);
  expectIntegerArgument(Call, 0, "the time of cuda.nanosleep(ns)");
  return TypedValue(Type::none());
}
TypedValue emitNanosleep(IntrinsicCall &Call, const Type &) {
  Call.C.callMarker(Call.Record->Marker, Call.C.builder().getVoidTy(), {unsigned32Value(Call, 0)});
  return TypedValue(Type::none());
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> synchronizationIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.syncthreads", IntrinsicKind::Function, typeMarkerWithoutArguments, emitMarkerWithoutArguments, "syncthreads",
       "Waits until every thread of the block reaches this point."},
      {"cuda.syncthreads_count", IntrinsicKind::Function, typePredicateBarrier, emitPredicateBarrier, "syncthreads.count",
       "syncthreads_count(predicate): barrier; how many threads had it true."},
      {"cuda.syncthreads_and", IntrinsicKind::Function, typePredicateBarrier, emitPredicateBarrier, "syncthreads.and",
       "syncthreads_and(predicate): barrier; 1 if every thread had it true."},
      {"cuda.syncthreads_or", IntrinsicKind::Function, typePredicateBarrier, emitPredicateBarrier, "syncthreads.or",
       "syncthreads_or(predicate): barrier; 1 if any thread had it true."},
      {"cuda.syncwarp", IntrinsicKind::Function, typeSyncwarp, emitSyncwarp, "syncwarp",
       "syncwarp(mask=0xffffffff): barrier of the lanes in mask."},
      {"cuda.threadfence_block", IntrinsicKind::Function, typeMarkerWithoutArguments, emitMarkerWithoutArguments, "threadfence.block",
       "Memory fence at block scope."},
      {"cuda.threadfence", IntrinsicKind::Function, typeMarkerWithoutArguments, emitMarkerWithoutArguments, "threadfence",
       "Memory fence at device scope."},
      {"cuda.threadfence_system", IntrinsicKind::Function, typeMarkerWithoutArguments, emitMarkerWithoutArguments, "threadfence.system",
       "Memory fence at system scope."},
      {"cuda.nanosleep", IntrinsicKind::Function, typeNanosleep, emitNanosleep, "nanosleep",
       "nanosleep(ns): suspends the thread for about ns nanoseconds (0 to 2*ns; sm_70 and up)."},
  };
  return Records;
}

} // namespace tidal::frontend
