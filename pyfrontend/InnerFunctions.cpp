// Functions defined inside kernels and device functions: `def inner(y): ...`
// and `f = lambda y: ...`, closing over the variables around them.
//
// Numba inlines such a closure where it is called; tidal compiles it as a
// device function of its own (LLVM's O3 inlines it), which computes the same:
// 1. The definition is a compile-time object (tidal/_inner_functions.py
//    makes one Python function per definition and captures), so a variable
//    holds it, a call calls it, another device function takes it as it takes
//    any function argument (specialised on it), and a device function may
//    return it.
// 2. The variables around it that it reads at run time are its last
//    parameters (lambda lifting); each call passes their values at that
//    point, which is what a Python closure reads then. Compile-time values
//    it reads (device functions, other inner functions, integer constants
//    bound once) are frozen into it as a kernel's closure variables are.
// 3. A function that captures run-time values cannot leave the function that
//    defines it (passed to another, returned, put in a tuple): Numba's
//    "Cannot capture the non-constant value ... in a function that will
//    escape". Recursion through a closure is refused as Numba refuses it.
#include "FunctionCompiler.h"
#include "AstAccess.h"

#include <algorithm>

namespace tidal::frontend {

void registerParsedSource(PyObject *Code, const SourceInfo &Source, PyObject *Tree);

std::vector<std::string> FunctionCompiler::capturedVariables(PyObject *PyFunc) {
  std::vector<std::string> Names;
  PyRef Captures = PyRef::borrow(PyFunc).attrOrNull("__tidal_captures__");
  if (Captures && PyTuple_Check(Captures.get()))
    for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(Captures.get()); ++I)
      Names.push_back(PyRef::borrow(PyTuple_GET_ITEM(Captures.get(), I)).str());
  return Names;
}

void FunctionCompiler::rejectEscapingClosure(const TypedValue &V, PyObject *Node) {
  if (!V.T.isPyObject())
    return;
  PyObject *Object = static_cast<PyObject *>(V.T.Object);
  std::vector<std::string> Captured = capturedVariables(Object);
  if (Captured.empty())
    return;
  std::string Name = PyRef::borrow(Object).attr("__name__").str();
  typingError(Node, "Cannot capture the non-constant value associated with variable '" +
                        Captured.front() + "' in a function that will escape: '" + Name +
                        "' reads it at run time, so it can only be called in the function "
                        "that defines it (pass the value as an argument instead)");
}

TypedValue FunctionCompiler::typeInnerFunction(PyObject *Node) {
  PyRef Helper = importModule("tidal._inner_functions");
  bool IsLambda = nodeKind(Node) == "Lambda";
  std::string Name = IsLambda ? "<lambda>" : identifierField(Node, "name");
  std::string Shown = IsLambda ? "lambda" : "function '" + Name + "'";
  if (!IsLambda && PyList_GET_SIZE(field(Node, "decorator_list").get()) > 0)
    unsupported(Node, "decorators on a function defined in a kernel are not supported (define "
                      "a device function at module level with @cuda.jit(device=True))");
  PyRef Refused = PyRef::check(PyObject_CallMethod(Helper.get(), "unsupported_signature", "O", Node));
  if (!Refused.isNone())
    unsupported(Node, Shown + " defined in a kernel takes " + Refused.str() +
                          ", which kernels do not support");
  PyRef Free = PyRef::check(PyObject_CallMethod(Helper.get(), "free_names", "O", Node));
  PyRef Own = PyRef::check(PyObject_CallMethod(Helper.get(), "_own_names", "O", Node));
  std::vector<std::string> Captures;
  PyRef Bound = PyRef::steal(PyDict_New());
  bool Undefined = false;
  auto Capture = [&](const std::string &Variable) {
    if (std::find(Captures.begin(), Captures.end(), Variable) == Captures.end())
      Captures.push_back(Variable);
  };
  for (PyObject *Item : listItems(Free.get())) {
    std::string Variable = PyRef::borrow(Item).str();
    if (!IsLambda && Variable == Name)
      unsupported(Node, "function '" + Name + "' defined in a kernel calls itself: recursion "
                        "through a closure is not supported (Numba: \"Unsupported use of "
                        "op_LOAD_CLOSURE\"); make it a device function at module level");
    if (NameBindings.LocalNames.count(Variable)) {
      TypedValue V = typeLoad(Variable, Node);
      if (V.T.isUndefined()) {
        Undefined = true;
        continue;
      }
      if (V.T.isPyObject()) {
        // A compile-time object: frozen in. Another inner function's own
        // captures are read here too, for it.
        PyObject *Object = static_cast<PyObject *>(V.T.Object);
        PyDict_SetItemString(Bound.get(), Variable.c_str(), Object);
        for (const std::string &Inner : capturedVariables(Object)) {
          PyRef Key = PyRef::steal(PyUnicode_FromString(Inner.c_str()));
          if (PySet_Contains(Own.get(), Key.get()) == 1)
            unsupported(Node, Shown + " binds '" + Inner + "', which the function '" +
                                  Variable + "' it calls captures from the scope around "
                                  "both: rename one of them");
          Capture(Inner);
        }
      } else if (V.ConstInt && V.T.isScalar() &&
                 (V.T.Dtype == Scalar::Int64 || V.T.isBool())) {
        // A constant bound once (a = 2): frozen, as Numba freezes it.
        PyRef Constant = PyRef::steal(V.T.isBool() ? PyBool_FromLong(*V.ConstInt != 0)
                                                   : PyLong_FromLongLong(*V.ConstInt));
        PyDict_SetItemString(Bound.get(), Variable.c_str(), Constant.get());
      } else {
        Capture(Variable);
      }
    } else if (auto Cell = Closure.find(Variable); Cell != Closure.end()) {
      PyDict_SetItemString(Bound.get(), Variable.c_str(), Cell->second.get());
    }
  }
  if (Undefined)
    return TypedValue();
  PyRef Names = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(Captures.size())));
  for (size_t I = 0; I < Captures.size(); ++I)
    PyTuple_SET_ITEM(Names.get(), static_cast<Py_ssize_t>(I),
                     PyUnicode_FromString(Captures[I].c_str()));
  PyRef Made = PyRef::steal(PyObject_CallMethod(Helper.get(), "make", "OOsOO", Node,
                                                Globals.get(), Source.File.c_str(), Names.get(),
                                                Bound.get()));
  if (!Made) {
    if (!PyErr_ExceptionMatches(PyExc_ValueError))
      throw PythonErrorSet();
    std::string Default = takePendingErrorText("");
    typingError(Node, "the defaults of " + Shown + " defined in a kernel must be constants, "
                      "not '" + Default + "'");
  }
  PyRef Definition = PyRef::check(PyObject_CallMethod(Helper.get(), "definition", "O", Node));
  registerParsedSource(Made.attr("__code__").get(), Source, Definition.get());
  // The node's cache holds the function as long as the tree lives.
  return TypedValue(frontend::Type::pyObject(Made.get()));
}

TypedValue FunctionCompiler::typeLambda(PyObject *Node) { return typeInnerFunction(Node); }

void FunctionCompiler::typeFunctionDef(PyObject *Node) {
  TypedValue V = typeInnerFunction(Node);
  if (!V.T.isUndefined())
    typeStore(identifierField(Node, "name"), V, Node);
}

// A compile-time object: nothing to emit.
TypedValue FunctionCompiler::emitLambda(PyObject *Node) { return TypedValue(typeOf(Node).T); }

void FunctionCompiler::emitFunctionDef(PyObject *) {}

} // namespace tidal::frontend
