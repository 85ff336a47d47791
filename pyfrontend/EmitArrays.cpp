// Emission of subscripts: element addresses (with bounds checks under
// debug=True), elements of arrays, tuples and records, and slices into
// views, as typing decided them (TypeArrays.cpp).
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

// --- arrays ------------------------------------------------------------------------

// The address of an element: a[i, j] with C or F layout computes the linear
// index from the shape (so the innermost stride is known to LLVM); layout A
// uses the byte strides. Negative indices wrap once, as in Numba.
std::string FunctionCompiler::sourceText(PyObject *Node) const {
  PyRef Ast = importModule("ast");
  PyRef Text = PyRef::steal(PyObject_CallMethod(Ast.get(), "unparse", "O", Node));
  if (!Text) {
    PyErr_Clear();
    return "?";
  }
  return Text.str();
}

Value *FunctionCompiler::elementPointer(const TypedValue &Array, PyObject *IndexNode,
                                        const TypedValue &Index, PyObject *ArrayNode,
                                        ElementAccess Access) {
  const frontend::Type &AT = Array.T;
  if (AT.isPointer()) // p[i] (PointerTypes.cpp)
    return pointerElementAddress(Array, Index, IndexNode);
  std::vector<TypedValue> Indices = Index.T.isTuple() ? tupleElements(Index)
                                                  : std::vector<TypedValue>{Index};
  for (TypedValue &I : Indices)
    if (I.T.isZeroDimensionalIntegerArray())
      I = loadZeroDimensionalIndex(I);
  if (Indices.size() != AT.NDim)
    internalError(IndexNode, "an index typing did not check");
  unsigned N = AT.NDim;
  std::vector<Value *> Idx;
  for (unsigned D = 0; D < N; ++D) {
    const TypedValue &I = Indices[D];
    Value *Extent = Array.Parts[1 + D];
    if (I.ConstInt) {
      int64_t C = *I.ConstInt;
      Idx.push_back(C < 0 ? B.CreateAdd(Extent, B.getInt64(C)) : B.getInt64(C));
      continue;
    }
    Value *V = B.CreateIntCast(I.scalar(), B.getInt64Ty(), isSigned(I.T.Dtype));
    if (isSigned(I.T.Dtype))
      V = B.CreateSelect(B.CreateICmpSLT(V, B.getInt64(0)), B.CreateAdd(V, Extent), V);
    Idx.push_back(V);
  }
  // Every index checked against its extent (dynamic shared arrays, whose
  // extent is not known, excepted): in debug mode an IndexError on every
  // target; without, for writes only, tidal.bounds.fault, which the NVPTX
  // lowering drops (an index out of range is undefined there, as in CUDA)
  // and the cpu target keeps, so that a store past an array does not
  // corrupt the process (a read past one reads garbage or faults, and the
  // fault is recovered).
  for (unsigned D = 0; D < N && (Options.Debug || Access == ElementAccess::Write); ++D) {
    Value *Original = Indices[D].ConstInt
                          ? static_cast<Value *>(B.getInt64(*Indices[D].ConstInt))
                          : B.CreateIntCast(Indices[D].scalar(), B.getInt64Ty(),
                                            isSigned(Indices[D].T.Dtype));
    checkIndexInBounds(IndexNode, ArrayNode, Original, Idx[D], Array.Parts[1 + D], D);
  }
  llvm::Type *ElemTy = AT.Record ? static_cast<llvm::Type *>(ArrayType::get(B.getInt8Ty(), AT.Record->Size))
                              : llvmMemoryType(AT.Dtype);
  Value *Data = Array.Parts[0];
  if (AT.ArrayLayout == Layout::A || N == 0) {
    Value *Offset = B.getInt64(0);
    for (unsigned D = 0; D < N; ++D)
      Offset = B.CreateAdd(Offset, B.CreateMul(Idx[D], Array.Parts[1 + N + D]));
    return B.CreateGEP(B.getInt8Ty(), Data, Offset, "elem.addr");
  }
  Value *Linear = nullptr;
  for (unsigned K = 0; K < N; ++K) {
    unsigned D = AT.ArrayLayout == Layout::C ? K : N - 1 - K; // slowest to fastest
    Linear = Linear ? B.CreateAdd(B.CreateMul(Linear, Array.Parts[1 + D]), Idx[D]) : Idx[D];
  }
  return B.CreateInBoundsGEP(ElemTy, Data, Linear, "elem.addr");
}

TypedValue FunctionCompiler::loadZeroDimensionalIndex(const TypedValue &Index) {
  return makeScalar(Index.T.Dtype,
                    B.CreateAlignedLoad(llvmMemoryType(Index.T.Dtype), Index.Parts[0],
                                        Align(elementAlign(Index.T.Dtype)), "index"));
}

void FunctionCompiler::checkIndexInBounds(PyObject *IndexNode, PyObject *ArrayNode,
                                          Value *Original, Value *Index, Value *Extent,
                                          unsigned Dimension) {
  // An extent that is constant 0: a dynamic shared array of more than one
  // dimension (a 1-D one is as long as the launch's dynamic bytes allow).
  if (auto *C = dyn_cast<ConstantInt>(Extent); C && C->isZero())
    return;
  SourceLocation Where = locate(IndexNode);
  std::string ArrayName = !ArrayNode                     ? "array"
                          : nodeKind(ArrayNode) == "Name" ? identifierField(ArrayNode, "id")
                                                          : sourceText(ArrayNode);
  std::string Message = std::string(IsDevice ? "device function '" : "kernel '") +
                        functionName() + "' at " + Where.File + ":" +
                        std::to_string(Where.Line) + ", array '" + ArrayName + "'";
  const char *Marker = Options.Debug ? "bounds.error" : "bounds.fault";
  BasicBlock *Fail = BasicBlock::Create(Ctx, Marker, F);
  BasicBlock *Ok = BasicBlock::Create(Ctx, "bounds.ok", F);
  B.CreateCondBr(B.CreateICmpUGE(Index, Extent), Fail, Ok);
  B.SetInsertPoint(Fail);
  callMarker(Marker, B.getVoidTy(),
             {constantString(Message, "bounds.where"), Original, Extent, B.getInt32(Dimension)});
  B.CreateUnreachable();
  B.SetInsertPoint(Ok);
}

TypedValue FunctionCompiler::emitSubscript(PyObject *Node) {
  PyRef ValueNode = field(Node, "value"), SliceNode = field(Node, "slice");
  const ExpressionType &Typed = typeOf(Node);
  TypedValue Base = emitExpression(ValueNode.get());
  if (Typed.Subscript == SubscriptKind::ArrayView)
    return emitSlice(Base, SliceNode.get(), ValueNode.get(), Typed.T);
  TypedValue Index = emitExpression(SliceNode.get());
  switch (Typed.Subscript) {
  case SubscriptKind::TupleElement: {
    int64_t I = *Index.ConstInt, Size = static_cast<int64_t>(Base.T.Elements.size());
    return tupleElements(Base)[I < 0 ? I + Size : I];
  }
  case SubscriptKind::TupleRunTimeIndex:
    return emitTupleIndex(Base, Index, SliceNode.get(), ValueNode.get());
  case SubscriptKind::FrozenMember: // Color['red']
    return emitFrozen(Typed.Frozen, Node);
  case SubscriptKind::RecordField:
    return emitRecordFieldLoad(Base, Typed.FieldName, Node);
  case SubscriptKind::RecordElement: { // a[i] of a record array: a view of it
    TypedValue Ref(Typed.T);
    Ref.Parts.push_back(elementPointer(Base, SliceNode.get(), Index, ValueNode.get()));
    return Ref;
  }
  case SubscriptKind::ArrayElement: {
    Value *Ptr = elementPointer(Base, SliceNode.get(), Index, ValueNode.get(),
                                ElementAccess::Read);
    llvm::Type *MemTy = llvmMemoryType(Base.T.Dtype);
    LoadInst *L = B.CreateAlignedLoad(MemTy, Ptr, Align(elementAlign(Base.T.Dtype)));
    Value *V = Base.T.Dtype == Scalar::Bool ? B.CreateICmpNE(L, B.getInt8(0)) : L;
    return makeElement(Base.T, V);
  }
  default:
    internalError(Node, "the subscript '" + sourceText(Node) + "' was not typed");
  }
}

// a[i, 2:n, ::-1]: a view of the same memory (of the type typing gave it,
// View). Integer indices drop their dimension; slices keep it, normalised
// as Python does (negative bounds count from the end, bounds clamp).
TypedValue FunctionCompiler::emitSlice(const TypedValue &Base, PyObject *SliceNode,
                                       PyObject *ArrayNode, const frontend::Type &ViewType) {
  std::vector<PyObject *> Items = nodeKind(SliceNode) == "Tuple"
                                      ? listItems(field(SliceNode, "elts").get())
                                      : std::vector<PyObject *>{SliceNode};
  unsigned N = Base.T.NDim;
  struct Dim {
    bool IsSlice;
    PyObject *Lower = nullptr, *Upper = nullptr;
    int64_t Step = 1;
    bool Full = false; // ':' alone
    TypedValue Index;
  };
  std::vector<Dim> Dims;
  for (unsigned D = 0; D < N; ++D) {
    Dim X{true};
    if (D < Items.size() && nodeKind(Items[D]) != "Slice") {
      X.IsSlice = false;
      X.Index = emitExpression(Items[D]);
    } else if (D < Items.size()) {
      PyRef Lower = field(Items[D], "lower"), Upper = field(Items[D], "upper"),
            Step = field(Items[D], "step");
      X.Lower = Lower.isNone() ? nullptr : Lower.get();
      X.Upper = Upper.isNone() ? nullptr : Upper.get();
      if (!Step.isNone())
        X.Step = *emitExpression(Step.get()).ConstInt;
      X.Full = !X.Lower && !X.Upper && X.Step == 1;
    } else {
      X.Full = true;
    }
    Dims.push_back(X);
  }
  TypedValue View(ViewType);

  // The data pointer moves by start * stride in every dimension.
  Value *Zero = B.getInt64(0);
  Value *Offset = Zero;
  std::vector<Value *> Shape, Strides;
  for (unsigned D = 0; D < N; ++D) {
    const Dim &X = Dims[D];
    Value *Extent = Base.Parts[1 + D], *Stride = Base.Parts[1 + N + D];
    if (!X.IsSlice) {
      Value *Original = B.CreateIntCast(X.Index.scalar(), B.getInt64Ty(), isSigned(X.Index.T.Dtype));
      Value *I = Original;
      if (isSigned(X.Index.T.Dtype))
        I = B.CreateSelect(B.CreateICmpSLT(I, Zero), B.CreateAdd(I, Extent), I);
      if (Options.Debug) // an index that selects a sub-array is checked too
        checkIndexInBounds(Items[D], ArrayNode, Original, I, Extent, D);
      Offset = B.CreateAdd(Offset, B.CreateMul(I, Stride));
      continue;
    }
    if (X.Full) {
      Shape.push_back(Extent);
      Strides.push_back(Stride);
      continue;
    }
    bool Forward = X.Step > 0;
    Value *MinusOne = B.getInt64(-1);
    Value *Last = B.CreateSub(Extent, B.getInt64(1));
    auto Bound = [&](PyObject *Node, Value *Default) -> Value * {
      if (!Node)
        return Default;
      TypedValue V = convert(emitExpression(Node), frontend::Type::scalar(Scalar::Int64), Node);
      Value *I = V.scalar();
      Value *Wrapped = B.CreateAdd(I, Extent);
      Value *Low = Forward ? Zero : MinusOne, *High = Forward ? Extent : Last;
      Value *FromEnd = B.CreateSelect(B.CreateICmpSLT(Wrapped, Low), Low, Wrapped);
      Value *FromStart = B.CreateSelect(B.CreateICmpSGT(I, High), High, I);
      return B.CreateSelect(B.CreateICmpSLT(I, Zero), FromEnd, FromStart);
    };
    Value *Start = Bound(X.Lower, Forward ? Zero : Last);
    Value *Stop = Bound(X.Upper, Forward ? Extent : MinusOne);
    int64_t Magnitude = Forward ? X.Step : -X.Step;
    Value *Span = Forward ? B.CreateSub(Stop, Start) : B.CreateSub(Start, Stop);
    Value *Length = B.CreateSDiv(B.CreateAdd(Span, B.getInt64(Magnitude - 1)), B.getInt64(Magnitude));
    Length = B.CreateSelect(B.CreateICmpSGT(Span, Zero), Length, Zero);
    Offset = B.CreateAdd(Offset, B.CreateMul(Start, Stride));
    Shape.push_back(Length);
    Strides.push_back(B.CreateMul(Stride, B.getInt64(X.Step)));
  }
  View.Parts.push_back(B.CreateGEP(B.getInt8Ty(), Base.Parts[0], Offset, "view"));
  View.Parts.insert(View.Parts.end(), Shape.begin(), Shape.end());
  View.Parts.insert(View.Parts.end(), Strides.begin(), Strides.end());
  return View;
}

} // namespace tidal::frontend
