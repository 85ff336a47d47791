// Names and constants: literals, local and global names, values frozen
// from Python objects (numbers, tuples, NumPy arrays), attributes, tuples.
#include "FunctionCompiler.h"
#include "AstAccess.h"

#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace tidal::frontend {

// --- expressions -------------------------------------------------------------------

// A Python bool, int or float as a constant of Numba's type for it (bool,
// int64 (uint64 from 2**63 to 2**64-1), float64); nullopt for any other object. What names the value in
// the error for an int beyond int64.
std::optional<TypedValue> FunctionCompiler::pythonNumberConstant(PyObject *O, PyObject *Node,
                                                                  const std::string &What) {
  if (PyBool_Check(O)) {
    TypedValue R = makeScalar(Scalar::Bool, Emitting ? B.getInt1(O == Py_True) : nullptr);
    R.ConstInt = O == Py_True;
    return R;
  }
  if (PyLong_Check(O)) {
    int Overflow = 0;
    long long V = PyLong_AsLongLongAndOverflow(O, &Overflow);
    if (Overflow > 0) {
      // 2**63 .. 2**64-1: uint64, as Numba types it.
      unsigned long long U = PyLong_AsUnsignedLongLong(O);
      if (PyErr_Occurred()) {
        PyErr_Clear();
        typingError(Node, What + " does not fit in int64 or uint64");
      }
      return makeScalar(Scalar::UInt64, Emitting ? B.getInt64(U) : nullptr);
    }
    if (Overflow)
      typingError(Node, What + " does not fit in int64");
    TypedValue R = makeScalar(Scalar::Int64, Emitting ? B.getInt64(V) : nullptr);
    R.ConstInt = V;
    return R;
  }
  if (PyFloat_Check(O))
    return makeScalar(Scalar::Float64,
                      Emitting ? ConstantFP::get(llvm::Type::getDoubleTy(Ctx), PyFloat_AS_DOUBLE(O))
                               : nullptr);
  return std::nullopt;
}

TypedValue FunctionCompiler::visitConstant(PyObject *Node) {
  PyRef Value = field(Node, "value");
  PyObject *O = Value.get();
  if (std::optional<TypedValue> Number = pythonNumberConstant(O, Node, "integer literal"))
    return *Number;
  if (O == Py_None)
    return TypedValue(frontend::Type::none());
  if (PyUnicode_Check(O)) // only print() takes them; it reads the node itself
    return TypedValue(frontend::Type::pyObject(O));
  unsupported(Node, "constants of type '" + typeName(O) + "' are not supported in kernels");
}

TypedValue FunctionCompiler::visitName(PyObject *Node) {
  std::string Name = identifierField(Node, "id");
  if (NameBindings.LocalNames.count(Name))
    return loadVariable(Name, Node);
  return resolveGlobal(Name, Node);
}

TypedValue FunctionCompiler::resolveGlobal(const std::string &Name, PyObject *Node) {
  auto Cell = Closure.find(Name);
  if (Cell != Closure.end())
    return freezePyObject(Cell->second.get(), Node, "closure variable '" + Name + "'");
  PyObject *G = PyDict_GetItemString(Globals.get(), Name.c_str()); // borrowed
  if (G)
    return freezePyObject(G, Node, "global '" + Name + "'");
  PyRef Builtin = Builtins.attrOrNull(Name.c_str());
  if (Builtin)
    return freezePyObject(Builtin.get(), Node, "builtin '" + Name + "'");
  typingError(Node, "name '" + Name + "' is not defined");
}

// A global NumPy array: its bytes as a constant global, read through
// tidal.const.array (constant memory on the GPU), as a read-only C array.
TypedValue FunctionCompiler::constantArray(PyObject *O, PyObject *Node, const std::string &What) {
  PyRef Array = PyRef::borrow(O);
  Scalar ElementType;
  if (!scalarFromName(Array.attr("dtype").attr("name").str(), ElementType))
    unsupported(Node, What + " is an array of dtype " + Array.attr("dtype").attr("name").str() +
                          ", which kernels can't use");
  std::vector<int64_t> Shape;
  PyRef ShapeTuple = Array.attr("shape");
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(ShapeTuple.get()); ++I)
    Shape.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(ShapeTuple.get(), I)));
  TypedValue Out = makeArray(ElementType, Shape, nullptr);
  Out.T.ReadOnly = true;
  if (!Emitting)
    return Out;
  GlobalVariable *&G = ConstantArrays[O];
  if (!G) {
    PyRef Numpy = importModule("numpy");
    PyRef Contiguous = PyRef::check(PyObject_CallMethod(Numpy.get(), "ascontiguousarray", "O", O));
    PyRef Bytes = PyRef::check(PyObject_CallMethod(Contiguous.get(), "tobytes", nullptr));
    StringRef Data(PyBytes_AS_STRING(Bytes.get()), static_cast<size_t>(PyBytes_GET_SIZE(Bytes.get())));
    Constant *Init = ConstantDataArray::getRaw(Data, Data.size(), llvm::Type::getInt8Ty(Ctx));
    G = new GlobalVariable(M, Init->getType(), /*isConstant=*/true, GlobalValue::PrivateLinkage,
                           Init, "const.array");
    G->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    G->setAlignment(Align(std::max<unsigned>(16, byteSize(ElementType))));
  }
  Out = makeArray(ElementType, Shape, callMarker("const.array", B.getPtrTy(), {G}));
  Out.T.ReadOnly = true;
  return Out;
}

// Globals and closure values are frozen into the code at compile time, as
// Numba does: numbers become constants, everything else stays a
// compile-time object that attributes and calls are resolved against.
TypedValue FunctionCompiler::freezePyObject(PyObject *O, PyObject *Node, const std::string &What) {
  if (std::optional<TypedValue> Number = pythonNumberConstant(O, Node, What))
    return *Number;
  if (PyTuple_Check(O)) {
    std::vector<TypedValue> Elements;
    for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(O); ++I)
      Elements.push_back(freezePyObject(PyTuple_GET_ITEM(O, I), Node, What));
    return makeTuple(std::move(Elements));
  }
  // NumPy scalars (numpy.float32(2.5)): their dtype's value.
  PyRef DType = PyRef::borrow(O).attrOrNull("dtype");
  PyRef Item = PyRef::borrow(O).attrOrNull("item");
  if (DType && Item && !PyType_Check(O) && PyObject_HasAttrString(O, "shape")) {
    PyRef Shape = PyRef::borrow(O).attr("shape");
    if (PyTuple_Check(Shape.get()) && PyTuple_GET_SIZE(Shape.get()) == 0) {
      Scalar S;
      if (!scalarFromName(DType.attr("name").str(), S))
        unsupported(Node, What + " has an unsupported dtype " + DType.attr("name").str());
      PyRef Py = PyRef::check(PyObject_CallNoArgs(Item.get()));
      TypedValue V = freezePyObject(Py.get(), Node, What);
      return convert(V, frontend::Type::scalar(S), Node);
    }
  }
  if (typeName(O) == "ndarray")
    return constantArray(O, Node, What);
  if (PyObject_HasAttrString(O, "__tidal_intrinsic__"))
    if (const char *Marker = valueIntrinsicMarker(intrinsicName(O)))
      return makeScalar(Scalar::Int32, Emitting ? markerI32(Marker) : nullptr);
  if (PyModule_Check(O) || PyCallable_Check(O) || PyObject_HasAttrString(O, "__tidal_intrinsic__"))
    return TypedValue(frontend::Type::pyObject(O));
  unsupported(Node, "cannot use " + What + " of type '" + typeName(O) +
                        "' in a kernel: only numbers, tuples of numbers, modules and "
                        "functions known to tidal are");
}


const RecordField &FunctionCompiler::recordField(const TypedValue &Record, const std::string &Name,
                                                 PyObject *Node) {
  const RecordField *Field = Record.T.Record->field(Name);
  if (!Field)
    typingError(Node, Record.T.str() + " has no field '" + Name + "'");
  return *Field;
}

TypedValue FunctionCompiler::loadRecordField(const TypedValue &Record, const std::string &Name,
                                             PyObject *Node) {
  const RecordField &Field = recordField(Record, Name, Node);
  if (!Field.Shape.empty()) { // r.h of a sub-array field: a C-ordered view of its bytes
    unsigned N = static_cast<unsigned>(Field.Shape.size());
    TypedValue View(frontend::Type::array(Field.Type, N, Layout::C, Record.T.ReadOnly));
    if (!Emitting)
      return View;
    View.Parts.push_back(
        B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Record.scalar(), Field.Offset, Name + ".addr"));
    for (unsigned Extent : Field.Shape)
      View.Parts.push_back(B.getInt64(Extent));
    for (unsigned D = 0; D < N; ++D) {
      uint64_t Stride = byteSize(Field.Type);
      for (unsigned Inner = D + 1; Inner < N; ++Inner)
        Stride *= Field.Shape[Inner];
      View.Parts.push_back(B.getInt64(Stride));
    }
    return View;
  }
  if (!Emitting)
    return TypedValue(frontend::Type::scalar(Field.Type));
  Value *Ptr = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Record.scalar(), Field.Offset, Name + ".addr");
  Value *V = B.CreateAlignedLoad(llvmMemoryType(Field.Type), Ptr, Align(1), Name);
  if (Field.Type == Scalar::Bool)
    V = B.CreateICmpNE(V, B.getInt8(0));
  return makeScalar(Field.Type, V);
}

void FunctionCompiler::storeRecordField(const TypedValue &Record, const std::string &Name,
                                        const TypedValue &V, PyObject *Node, PyObject *ValueNode) {
  const RecordField &Field = recordField(Record, Name, Node);
  if (Record.T.ReadOnly)
    typingError(Node, "cannot write to field '" + Name + "' of a read-only record");
  if (!Field.Shape.empty())
    unsupported(Node, "assigning to the whole array field '" + Name + "' of " + Record.T.str() +
                          " is not supported: assign its elements (r." + Name + "[i] = v)");
  if (!V.T.isScalar())
    typingError(ValueNode, "cannot store a value of type " + V.T.str() + " into field '" + Name +
                               "' of " + Record.T.str());
  if (!Emitting)
    return;
  Value *X = convert(V, frontend::Type::scalar(Field.Type), ValueNode).scalar();
  if (Field.Type == Scalar::Bool)
    X = B.CreateZExt(X, B.getInt8Ty());
  B.CreateAlignedStore(X, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Record.scalar(), Field.Offset),
                       Align(1));
}

std::optional<std::string> FunctionCompiler::recordFieldName(const TypedValue &Index) {
  if (!Index.T.isPyObject() || !PyUnicode_Check(static_cast<PyObject *>(Index.T.Object)))
    return std::nullopt;
  const char *Text = PyUnicode_AsUTF8(static_cast<PyObject *>(Index.T.Object));
  if (!Text) {
    PyErr_Clear();
    return std::nullopt;
  }
  return std::string(Text);
}

TypedValue FunctionCompiler::visitAttribute(PyObject *Node) {
  std::string Attr = identifierField(Node, "attr");
  PyRef ValueNode = field(Node, "value");
  TypedValue Base = expr(ValueNode.get());
  if (Base.T.isUndefined())
    return TypedValue();
  if (Base.T.isPyObject())
    return attributeOfObject(Base, Attr, Node);
  if (Base.T.isRecord())
    return loadRecordField(Base, Attr, Node);
  if (Base.T.isScalar() && (Attr == "real" || Attr == "imag")) {
    if (!isComplex(Base.T.Dtype)) {
      // A real number's .real is itself and its .imag is zero.
      if (Attr == "real")
        return Base;
      return convert(makeScalar(Scalar::Int64, Emitting ? B.getInt64(0) : nullptr), Base.T, Node);
    }
    Scalar Component = componentOf(Base.T.Dtype);
    return makeScalar(Component,
                      Emitting ? B.CreateExtractValue(Base.scalar(), Attr == "real" ? 0 : 1) : nullptr);
  }
  if (Base.T.isArray()) {
    unsigned N = Base.T.NDim;
    auto Dims = [&](unsigned First) {
      std::vector<TypedValue> Out;
      for (unsigned I = 0; I < N; ++I)
        Out.push_back(makeScalar(Scalar::Int64, Emitting ? Base.Parts[First + I] : nullptr));
      return makeTuple(std::move(Out));
    };
    if (Attr == "shape")
      return Dims(1);
    if (Attr == "strides")
      return Dims(1 + N);
    if (Attr == "ndim") {
      TypedValue R = makeScalar(Scalar::Int64, Emitting ? B.getInt64(N) : nullptr);
      R.ConstInt = N;
      return R;
    }
    if (Attr == "size") {
      Value *Size = Emitting ? B.getInt64(1) : nullptr;
      if (Emitting)
        for (unsigned I = 0; I < N; ++I)
          Size = I == 0 ? Base.Parts[1] : B.CreateMul(Size, Base.Parts[1 + I], "size");
      return makeScalar(Scalar::Int64, Size);
    }
    typingError(Node, "unknown attribute '" + Attr + "' of " + Base.T.str());
  }
  typingError(Node, "unknown attribute '" + Attr + "' of " + Base.T.str());
}

TypedValue FunctionCompiler::attributeOfObject(const TypedValue &Base, const std::string &Attr,
                                           PyObject *Node) {
  PyObject *O = static_cast<PyObject *>(Base.T.Object);
  std::string Intrinsic = intrinsicName(O);
  if (!Intrinsic.empty()) {
    std::string Marker = attributeIntrinsicMarker(*this, Intrinsic, Attr, Node);
    if (!Marker.empty())
      return makeScalar(Scalar::Int32, Emitting ? markerI32(Marker) : nullptr);
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
  return freezePyObject(Value.get(), Node, "attribute '" + Attr + "'");
}

TypedValue FunctionCompiler::visitTuple(PyObject *Node) {
  std::vector<TypedValue> Elements;
  bool Undefined = false;
  for (PyObject *E : listItems(field(Node, "elts").get())) {
    Elements.push_back(expr(E));
    Undefined |= Elements.back().T.isUndefined();
  }
  return Undefined ? TypedValue() : makeTuple(std::move(Elements));
}

} // namespace tidal::frontend
