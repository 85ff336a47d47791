// TypeMap: what the typing rounds learn about one function, for emission
// to read: the type of every expression node (with its compile-time
// integer value, when known), the decisions emission would otherwise
// recompute (the type operators compute in, what a subscript reads, the
// Python object a global names), what each call resolved to (an intrinsic
// record and the order its arguments bind in, or a compiled device
// function), and each local variable's type. Keyed by the AST node, which
// the FunctionCompiler keeps alive (it holds the whole tree).
#ifndef TIDAL_FRONTEND_TYPEMAP_H
#define TIDAL_FRONTEND_TYPEMAP_H

#include "Types.h"

#include <Python.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace llvm {
class Function;
} // namespace llvm

namespace tidal::frontend {

struct IntrinsicRecord;
struct ForeignFunction; // ForeignFunctions.h

// What a subscript reads, as typing decided it.
enum class SubscriptKind : uint8_t {
  None,
  TupleElement,  // t[2]: a constant index into a tuple
  TupleRunTimeIndex, // t[i]: a run-time index into a homogeneous tuple
  FrozenMember,  // Color['red']: the Enum member (Frozen)
  RecordField,   // r['x']: the field named by a string constant
  ArrayElement,  // a[i, j]: one scalar element
  RecordElement, // a[i] of a record array: a reference to the record
  ArrayView,     // a[1:n], a[i] of a 2-D array: a view of the same memory
};

// The type of one expression node, as the last typing round left it.
// Also keyed by an augmented assignment (x += y), for its operation.
struct ExpressionType {
  Type T;
  std::optional<int64_t> ConstInt;     // a known integer value (literals, folded)
  std::vector<int64_t> TupleConstInts; // a tuple's elements, when all are known
  // Operators: the type the operands convert to before operating (one for
  // a binary or unary operator and an augmented assignment, one per
  // comparison of a chain).
  std::vector<Type> Operands;
  // A global, closure variable or attribute of a compile-time object: the
  // Python object frozen into the code (emission makes its value from it).
  PyObject *Frozen = nullptr;
  // An attribute read through an i32 marker (cuda.threadIdx.x): its name.
  std::string Marker;
  SubscriptKind Subscript = SubscriptKind::None;
  // r['x']: the field's name; p.x of a namedtuple, v.x of a vector type: the
  // field's index.
  std::string FieldName;
  std::optional<size_t> TupleField;
  // An Optional value used where its value is (OptionalValues.cpp): T is
  // the Optional, and emission unwraps it (None raises TypeError).
  bool UnwrapsOptional = false;
};

// What a call node calls.
struct CallTarget {
  // An intrinsic: its record, the result type its typing rule gave, and
  // for each parameter the rule bound, the index of the call's argument
  // (positional ones first, then keywords in source order) bound to it.
  const IntrinsicRecord *Record = nullptr;
  std::vector<size_t> ArgumentOrder;
  Type Result;
  // A device function: its specialisation (an index into the module's
  // DeviceFunctionCache::Compiled, emitted before the caller) and the
  // parameter types the arguments convert to (a declared signature's).
  static constexpr size_t NoDevice = static_cast<size_t>(-1);
  size_t Device = NoDevice;
  // A device function calling itself (recursion): the call is of the
  // function being emitted, not of an entry of the cache.
  bool SelfCall = false;
  std::vector<Type> DeviceParameters;
  // Per parameter: the default (the function's __defaults__ item) that a
  // parameter the call leaves out takes; ArgumentOrder holds Omitted there.
  static constexpr size_t Omitted = static_cast<size_t>(-1);
  std::vector<PyObject *> Defaults;
  // A function defined in the caller (InnerFunctions.cpp): per parameter,
  // the caller's variable it captures ("" for the others); ArgumentOrder
  // holds Captured there.
  static constexpr size_t Captured = static_cast<size_t>(-2);
  std::vector<std::string> Captures;
  // x.method(...) or x.attribute of an overload_method/overload_attribute
  // (tidal.extending): x is the implementation's first argument.
  bool Receiver = false;
  // A foreign function (CUDA C++ through cuda.declare_device or
  // cuda.include): the overload typing chose (ForeignFunctions.h).
  std::shared_ptr<const ForeignFunction> Foreign;
};

struct TypeMap {
  std::unordered_map<PyObject *, ExpressionType> Expressions;
  std::unordered_map<PyObject *, CallTarget> Calls;
  // Local variables and their settled types.
  std::map<std::string, Type> Variables;

  // The recorded type of Node; null when typing never reached it.
  const ExpressionType *find(PyObject *Node) const {
    auto It = Expressions.find(Node);
    return It == Expressions.end() ? nullptr : &It->second;
  }
  const CallTarget *findCall(PyObject *Node) const {
    auto It = Calls.find(Node);
    return It == Calls.end() ? nullptr : &It->second;
  }
};

} // namespace tidal::frontend

#endif
