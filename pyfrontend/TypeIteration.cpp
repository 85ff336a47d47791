// Typing of `for` over iterables other than a bare range(): enumerate(...),
// zip(...) (of ranges, 1-D arrays, tuples, and of each other), 1-D arrays
// and tuples. A loop whose iterable holds a tuple is unrolled: its body is
// typed once per element (the elements may differ in type; the loop
// variable takes the type they unify to). EmitIteration.cpp emits them.
#include "FunctionCompiler.h"
#include "AstAccess.h"

#include <algorithm>

namespace tidal::frontend {

// The builtin a call calls (enumerate, zip, range), or null.
static PyObject *iterationBuiltin(const frontend::Type &Callee) {
  if (!Callee.isPyObject())
    return nullptr;
  auto *O = static_cast<PyObject *>(Callee.Object);
  if (O == reinterpret_cast<PyObject *>(&PyEnum_Type) ||
      O == reinterpret_cast<PyObject *>(&PyZip_Type) ||
      O == reinterpret_cast<PyObject *>(&PyRange_Type))
    return O;
  return nullptr;
}

FunctionCompiler::IterationSource FunctionCompiler::typeIterationSource(PyObject *IterNode) {
  IterationSource S;
  S.Node = IterNode;
  auto AsInt64 = [&](PyObject *ArgNode, const std::string &What) {
    TypedValue V = typeExpression(ArgNode);
    if (V.T.isUndefined()) {
      S.Undefined = true;
      return V;
    }
    if (!V.T.isIntegerScalar() && !V.T.isBool())
      typingError(ArgNode, What + " must be an integer, not " + V.T.str());
    std::optional<int64_t> Known = V.ConstInt;
    V = convertedType(V, frontend::Type::scalar(Scalar::Int64), ArgNode);
    V.ConstInt = Known;
    return V;
  };
  auto Constant = [&](int64_t V) {
    TypedValue C = makeScalar(Scalar::Int64, nullptr);
    C.ConstInt = V;
    return C;
  };
  if (nodeKind(IterNode) == "Call") {
    PyRef CalleeNode = field(IterNode, "func");
    if (PyObject *Builtin = iterationBuiltin(typeExpression(CalleeNode.get()).T)) {
      std::vector<PyObject *> Args = listItems(field(IterNode, "args").get());
      std::vector<PyObject *> Keywords = listItems(field(IterNode, "keywords").get());
      if (Builtin == reinterpret_cast<PyObject *>(&PyEnum_Type)) {
        PyObject *StartNode = Args.size() == 2 ? Args[1] : nullptr;
        for (PyObject *K : Keywords) {
          if (field(K, "arg").isNone() || identifierField(K, "arg") != "start" || StartNode)
            typingError(K, "enumerate() takes an iterable and a start");
          StartNode = field(K, "value").get();
        }
        if (Args.empty() || Args.size() > 2)
          typingError(IterNode, "enumerate() takes an iterable and an optional start, got " +
                                    std::to_string(Args.size() + Keywords.size()) + " arguments");
        S.Kind = IterationSource::Enumerate;
        S.Children.push_back(typeIterationSource(Args[0]));
        S.Undefined |= S.Children[0].Undefined;
        S.Start = StartNode ? AsInt64(StartNode, "enumerate()'s start") : Constant(0);
        return S;
      }
      if (!Keywords.empty())
        typingError(Keywords[0], "zip() and range() take no keyword arguments in kernels");
      if (Builtin == reinterpret_cast<PyObject *>(&PyZip_Type)) {
        if (Args.empty())
          typingError(IterNode, "zip() in a kernel needs at least one iterable");
        S.Kind = IterationSource::Zip;
        for (PyObject *A : Args) {
          S.Children.push_back(typeIterationSource(A));
          S.Undefined |= S.Children.back().Undefined;
        }
        return S;
      }
      // range(...) inside zip() or enumerate(): counted in int64.
      if (Args.empty() || Args.size() > 3)
        typingError(IterNode, "range expected 1 to 3 arguments, got " + std::to_string(Args.size()));
      S.Kind = IterationSource::Range;
      std::vector<TypedValue> Values;
      for (PyObject *A : Args)
        Values.push_back(AsInt64(A, "range() argument"));
      if (S.Undefined)
        return S;
      S.Start = Values.size() >= 2 ? Values[0] : Constant(0);
      S.Stop = Values.size() >= 2 ? Values[1] : Values[0];
      S.Step = Values.size() == 3 ? Values[2] : Constant(1);
      if (S.Step.ConstInt && *S.Step.ConstInt == 0)
        typingError(Args[2], "range() step must not be zero");
      return S;
    }
  }
  S.Value = typeExpression(IterNode);
  if (S.Value.T.isUndefined()) {
    S.Undefined = true;
    return S;
  }
  if (S.Value.T.isTuple()) {
    S.Kind = IterationSource::Tuple;
    return S;
  }
  if (S.Value.T.isArray()) {
    S.Kind = IterationSource::Array;
    return S;
  }
  typingError(IterNode, "cannot iterate over a value of type " + S.Value.T.str() +
                            ": for loops in kernels iterate over range(), enumerate(), zip(), "
                            "1-D arrays and tuples");
}

// The type of a[i] of an N-D array (N > 1) iterated over: C-contiguous
// rows of a C array, any layout otherwise.
frontend::Type FunctionCompiler::rowViewType(const frontend::Type &A) {
  frontend::Type Row = frontend::Type::array(A.Dtype, A.NDim - 1u,
                                             A.ArrayLayout == Layout::C ? Layout::C : Layout::A,
                                             A.ReadOnly);
  Row.Record = A.Record;
  return Row;
}

std::optional<int64_t> FunctionCompiler::staticIterationLength(const IterationSource &S) {
  switch (S.Kind) {
  case IterationSource::Tuple:
    return static_cast<int64_t>(S.Value.T.Elements.size());
  case IterationSource::Enumerate:
    return staticIterationLength(S.Children[0]);
  case IterationSource::Zip: {
    std::optional<int64_t> Shortest;
    for (const IterationSource &C : S.Children)
      if (std::optional<int64_t> N = staticIterationLength(C))
        Shortest = Shortest ? std::min(*Shortest, *N) : *N;
    return Shortest;
  }
  default:
    return std::nullopt;
  }
}

TypedValue FunctionCompiler::typeIterationElement(const IterationSource &S,
                                                  std::optional<int64_t> StaticIndex) {
  switch (S.Kind) {
  case IterationSource::Range:
    return makeScalar(Scalar::Int64, nullptr);
  case IterationSource::Tuple:
    return tupleElements(S.Value)[static_cast<size_t>(StaticIndex.value_or(0))];
  case IterationSource::Array: {
    const frontend::Type &A = S.Value.T;
    if (A.NDim > 1) // the rows: views of one dimension less, as a[i] gives
      return TypedValue(rowViewType(A));
    checkIndex(A, frontend::Type::scalar(Scalar::Int64), S.Node);
    if (A.hasRecordElements()) // a reference to the record, as a[i] gives
      return TypedValue(frontend::Type::record(A.Record, A.ReadOnly));
    return makeElement(A, nullptr);
  }
  case IterationSource::Enumerate: {
    TypedValue Count = makeScalar(Scalar::Int64, nullptr);
    if (StaticIndex && S.Start.ConstInt)
      Count.ConstInt = *S.Start.ConstInt + *StaticIndex;
    return makeTuple({Count, typeIterationElement(S.Children[0], StaticIndex)});
  }
  case IterationSource::Zip: {
    std::vector<TypedValue> Elements;
    for (const IterationSource &C : S.Children)
      Elements.push_back(typeIterationElement(C, StaticIndex));
    return makeTuple(std::move(Elements));
  }
  }
  return TypedValue();
}

void FunctionCompiler::typeForOverIterable(PyObject *Node) {
  PyRef Target = field(Node, "target"), Iter = field(Node, "iter"), Body = field(Node, "body");
  IterationSource Source = typeIterationSource(Iter.get());
  if (Source.Undefined) { // the body is typed once the iterable is
    typeAssignTo(Target.get(), TypedValue(), Iter.get());
    typeBody(Body.get());
    return;
  }
  std::optional<int64_t> Unrolled = staticIterationLength(Source);
  if (!Unrolled) {
    typeAssignTo(Target.get(), typeIterationElement(Source, std::nullopt), Iter.get());
    typeBody(Body.get());
    return;
  }
  for (int64_t K = 0; K < *Unrolled; ++K) {
    typeAssignTo(Target.get(), typeIterationElement(Source, K), Iter.get());
    typeBody(Body.get());
  }
}

} // namespace tidal::frontend
