// Atomics: cuda.atomic.* on array elements, through the atomic.<op>.<type>
// markers; cuda.fp16.atomicAdd on a float16 pointer, through atomic.add.f16.
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
TypedValue typeAtomicOperation(IntrinsicCall &Call) {
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
  Call.C.checkIndex(Array.T, Call.Args[1].T, Call.ArgNodes[1]);
  Call.C.convertedType(Call.Args[2], Type::scalar(ElementType), Call.ArgNodes[2]);
  return TypedValue(Type::scalar(ElementType));
}
TypedValue emitAtomicOperation(IntrinsicCall &Call, const Type &Result) {
  Scalar ElementType = Result.Dtype;
  Value *Ptr = Call.C.elementPointer(Call.Args[0], Call.ArgNodes[1], Call.Args[1], Call.ArgNodes[0]);
  Value *V = Call.C.convert(Call.Args[2], Result, Call.ArgNodes[2]).scalar();
  return Call.C.makeScalar(ElementType,
                           Call.C.callMarker(std::string(Call.Record->Marker) + "." + suffixOf(ElementType),
                                             Call.C.llvmType(ElementType), {Ptr, V}));
}

// compare_and_swap(ary, old, val) works on ary[0]; cas(ary, idx, old, val).
bool isIndexedCas(IntrinsicCall &Call) {
  return std::string(Call.Record->PythonPath) == "cuda.atomic.cas";
}
TypedValue typeAtomicCompareAndSwap(IntrinsicCall &Call) {
  bool Indexed = isIndexedCas(Call);
  std::string Python = Call.Record->PythonPath;
  if (Indexed)
    bindArguments(Call, Python, {"ary", "idx", "old", "val"}, 4);
  else
    bindArguments(Call, Python, {"ary", "old", "val"}, 3);
  const TypedValue &Array = Call.Args[0];
  if (!Array.T.isArray() || Array.T.ReadOnly || !isInteger(Array.T.Dtype) || !suffixOf(Array.T.Dtype))
    Call.C.typingError(Call.ArgNodes[0], Python +
                                             "() needs a writable array of int32, int64, uint32 "
                                             "or uint64, not " + Array.T.str());
  TypedValue Zero(Type::scalar(Scalar::Int64));
  Zero.ConstInt = 0;
  if (!Indexed && Array.T.NDim != 1)
    Call.C.typingError(Call.ArgNodes[0], "cuda.atomic.compare_and_swap() needs a 1-D array");
  Call.C.checkIndex(Array.T, (Indexed ? Call.Args[1] : Zero).T, Call.ArgNodes[Indexed ? 1 : 0]);
  return TypedValue(Type::scalar(Array.T.Dtype));
}
TypedValue emitAtomicCompareAndSwap(IntrinsicCall &Call, const Type &Result) {
  bool Indexed = isIndexedCas(Call);
  TypedValue Zero = Call.C.makeScalar(Scalar::Int64, Call.C.builder().getInt64(0));
  Zero.ConstInt = 0;
  Value *Ptr = Call.C.elementPointer(Call.Args[0], Call.ArgNodes[Indexed ? 1 : 0],
                                     Indexed ? Call.Args[1] : Zero);
  size_t First = Indexed ? 2 : 1;
  Value *Old = Call.C.convert(Call.Args[First], Result, Call.ArgNodes[First]).scalar();
  Value *New = Call.C.convert(Call.Args[First + 1], Result, Call.ArgNodes[First + 1]).scalar();
  return Call.C.makeScalar(Result.Dtype,
                           Call.C.callMarker(std::string("atomic.cas.") + suffixOf(Result.Dtype),
                                             Call.C.llvmType(Result.Dtype), {Ptr, Old, New}));
}

// cuda.fp16.atomicAdd(address, val): numba-cuda's binding of cuda_fp16.h's
// atomicAdd(__half *, __half): *address += val atomically, the old value;
// the address is a CPointer(float16) (a pointer parameter, ffi.from_buffer
// of a float16 array), val any real number, converted to float16.
TypedValue typeHalfAtomicAdd(IntrinsicCall &Call) {
  const std::string Python = Call.Record->PythonPath;
  bindArguments(Call, Python, {"address", "val"}, 2);
  const Type &Address = Call.Args[0].T;
  if (!Address.isPointer() || Address.isVoidPointer() || Address.Dtype != Scalar::Float16)
    Call.C.typingError(Call.ArgNodes[0],
                       Python + "() needs a CPointer(float16) (a pointer parameter or "
                                "ffi.from_buffer() of a float16 array), not " + Address.str());
  const Type &Value = Call.Args[1].T;
  if (!Value.isScalar() || isComplex(Value.Dtype))
    Call.C.typingError(Call.ArgNodes[1], "the value of " + Python +
                                             "() must be a real number (converted to float16), "
                                             "not " + Value.str());
  Call.C.convertedType(Call.Args[1], Type::scalar(Scalar::Float16), Call.ArgNodes[1]);
  return TypedValue(Type::scalar(Scalar::Float16));
}
TypedValue emitHalfAtomicAdd(IntrinsicCall &Call, const Type &Result) {
  Value *V = Call.C.convert(Call.Args[1], Result, Call.ArgNodes[1]).scalar();
  return Call.C.makeScalar(Scalar::Float16,
                           Call.C.callMarker("atomic.add.f16", Call.C.llvmType(Scalar::Float16),
                                             {Call.Args[0].Parts[0], V}));
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> atomicIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.atomic", IntrinsicKind::Namespace, nullptr, nullptr, "",
       "Atomic operations on array elements."},
      {"cuda.atomic.add", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.add",
       "add(ary, idx, val): ary[idx] += val atomically; returns the old value"},
      {"cuda.atomic.sub", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.sub",
       "sub(ary, idx, val): ary[idx] -= val atomically; returns the old value"},
      {"cuda.atomic.and_", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.and",
       "and_(ary, idx, val): ary[idx] &= val atomically; returns the old value"},
      {"cuda.atomic.or_", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.or",
       "or_(ary, idx, val): ary[idx] |= val atomically; returns the old value"},
      {"cuda.atomic.xor", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.xor",
       "xor(ary, idx, val): ary[idx] ^= val atomically; returns the old value"},
      {"cuda.atomic.max", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.max",
       "max(ary, idx, val): ary[idx] = max(ary[idx], val) atomically; returns the old value"},
      {"cuda.atomic.min", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.min",
       "min(ary, idx, val): ary[idx] = min(ary[idx], val) atomically; returns the old value"},
      {"cuda.atomic.nanmax", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.nanmax",
       "nanmax(ary, idx, val): max ignoring NaN (the other operand) atomically; returns the old value"},
      {"cuda.atomic.nanmin", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.nanmin",
       "nanmin(ary, idx, val): min ignoring NaN (the other operand) atomically; returns the old value"},
      {"cuda.atomic.inc", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.inc",
       "inc(ary, idx, val): wrapping increment (uint32/uint64); returns the old value"},
      {"cuda.atomic.dec", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.dec",
       "dec(ary, idx, val): wrapping decrement (uint32/uint64); returns the old value"},
      {"cuda.atomic.exch", IntrinsicKind::Function, typeAtomicOperation, emitAtomicOperation, "atomic.exch",
       "exch(ary, idx, val): stores val; returns the old value"},
      {"cuda.atomic.cas", IntrinsicKind::Function, typeAtomicCompareAndSwap, emitAtomicCompareAndSwap, "atomic.cas",
       "cas(ary, idx, old, val): stores val if ary[idx] == old; returns the old value"},
      {"cuda.atomic.compare_and_swap", IntrinsicKind::Function, typeAtomicCompareAndSwap, emitAtomicCompareAndSwap, "atomic.cas",
       "compare_and_swap(ary, old, val): cas on ary[0]"},
      {"cuda.fp16.atomicAdd", IntrinsicKind::Function, typeHalfAtomicAdd, emitHalfAtomicAdd,
       "atomic.add", "atomicAdd(address, val): *address += val on a CPointer(float16) atomically; "
                     "returns the old value"},
  };
  return Records;
}

} // namespace tidal::frontend
