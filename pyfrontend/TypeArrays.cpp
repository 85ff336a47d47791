// Typing of subscripts: array elements and views (slices, fewer indices
// than dimensions), tuple elements and record fields; what a subscript
// reads is recorded for emission (ExpressionType::Subscript).
#include "FunctionCompiler.h"
#include "AstAccess.h"

namespace tidal::frontend {

void FunctionCompiler::checkIndex(const frontend::Type &Array, const frontend::Type &Index,
                                  PyObject *IndexNode) {
  std::vector<frontend::Type> Indices =
      Index.isTuple() ? Index.Elements : std::vector<frontend::Type>{Index};
  if (Indices.size() != Array.NDim)
    typingError(IndexNode, "cannot index " + Array.str() + " with " +
                               std::to_string(Indices.size()) + " indices: it has " +
                               std::to_string(Array.NDim) + " dimensions");
  for (const frontend::Type &I : Indices)
    if (!isInteger(I.Dtype) || !(I.isScalar() || I.isZeroDimensionalIntegerArray()))
      typingError(IndexNode, "cannot index " + Array.str() + " with " + I.str() +
                                 ": array indices must be integers");
}

bool FunctionCompiler::selectsView(const Type &Base, PyObject *SliceNode,
                                   const Type *IndexType) {
  bool HasSlice = nodeKind(SliceNode) == "Slice";
  if (nodeKind(SliceNode) == "Tuple")
    for (PyObject *E : listItems(field(SliceNode, "elts").get()))
      HasSlice |= nodeKind(E) == "Slice";
  // Fewer indices than dimensions (a[i] on a 2-D array) is a view too. A
  // tuple held in a variable (idx = (i, j); a[idx]) gives its elements.
  size_t IndexCount = nodeKind(SliceNode) == "Tuple"
                          ? static_cast<size_t>(PyList_GET_SIZE(field(SliceNode, "elts").get()))
                      : IndexType && IndexType->isTuple() ? IndexType->Elements.size()
                                                          : 1;
  return HasSlice || (Base.isArray() && IndexCount < Base.NDim);
}

std::optional<TypedValue> FunctionCompiler::typeIndexOfNoSlice(PyObject *SliceNode) {
  std::string Kind = nodeKind(SliceNode);
  if (Kind == "Tuple" || Kind == "Slice")
    return std::nullopt;
  return typeExpression(SliceNode);
}

TypedValue FunctionCompiler::typeSubscript(PyObject *Node) {
  PyRef ValueNode = field(Node, "value"), SliceNode = field(Node, "slice");
  TypedValue Base = typeExpression(ValueNode.get());
  std::optional<TypedValue> Single = typeIndexOfNoSlice(SliceNode.get());
  bool HasSlice = selectsView(Base.T, SliceNode.get(), Single ? &Single->T : nullptr);
  ExpressionType &Recorded = Typing.Expressions[Node];
  if (HasSlice) {
    if (Base.T.isUndefined())
      return TypedValue();
    if (!Base.T.isArray())
      unsupported(SliceNode.get(), "slicing is supported on arrays, not on " + Base.T.str());
    Recorded.Subscript = SubscriptKind::ArrayView;
    return typeSlice(Base, SliceNode.get());
  }
  TypedValue Index = Single ? *Single : typeExpression(SliceNode.get());
  if (Base.T.isUndefined() || Index.T.isUndefined())
    return TypedValue();
  if (Base.T.isTuple())
    return typeTupleIndex(Base, Index, SliceNode.get(), Node);
  if (Base.T.isPyObject())
    if (std::optional<TypedValue> Member = typeSubscriptOfObject(Base, Index, Node))
      return *Member;
  if (Base.T.isRecord()) { // r['x'] or r[0]: the field named by a constant
    std::string Name = recordFieldName(Base, Index, SliceNode.get());
    Recorded.Subscript = SubscriptKind::RecordField;
    Recorded.FieldName = Name;
    return typeRecordFieldLoad(Base, Name, Node);
  }
  if (Base.T.isPointer()) // p[i] (PointerTypes.cpp)
    return typePointerElement(Base, Index, SliceNode.get(), Node);
  if (!Base.T.isArray())
    typingError(Node, "cannot index a value of type " + Base.T.str());
  checkIndex(Base.T, Index.T, SliceNode.get());
  if (Base.T.hasRecordElements()) { // a[i] of a record array: a view of it
    Recorded.Subscript = SubscriptKind::RecordElement;
    return TypedValue(frontend::Type::record(Base.T.Record, Base.T.ReadOnly));
  }
  Recorded.Subscript = SubscriptKind::ArrayElement;
  return makeElement(Base.T, nullptr);
}

// a[i, 2:n, ::-1]: a view of the same memory. Integer indices drop their
// dimension; slices keep it (the step must be a constant).
TypedValue FunctionCompiler::typeSlice(const TypedValue &Base, PyObject *SliceNode) {
  std::vector<PyObject *> Items = nodeKind(SliceNode) == "Tuple"
                                      ? listItems(field(SliceNode, "elts").get())
                                      : std::vector<PyObject *>{SliceNode};
  unsigned N = Base.T.NDim;
  if (Items.size() > N)
    typingError(SliceNode, "too many indices for " + Base.T.str() + ": " +
                               std::to_string(Items.size()) + " given");
  struct Dim {
    bool IsSlice;
    int64_t Step = 1;
    bool Full = false; // ':' alone
  };
  std::vector<Dim> Dims;
  std::vector<PyObject *> Bounds;
  for (unsigned D = 0; D < N; ++D) {
    Dim X{true};
    if (D < Items.size() && nodeKind(Items[D]) != "Slice") {
      X.IsSlice = false;
      TypedValue Index = typeExpression(Items[D]);
      if (Index.T.isUndefined())
        return TypedValue();
      if (!Index.T.isIntegerScalar())
        typingError(Items[D], "cannot index " + Base.T.str() + " with " + Index.T.str() +
                                  ": array indices must be integers");
    } else if (D < Items.size()) {
      PyRef Lower = field(Items[D], "lower"), Upper = field(Items[D], "upper"),
            Step = field(Items[D], "step");
      if (!Step.isNone()) {
        TypedValue S = typeExpression(Step.get());
        if (!S.T.isIntegerScalar() || !S.ConstInt || *S.ConstInt == 0)
          unsupported(Step.get(), "the step of a slice in a kernel must be a constant non-zero integer");
        X.Step = *S.ConstInt;
      }
      X.Full = Lower.isNone() && Upper.isNone() && X.Step == 1;
      for (PyRef *Bound : {&Lower, &Upper})
        if (!Bound->isNone())
          Bounds.push_back(Bound->get());
    } else {
      X.Full = true;
    }
    Dims.push_back(X);
  }
  unsigned ViewDims = 0;
  for (const Dim &X : Dims)
    ViewDims += X.IsSlice;
  // C stays C when nothing after the first slice is cut or strided.
  Layout ViewLayout = Layout::A;
  if (Base.T.ArrayLayout == Layout::C) {
    bool Contiguous = true, SeenSlice = false;
    for (const Dim &X : Dims) {
      if (SeenSlice && (!X.IsSlice || !X.Full))
        Contiguous = false;
      if (X.IsSlice && !SeenSlice) {
        SeenSlice = true;
        Contiguous &= X.Step == 1;
      }
    }
    ViewLayout = Contiguous ? Layout::C : Layout::A;
  }
  TypedValue View(frontend::Type::array(Base.T.Dtype, ViewDims, ViewLayout, Base.T.ReadOnly));
  View.T.Record = Base.T.Record;
  for (PyObject *Bound : Bounds) { // the bounds, in order
    TypedValue V = typeExpression(Bound);
    if (!V.T.isUndefined() && !V.T.isIntegerScalar())
      typingError(Bound, "slice bounds must be integers, not " + V.T.str());
  }
  return View;
}

} // namespace tidal::frontend
