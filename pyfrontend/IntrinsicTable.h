// The intrinsic table: every Python name a kernel can call or read
// (cuda.grid, cuda.threadIdx, cuda.atomic.add, math.sin, len, ...) is one
// IntrinsicRecord: its Python path, what kind of object it is, the typing
// rule of a call of it, its emitter, the marker it emits, and its doc line.
// Many records share one rule and one emitter (the math functions, the
// atomics), told apart by their path and marker. The records live beside
// their rules and emitters, one file per family
// (Intrinsics<Family>.cpp); the Python objects of tidal.cuda are generated
// from the same table (tidalc --list-intrinsics).
#ifndef TIDAL_FRONTEND_INTRINSICTABLE_H
#define TIDAL_FRONTEND_INTRINSICTABLE_H

#include "FunctionCompiler.h"

#include "llvm/ADT/ArrayRef.h"

#include <ostream>

namespace tidal::frontend {

enum class IntrinsicKind {
  Function,  // called: cuda.grid(1), math.sin(x), len(a)
  Value,     // read: cuda.laneid, cuda.warpsize (an i32 marker named Marker)
  Dim3,      // .x/.y/.z read: cuda.threadIdx (i32 markers Marker.x, ...)
  Namespace, // holds functions: cuda.atomic, cuda.shared
};

struct IntrinsicRecord {
  // cuda.*: the __tidal_intrinsic__ name of the Python object; a builtin or
  // a function of a C module: "<module>.<name>" (builtins.len, math.sin);
  // a cast: "cast.<dtype>".
  const char *PythonPath;
  IntrinsicKind Kind;
  // Function: types a call (while typing) ...
  IntrinsicTypeRule TypeRule;
  // ... and emits it (after typing), from the bound, typed arguments.
  IntrinsicEmitter Emitter;
  // The marker the record emits, without "tidal." (docs/markers.md), for
  // the emitters that serve many records (math, atomics, barriers); for
  // math: the marker's stem, the type suffix is added. "" when the
  // emitter chooses its markers itself.
  const char *Marker;
  // One line for the docstring of the Python object.
  const char *Doc;
};

// The records of each family, in Intrinsics<Family>.cpp.
llvm::ArrayRef<IntrinsicRecord> indexingIntrinsics();
llvm::ArrayRef<IntrinsicRecord> builtinIntrinsics();
llvm::ArrayRef<IntrinsicRecord> synchronizationIntrinsics();
llvm::ArrayRef<IntrinsicRecord> memoryIntrinsics();
llvm::ArrayRef<IntrinsicRecord> atomicIntrinsics();
llvm::ArrayRef<IntrinsicRecord> warpIntrinsics();
llvm::ArrayRef<IntrinsicRecord> mathIntrinsics();
llvm::ArrayRef<IntrinsicRecord> complexIntrinsics();
llvm::ArrayRef<IntrinsicRecord> libdeviceIntrinsics(); // libdevice.<name>
llvm::ArrayRef<IntrinsicRecord> halfIntrinsics();      // cuda.fp16.<name>
llvm::ArrayRef<IntrinsicRecord> cooperativeIntrinsics(); // cuda.cg.<name>
llvm::ArrayRef<IntrinsicRecord> operatorIntrinsics();  // _operator.<name>
llvm::ArrayRef<IntrinsicRecord> floatPartIntrinsics(); // math.frexp, ldexp, modf, remainder
llvm::ArrayRef<IntrinsicRecord> vectorTypeIntrinsics(); // cuda.float32x4, ...
llvm::ArrayRef<IntrinsicRecord> bfloat16Intrinsics();   // cuda.bf16.<name>
llvm::ArrayRef<IntrinsicRecord> fp8Intrinsics();       // cuda.fp8.<name>
llvm::ArrayRef<IntrinsicRecord> halfConversionIntrinsics(); // cuda.fp16.__float2half_rz, ...
llvm::ArrayRef<IntrinsicRecord> pointerIntrinsics();   // cuda.carray, cuda.farray (PointerTypes.cpp)

// The record of a Python path; null when there is none.
const IntrinsicRecord *findIntrinsic(const std::string &PythonPath);

// Writes the Python module python/tidal/_intrinsic_table.py: the
// cuda.* records as (path, kind, doc) tuples.
void writePythonIntrinsicTable(std::ostream &Out);

// numba-cuda's overloads of math.trunc, ceil, floor, sqrt, log, log10, cos,
// sin, tanh, exp and exp2 for one bfloat16 argument, which give a bfloat16
// (cuda.bf16's htrunc ...; IntrinsicsBFloat16.cpp): whether the math row's
// call is one, and its value.
bool isBFloat16MathOverload(IntrinsicCall &Call);
TypedValue emitBFloat16MathOverload(IntrinsicCall &Call, const Type &Result);

// round(x, ndigits), which the round row's rule and emitter hand over to
// (IntrinsicsFloatParts.cpp).
TypedValue typeRoundToDigits(IntrinsicCall &Call);
TypedValue emitRoundToDigits(IntrinsicCall &Call, const Type &Result);

// Numba's words for a cuda.shared.array/cuda.local.array call it cannot
// type ("No implementation of function Function(<function shared.array>)
// found for signature: >>> array(shape=..., dtype=...)"), which its users
// search for; the reason in tidal's words follows it (IntrinsicsMemory.cpp).
std::string noImplementationOfArray(FunctionCompiler &C, const std::string &Python,
                                    const std::string &Shape, const TypedValue *DType,
                                    PyObject *DTypeNode);

// literal_unroll(t) outside a for loop: t (LiteralUnroll.cpp).
TypedValue typeLiteralUnrollCall(IntrinsicCall &Call);
TypedValue emitLiteralUnrollCall(IntrinsicCall &Call, const Type &Result);

// The receiver node of a call `<receiver>.<Method>(...)`; null for other
// calls (TypeCalls.cpp: i.bit_count(), typed and emitted as cuda.popc(i)).
PyObject *methodCallReceiver(PyObject *Node, const char *Method);

// Helpers that the rules and emitters of several families share
// (IntrinsicTable.cpp).
// Checks a call without keywords has Min..Max arguments.
void expectArgCount(IntrinsicCall &Call, const std::string &Name, size_t Min, size_t Max);
// The marker type suffix of an atomic or warp operand: i32, u64, f32, ...;
// null for the other types.
const char *suffixOf(Scalar S);
// Checks that an argument is an integer (What names it in the error).
void expectIntegerArgument(IntrinsicCall &Call, size_t Index, const std::string &What);
// Checks a lane mask argument (Numba takes any integer).
void expectMask(IntrinsicCall &Call, size_t Index);
// An integer argument as an unsigned i32 (masks, nanoseconds).
llvm::Value *unsigned32Value(IntrinsicCall &Call, size_t Index);

} // namespace tidal::frontend

#endif
