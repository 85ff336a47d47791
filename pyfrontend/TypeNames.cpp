// Typing of names and constants: literals, local and global names, values
// frozen from Python objects (numbers, tuples, NumPy arrays), attributes
// (of compile-time objects, records, numbers and arrays) and tuples.
#include "FunctionCompiler.h"
#include "CapturedArrays.h"
#include "AstAccess.h"

namespace tidal::frontend {

// A Python bool, int or float as a constant of Numba's type for it (bool,
// int64 (uint64 from 2**63 to 2**64-1), float64); nullopt for any other
// object. What names the value in the error for an int beyond uint64.
std::optional<TypedValue> FunctionCompiler::typeNumber(PyObject *O, PyObject *Node,
                                                       const std::string &What) {
  if (PyBool_Check(O)) {
    TypedValue R = makeScalar(Scalar::Bool, nullptr);
    R.ConstInt = O == Py_True;
    return R;
  }
  if (PyLong_Check(O)) {
    int Overflow = 0;
    long long V = PyLong_AsLongLongAndOverflow(O, &Overflow);
    if (Overflow > 0) {
      // 2**63 .. 2**64-1: uint64, as Numba types it.
      PyLong_AsUnsignedLongLong(O);
      if (PyErr_Occurred()) {
        PyErr_Clear();
        typingError(Node, What + " does not fit in int64 or uint64");
      }
      return makeScalar(Scalar::UInt64, nullptr);
    }
    if (Overflow)
      typingError(Node, What + " does not fit in int64");
    TypedValue R = makeScalar(Scalar::Int64, nullptr);
    R.ConstInt = V;
    return R;
  }
  if (PyFloat_Check(O))
    return makeScalar(Scalar::Float64, nullptr);
  if (PyComplex_Check(O)) // 1j, 2 + 3j
    return makeScalar(Scalar::Complex128, nullptr);
  return std::nullopt;
}

TypedValue FunctionCompiler::typeConstant(PyObject *Node) {
  PyRef Value = field(Node, "value");
  PyObject *O = Value.get();
  if (std::optional<TypedValue> Number = typeNumber(O, Node, "integer literal"))
    return *Number;
  if (O == Py_None)
    return TypedValue(frontend::Type::none());
  if (PyUnicode_Check(O)) // only print() takes them; it reads the node itself
    return TypedValue(frontend::Type::pyObject(O));
  unsupported(Node, "constants of type '" + typeName(O) + "' are not supported in kernels");
}

TypedValue FunctionCompiler::typeNameNode(PyObject *Node) {
  std::string Name = identifierField(Node, "id");
  if (NameBindings.LocalNames.count(Name))
    return typeLoad(Name, Node);
  return typeGlobal(Name, Node);
}

// A global, closure variable or builtin: frozen, and recorded for emission.
TypedValue FunctionCompiler::typeGlobal(const std::string &Name, PyObject *Node) {
  PyObject *Object = nullptr;
  std::string What;
  auto Cell = Closure.find(Name);
  if (Cell != Closure.end()) {
    Object = Cell->second.get();
    What = "closure variable '" + Name + "'";
  } else if (PyObject *G = PyDict_GetItemString(Globals.get(), Name.c_str())) { // borrowed
    Object = G;
    What = "global '" + Name + "'";
  } else if (PyRef Builtin = Builtins.attrOrNull(Name.c_str())) {
    KeptAlive.push_back(Builtin);
    Object = Builtin.get();
    What = "builtin '" + Name + "'";
  } else {
    typingError(Node, "NameError: name '" + Name + "' is not defined");
  }
  TypedValue V = typeFrozen(Object, Node, What);
  Typing.Expressions[Node].Frozen = Object;
  return V;
}

// A global NumPy array: a read-only C array (emission makes its bytes a
// constant global).
TypedValue FunctionCompiler::typeConstantArray(PyObject *O, PyObject *Node,
                                               const std::string &What) {
  PyRef Array = PyRef::borrow(O);
  Scalar ElementType;
  if (!scalarFromName(Array.attr("dtype").attr("name").str(), ElementType))
    unsupported(Node, What + " is an array of dtype " + Array.attr("dtype").attr("name").str() +
                          ", which kernels can't use");
  PyRef ShapeTuple = Array.attr("shape");
  TypedValue Out(frontend::Type::array(
      ElementType, static_cast<unsigned>(PyTuple_GET_SIZE(ShapeTuple.get())), Layout::C));
  Out.T.ReadOnly = true;
  return Out;
}

// Globals and closure values are frozen into the code at compile time, as
// Numba does: numbers become constants, everything else stays a
// compile-time object that attributes and calls are resolved against.
TypedValue FunctionCompiler::typeFrozen(PyObject *O, PyObject *Node, const std::string &What) {
  if (O == Py_None) // FLAG = None: the constant None, as a literal None
    return TypedValue(frontend::Type::none());
  if (std::optional<TypedValue> Special = typeEnumOrNamedTuple(O, Node, What))
    return *Special;
  if (std::optional<TypedValue> Number = typeNumber(O, Node, What))
    return *Number;
  if (PyTuple_Check(O)) {
    std::vector<TypedValue> Elements;
    for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(O); ++I)
      Elements.push_back(typeFrozen(PyTuple_GET_ITEM(O, I), Node, What));
    return makeTuple(std::move(Elements));
  }
  // A device array (__cuda_array_interface__): by reference (CapturedArrays.h).
  try {
    if (std::optional<CapturedArray> Captured = capturedArray(O))
      return TypedValue(Captured->T);
  } catch (const std::runtime_error &Why) {
    unsupported(Node, "cannot use " + What + " (a device array) in a kernel: " + Why.what());
  }
  // Dtypes, arrays of records, record scalars (TypeRecords.cpp).
  if (std::optional<TypedValue> Records = typeFrozenRecords(O, Node))
    return *Records;
  // NumPy scalars (numpy.float32(2.5)): their dtype's value.
  PyRef DType = PyRef::borrow(O).attrOrNull("dtype");
  PyRef Item = PyRef::borrow(O).attrOrNull("item");
  if (DType && Item && !PyType_Check(O) && PyObject_HasAttrString(O, "shape")) {
    PyRef Shape = PyRef::borrow(O).attr("shape");
    if (PyTuple_Check(Shape.get()) && PyTuple_GET_SIZE(Shape.get()) == 0) {
      if (std::optional<frontend::Type> Datetime = frozenDatetimeType(O)) // Datetimes.cpp
        return TypedValue(*Datetime);
      Scalar S;
      if (!scalarFromName(DType.attr("name").str(), S))
        unsupported(Node, What + " has an unsupported dtype " + DType.attr("name").str());
      PyRef Py = PyRef::check(PyObject_CallNoArgs(Item.get()));
      TypedValue V = typeFrozen(Py.get(), Node, What);
      return convertedType(V, frontend::Type::scalar(S), Node);
    }
  }
  if (typeName(O) == "ndarray")
    return typeConstantArray(O, Node, What);
  if (PyObject_HasAttrString(O, "__tidal_intrinsic__"))
    if (valueIntrinsicMarker(intrinsicName(O)))
      return makeScalar(Scalar::Int32, nullptr);
  if (PyModule_Check(O) || PyCallable_Check(O) || PyObject_HasAttrString(O, "__tidal_intrinsic__"))
    return TypedValue(frontend::Type::pyObject(O));
  // cffi's FFI object, for ffi.from_buffer (PointerTypes.cpp).
  if (typeName(O) == "FFI" && PyObject_HasAttrString(O, "from_buffer"))
    return TypedValue(frontend::Type::pyObject(O));
  unsupported(Node, "cannot use " + What + " of type '" + typeName(O) +
                        "' in a kernel: only numbers, tuples of numbers, modules and "
                        "functions known to tidal are");
}

TypedValue FunctionCompiler::typeAttribute(PyObject *Node) {
  std::string Attr = identifierField(Node, "attr");
  PyRef ValueNode = field(Node, "value");
  TypedValue Base = typeExpression(ValueNode.get());
  if (Base.T.isUndefined())
    return TypedValue();
  if (Base.T.isPyObject())
    return typeAttributeOfObject(Base, Attr, Node);
  if (Base.T.isRecord())
    return typeRecordFieldLoad(Base, Attr, Node);
  if (Base.T.isVector()) { // v.x, v.y, v.z, v.w of a CUDA vector type
    size_t Index = std::string("xyzw").find(Attr);
    if (Attr.size() != 1 || Index == std::string::npos || Index >= Base.T.NDim)
      typingError(Node, "unknown attribute '" + Attr + "' of " + Base.T.str() + " (it has " +
                            std::string("xyzw").substr(0, Base.T.NDim) + ")");
    Typing.Expressions[Node].TupleField = Index;
    return makeScalar(Base.T.Dtype, nullptr);
  }
  if (std::optional<TypedValue> Field = typeAttributeOfTupleOrEnum(Base, Attr, Node))
    return *Field;
  if (Base.T.isScalar() && (Attr == "real" || Attr == "imag")) {
    if (!isComplex(Base.T.Dtype))
      // A real number's .real is itself and its .imag is zero.
      return Attr == "real" ? Base : TypedValue(Base.T);
    return makeScalar(componentOf(Base.T.Dtype), nullptr);
  }
  if (Base.T.isArray() && (Attr == "real" || Attr == "imag"))
    return typeArrayComponent(Base, Attr, Node); // ComplexSupport.cpp
  if (Base.T.isArray()) {
    unsigned N = Base.T.NDim;
    if (Attr == "shape" || Attr == "strides")
      return makeTuple(std::vector<TypedValue>(N, makeScalar(Scalar::Int64, nullptr)));
    if (Attr == "ndim") {
      TypedValue R = makeScalar(Scalar::Int64, nullptr);
      R.ConstInt = N;
      return R;
    }
    if (Attr == "size" || Attr == "nbytes")
      return makeScalar(Scalar::Int64, nullptr);
    if (Attr == "itemsize") {
      TypedValue R = makeScalar(Scalar::Int64, nullptr);
      R.ConstInt = Base.T.elementSize();
      return R;
    }
    if (Attr == "T") { // the transpose: a view, shape and strides reversed
      frontend::Type T = Base.T;
      T.ArrayLayout = T.ArrayLayout == Layout::C   ? Layout::F
                      : T.ArrayLayout == Layout::F ? Layout::C
                                                   : Layout::A;
      return TypedValue(T);
    }
    if (Attr == "dtype") { // the NumPy dtype, a compile-time object
      if (Base.T.hasRecordElements())
        unsupported(Node, "the dtype of a record array in a kernel (use the record's dtype "
                          "from a global)");
      frontend::Type Element = frontend::Type::scalar(Base.T.Dtype);
      Element.Unit = Base.T.Unit;
      PyRef NumPy = importModule("numpy");
      PyRef DType = PyRef::check(
          PyObject_CallMethod(NumPy.get(), "dtype", "s", Element.str().c_str()));
      KeptAlive.push_back(DType);
      Typing.Expressions[Node].Frozen = DType.get();
      return TypedValue(frontend::Type::pyObject(DType.get()));
    }
  }
  // An overload_attribute of tidal.extending (TypeCalls.cpp).
  if (std::optional<TypedValue> Extension = typeOverloadedAttribute(Base, Attr, Node))
    return *Extension;
  typingError(Node, "unknown attribute '" + Attr + "' of " + Base.T.str());
}

TypedValue FunctionCompiler::typeAttributeOfObject(const TypedValue &Base, const std::string &Attr,
                                                   PyObject *Node) {
  PyObject *O = static_cast<PyObject *>(Base.T.Object);
  std::string Intrinsic = intrinsicName(O);
  if (!Intrinsic.empty()) {
    std::string Marker = attributeIntrinsicMarker(*this, Intrinsic, Attr, Node);
    if (!Marker.empty()) {
      Typing.Expressions[Node].Marker = Marker;
      return makeScalar(Scalar::Int32, nullptr);
    }
  }
  PyRef Value = PyRef::borrow(O).attrOrNull(Attr.c_str());
  if (!Value) {
    std::string Owner = PyModule_Check(O) ? "module '" + std::string(PyModule_GetName(O)) + "'"
                                          : "'" + typeName(O) + "' object";
    typingError(Node, Owner + " has no attribute '" + Attr + "'");
  }
  // Types hold borrowed pointers: an attribute made on access (a bound
  // method such as 'abc'.upper) must outlive the compilation.
  KeptAlive.push_back(Value);
  TypedValue V = typeFrozen(Value.get(), Node, "attribute '" + Attr + "'");
  Typing.Expressions[Node].Frozen = Value.get();
  return V;
}

TypedValue FunctionCompiler::typeTuple(PyObject *Node) {
  std::vector<TypedValue> Elements;
  bool Undefined = false;
  for (PyObject *E : listItems(field(Node, "elts").get())) {
    Elements.push_back(typeKeepingOptional(E)); // Tuple(OptionalType(int64), ...)
    Undefined |= Elements.back().T.isUndefined();
    rejectEscapingClosure(Elements.back(), E);
  }
  return Undefined ? TypedValue() : makeTuple(std::move(Elements));
}

} // namespace tidal::frontend
