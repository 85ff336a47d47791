// TypeMap: what the typing rounds learn about one function, for emission
// to read: the type of every expression node (with its compile-time
// integer value, when known), what each call resolved to (an intrinsic
// record and the order its arguments bind in, or a compiled device
// function), and each local variable's type. Keyed by the AST node, which
// the FunctionCompiler keeps alive (it holds the whole tree).
#ifndef TIDAL_FRONTEND_TYPEMAP_H
#define TIDAL_FRONTEND_TYPEMAP_H

#include "Types.h"

#include <Python.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace llvm {
class Function;
} // namespace llvm

namespace tidal::frontend {

struct IntrinsicRecord;

// The type of one expression node, as the last typing round left it.
struct ExpressionType {
  Type T;
  std::optional<int64_t> ConstInt;     // a known integer value (literals, folded)
  std::vector<int64_t> TupleConstInts; // a tuple's elements, when all are known
};

// What a call node calls.
struct CallTarget {
  // An intrinsic: its record, the result type its typing rule gave, and
  // for each parameter the rule bound, the index of the call's argument
  // (positional ones first, then keywords in source order) bound to it.
  const IntrinsicRecord *Record = nullptr;
  std::vector<size_t> ArgumentOrder;
  Type Result;
  // A device function: the LLVM function of its specialisation and the
  // parameter types the arguments convert to (a declared signature's).
  llvm::Function *Device = nullptr;
  std::vector<Type> DeviceParameters;
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
