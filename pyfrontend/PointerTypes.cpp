// Numba's pointer types in kernels: CPointer(T) and voidptr parameters
// (docs/language.md, "Pointers"), typing and emission.
//
// A pointer is one address (TypeKind::Pointer, one `ptr` part). p[i] reads
// and writes the i-th element after it, as Numba's CPointer getitem and
// setitem do (no bounds, a negative i is before p); a voidptr cannot be
// indexed. ffi.from_buffer(a) of cffi in a kernel is the address of an
// array's data, as a CPointer of its dtype, and a pointer passes to a
// foreign function's pointer parameter (ForeignFunctions.cpp).
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "IntrinsicTable.h"

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

} // namespace

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
