// Typing of calls: the one method of numbers (conjugate), intrinsics
// (their typing rules, Intrinsics*.cpp) and device functions, whose
// specialisation for the argument types is typed here (and emitted before
// the kernel, FunctionCompiler::emitDevices); the callee is recorded in
// the type map (TypeMap::Calls) for emission.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "IntrinsicTable.h"

#include <algorithm>
#include <optional>

namespace tidal::frontend {

// The receiver node of a call `<receiver>.<Method>()`; null for other calls.
PyObject *methodCallReceiver(PyObject *Node, const char *Method) {
  PyRef FuncNode = field(Node, "func");
  if (nodeKind(FuncNode.get()) != "Attribute" || identifierField(FuncNode.get(), "attr") != Method)
    return nullptr;
  return field(FuncNode.get(), "value").get(); // the tree holds it
}

static bool isDeviceCallee(PyObject *Callee);

TypedValue FunctionCompiler::typeCall(PyObject *Node) {
  PyRef FuncNode = field(Node, "func");
  // z.conjugate(): the one method of numbers kernels call.
  if (nodeKind(FuncNode.get()) == "Attribute" &&
      identifierField(FuncNode.get(), "attr") == "conjugate") {
    TypedValue Z = typeExpression(field(FuncNode.get(), "value").get());
    if (Z.T.isUndefined())
      return TypedValue();
    if (Z.T.isArray())
      unsupported(Node, "conjugate() of an array would be a new array, which kernels cannot "
                        "allocate: conjugate its elements (a[i].conjugate())");
    if (Z.T.isScalar()) {
      if (PyList_GET_SIZE(field(Node, "args").get()) > 0)
        typingError(Node, "conjugate() takes no arguments");
      return isComplex(Z.T.Dtype) ? TypedValue(Z.T) : Z;
    }
  }
  // i.bit_count() of an integer: numba-cuda's cuda.popc(i) (the bits of the
  // two's complement: (-1).bit_count() is 64 for an int64, as numba-cuda).
  if (PyObject *Receiver = methodCallReceiver(Node, "bit_count")) {
    TypedValue I = typeExpression(Receiver);
    if (I.T.isUndefined())
      return TypedValue();
    if (I.T.isIntegerScalar()) {
      if (PyList_GET_SIZE(field(Node, "args").get()) > 0 ||
          PyList_GET_SIZE(field(Node, "keywords").get()) > 0)
        typingError(Node, "bit_count() takes no arguments");
      std::vector<TypedValue> Args{I};
      std::vector<PyObject *> ArgNodes{Receiver};
      std::vector<std::string> Keywords;
      const IntrinsicRecord *Record = findIntrinsic("cuda.popc");
      IntrinsicCall Call{*this, Node, Args, ArgNodes, Keywords, Record, {0}};
      TypedValue Typed = Record->TypeRule(Call);
      CallTarget &Target = Typing.Calls[Node];
      Target.Record = Record;
      Target.ArgumentOrder = std::move(Call.ArgumentOrder);
      Target.Result = Typed.T;
      return Typed;
    }
  }
  // a.reshape(...), a.item() of an array (ArrayMethods.cpp).
  if (std::optional<TypedValue> Method = typeArrayMethod(Node))
    return *Method;
  // a.view(dtype) of an array (TypeRecords.cpp).
  if (nodeKind(FuncNode.get()) == "Attribute" && identifierField(FuncNode.get(), "attr") == "view") {
    TypedValue Base = typeExpression(field(FuncNode.get(), "value").get());
    if (Base.T.isUndefined())
      return TypedValue();
    if (Base.T.isArray())
      return typeArrayView(Base, Node);
  }
  // x.name(...) of a value whose type has an overload_method for name.
  if (std::optional<TypedValue> Method = typeOverloadedMethodCall(Node))
    return *Method;
  TypedValue Callee = typeExpression(FuncNode.get());
  if (Callee.T.isPyObject())
    rejectListShape(static_cast<PyObject *>(Callee.T.Object), Node);
  std::vector<PyObject *> ArgNodes;
  std::vector<TypedValue> Args;
  std::vector<std::string> Keywords;
  ArgumentsKeepOptional = Callee.T.isPyObject() && isDeviceCallee(static_cast<PyObject *>(Callee.T.Object));
  bool Undefined = !typeCallArguments(Node, Args, ArgNodes, Keywords);
  if (Undefined || Callee.T.isUndefined())
    return TypedValue();
  if (!Callee.T.isPyObject())
    typingError(FuncNode.get(), "a value of type " + Callee.T.str() + " is not callable");
  return callObject(static_cast<PyObject *>(Callee.T.Object), Node, Args, ArgNodes, Keywords);
}

// The arguments of a call, positional ones first, then keywords (whose
// names go in Keywords, in source order); false when one is not typed yet.
bool FunctionCompiler::typeCallArguments(PyObject *Node, std::vector<TypedValue> &Args,
                                         std::vector<PyObject *> &ArgNodes,
                                         std::vector<std::string> &Keywords) {
  bool Undefined = false;
  // A device function takes an Optional argument as it is (OptionalValues.cpp).
  bool Keep = std::exchange(ArgumentsKeepOptional, false);
  for (PyObject *A : listItems(field(Node, "args").get())) {
    if (nodeKind(A) == "Starred") { // f(*t): t's elements (ComplexSupport.cpp)
      Undefined |= !typeStarredArgument(A, Args, ArgNodes);
      continue;
    }
    ArgNodes.push_back(A);
    KeepOptional = Keep;
    Args.push_back(typeExpression(A));
    Undefined |= Args.back().T.isUndefined();
  }
  for (PyObject *K : listItems(field(Node, "keywords").get())) {
    PyRef Name = field(K, "arg");
    PyRef Value = field(K, "value");
    if (Name.isNone())
      unsupported(K, "'**' arguments are not supported in kernel calls");
    Keywords.push_back(Name.str());
    ArgNodes.push_back(Value.get());
    KeepOptional = Keep;
    Args.push_back(typeExpression(Value.get()));
    Undefined |= Args.back().T.isUndefined();
  }
  return !Undefined;
}

// cuda.shared.array(shape=[5, 6], ...): a list, which kernels do not have,
// as the shape; Numba's words, then tidal's (use a tuple).
void FunctionCompiler::rejectListShape(PyObject *Callee, PyObject *Node) {
  std::string Path = intrinsicName(Callee);
  if (Path != "cuda.shared.array" && Path != "cuda.local.array")
    return;
  std::vector<PyObject *> Positional = listItems(field(Node, "args").get());
  PyObject *ShapeNode = Positional.size() > 0 ? Positional[0] : nullptr;
  PyObject *DTypeNode = Positional.size() > 1 ? Positional[1] : nullptr;
  for (PyObject *K : listItems(field(Node, "keywords").get())) {
    PyRef Name = field(K, "arg");
    if (!Name.isNone() && Name.str() == "shape")
      ShapeNode = field(K, "value").get();
    if (!Name.isNone() && Name.str() == "dtype")
      DTypeNode = field(K, "value").get();
  }
  if (!ShapeNode || nodeKind(ShapeNode) != "List")
    return;
  std::string Values, Element = "undefined";
  bool AllConstant = true;
  frontend::Type Unified;
  for (PyObject *E : listItems(field(ShapeNode, "elts").get())) {
    TypedValue V = typeExpression(E);
    if (V.T.isUndefined())
      return;
    frontend::Type Next;
    if (unify(Unified, V.T, Next))
      Unified = Next;
    Element = Unified.str();
    AllConstant &= V.ConstInt.has_value();
    if (V.ConstInt)
      Values += (Values.empty() ? "" : ", ") + std::to_string(*V.ConstInt);
  }
  std::optional<TypedValue> DType;
  if (DTypeNode)
    DType = typeExpression(DTypeNode);
  std::string Spelling = "list(" + Element + ")" + (AllConstant ? "<iv=[" + Values + "]>" : "");
  typingError(ShapeNode, noImplementationOfArray(*this, Path, Spelling, DType ? &*DType : nullptr,
                                                 DTypeNode) +
                             "the shape of " + Path + "() is a list, which kernels do not have: "
                             "write a tuple" + (AllConstant ? " (" + Values + ")" : ""));
}

// Numba's CPU dispatchers (and any jit wrapper like them): an object with a
// Python function as py_func that is not one of tidal's dispatchers.
static bool isCpuDispatcher(PyObject *Callee) {
  if (PyFunction_Check(Callee) || PyObject_HasAttrString(Callee, "__tidal_device__"))
    return false;
  PyRef PyFunc = PyRef::borrow(Callee).attrOrNull("py_func");
  return PyFunc && PyFunction_Check(PyFunc.get());
}

// A callee that callObject compiles as a device function.
static bool isDeviceCallee(PyObject *Callee) {
  return intrinsicName(Callee).empty() &&
         (PyObject_HasAttrString(Callee, "__tidal_device__") ||
          PyObject_HasAttrString(Callee, "__tidal_kernel__") || isCpuDispatcher(Callee));
}


// How well an argument of type From converts to a declared parameter of
// type To, as Numba ranks them: 0 the same type, 1 a safe conversion
// (NumPy's promotion of the two gives To), 2 an unsafe one (narrowing),
// 3 none.
static int conversionRank(const frontend::Type &From, const frontend::Type &To) {
  if (From == To)
    return 0;
  if (!From.isScalar() || !To.isScalar())
    return 3;
  return promoteArithmetic(From.Dtype, To.Dtype) == To.Dtype ? 1 : 2;
}

// Of a device function's declared signatures, the one a call with
// arguments of these types uses: the first with the right number of
// parameters whose worst conversion, then total, ranks best.
frontend::Signature FunctionCompiler::declaredSignatureFor(PyObject *Signatures,
                                                           const std::vector<frontend::Type> &Types,
                                                           const std::string &Name,
                                                           PyObject *Node) {
  std::optional<frontend::Signature> Best;
  std::pair<int, int> BestRank;
  size_t DeclaredParams = 0;
  for (Py_ssize_t I = 0; I < PyList_GET_SIZE(Signatures); ++I) {
    frontend::Signature Sig;
    try {
      Sig = parseSignature(PyRef::borrow(PyList_GET_ITEM(Signatures, I)).str());
    } catch (const std::invalid_argument &E) {
      typingError(Node, E.what());
    }
    DeclaredParams = Sig.Params.size();
    if (Sig.Params.size() != Types.size())
      continue;
    std::pair<int, int> Rank{0, 0};
    for (size_t P = 0; P < Types.size(); ++P) {
      int R = conversionRank(Types[P], Sig.Params[P]);
      Rank = {std::max(Rank.first, R), Rank.second + R};
    }
    if (!Best || Rank < BestRank) {
      Best = std::move(Sig);
      BestRank = Rank;
    }
  }
  if (!Best)
    typingError(Node, "device function '" + Name + "' is declared with " +
                          std::to_string(DeclaredParams) + " parameters but called with " +
                          std::to_string(Types.size()));
  return *Best;
}

TypedValue FunctionCompiler::callObject(PyObject *Callee, PyObject *Node, std::vector<TypedValue> &Args,
                                    std::vector<PyObject *> &ArgNodes,
                                    std::vector<std::string> &Keywords) {
  std::string Name = intrinsicName(Callee);
  if (Name.empty() && PyCFunction_Check(Callee)) {
    // Functions of C modules (builtins.len, math.sin, ...) are intrinsics
    // under "<module>.<name>" when the module really holds that object.
    PyObject *Self = PyCFunction_GET_SELF(Callee);
    if (Self && PyModule_Check(Self)) {
      std::string Function = PyRef::borrow(Callee).attr("__name__").str();
      PyRef Same = PyRef::borrow(Self).attrOrNull(Function.c_str());
      if (Same.get() == Callee)
        Name = std::string(PyModule_GetName(Self)) + "." + Function;
    }
  }
  // numpy.dtype('float32'), numpy.dtype('O'): a dtype made while compiling.
  if (PyType_Check(Callee) &&
      std::string(reinterpret_cast<PyTypeObject *>(Callee)->tp_name) == "numpy.dtype") {
    PyRef Arguments = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(Args.size())));
    for (size_t I = 0; I < Args.size(); ++I) {
      if (!Keywords.empty() || !Args[I].T.isPyObject())
        typingError(Node, "numpy.dtype() in a kernel takes constants (a dtype's name or type)");
      PyObject *A = static_cast<PyObject *>(Args[I].T.Object);
      Py_INCREF(A);
      PyTuple_SET_ITEM(Arguments.get(), static_cast<Py_ssize_t>(I), A);
    }
    PyObject *Made = PyObject_Call(Callee, Arguments.get(), nullptr);
    if (!Made) {
      std::string Why = takePendingErrorText("invalid dtype");
      typingError(Node, "numpy.dtype(): " + Why);
    }
    KeptAlive.push_back(PyRef::steal(Made));
    return TypedValue(frontend::Type::pyObject(Made));
  }
  if (Name.empty() && Callee == reinterpret_cast<PyObject *>(&PyRange_Type))
    Name = "builtins.range";
  if (Name.empty() && isLiteralUnroll(Callee)) // Numba's, outside a for loop
    Name = "tidal.literal_unroll";
  if (Name.empty() && PyType_Check(Callee)) {
    // int, float, bool as casts; NumPy scalar types (numpy.float32) too.
    PyTypeObject *T = reinterpret_cast<PyTypeObject *>(Callee);
    if (T == &PyLong_Type)
      Name = "builtins.int";
    else if (T == &PyFloat_Type)
      Name = "builtins.float";
    else if (T == &PyBool_Type)
      Name = "builtins.bool";
    else if (T == &PyComplex_Type)
      Name = "builtins.complex";
    else if (T == &PyTuple_Type)
      Name = "builtins.tuple";
    else if (PyObject_HasAttrString(Callee, "__module__")) {
      PyRef Module = PyRef::borrow(Callee).attr("__module__");
      Scalar S;
      std::string TypeName = T->tp_name;
      TypeName = TypeName.substr(TypeName.rfind('.') + 1);
      if (Module.str() == "numpy" && scalarFromName(TypeName, S))
        Name = std::string("cast.") + scalarName(S);
      // Numba's vector type constructors (numba.cuda.float32x4 is a class
      // of numba.cuda.stubs) are tidal's rows of the same name.
      if (Module.str() == "numba.cuda.stubs" && findIntrinsic("cuda." + TypeName))
        Name = "cuda." + TypeName;
    }
  }
  if (Name.empty() && !PyType_Check(Callee)) {
    // Numba's scalar type objects (numba.types.float32, from
    // numba.core.types) cast as tidal's do.
    PyRef Module = PyRef::borrow(reinterpret_cast<PyObject *>(Py_TYPE(Callee))).attrOrNull("__module__");
    PyRef TypeName = Module ? PyRef::borrow(Callee).attrOrNull("name") : PyRef();
    Scalar S;
    if (TypeName && PyUnicode_Check(Module.get()) && PyUnicode_Check(TypeName.get()) &&
        Module.str().rfind("numba.core.types", 0) == 0 && scalarFromName(TypeName.str(), S))
      Name = std::string("cast.") + scalarName(S);
  }
  // cffi's ffi.from_buffer(a): a pointer to a's data (PointerTypes.cpp).
  if (std::optional<TypedValue> Pointer = typeFfiCall(Callee, Node, Args, ArgNodes, Keywords))
    return *Pointer;
  // Device functions (Numba's @njit functions: below), and functions
  // defined in kernels (InnerFunctions.cpp).
  if (Name.empty() && PyObject_HasAttrString(Callee, "__tidal_inner__"))
    return callDeviceFunction(Callee, Node, Args, ArgNodes, Keywords);
  if (Name.empty() && PyObject_HasAttrString(Callee, "__tidal_device__"))
    return callDeviceFunction(Callee, Node, Args, ArgNodes, Keywords);
  if (Name.empty() && PyObject_HasAttrString(Callee, "__tidal_foreign__"))
    return callForeignFunction(Callee, Node, Args, ArgNodes, Keywords);
  // A kernel's dispatcher called from a kernel compiles its function as a
  // device function, as Numba's does; not one compiled for declared
  // signatures (void ones, as kernels are).
  if (Name.empty() && PyObject_HasAttrString(Callee, "__tidal_kernel__")) {
    // The kernel being compiled, reached again (itself, or a kernel it
    // calls calling it): a kernel is launched from the host, and as a
    // device function it would be a recursive one using the thread.
    PyRef PyFunc = PyRef::borrow(Callee).attrOrNull("py_func");
    if (PyFunc && PyFunc.get() == Devices.Kernel)
      typingError(Node, "kernel '" + PyFunc.attr("__name__").str() +
                            "' cannot call itself: kernels are launched from the host "
                            "(kernel[blocks, threads](...)), not called from device code");
    PyRef Declared = PyRef::borrow(Callee).attrOrNull("declared_signatures");
    if (Declared && PyObject_IsTrue(Declared.get()) == 1)
      typingError(Node, "a kernel compiled for declared signatures cannot be called from a "
                        "kernel: make it a device function with @cuda.jit(device=True)");
    return callDeviceFunction(Callee, Node, Args, ArgNodes, Keywords);
  }
  // A CPU dispatcher (Numba's @jit/@njit, told by its py_func): its Python
  // function compiles as a device function, as Numba compiles it for CUDA.
  if (Name.empty() && isCpuDispatcher(Callee)) {
    PyRef CanCompile = PyRef::borrow(Callee).attrOrNull("_can_compile");
    if (CanCompile && PyObject_IsTrue(CanCompile.get()) == 0)
      typingError(Node, "Untyped global name '" + sourceText(field(Node, "func").get()) +
                            "': using cpu function on device, which cannot compile it: its "
                            "explicit signature disables compiling (drop the signature, or use "
                            "@cuda.jit(device=True))");
    return callDeviceFunction(Callee, Node, Args, ArgNodes, Keywords);
  }
  if (const IntrinsicRecord *Record = findIntrinsic(Name);
      Record && Record->Kind == IntrinsicKind::Function) {
    IntrinsicCall Call{*this, Node, Args, ArgNodes, Keywords, Record, {}};
    for (size_t I = 0; I < Args.size(); ++I)
      Call.ArgumentOrder.push_back(I);
    TypedValue Typed = Record->TypeRule(Call);
    CallTarget &Target = Typing.Calls[Node];
    Target.Record = Record;
    Target.ArgumentOrder = std::move(Call.ArgumentOrder);
    Target.Result = Typed.T;
    return Typed;
  }
  // A Python function with overloads (tidal.extending.overload): the
  // implementation its typing functions give for these argument types, as
  // a device function.
  if (Name.empty() && !PyType_Check(Callee) && !PyModule_Check(Callee)) {
    PyRef Found = askExtending("_implementation", Callee, Args, Keywords, Node);
    if (Found.get() != Py_None)
      return callDeviceFunction(Found.get(), Node, Args, ArgNodes, Keywords);
  }
  std::string Shown = Name;
  if (Shown.empty()) {
    PyRef QualName = PyRef::borrow(Callee).attrOrNull("__qualname__");
    Shown = QualName ? QualName.str() : typeName(Callee);
  }
  if (PyFunction_Check(Callee))
    unsupported(Node, "call to the Python function '" + Shown + "' in a kernel: make it a "
                      "device function with @cuda.jit(device=True) (or Numba's @njit)");
  unsupported(Node, "call to unsupported function '" + Shown + "' in a kernel");
}

// Asks tidal.extending's Function (_implementation, _method_implementation
// or _attribute_implementation) for the implementation of a call of Subject
// (the overloaded function, or the method's or attribute's name) with these
// arguments: their types' texts, the keywords' names, and each argument's
// known integer value (or None), for prefer_literal. None when there is no
// overload; a device dispatcher, kept alive for the compilation; an error,
// located at Node, when the overloads' typing says so.
PyRef FunctionCompiler::askExtending(const char *Function, PyObject *Subject,
                                     const std::vector<TypedValue> &Args,
                                     const std::vector<std::string> &Keywords, PyObject *Node) {
  PyRef Extending = importModule("tidal.extending");
  PyRef Texts = PyRef::steal(PyList_New(0));
  PyRef Values = PyRef::steal(PyList_New(0));
  for (const TypedValue &A : Args) {
    PyList_Append(Texts.get(), PyRef::steal(PyUnicode_FromString(A.T.str().c_str())).get());
    PyRef Value = A.T.isScalar() && A.ConstInt
                      ? PyRef::steal(A.T.isBool() ? PyBool_FromLong(*A.ConstInt != 0)
                                                  : PyLong_FromLongLong(*A.ConstInt))
                      : PyRef::borrow(Py_None);
    PyList_Append(Values.get(), Value.get());
  }
  PyRef Names = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(Keywords.size())));
  for (size_t K = 0; K < Keywords.size(); ++K)
    PyTuple_SET_ITEM(Names.get(), static_cast<Py_ssize_t>(K),
                     PyUnicode_FromString(Keywords[K].c_str()));
  PyRef Found = PyRef::steal(PyObject_CallMethod(Extending.get(), Function, "OOOO", Subject,
                                                 Texts.get(), Names.get(), Values.get()));
  if (!Found)
    typingError(Node, takePendingErrorText("an overload's typing failed"));
  if (PyUnicode_Check(Found.get()))
    typingError(Node, Found.str());
  if (Found.get() != Py_None)
    KeptAlive.push_back(Found);
  return Found;
}

// True when tidal.extending has an overload_method or overload_attribute
// (Registry: "_METHODS" or "_ATTRIBUTES") named Name: a dictionary look-up,
// so that calls and attributes with no such overload pay nothing more.
static bool hasExtension(const char *Registry, const std::string &Name) {
  PyRef Extending = importModule("tidal.extending");
  PyRef Table = Extending.attrOrNull(Registry);
  return Table && PyDict_Check(Table.get()) && PyDict_GetItemString(Table.get(), Name.c_str());
}

// x.name(args) where an overload_method implements `name` for x's type: a
// call of the implementation with x as its first argument (its receiver).
std::optional<TypedValue> FunctionCompiler::typeOverloadedMethodCall(PyObject *Node) {
  PyRef FuncNode = field(Node, "func");
  if (nodeKind(FuncNode.get()) != "Attribute")
    return std::nullopt;
  std::string Method = identifierField(FuncNode.get(), "attr");
  if (!hasExtension("_METHODS", Method))
    return std::nullopt;
  PyRef ValueNode = field(FuncNode.get(), "value");
  TypedValue Receiver = typeExpression(ValueNode.get());
  if (Receiver.T.isUndefined())
    return TypedValue();
  if (Receiver.T.isPyObject())
    return std::nullopt;
  std::vector<TypedValue> Args{Receiver};
  std::vector<PyObject *> ArgNodes{ValueNode.get()};
  std::vector<std::string> Keywords;
  if (!typeCallArguments(Node, Args, ArgNodes, Keywords))
    return TypedValue();
  PyRef Name = PyRef::steal(PyUnicode_FromString(Method.c_str()));
  PyRef Found = askExtending("_method_implementation", Name.get(), Args, Keywords, Node);
  if (Found.get() == Py_None)
    return std::nullopt;
  TypedValue Result = callDeviceFunction(Found.get(), Node, Args, ArgNodes, Keywords);
  Typing.Calls[Node].Receiver = true;
  return Result;
}

// x.name where an overload_attribute implements `name` for x's type: a call
// of the implementation with x.
std::optional<TypedValue> FunctionCompiler::typeOverloadedAttribute(const TypedValue &Base,
                                                                    const std::string &Attr,
                                                                    PyObject *Node) {
  if (!hasExtension("_ATTRIBUTES", Attr))
    return std::nullopt;
  std::vector<TypedValue> Args{Base};
  std::vector<PyObject *> ArgNodes{field(Node, "value").get()};
  std::vector<std::string> Keywords;
  PyRef Name = PyRef::steal(PyUnicode_FromString(Attr.c_str()));
  PyRef Found = askExtending("_attribute_implementation", Name.get(), Args, Keywords, Node);
  if (Found.get() == Py_None)
    return std::nullopt;
  TypedValue Result = callDeviceFunction(Found.get(), Node, Args, ArgNodes, Keywords);
  Typing.Calls[Node].Receiver = true;
  return Result;
}

// The defaults of Function's positional parameters (its __defaults__, which
// belong to the last ones), one entry per parameter, null where none.
static std::vector<PyObject *> parameterDefaults(PyObject *Function, size_t Count) {
  std::vector<PyObject *> Out(Count, nullptr);
  PyRef Defaults = PyRef::borrow(Function).attrOrNull("__defaults__");
  if (!Defaults || !PyTuple_Check(Defaults.get()))
    return Out;
  size_t N = std::min(Count, static_cast<size_t>(PyTuple_GET_SIZE(Defaults.get())));
  for (size_t I = 0; I < N; ++I)
    Out[Count - N + I] = PyTuple_GET_ITEM(Defaults.get(), static_cast<Py_ssize_t>(I));
  return Out;
}

TypedValue FunctionCompiler::callDeviceFunction(PyObject *Device, PyObject *Node,
                                            std::vector<TypedValue> &Args,
                                            std::vector<PyObject *> &ArgNodes,
                                            std::vector<std::string> &Keywords) {
  PyRef PyFunc = PyRef::borrow(Device).attr("py_func");
  std::vector<std::string> Params = parameterNames(PyFunc.get());
  std::string Name = PyRef::borrow(PyFunc.get()).attr("__name__").str();
  // A function defined in this one: its last parameters are the variables
  // it captures, which the call passes (InnerFunctions.cpp).
  std::vector<std::string> Captured = capturedVariables(PyFunc.get());
  size_t Written = Params.size() - Captured.size();
  // Bind keywords by the Python function's parameter names.
  std::vector<std::optional<TypedValue>> Bound(Params.size());
  std::vector<PyObject *> BoundNodes(Params.size(), Node);
  std::vector<size_t> Order(Params.size());
  size_t Positional = Args.size() - Keywords.size();
  if (Positional > Written)
    typingError(Node, "device function '" + Name + "' takes " + std::to_string(Written) +
                          " arguments but " + std::to_string(Positional) + " were given");
  for (size_t I = 0; I < Positional; ++I) {
    Bound[I] = Args[I];
    BoundNodes[I] = ArgNodes[I];
    Order[I] = I;
  }
  for (size_t K = 0; K < Keywords.size(); ++K) {
    auto It = std::find(Params.begin(), Params.end(), Keywords[K]);
    if (It == Params.end() || Bound[It - Params.begin()] ||
        static_cast<size_t>(It - Params.begin()) >= Written)
      typingError(ArgNodes[Positional + K], "device function '" + Name +
                                                "' got an unexpected or repeated argument '" +
                                                Keywords[K] + "'");
    Bound[It - Params.begin()] = Args[Positional + K];
    BoundNodes[It - Params.begin()] = ArgNodes[Positional + K];
    Order[It - Params.begin()] = Positional + K;
  }
  // A parameter the call leaves out takes its default, frozen as a global
  // is (Numba's Omitted arguments): a literal integer default specialises.
  for (size_t I = Written; I < Params.size(); ++I) {
    TypedValue Value = typeLoad(Captured[I - Written], Node);
    if (Value.T.isUndefined())
      return TypedValue();
    Bound[I] = Value;
    Order[I] = CallTarget::Captured;
  }
  if (!Captured.empty()) {
    std::vector<std::string> &Names = Typing.Calls[Node].Captures;
    Names.assign(Written, "");
    Names.insert(Names.end(), Captured.begin(), Captured.end());
  }
  std::vector<PyObject *> Defaults = parameterDefaults(PyFunc.get(), Written);
  Defaults.resize(Params.size(), nullptr);
  for (size_t I = 0; I < Params.size(); ++I) {
    if (Bound[I] || !Defaults[I]) {
      Defaults[I] = nullptr;
      continue;
    }
    KeptAlive.push_back(PyRef::borrow(Defaults[I]));
    Bound[I] = typeFrozen(Defaults[I], Node, "the default of parameter '" + Params[I] + "'");
    Order[I] = CallTarget::Omitted;
  }
  std::vector<TypedValue> Actual;
  std::vector<frontend::Type> Types;
  std::vector<ParameterConstant> Constants;
  for (size_t I = 0; I < Params.size(); ++I) {
    if (!Bound[I])
      typingError(Node, "device function '" + Name + "' takes " + std::to_string(Params.size()) +
                            " arguments but " + std::to_string(Args.size()) +
                            " were given (missing '" + Params[I] + "')");
    // Compile-time objects (intrinsics, device functions, dtypes, modules)
    // pass as themselves: the specialisation is keyed on their identity.
    // Strings only print() reads, from its own argument's node.
    if (I < Written)
      rejectEscapingClosure(*Bound[I], BoundNodes[I]);
    if (Bound[I]->T.isPyObject() && PyUnicode_Check(static_cast<PyObject *>(Bound[I]->T.Object)))
      typingError(BoundNodes[I], "cannot pass a string to device function '" + Name +
                                     "' (parameter '" + Params[I] +
                                     "'): strings are only usable as print() arguments");
    Actual.push_back(*Bound[I]);
    Types.push_back(Bound[I]->T);
    // Integer and bool literals (and tuples of integers) specialise the
    // callee on their value, so that it can use them where a constant is
    // needed and prune `if flag:` on them.
    ParameterConstant Constant;
    if (Bound[I]->T.isScalar() && (isInteger(Bound[I]->T.Dtype) || Bound[I]->T.isBool()))
      Constant.Int = Bound[I]->ConstInt;
    else if (Bound[I]->T.isTuple())
      Constant.Tuple = Bound[I]->TupleConstInts;
    Constants.push_back(std::move(Constant));
  }
  // A declared signature (@cuda.jit("float32(float32)", device=True))
  // fixes the parameter and return types; arguments convert to them. With
  // several, the one the arguments convert to best (declaredSignatureFor).
  std::optional<frontend::Type> Declared;
  // (A CPU dispatcher's signatures are its CPU compilations: not read.)
  PyRef Signatures = PyObject_HasAttrString(Device, "__tidal_device__")
                         ? PyRef::borrow(Device).attrOrNull("signatures")
                         : PyRef();
  if (Signatures && PyList_Check(Signatures.get()) && PyList_GET_SIZE(Signatures.get()) > 0) {
    frontend::Signature Sig = declaredSignatureFor(Signatures.get(), Types, Name, Node);
    // A declared signature fixes the types: no literal specialisation.
    for (size_t I = 0; I < Types.size(); ++I) {
      Actual[I] = convertedType(Actual[I], Sig.Params[I], BoundNodes[I]);
      Types[I] = Sig.Params[I];
      Constants[I] = ParameterConstant();
    }
    if (Sig.HasReturn)
      Declared = Sig.Return;
  }
  // Compile (or reuse) the specialisation. One being typed is in the cache
  // already (Typing set): a call that reaches it is recursion. Literal
  // values do not specialise a function that is being typed (fib(n - 1)
  // would otherwise unroll without end).
  bool BeingTyped = false;
  for (const auto &E : Devices.Compiled)
    BeingTyped |= E.Function == PyFunc.get() && E.Typing;
  if (BeingTyped)
    for (ParameterConstant &Constant : Constants)
      Constant = ParameterConstant();
  std::optional<size_t> Found;
  for (size_t I = 0; I < Devices.Compiled.size(); ++I) {
    const DeviceFunctionCache::Entry &E = Devices.Compiled[I];
    if (E.Function == PyFunc.get() && E.ArgTypes == Types && E.Constants == Constants)
      Found = I;
  }
  if (Found && Devices.Compiled[*Found].Typing && PyFunc.get() != Function.get()) {
    // Mutual recursion: f, being typed further up, is called from g. The
    // call has f's declared return type, or the type f's returns typed so
    // far give (which f's final type must then be, TypeCalls below).
    DeviceFunctionCache::Entry &Callee = Devices.Compiled[*Found];
    std::optional<frontend::Type> Result;
    if (Declared)
      Result = *Declared;
    else if (Callee.InProgress && Callee.InProgress->HasReturnType)
      Result = Callee.InProgress->ReturnType;
    if (!Result)
      typingError(Node, "cannot type the mutually recursive call of '" + Name +
                            "': none of its returns has a type where this call is reached (put "
                            "a return that does not recurse before the recursive calls, or "
                            "declare its signature)");
    if (!Declared)
      Callee.ProvisionalReturns.push_back(*Result);
    CallTarget &Target = Typing.Calls[Node];
    Target.Result = *Result;
    Target.ArgumentOrder = std::move(Order);
    Target.Defaults = Defaults;
    Target.Device = *Found;
    Target.DeviceParameters = std::move(Types);
    return TypedValue(*Result);
  }
  if (Found && Devices.Compiled[*Found].Typing) {
    // A call of this function from itself: of its declared return type, or
    // of what its other returns have given so far (typing goes round again).
    std::optional<frontend::Type> Result;
    if (Declared)
      Result = *Declared;
    else if (HasReturnType)
      Result = ReturnType;
    if (!Result) {
      if (!FirstUntypedSelfCall)
        FirstUntypedSelfCall = Node;
      return TypedValue();
    }
    CallTarget &Target = Typing.Calls[Node];
    Target.Result = *Result;
    Target.ArgumentOrder = std::move(Order);
    Target.Defaults = Defaults;
    Target.SelfCall = true; // this function: emitCall calls F
    Target.DeviceParameters = std::move(Types);
    return TypedValue(*Result);
  }
  if (!Found) {
    Devices.InProgress.push_back(PyFunc.get());
    size_t Index = Devices.Compiled.size();
    DeviceFunctionCache::Entry Placeholder{PyFunc.get(), Types, Constants, nullptr,
                                           Declared ? *Declared : frontend::Type::none()};
    Placeholder.Typing = true;
    Devices.Compiled.push_back(std::move(Placeholder));
    DeviceFunctionCache::Entry Entry;
    try {
      auto Callee = std::make_shared<FunctionCompiler>(PyFunc.get(), M, Options, Devices);
      Devices.Compiled[Index].InProgress = Callee.get();
      Entry = Callee->typeDevice(Types, Declared ? &*Declared : nullptr, Constants);
      Entry.Compiler = std::move(Callee);
      // Its mutually recursive callers were typed with its return type as
      // it was then: it must not have changed since.
      for (const frontend::Type &Seen : Devices.Compiled[Index].ProvisionalReturns)
        if (Seen != Entry.Return)
          Entry.Compiler->typingError(Entry.Compiler->Tree.get(),
                                      "the return type of '" + Name + "' (" + Entry.Return.str() +
                                          ") differs from the type its mutually recursive calls "
                                          "were given (" + Seen.str() +
                                          "): declare its signature, or return one type");
    } catch (const CompileError &E) {
      // The error is located inside the callee; say which call led there.
      Devices.InProgress.pop_back();
      Devices.Compiled.erase(Devices.Compiled.begin() + static_cast<std::ptrdiff_t>(Index));
      SourceLocation Call = locate(Node);
      throw CompileError(E.Kind,
                         E.Message + " (in device function '" + Name + "' called at " +
                             Call.File + ":" + std::to_string(Call.Line) + ":" +
                             std::to_string(Call.Column) + ")\nDuring: resolving callee type: "
                             "type(CUDADispatcher(<function " + Name + ">))",
                         E.Where);
    }
    Devices.InProgress.pop_back();
    Devices.Compiled[Index] = std::move(Entry);
    Found = Index;
  }
  const DeviceFunctionCache::Entry &Compiled = Devices.Compiled[*Found];
  CallTarget &Target = Typing.Calls[Node];
  Target.Result = Compiled.Return;
  Target.ArgumentOrder = std::move(Order);
  Target.Defaults = std::move(Defaults);
  Target.Device = *Found;
  Target.DeviceParameters = std::move(Types);
  return TypedValue(Compiled.Return);
}

} // namespace tidal::frontend
