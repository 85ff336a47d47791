// a.copy() and np.copy(a) in kernels: a new C-contiguous array in the
// thread's local memory, where the shape is known when compiling.
//
// numba-cuda allocates the copy on the device heap (its NRT); tidal has no
// heap in kernels, so the copy is a cuda.local.array sized when compiling.
// tidal's types carry no shapes, so the shape is read from where the array
// comes from (constantShape): a cuda.local.array or cuda.shared.array of
// constant shape, a frozen global NumPy array, a local bound once to one of
// those, a.T, and views of them whose extents are constant (a[2:6], a[i]
// of a 2-D array, a[i:i + 4]: at most 4). Anything else is a located
// UnsupportedError. The copy's shape at run time is the source's (at most
// the capacity), its strides C's.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "IntrinsicTable.h"

#include <algorithm>

using namespace llvm;

namespace tidal::frontend {

namespace {

constexpr uint64_t MaxLocalBytes = 512 * 1024; // as cuda.local.array

// The Assign statement value that binds Name, when exactly one does.
PyObject *singleAssignment(PyObject *Tree, const std::string &Name) {
  PyRef Ast = importModule("ast");
  PyRef Walk = PyRef::check(PyObject_CallMethod(Ast.get(), "walk", "O", Tree));
  PyRef Iterator = PyRef::check(PyObject_GetIter(Walk.get()));
  PyObject *Found = nullptr;
  int Count = 0;
  while (PyObject *Raw = PyIter_Next(Iterator.get())) {
    PyRef Node = PyRef::steal(Raw);
    if (nodeKind(Node.get()) != "Assign")
      continue;
    std::vector<PyObject *> Targets = listItems(field(Node.get(), "targets").get());
    if (Targets.size() == 1 && nodeKind(Targets[0]) == "Name" &&
        identifierField(Targets[0], "id") == Name) {
      Found = field(Node.get(), "value").get(); // the tree holds it
      ++Count;
    }
  }
  if (PyErr_Occurred())
    throw PythonErrorSet();
  return Count == 1 ? Found : nullptr;
}

// The length of a slice lower:upper:step of an extent, as Python's.
int64_t sliceLength(std::optional<int64_t> Lower, std::optional<int64_t> Upper,
                    std::optional<int64_t> Step, int64_t Extent) {
  int64_t S = Step.value_or(1);
  auto Clamp = [&](std::optional<int64_t> V, int64_t Default) {
    if (!V)
      return Default;
    int64_t X = *V < 0 ? *V + Extent : *V;
    if (S > 0)
      return std::clamp<int64_t>(X, 0, Extent);
    return std::clamp<int64_t>(X, -1, Extent - 1);
  };
  int64_t L = Clamp(Lower, S > 0 ? 0 : Extent - 1);
  int64_t U = Clamp(Upper, S > 0 ? Extent : -1);
  if (S > 0)
    return U > L ? (U - L + S - 1) / S : 0;
  return L > U ? (L - U - S - 1) / -S : 0;
}

} // namespace

// The array a copy call copies: a of a.copy(), a of np.copy(a).
PyObject *copySource(PyObject *Node) {
  std::vector<PyObject *> Args = listItems(field(Node, "args").get());
  if (Args.size() == 1)
    return Args[0];
  return field(field(Node, "func").get(), "value").get(); // the tree holds it
}

std::optional<std::vector<int64_t>> FunctionCompiler::constantShape(PyObject *Node, int Depth) {
  const ExpressionType *Typed = Typing.find(Node);
  if (!Typed || !Typed->T.isArray() || Depth > 16)
    return std::nullopt;
  // A frozen global or closure NumPy array.
  if (Typed->Frozen && PyObject_HasAttrString(Typed->Frozen, "shape")) {
    PyRef Shape = PyRef::borrow(Typed->Frozen).attr("shape");
    std::vector<int64_t> Out;
    for (Py_ssize_t I = 0; PyTuple_Check(Shape.get()) && I < PyTuple_GET_SIZE(Shape.get()); ++I)
      Out.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(Shape.get(), I)));
    return Out;
  }
  std::string Kind = nodeKind(Node);
  if (Kind == "Name") {
    std::string Name = identifierField(Node, "id");
    if (!LocalsBoundOnce.count(Name) ||
        std::find(ParamNames.begin(), ParamNames.end(), Name) != ParamNames.end())
      return std::nullopt;
    if (PyObject *Value = singleAssignment(Tree.get(), Name))
      return constantShape(Value, Depth + 1);
    return std::nullopt;
  }
  if (Kind == "Call") {
    const CallTarget *Target = Typing.findCall(Node);
    PyRef FuncNode = field(Node, "func");
    // a.copy().copy(), a.T.copy(): the copy has its source's shape.
    if (nodeKind(FuncNode.get()) == "Attribute" &&
        identifierField(FuncNode.get(), "attr") == "copy" && (!Target || !Target->Record ||
                                                             std::string(Target->Record->PythonPath) == "cuda.local.array"))
      return constantShape(copySource(Node), Depth + 1);
    if (!Target || !Target->Record)
      return std::nullopt;
    std::string Path = Target->Record->PythonPath;
    if (Path != "cuda.local.array" && Path != "cuda.shared.array")
      return std::nullopt;
    PyObject *ShapeNode = nullptr;
    std::vector<PyObject *> Positional = listItems(field(Node, "args").get());
    if (!Positional.empty())
      ShapeNode = Positional[0];
    for (PyObject *K : listItems(field(Node, "keywords").get()))
      if (!field(K, "arg").isNone() && identifierField(K, "arg") == "shape")
        ShapeNode = field(K, "value").get();
    const ExpressionType *Shape = ShapeNode ? Typing.find(ShapeNode) : nullptr;
    if (!Shape)
      return std::nullopt;
    std::vector<int64_t> Out =
        Shape->T.isTuple() ? Shape->TupleConstInts
                           : (Shape->ConstInt ? std::vector<int64_t>{*Shape->ConstInt}
                                              : std::vector<int64_t>{});
    if (Out.size() != Typed->T.NDim ||
        std::any_of(Out.begin(), Out.end(), [](int64_t E) { return E <= 0; }))
      return std::nullopt; // dynamic shared memory, or unknown
    return Out;
  }
  if (Kind == "Attribute" && identifierField(Node, "attr") == "T") {
    std::optional<std::vector<int64_t>> Base = constantShape(field(Node, "value").get(), Depth + 1);
    if (Base)
      std::reverse(Base->begin(), Base->end());
    return Base;
  }
  if (Kind == "Subscript" && Typed->Subscript == SubscriptKind::ArrayView) {
    // The base's shape is needed where a constant slice or a whole
    // dimension is taken from it, not for a[i:i + n].
    PyObject *BaseNode = field(Node, "value").get();
    std::optional<std::vector<int64_t>> Base = constantShape(BaseNode, Depth + 1);
    const ExpressionType *BaseType = Typing.find(BaseNode);
    if (!BaseType || !BaseType->T.isArray())
      return std::nullopt;
    PyRef Index = field(Node, "slice");
    std::vector<PyObject *> Indices = nodeKind(Index.get()) == "Tuple"
                                          ? listItems(field(Index.get(), "elts").get())
                                          : std::vector<PyObject *>{Index.get()};
    if (Indices.size() > BaseType->T.NDim)
      return std::nullopt;
    std::vector<int64_t> Out;
    for (size_t D = 0; D < Indices.size(); ++D) {
      PyObject *I = Indices[D];
      if (nodeKind(I) != "Slice") {
        const ExpressionType *IndexType = Typing.find(I);
        if (!IndexType || !IndexType->T.isIntegerScalar())
          return std::nullopt;
        continue; // an integer drops the dimension
      }
      auto Bound = [&](const char *Part) -> std::optional<std::optional<int64_t>> {
        PyRef Value = field(I, Part);
        if (Value.isNone())
          return std::optional<int64_t>();
        const ExpressionType *T = Typing.find(Value.get());
        if (!T || !T->ConstInt)
          return std::nullopt;
        return std::optional<int64_t>(*T->ConstInt);
      };
      auto Lower = Bound("lower"), Upper = Bound("upper"), Step = Bound("step");
      if (Lower && Upper && Step && Base) {
        Out.push_back(sliceLength(*Lower, *Upper, *Step, (*Base)[D]));
        continue;
      }
      // a[i:i + n] (step 1): at most n elements.
      PyRef UpperNode = field(I, "upper"), LowerNode = field(I, "lower");
      if (Step && !*Step && !LowerNode.isNone() && !UpperNode.isNone() &&
          nodeKind(UpperNode.get()) == "BinOp" &&
          nodeKind(field(UpperNode.get(), "op").get()) == "Add" &&
          sourceText(field(UpperNode.get(), "left").get()) == sourceText(LowerNode.get())) {
        const ExpressionType *N = Typing.find(field(UpperNode.get(), "right").get());
        if (N && N->ConstInt && *N->ConstInt >= 0) {
          Out.push_back(Base ? std::min(*N->ConstInt, (*Base)[D]) : *N->ConstInt);
          continue;
        }
      }
      return std::nullopt;
    }
    if (Indices.size() < BaseType->T.NDim) {
      if (!Base)
        return std::nullopt;
      Out.insert(Out.end(), Base->begin() + static_cast<std::ptrdiff_t>(Indices.size()),
                 Base->end());
    }
    if (Out.size() != Typed->T.NDim)
      return std::nullopt;
    return Out;
  }
  return std::nullopt;
}

TypedValue FunctionCompiler::typeArrayCopy(PyObject *Node, PyObject *Source,
                                           const TypedValue &Array) {
  if (Array.T.hasRecordElements())
    unsupported(Node, "copy() of an array of records in a kernel: copy its records one by one "
                      "into a cuda.local.array of its dtype");
  std::optional<std::vector<int64_t>> Shape = constantShape(Source);
  if (!Shape)
    unsupported(Node, "copy() of " + Array.T.str() + " in a kernel would allocate a new array, "
                      "which kernels cannot (numba-cuda needs its NRT for it): tidal copies "
                      "into a local array only where the shape is known when compiling (a "
                      "cuda.local.array or cuda.shared.array of constant shape, a global "
                      "array, a slice of one with constant bounds); for this array, copy the "
                      "elements into a cuda.local.array in a loop");
  uint64_t Bytes = Array.T.elementSize();
  for (int64_t E : *Shape)
    Bytes *= static_cast<uint64_t>(std::max<int64_t>(E, 1));
  if (Bytes > MaxLocalBytes)
    typingError(Node, "copy() of " + std::to_string(Bytes) + " bytes is larger than CUDA allows "
                      "for a local array (512 KiB of local memory per thread)");
  frontend::Type Result =
      frontend::Type::array(Array.T.Dtype, static_cast<unsigned>(Shape->size()), Layout::C);
  Result.Unit = Array.T.Unit;
  // A device function returning an array must not return this one: it
  // lives in the function's frame, as a cuda.local.array does (typeDevice
  // checks the calls of that row).
  CallTarget &Target = Typing.Calls[Node];
  Target.Record = findIntrinsic("cuda.local.array");
  Target.Result = Result;
  return TypedValue(Result);
}

TypedValue FunctionCompiler::emitArrayCopy(PyObject *Node, PyObject *Source) {
  TypedValue From = emitExpression(Source);
  std::vector<int64_t> Capacity = *constantShape(Source);
  const frontend::Type &Result = typeOf(Node).T;
  unsigned N = From.T.NDim;
  uint64_t Count = 1;
  for (int64_t E : Capacity)
    Count *= static_cast<uint64_t>(std::max<int64_t>(E, 1));
  unsigned Size = From.T.elementSize();
  Value *Data = callMarker("local.array", B.getPtrTy(),
                           {B.getInt64(Count * Size), B.getInt64(elementAlign(From.T.Dtype))});
  // The source's extents (the capacity's, or fewer for a[i:i + n]); C strides.
  TypedValue Copy(Result);
  Copy.Parts.push_back(Data);
  std::vector<Value *> Extents(From.Parts.begin() + 1, From.Parts.begin() + 1 + N);
  Copy.Parts.insert(Copy.Parts.end(), Extents.begin(), Extents.end());
  std::vector<Value *> Strides(N);
  Value *Stride = B.getInt64(Size);
  for (unsigned D = N; D-- > 0;) {
    Strides[D] = Stride;
    Stride = B.CreateMul(Stride, Extents[D]);
  }
  Copy.Parts.insert(Copy.Parts.end(), Strides.begin(), Strides.end());
  llvm::Type *Element = llvmMemoryType(From.T.Dtype);
  Align ElementAlign(elementAlign(From.T.Dtype));
  emitIndexLoops(Extents, [&](ArrayRef<Value *> Indices) {
    Value *FromOffset = B.getInt64(0), *ToOffset = B.getInt64(0);
    for (unsigned D = 0; D < N; ++D) {
      FromOffset = B.CreateAdd(FromOffset, B.CreateMul(Indices[D], From.Parts[1 + N + D]));
      ToOffset = B.CreateAdd(ToOffset, B.CreateMul(Indices[D], Strides[D]));
    }
    Value *Loaded = B.CreateAlignedLoad(
        Element, B.CreateGEP(B.getInt8Ty(), From.Parts[0], FromOffset), ElementAlign);
    B.CreateAlignedStore(Loaded, B.CreateGEP(B.getInt8Ty(), Data, ToOffset), ElementAlign);
  });
  return Copy;
}

} // namespace tidal::frontend
