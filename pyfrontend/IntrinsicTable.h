// The intrinsic table: every Python name a kernel can call or read
// (cuda.grid, cuda.threadIdx, cuda.atomic.add, math.sin, len, ...) is one
// IntrinsicRecord: its Python path, what kind of object it is, the handler
// that types and emits a call of it, the marker it emits, and its doc line.
// The records live beside their handlers, one file per family
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
  // Function: types the call and, in emitting mode, emits it.
  IntrinsicHandler Handler;
  // The marker the record emits, without "tidal." (docs/markers.md), for
  // the handlers that serve many records (math, atomics, barriers); for
  // math: the marker's stem, the type suffix is added. "" when the
  // handler chooses its markers itself.
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

// The record of a Python path; null when there is none.
const IntrinsicRecord *findIntrinsic(const std::string &PythonPath);

// Writes the Python module python/tidal/cuda/_intrinsic_table.py: the
// cuda.* records as (path, kind, doc) tuples.
void writePythonIntrinsicTable(std::ostream &Out);

// Helpers that handlers of several families share (IntrinsicTable.cpp).
// Checks a call without keywords has Min..Max arguments.
void expectArgCount(IntrinsicCall &Call, const std::string &Name, size_t Min, size_t Max);
// The marker type suffix of an atomic or warp operand: i32, u64, f32, ...;
// null for the other types.
const char *suffixOf(Scalar S);
// An integer argument as an unsigned i32 (What names it in the error).
llvm::Value *unsigned32Argument(IntrinsicCall &Call, size_t Index, const std::string &What);
// A lane mask argument as i32 (Numba takes any integer).
llvm::Value *maskValue(IntrinsicCall &Call, size_t Index);

} // namespace tidal::frontend

#endif
