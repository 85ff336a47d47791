// Atomics: cuda.atomic.* on array elements, through the atomic.<op>.<type>
// markers.
#include "IntrinsicTable.h"

#include "llvm/IR/Intrinsics.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// cuda.atomic.<op>(ary, idx, val): the old value of ary[idx], through the
// record's marker (atomic.<op>) with the element type's suffix.
TypedValue atomicOperation(IntrinsicCall &Call) {
  const std::string Python = Call.Record->PythonPath;
  const std::string Marker = Call.Record->Marker;
  bindArguments(Call, Python, {"ary", "idx", "val"}, 3);
  const TypedValue &Array = Call.Args[0];
  if (!Array.T.isArray())
    Call.C.typingError(Call.ArgNodes[0], Python + "() needs an array, not " +
                                             Array.T.str());
  if (Array.T.ReadOnly)
    Call.C.typingError(Call.ArgNodes[0], Python + "() on a read-only array");
  Scalar ElementType = Array.T.Dtype;
  const char *Suffix = suffixOf(ElementType);
  bool IntegerOnly = Marker == "atomic.and" || Marker == "atomic.or" || Marker == "atomic.xor";
  bool UnsignedOnly = Marker == "atomic.inc" || Marker == "atomic.dec";
  if (!Suffix || (IntegerOnly && isFloat(ElementType)) ||
      (UnsignedOnly && (isFloat(ElementType) || isSigned(ElementType))))
    Call.C.typingError(Call.ArgNodes[0],
                       Python + "() is not supported on " + Array.T.str() +
                           (UnsignedOnly ? ": it needs uint32 or uint64 elements"
                            : IntegerOnly ? ": it needs int32, int64, uint32 or uint64 elements"
                                          : ": it needs int32, int64, uint32, uint64, float32 or "
                                            "float64 elements"));
  if (!Call.Args[2].T.isScalar())
    Call.C.typingError(Call.ArgNodes[2], "the value of " + Python +
                                             "() must be a number, not " + Call.Args[2].T.str());
  Value *Ptr = Call.C.elementPointer(Array, Call.ArgNodes[1], Call.Args[1], Call.ArgNodes[0]);
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(ElementType));
  Value *V = Call.C.convert(Call.Args[2], Type::scalar(ElementType), Call.ArgNodes[2]).scalar();
  return Call.C.makeScalar(ElementType, Call.C.callMarker(Marker + "." + Suffix,
                                                   Call.C.llvmType(ElementType), {Ptr, V}));
}


// compare_and_swap(ary, old, val) works on ary[0]; cas(ary, idx, old, val).
TypedValue atomicCompareAndSwap(IntrinsicCall &Call, bool Indexed) {
  std::string Python = Indexed ? "cuda.atomic.cas" : "cuda.atomic.compare_and_swap";
  if (Indexed)
    bindArguments(Call, "cuda.atomic.cas", {"ary", "idx", "old", "val"}, 4);
  else
    bindArguments(Call, "cuda.atomic.compare_and_swap", {"ary", "old", "val"}, 3);
  const TypedValue &Array = Call.Args[0];
  if (!Array.T.isArray() || Array.T.ReadOnly || !isInteger(Array.T.Dtype) || !suffixOf(Array.T.Dtype))
    Call.C.typingError(Call.ArgNodes[0], Python +
                                             "() needs a writable array of int32, int64, uint32 "
                                             "or uint64, not " + Array.T.str());
  size_t First = Indexed ? 2 : 1;
  TypedValue Zero = Call.C.makeScalar(Scalar::Int64,
                                  Call.C.emitting() ? Call.C.builder().getInt64(0) : nullptr);
  Zero.ConstInt = 0;
  TypedValue Index = Indexed ? Call.Args[1] : Zero;
  if (!Indexed && Array.T.NDim != 1)
    Call.C.typingError(Call.ArgNodes[0], "cuda.atomic.compare_and_swap() needs a 1-D array");
  Value *Ptr = Call.C.elementPointer(Array, Call.ArgNodes[Indexed ? 1 : 0], Index);
  Scalar ElementType = Array.T.Dtype;
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(ElementType));
  Value *Old = Call.C.convert(Call.Args[First], Type::scalar(ElementType), Call.ArgNodes[First]).scalar();
  Value *New = Call.C.convert(Call.Args[First + 1], Type::scalar(ElementType), Call.ArgNodes[First + 1]).scalar();
  return Call.C.makeScalar(ElementType, Call.C.callMarker(std::string("atomic.cas.") + suffixOf(ElementType),
                                                   Call.C.llvmType(ElementType), {Ptr, Old, New}));
}
TypedValue atomicCas(IntrinsicCall &Call) { return atomicCompareAndSwap(Call, true); }
TypedValue atomicCasFirst(IntrinsicCall &Call) { return atomicCompareAndSwap(Call, false); }

} // namespace

llvm::ArrayRef<IntrinsicRecord> atomicIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.atomic", IntrinsicKind::Namespace, nullptr, "",
       "Atomic operations on array elements."},
      {"cuda.atomic.add", IntrinsicKind::Function, atomicOperation, "atomic.add",
       "add(ary, idx, val): ary[idx] += val atomically; returns the old value"},
      {"cuda.atomic.sub", IntrinsicKind::Function, atomicOperation, "atomic.sub",
       "sub(ary, idx, val): ary[idx] -= val atomically; returns the old value"},
      {"cuda.atomic.and_", IntrinsicKind::Function, atomicOperation, "atomic.and",
       "and_(ary, idx, val): ary[idx] &= val atomically; returns the old value"},
      {"cuda.atomic.or_", IntrinsicKind::Function, atomicOperation, "atomic.or",
       "or_(ary, idx, val): ary[idx] |= val atomically; returns the old value"},
      {"cuda.atomic.xor", IntrinsicKind::Function, atomicOperation, "atomic.xor",
       "xor(ary, idx, val): ary[idx] ^= val atomically; returns the old value"},
      {"cuda.atomic.max", IntrinsicKind::Function, atomicOperation, "atomic.max",
       "max(ary, idx, val): ary[idx] = max(ary[idx], val) atomically; returns the old value"},
      {"cuda.atomic.min", IntrinsicKind::Function, atomicOperation, "atomic.min",
       "min(ary, idx, val): ary[idx] = min(ary[idx], val) atomically; returns the old value"},
      {"cuda.atomic.inc", IntrinsicKind::Function, atomicOperation, "atomic.inc",
       "inc(ary, idx, val): wrapping increment (uint32/uint64); returns the old value"},
      {"cuda.atomic.dec", IntrinsicKind::Function, atomicOperation, "atomic.dec",
       "dec(ary, idx, val): wrapping decrement (uint32/uint64); returns the old value"},
      {"cuda.atomic.exch", IntrinsicKind::Function, atomicOperation, "atomic.exch",
       "exch(ary, idx, val): stores val; returns the old value"},
      {"cuda.atomic.cas", IntrinsicKind::Function, atomicCas, "atomic.cas",
       "cas(ary, idx, old, val): stores val if ary[idx] == old; returns the old value"},
      {"cuda.atomic.compare_and_swap", IntrinsicKind::Function, atomicCasFirst, "atomic.cas",
       "compare_and_swap(ary, old, val): cas on ary[0]"},
  };
  return Records;
}

} // namespace tidal::frontend
