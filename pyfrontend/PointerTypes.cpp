// Numba's pointer types in kernels: CPointer(T) and voidptr parameters
// (docs/language.md, "Pointers"), typing and emission.
//
// A pointer is one address (TypeKind::Pointer, one `ptr` part). p[i] reads
// and writes the i-th element after it, as Numba's CPointer getitem and
// setitem do (no bounds, a negative i is before p); a voidptr cannot be
// indexed. ffi.from_buffer(a) of cffi in a kernel is the address of an
// array's data, as a CPointer of its dtype, and a pointer passes to a
// foreign function's pointer parameter (ForeignFunctions.cpp).
// cuda.carray(ptr, shape, dtype=None) and cuda.farray (numba-cuda's
// numba.cuda.np.numpy_support.carray/farray) are arrays over a pointer's
// memory, in C or Fortran order: the pointer, the shape, contiguous strides.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "IntrinsicTable.h"

#include <algorithm>

using namespace llvm;

namespace tidal::frontend {

void FunctionCompiler::checkPointerIndex(const TypedValue &Pointer, const TypedValue &Index,
                                         PyObject *IndexNode) {
  if (Pointer.T.isVoidPointer())
    typingError(IndexNode, "cannot index a void* (voidptr): its elements have no type; declare "
                           "a typed pointer such as CPointer(uint8)");
  if (!Index.T.isIntegerScalar())
    typingError(IndexNode, "a pointer (" + Pointer.T.str() + ") is indexed by one integer, not " +
                               Index.T.str());
}

TypedValue FunctionCompiler::typePointerElement(const TypedValue &Pointer, const TypedValue &Index,
                                                PyObject *IndexNode, PyObject *Node) {
  checkPointerIndex(Pointer, Index, IndexNode);
  Typing.Expressions[Node].Subscript = SubscriptKind::ArrayElement;
  return TypedValue(Pointer.T.elementType());
}

Value *FunctionCompiler::pointerElementAddress(const TypedValue &Pointer, const TypedValue &Index,
                                               PyObject *IndexNode) {
  Value *I = convert(Index, frontend::Type::scalar(Scalar::Int64), IndexNode).scalar();
  Value *Offset = B.CreateMul(I, B.getInt64(byteSize(Pointer.T.Dtype)));
  return B.CreateGEP(B.getInt8Ty(), Pointer.Parts[0], Offset, "element");
}

namespace {

// True for cffi's FFI().from_buffer (a method of an FFI object).
bool isFfiFromBuffer(PyObject *Callee) {
  if (!PyMethod_Check(Callee))
    return false;
  PyObject *Self = PyMethod_GET_SELF(Callee);
  if (!Self)
    return false;
  std::string Class = Py_TYPE(Self)->tp_name;
  PyRef Name = PyRef::borrow(Callee).attrOrNull("__name__");
  return Name && Name.str() == "from_buffer" && Class.find("FFI") != std::string::npos;
}

TypedValue typeFromBuffer(IntrinsicCall &Call) {
  if (Call.Args.size() != 1 || !Call.Keywords.empty())
    Call.C.typingError(Call.Node, "ffi.from_buffer() in a kernel takes one array");
  const Type &Array = Call.Args[0].T;
  if (!Array.isArray() || Array.hasRecordElements())
    Call.C.typingError(Call.ArgNodes[0],
                       "ffi.from_buffer() in a kernel takes an array of numbers, not " + Array.str());
  if (Array.ArrayLayout != Layout::C)
    Call.C.typingError(Call.ArgNodes[0], "ffi.from_buffer() needs a C-contiguous array (Numba's "
                                         "rule), not " + Array.str());
  Call.ArgumentOrder = {0};
  return TypedValue(Type::pointer(Array.Dtype));
}

TypedValue emitFromBuffer(IntrinsicCall &Call, const Type &Result) {
  TypedValue P(Result);
  P.Parts.push_back(Call.Args[0].Parts[0]);
  return P;
}

const IntrinsicRecord FromBuffer = {"ffi.from_buffer", IntrinsicKind::Function, typeFromBuffer,
                                    emitFromBuffer, "",
                                    "from_buffer(array): the address of a C-contiguous array's "
                                    "data, as a CPointer of its dtype (cffi's)"};

// carray(ptr, shape, dtype=None), farray: the dtype is the pointer's, or
// the one given, which must be the pointer's unless it is a voidptr
// (numba-cuda's rules and messages); shape an integer or a tuple of them.
TypedValue typeArrayOverPointer(IntrinsicCall &Call) {
  const std::string Python = Call.Record->PythonPath;
  bindArguments(Call, Python, {"ptr", "shape", "dtype"}, 2);
  const Type &Pointer = Call.Args[0].T;
  if (!Pointer.isPointer())
    Call.C.typingError(Call.ArgNodes[0], Python + "(): pointer argument expected (a CPointer or "
                                                  "voidptr), got " + Pointer.str());
  Scalar Element = Pointer.Dtype;
  if (Call.Args.size() > 2 && !Call.Args[2].T.isNone()) {
    Element = Call.C.dtypeOf(Call.Args[2], Call.ArgNodes[2]);
    if (!Pointer.isVoidPointer() && Element != Pointer.Dtype)
      Call.C.typingError(Call.ArgNodes[2], Python + "(): mismatching dtype '" +
                                               Type::scalar(Element).str() +
                                               "' for pointer type '" + Pointer.str() + "'");
  } else if (Pointer.isVoidPointer()) {
    Call.C.typingError(Call.Node, Python + "(): explicit dtype required for void* argument");
  }
  const Type &Shape = Call.Args[1].T;
  size_t NDim = 1;
  bool Integers = Shape.isIntegerScalar();
  if (Shape.isTuple()) {
    NDim = Shape.Elements.size();
    Integers = NDim > 0 && std::all_of(Shape.Elements.begin(), Shape.Elements.end(),
                                       [](const Type &E) { return E.isIntegerScalar(); });
  }
  if (!Integers)
    Call.C.typingError(Call.ArgNodes[1], Python + "(): invalid shape '" + Shape.str() +
                                             "': an integer or a tuple of integers");
  return TypedValue(Type::array(Element, static_cast<unsigned>(NDim),
                                Python == "cuda.farray" ? Layout::F : Layout::C));
}

TypedValue emitArrayOverPointer(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  std::vector<Value *> Sizes;
  const Type Int64 = Type::scalar(Scalar::Int64);
  if (Call.Args[1].T.isScalar())
    Sizes.push_back(Call.C.convert(Call.Args[1], Int64, Call.ArgNodes[1]).scalar());
  else
    for (const TypedValue &E : Call.C.tupleElements(Call.Args[1]))
      Sizes.push_back(Call.C.convert(E, Int64, Call.ArgNodes[1]).scalar());
  // Contiguous strides: the last dimension's is the item size in C order,
  // the first's in Fortran order.
  std::vector<Value *> Strides(Sizes.size());
  Value *Stride = B.getInt64(Result.elementSize());
  bool Fortran = Result.ArrayLayout == Layout::F;
  for (size_t K = 0; K < Sizes.size(); ++K) {
    size_t D = Fortran ? K : Sizes.size() - 1 - K;
    Strides[D] = Stride;
    Stride = B.CreateMul(Stride, Sizes[D]);
  }
  TypedValue A(Result);
  A.Parts.push_back(Call.Args[0].Parts[0]);
  A.Parts.insert(A.Parts.end(), Sizes.begin(), Sizes.end());
  A.Parts.insert(A.Parts.end(), Strides.begin(), Strides.end());
  return A;
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> pointerIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.carray", IntrinsicKind::Function, typeArrayOverPointer, emitArrayOverPointer, "",
       "carray(ptr, shape, dtype=None): a C-order array over the memory a pointer points to"},
      {"cuda.farray", IntrinsicKind::Function, typeArrayOverPointer, emitArrayOverPointer, "",
       "farray(ptr, shape, dtype=None): a Fortran-order array over the memory a pointer points to"},
  };
  return Records;
}

std::optional<TypedValue> FunctionCompiler::typeFfiCall(PyObject *Callee, PyObject *Node,
                                                        std::vector<TypedValue> &Args,
                                                        std::vector<PyObject *> &ArgNodes,
                                                        std::vector<std::string> &Keywords) {
  if (!isFfiFromBuffer(Callee))
    return std::nullopt;
  IntrinsicCall Call{*this, Node, Args, ArgNodes, Keywords, &FromBuffer, {}};
  TypedValue Typed = FromBuffer.TypeRule(Call);
  CallTarget &Target = Typing.Calls[Node];
  Target.Record = &FromBuffer;
  Target.ArgumentOrder = std::move(Call.ArgumentOrder);
  Target.Result = Typed.T;
  return Typed;
}

} // namespace tidal::frontend
