// Emission of names and constants: literals, local and global names,
// values frozen from Python objects (numbers, tuples, NumPy arrays),
// attributes and tuples, from what typing recorded (TypeNames.cpp).
#include "FunctionCompiler.h"
#include "CapturedArrays.h"
#include "AstAccess.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Module.h"

#include <algorithm>

using namespace llvm;

namespace tidal::frontend {

// A Python bool, int or float (typeNumber typed it) as a constant.
TypedValue FunctionCompiler::emitNumber(PyObject *O) {
  if (PyBool_Check(O))
    return makeScalar(Scalar::Bool, B.getInt1(O == Py_True));
  if (PyLong_Check(O)) {
    int Overflow = 0;
    long long V = PyLong_AsLongLongAndOverflow(O, &Overflow);
    if (Overflow > 0) // 2**63 .. 2**64-1: uint64
      return makeScalar(Scalar::UInt64, B.getInt64(PyLong_AsUnsignedLongLong(O)));
    return makeScalar(Scalar::Int64, B.getInt64(V));
  }
  if (PyComplex_Check(O)) {
    llvm::Type *Double = llvm::Type::getDoubleTy(Ctx);
    return makeScalar(Scalar::Complex128,
                      makeComplex(Scalar::Complex128,
                                  ConstantFP::get(Double, PyComplex_RealAsDouble(O)),
                                  ConstantFP::get(Double, PyComplex_ImagAsDouble(O))));
  }
  return makeScalar(Scalar::Float64,
                    ConstantFP::get(llvm::Type::getDoubleTy(Ctx), PyFloat_AS_DOUBLE(O)));
}

TypedValue FunctionCompiler::emitConstant(PyObject *Node) {
  PyRef Value = field(Node, "value");
  PyObject *O = Value.get();
  if (PyBool_Check(O) || PyLong_Check(O) || PyFloat_Check(O) || PyComplex_Check(O))
    return emitNumber(O);
  return TypedValue(typeOf(Node).T); // None, or a string (print reads its node)
}

TypedValue FunctionCompiler::emitName(PyObject *Node) {
  std::string Name = identifierField(Node, "id");
  if (NameBindings.LocalNames.count(Name))
    return emitLoad(Name, Node);
  return emitFrozen(typeOf(Node).Frozen, Node);
}

// A global NumPy array's bytes as a constant global, read through
// tidal.const.array (constant memory on the GPU), as a read-only C array.
TypedValue FunctionCompiler::emitConstantArray(PyObject *O, PyObject *Node) {
  PyRef Array = PyRef::borrow(O);
  Scalar ElementType;
  if (!scalarFromName(Array.attr("dtype").attr("name").str(), ElementType))
    internalError(Node, "a constant array of an untyped dtype");
  std::vector<int64_t> Shape;
  PyRef ShapeTuple = Array.attr("shape");
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(ShapeTuple.get()); ++I)
    Shape.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(ShapeTuple.get(), I)));
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
  TypedValue Out = makeArray(ElementType, Shape, callMarker("const.array", B.getPtrTy(), {G}));
  Out.T.ReadOnly = true;
  return Out;
}

// The value of a Python object typing froze (typeFrozen).
TypedValue FunctionCompiler::emitFrozen(PyObject *O, PyObject *Node) {
  if (!O)
    internalError(Node, "'" + sourceText(Node) + "' has no frozen object");
  if (O == Py_None)
    return TypedValue(frontend::Type::none());
  if (std::optional<TypedValue> Special = emitEnumOrNamedTuple(O, Node))
    return *Special;
  if (PyBool_Check(O) || PyLong_Check(O) || PyFloat_Check(O) || PyComplex_Check(O))
    return emitNumber(O);
  if (PyTuple_Check(O)) {
    std::vector<TypedValue> Elements;
    for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(O); ++I)
      Elements.push_back(emitFrozen(PyTuple_GET_ITEM(O, I), Node));
    return makeTuple(std::move(Elements));
  }
  // A device array: its pointer, shape and strides as constants (CapturedArrays.h).
  if (std::optional<CapturedArray> Captured = capturedArray(O)) {
    TypedValue Array(Captured->T);
    Array.Parts.push_back(B.CreateIntToPtr(B.getInt64(Captured->Address), B.getPtrTy(), "captured"));
    for (const std::vector<int64_t> *Values : {&Captured->Shape, &Captured->Strides})
      for (int64_t V : *Values)
        Array.Parts.push_back(B.getInt64(V));
    return Array;
  }
  // Dtypes, arrays of records, record scalars (EmitRecords.cpp).
  if (std::optional<TypedValue> Records = emitFrozenRecords(O, Node))
    return *Records;
  // NumPy scalars: their item, converted to their dtype.
  PyRef DType = PyRef::borrow(O).attrOrNull("dtype");
  PyRef Item = PyRef::borrow(O).attrOrNull("item");
  if (DType && Item && !PyType_Check(O) && PyObject_HasAttrString(O, "shape")) {
    PyRef Shape = PyRef::borrow(O).attr("shape");
    if (PyTuple_Check(Shape.get()) && PyTuple_GET_SIZE(Shape.get()) == 0) {
      if (std::optional<frontend::Type> Datetime = frozenDatetimeType(O)) { // its count
        PyRef Count = PyRef::check(PyObject_CallMethod(O, "astype", "s", "int64"));
        PyRef Int = PyRef::check(PyNumber_Long(Count.get()));
        TypedValue V(*Datetime);
        V.Parts.push_back(B.getInt64(PyLong_AsLongLong(Int.get())));
        return V;
      }
      Scalar S;
      if (!scalarFromName(DType.attr("name").str(), S))
        internalError(Node, "a NumPy scalar of an untyped dtype");
      PyRef Py = PyRef::check(PyObject_CallNoArgs(Item.get()));
      return convert(emitFrozen(Py.get(), Node), frontend::Type::scalar(S), Node);
    }
  }
  if (typeName(O) == "ndarray")
    return emitConstantArray(O, Node);
  if (PyObject_HasAttrString(O, "__tidal_intrinsic__"))
    if (const char *Marker = valueIntrinsicMarker(intrinsicName(O)))
      return makeScalar(Scalar::Int32, markerI32(Marker));
  return TypedValue(frontend::Type::pyObject(O));
}

TypedValue FunctionCompiler::emitAttribute(PyObject *Node) {
  std::string Attr = identifierField(Node, "attr");
  PyRef ValueNode = field(Node, "value");
  TypedValue Base = emitExpression(ValueNode.get());
  if (Typing.findCall(Node)) { // an overload_attribute's implementation
    std::vector<TypedValue> Args{Base};
    std::vector<PyObject *> ArgNodes{ValueNode.get()};
    return emitCall(Node, Args, ArgNodes);
  }
  if (Base.T.isPyObject()) {
    const ExpressionType &Typed = typeOf(Node);
    if (!Typed.Marker.empty())
      return makeScalar(Scalar::Int32, markerI32(Typed.Marker));
    return emitFrozen(Typed.Frozen, Node);
  }
  if (Base.T.isRecord())
    return emitRecordFieldLoad(Base, Attr, Node);
  if (Base.T.isEnum() && Attr == "value") { // an Enum member's value
    TypedValue Value = Base;
    Value.T = Base.T.untagged();
    return Value;
  }
  if (Base.T.isVector()) // v.x of a CUDA vector type
    return makeScalar(Base.T.Dtype,
                      B.CreateExtractValue(Base.scalar(), unsigned(*typeOf(Node).TupleField)));
  if (std::optional<size_t> Field = typeOf(Node).TupleField) // p.x of a namedtuple
    return tupleElements(Base)[*Field];
  if (Base.T.isScalar()) { // .real, .imag
    if (!isComplex(Base.T.Dtype)) {
      // A real number's .real is itself and its .imag is zero.
      if (Attr == "real")
        return Base;
      return convert(makeScalar(Scalar::Int64, B.getInt64(0)), Base.T, Node);
    }
    return makeScalar(componentOf(Base.T.Dtype),
                      B.CreateExtractValue(Base.scalar(), Attr == "real" ? 0 : 1));
  }
  if (Attr == "real" || Attr == "imag")
    return emitArrayComponent(Base, Attr, Node); // ComplexSupport.cpp
  // An array's shape, strides, ndim, size, nbytes, itemsize, dtype or T.
  unsigned N = Base.T.NDim;
  if (Attr == "dtype") // a compile-time object: nothing to emit
    return TypedValue(typeOf(Node).T);
  if (Attr == "itemsize")
    return makeScalar(Scalar::Int64, B.getInt64(Base.T.elementSize()));
  if (Attr == "T") { // shape and strides reversed; the same data
    TypedValue Transposed(typeOf(Node).T);
    Transposed.Parts.push_back(Base.Parts[0]);
    for (unsigned First : {1u, 1u + N})
      for (unsigned I = 0; I < N; ++I)
        Transposed.Parts.push_back(Base.Parts[First + N - 1 - I]);
    return Transposed;
  }
  auto Dims = [&](unsigned First) {
    std::vector<TypedValue> Out;
    for (unsigned I = 0; I < N; ++I)
      Out.push_back(makeScalar(Scalar::Int64, Base.Parts[First + I]));
    return makeTuple(std::move(Out));
  };
  if (Attr == "shape")
    return Dims(1);
  if (Attr == "strides")
    return Dims(1 + N);
  if (Attr == "ndim")
    return makeScalar(Scalar::Int64, B.getInt64(N));
  Value *Size = B.getInt64(1);
  for (unsigned I = 0; I < N; ++I)
    Size = I == 0 ? Base.Parts[1] : B.CreateMul(Size, Base.Parts[1 + I], "size");
  if (Attr == "nbytes")
    Size = B.CreateMul(Size, B.getInt64(Base.T.elementSize()), "nbytes");
  return makeScalar(Scalar::Int64, Size);
}

TypedValue FunctionCompiler::emitTuple(PyObject *Node) {
  std::vector<TypedValue> Elements;
  for (PyObject *E : listItems(field(Node, "elts").get()))
    Elements.push_back(emitExpression(E));
  return makeTuple(std::move(Elements));
}

} // namespace tidal::frontend
