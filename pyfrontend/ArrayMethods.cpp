// Methods of arrays that kernels call, typing and emission: a.reshape(...)
// and a.ravel() of a C-contiguous array (views with C strides, as Numba's)
// and a.item() of a one-element array; a.copy() (ArrayCopy.cpp); a.astype(),
// a.flatten() (a new array, which kernels cannot allocate) are refused here. (a.view(dtype) is TypeRecords.cpp and
// EmitRecords.cpp; a.T, a.dtype, a.itemsize are attributes, TypeNames.cpp.)
#include "FunctionCompiler.h"
#include "AstAccess.h"

using namespace llvm;

namespace tidal::frontend {

PyObject *copySource(PyObject *Node); // ArrayCopy.cpp

namespace {

// The method name of a call `<array>.<name>(...)` that this file handles;
// "" for other calls.
std::string arrayMethodName(PyObject *Node) {
  PyRef FuncNode = field(Node, "func");
  if (nodeKind(FuncNode.get()) != "Attribute")
    return "";
  std::string Name = identifierField(FuncNode.get(), "attr");
  for (const char *Method : {"reshape", "ravel", "item", "copy", "astype", "flatten"})
    if (Name == Method)
      return Name;
  return "";
}

PyObject *receiverNode(PyObject *Node) {
  return field(field(Node, "func").get(), "value").get(); // the tree holds it
}

bool isNumpyModule(const frontend::Type &T) {
  return T.isPyObject() && PyModule_Check(static_cast<PyObject *>(T.Object)) &&
         std::string(PyModule_GetName(static_cast<PyObject *>(T.Object))) == "numpy";
}
bool isNumpyModule(const TypedValue &V) { return isNumpyModule(V.T); }

} // namespace

std::optional<TypedValue> FunctionCompiler::typeArrayMethod(PyObject *Node) {
  std::string Name = arrayMethodName(Node);
  if (Name.empty())
    return std::nullopt;
  TypedValue Array = typeExpression(receiverNode(Node));
  if (Array.T.isUndefined())
    return TypedValue();
  // np.copy(a): a.copy() (ArrayCopy.cpp).
  if (Name == "copy" && isNumpyModule(Array) && PyList_GET_SIZE(field(Node, "args").get()) == 1 &&
      PyList_GET_SIZE(field(Node, "keywords").get()) == 0) {
    PyObject *Source = copySource(Node);
    TypedValue Copied = typeExpression(Source);
    if (Copied.T.isUndefined())
      return TypedValue();
    if (!Copied.T.isArray())
      typingError(Source, "np.copy() in a kernel takes an array, not " + Copied.T.str());
    return typeArrayCopy(Node, Source, Copied);
  }
  if (!Array.T.isArray())
    return std::nullopt;
  std::vector<PyObject *> Args = listItems(field(Node, "args").get());
  if (PyList_GET_SIZE(field(Node, "keywords").get()) > 0)
    typingError(Node, Name + "() of an array takes no keyword arguments in kernels");
  if (Name == "copy") {
    if (!Args.empty())
      unsupported(Node, "copy() with an order in a kernel");
    return typeArrayCopy(Node, receiverNode(Node), Array);
  }
  if (Name == "astype" || Name == "flatten" ||
      (Name == "ravel" && Array.T.ArrayLayout != Layout::C))
    unsupported(Node, Name + "() of " + Array.T.str() + " in a kernel would allocate a new "
                      "array, which kernels cannot (numba-cuda neither, without its NRT): "
                      "copy the elements into a cuda.local.array in a loop");
  if (Name == "ravel") {
    if (!Args.empty())
      unsupported(Node, "ravel() with an order in a kernel");
    frontend::Type Result = Array.T;
    Result.NDim = 1;
    return TypedValue(Result);
  }
  if (Name == "item") {
    if (!Args.empty())
      unsupported(Node, "item() with arguments in a kernel: index the array (a[i, j])");
    if (Array.T.hasRecordElements())
      unsupported(Node, "item() of a record array in a kernel: index it (a[0])");
    frontend::Type Element = frontend::Type::scalar(Array.T.Dtype);
    Element.Unit = Array.T.Unit;
    return TypedValue(Element);
  }
  // reshape(n, m, ...) or reshape((n, m, ...)): integers, one of them -1 at most.
  if (Array.T.ArrayLayout != Layout::C)
    typingError(Node, "reshape() supports contiguous array only: " + Array.T.str() +
                          " is not C-contiguous (Numba's rule)");
  std::vector<TypedValue> Sizes;
  std::vector<PyObject *> SizeNodes;
  if (Args.size() == 1 && !typeExpression(Args[0]).T.isScalar()) {
    TypedValue Shape = typeExpression(Args[0]);
    if (!Shape.T.isTuple())
      typingError(Args[0], "reshape() takes integers or a tuple of integers, not " + Shape.T.str());
    for (const frontend::Type &E : Shape.T.Elements) {
      Sizes.push_back(TypedValue(E));
      SizeNodes.push_back(Args[0]);
    }
  } else {
    for (PyObject *A : Args) {
      Sizes.push_back(typeExpression(A));
      SizeNodes.push_back(A);
    }
  }
  if (Sizes.empty())
    typingError(Node, "reshape() needs the new shape");
  for (size_t I = 0; I < Sizes.size(); ++I)
    if (!Sizes[I].T.isIntegerScalar())
      typingError(SizeNodes[I], "reshape() takes integers or a tuple of integers, not " +
                                    Sizes[I].T.str());
  frontend::Type Result = Array.T;
  Result.NDim = static_cast<uint8_t>(Sizes.size());
  return TypedValue(Result);
}

std::optional<TypedValue> FunctionCompiler::emitArrayMethod(PyObject *Node) {
  std::string Name = arrayMethodName(Node);
  if (Name == "copy" && typeOf(Node).T.isArray() &&
      (typeOf(receiverNode(Node)).T.isArray() || isNumpyModule(typeOf(receiverNode(Node)).T)))
    return emitArrayCopy(Node, copySource(Node));
  if (Name.empty() || !typeOf(receiverNode(Node)).T.isArray())
    return std::nullopt;
  TypedValue Array = emitExpression(receiverNode(Node));
  unsigned N = Array.T.NDim;
  Value *Size = B.getInt64(1);
  for (unsigned I = 0; I < N; ++I)
    Size = B.CreateMul(Size, Array.Parts[1 + I]);
  // Fails with Class(Message) where Bad holds (the thread ends, as a raise
  // in a kernel does; debug=True reports it).
  auto FailIf = [&](Value *Bad, PyObject *Class, const char *Message) {
    BasicBlock *Fail = BasicBlock::Create(Ctx, Name + ".invalid", F);
    BasicBlock *Ok = BasicBlock::Create(Ctx, Name + ".ok", F);
    B.CreateCondBr(Bad, Fail, Ok);
    B.SetInsertPoint(Fail);
    PyRef Arguments = PyRef::check(Py_BuildValue("(s)", Message));
    emitRaise(Class, Arguments.get(), Node);
    if (!B.GetInsertBlock()->getTerminator())
      B.CreateUnreachable();
    B.SetInsertPoint(Ok);
  };
  const frontend::Type &Result = typeOf(Node).T;
  if (Name == "item") {
    FailIf(B.CreateICmpNE(Size, B.getInt64(1)), PyExc_ValueError,
           "item(): can only convert an array of size 1 to a Python scalar");
    Value *Loaded = B.CreateAlignedLoad(llvmMemoryType(Array.T.Dtype), Array.Parts[0],
                                        Align(elementAlign(Array.T.Dtype)), "item");
    if (Array.T.Dtype == Scalar::Bool)
      Loaded = B.CreateICmpNE(Loaded, B.getInt8(0));
    return makeElement(Array.T, Loaded);
  }
  // reshape: the sizes, one -1 inferred from the others; C strides.
  // ravel: the one size of the whole array.
  std::vector<PyObject *> Args = listItems(field(Node, "args").get());
  std::vector<Value *> Sizes;
  if (Name == "ravel") {
    Sizes.push_back(B.getInt64(-1));
  } else if (Args.size() == 1 && !typeOf(Args[0]).T.isScalar()) {
    for (const TypedValue &E : tupleElements(emitExpression(Args[0])))
      Sizes.push_back(convert(E, frontend::Type::scalar(Scalar::Int64), Args[0]).scalar());
  } else {
    for (PyObject *A : Args)
      Sizes.push_back(convert(emitExpression(A), frontend::Type::scalar(Scalar::Int64), A).scalar());
  }
  Value *Known = B.getInt64(1), *Negatives = B.getInt64(0);
  for (Value *S : Sizes) {
    Value *Negative = B.CreateICmpSLT(S, B.getInt64(0));
    Known = B.CreateMul(Known, B.CreateSelect(Negative, B.getInt64(1), S));
    Negatives = B.CreateAdd(Negatives, B.CreateZExt(Negative, B.getInt64Ty()));
  }
  FailIf(B.CreateICmpUGT(Negatives, B.getInt64(1)), PyExc_ValueError,
         "multiple negative shape values");
  Value *KnownIsZero = B.CreateICmpEQ(Known, B.getInt64(0));
  Value *Inferred = B.CreateSelect(
      KnownIsZero, B.getInt64(0), B.CreateSDiv(Size, B.CreateSelect(KnownIsZero, B.getInt64(1), Known)));
  Value *Total = B.getInt64(1);
  for (Value *&S : Sizes) {
    S = B.CreateSelect(B.CreateICmpSLT(S, B.getInt64(0)), Inferred, S);
    Total = B.CreateMul(Total, S);
  }
  FailIf(B.CreateICmpNE(Total, Size), PyExc_ValueError,
         "total size of new array must be unchanged");
  TypedValue View(Result);
  View.Parts.push_back(Array.Parts[0]);
  View.Parts.insert(View.Parts.end(), Sizes.begin(), Sizes.end());
  std::vector<Value *> Strides(Sizes.size());
  Value *Stride = B.getInt64(Array.T.elementSize());
  for (size_t I = Sizes.size(); I-- > 0;) {
    Strides[I] = Stride;
    Stride = B.CreateMul(Stride, Sizes[I]);
  }
  View.Parts.insert(View.Parts.end(), Strides.begin(), Strides.end());
  return View;
}

} // namespace tidal::frontend
