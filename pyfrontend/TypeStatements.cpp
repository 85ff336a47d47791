// Typing of statements: assignments (to names, tuples, array elements and
// record fields), if, while, for over range(), return and assert; and the
// reachability check that finds a device function that can reach its end
// without returning its value.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "Operators.h"

#include <algorithm>

namespace tidal::frontend {

void FunctionCompiler::typeAssignTo(PyObject *Target, const TypedValue &V, PyObject *ValueNode) {
  std::string Kind = nodeKind(Target);
  if (Kind == "Name")
    return typeStore(identifierField(Target, "id"), V, Target);
  if (Kind == "Tuple" || Kind == "List") {
    std::vector<PyObject *> Targets = listItems(field(Target, "elts").get());
    if (V.T.isUndefined()) {
      for (PyObject *T : Targets)
        typeAssignTo(T, TypedValue(), ValueNode);
      return;
    }
    if (V.T.isArray()) { // a, b = p[i]: its elements (rows of an N-D array), as Numba's iterator gives
      if (V.T.NDim == 0)
        typingError(ValueNode, "cannot unpack a value of type " + V.T.str() +
                                   ": a 0-d array holds no sequence");
      IterationSource Source;
      Source.Kind = IterationSource::Array;
      Source.Node = ValueNode;
      Source.Value = V;
      for (size_t I = 0; I < Targets.size(); ++I)
        typeAssignTo(Targets[I], typeIterationElement(Source, static_cast<int64_t>(I)),
                     ValueNode);
      return;
    }
    if (!V.T.isTuple())
      typingError(ValueNode, "cannot unpack a value of type " + V.T.str() +
                                 " (tuples and arrays unpack)");
    if (V.T.Elements.size() != Targets.size())
      typingError(ValueNode, "cannot unpack " + V.T.str() + " into " +
                                 std::to_string(Targets.size()) + " targets");
    std::vector<TypedValue> Elements = tupleElements(V);
    for (size_t I = 0; I < Targets.size(); ++I)
      typeAssignTo(Targets[I], Elements[I], ValueNode);
    return;
  }
  if (Kind == "Subscript") {
    TypedValue Base = typeExpression(field(Target, "value").get());
    PyRef SliceNode = field(Target, "slice");
    std::optional<TypedValue> Single = typeIndexOfNoSlice(SliceNode.get());
    if (selectsView(Base.T, SliceNode.get(), Single ? &Single->T : nullptr)) // a[1:n] = v
      return typeViewStore(Target, Base, V, ValueNode);
    TypedValue Index = Single ? *Single : typeExpression(SliceNode.get());
    if (Base.T.isUndefined() || Index.T.isUndefined() || V.T.isUndefined())
      return;
    if (Base.T.isTuple())
      typingError(Target, "tuples are immutable: cannot assign to an element");
    if (Base.T.isRecord()) { // r['x'] = v or r[0] = v: the field named by a constant
      std::string Name = recordFieldName(Base, Index, SliceNode.get());
      Typing.Expressions[Target].FieldName = Name;
      return typeRecordFieldStore(Base, Name, V, Target, ValueNode);
    }
    if (Base.T.isPointer()) { // p[i] = v (PointerTypes.cpp)
      checkPointerIndex(Base, Index, SliceNode.get());
      convertedType(V, Base.T.elementType(), ValueNode);
      return;
    }
    if (!Base.T.isArray())
      typingError(Target, "cannot assign to an element of a value of type " + Base.T.str());
    if (Base.T.ReadOnly)
      typingError(Target, "cannot write to a read-only array (" + Base.T.str() + ")");
    if (Base.T.hasRecordElements()) { // a[i] = record: copy its bytes
      if (!V.T.isRecord() || !(*V.T.Record == *Base.T.Record))
        typingError(ValueNode, "cannot store a value of type " + V.T.str() +
                                   " into an element of " + Base.T.str());
      checkIndex(Base.T, Index.T, SliceNode.get());
      return;
    }
    if (!V.T.isScalar())
      typingError(ValueNode, "cannot store a value of type " + V.T.str() +
                                 " into an element of " + Base.T.str());
    checkIndex(Base.T, Index.T, SliceNode.get());
    convertedType(V, Base.T.elementType(), ValueNode);
    return;
  }
  if (Kind == "Attribute") {
    // r.field = v on a record (a[i].x = v writes into the array).
    TypedValue Base = typeExpression(field(Target, "value").get());
    std::string Attr = identifierField(Target, "attr");
    if (Base.T.isUndefined() || V.T.isUndefined())
      return;
    if (!Base.T.isRecord())
      unsupported(Target, "assigning to attributes is only supported on record fields, not on " +
                              Base.T.str());
    return typeRecordFieldStore(Base, Attr, V, Target, ValueNode);
  }
  unsupported(Target, "cannot assign to this target in a kernel");
}

void FunctionCompiler::typeViewStore(PyObject *Target, const TypedValue &Base,
                                     const TypedValue &V, PyObject *ValueNode) {
  if (Base.T.isUndefined())
    return;
  if (!Base.T.isArray())
    unsupported(field(Target, "slice").get(),
                "slicing is supported on arrays, not on " + Base.T.str());
  if (Base.T.ReadOnly)
    typingError(Target, "cannot write to a read-only array (" + Base.T.str() + ")");
  if (Base.T.hasRecordElements())
    unsupported(Target, "assigning to a slice of a record array is not supported");
  TypedValue View = typeExpression(Target); // records the view (ArrayView)
  if (View.T.isUndefined() || V.T.isUndefined())
    return;
  if (V.T.isScalar()) {
    convertedType(V, View.T.elementType(), ValueNode);
    return;
  }
  if (!V.T.isArray() || V.T.hasRecordElements())
    typingError(ValueNode, "cannot assign a value of type " + V.T.str() + " to a slice of " +
                               Base.T.str() + ": expected a number or an array");
  if (V.T.NDim > View.T.NDim)
    typingError(ValueNode, "cannot assign a " + V.T.str() + " to a " +
                               std::to_string(View.T.NDim) + "-dimensional slice (" +
                               View.T.str() + "): it has more dimensions");
  convertedType(TypedValue(V.T.elementType()), View.T.elementType(), ValueNode);
}

void FunctionCompiler::typeAssign(PyObject *Node) {
  PyRef ValueNode = field(Node, "value");
  std::vector<PyObject *> Targets = listItems(field(Node, "targets").get());
  AssignedVariable = Targets.size() == 1 && nodeKind(Targets[0]) == "Name"
                         ? identifierField(Targets[0], "id")
                         : "";
  // A variable takes an Optional as it is; a store into an array its value.
  KeepOptional = std::all_of(Targets.begin(), Targets.end(),
                             [](PyObject *T) { return nodeKind(T) == "Name"; });
  TypedValue V = typeExpression(ValueNode.get());
  AssignedVariable.clear();
  for (PyObject *Target : Targets)
    typeAssignTo(Target, V, ValueNode.get());
}

void FunctionCompiler::typeAugAssign(PyObject *Node) {
  PyRef Target = field(Node, "target");
  PyRef ValueNode = field(Node, "value");
  BinaryOperator Op = binaryOperatorOf(field(Node, "op").get());
  std::string Kind = nodeKind(Target.get());
  if (Kind == "Name") {
    std::string Name = identifierField(Target.get(), "id");
    TypedValue Current = typeLoad(Name, Target.get());
    if (Current.T.isOptional()) // r += 1 of an Optional: its value (OptionalValues.cpp)
      Current = TypedValue(Current.T.optionalInner());
    TypedValue Result = typeBinary(Op, Current, typeExpression(ValueNode.get()), Node);
    return typeStore(Name, Result, Node);
  }
  if (Kind == "Subscript") {
    // a[i] op= v: the index is evaluated once.
    TypedValue Base = typeExpression(field(Target.get(), "value").get());
    PyRef SliceNode = field(Target.get(), "slice");
    TypedValue Index = typeExpression(SliceNode.get());
    TypedValue Operand = typeExpression(ValueNode.get());
    if (Base.T.isUndefined() || Index.T.isUndefined() || Operand.T.isUndefined())
      return;
    if (Base.T.isRecord()) { // r['x'] op= v
      std::string Name = recordFieldName(Base, Index, SliceNode.get());
      Typing.Expressions[Target.get()].FieldName = Name;
      TypedValue Result =
          typeBinary(Op, typeRecordFieldLoad(Base, Name, Target.get()), Operand, Node);
      return typeRecordFieldStore(Base, Name, Result, Target.get(), ValueNode.get());
    }
    if (Base.T.isPointer()) { // p[i] op= v (PointerTypes.cpp)
      checkPointerIndex(Base, Index, SliceNode.get());
      TypedValue Result = typeBinary(Op, makeElement(Base.T, nullptr), Operand, Node);
      convertedType(Result, Base.T.elementType(), Node);
      return;
    }
    if (!Base.T.isArray())
      typingError(Target.get(), "cannot assign to an element of a value of type " + Base.T.str());
    if (Base.T.ReadOnly)
      typingError(Target.get(), "cannot write to a read-only array (" + Base.T.str() + ")");
    checkIndex(Base.T, Index.T, SliceNode.get());
    TypedValue Result = typeBinary(Op, makeElement(Base.T, nullptr), Operand, Node);
    convertedType(Result, Base.T.elementType(), Node);
    return;
  }
  if (Kind == "Attribute") { // r.field op= v: read, compute, write back
    TypedValue Current = typeExpression(Target.get());
    TypedValue Result = typeBinary(Op, Current, typeExpression(ValueNode.get()), Node);
    return typeAssignTo(Target.get(), Result, ValueNode.get());
  }
  unsupported(Target.get(), "cannot use this target of an augmented assignment in a kernel");
}

void FunctionCompiler::typeExpressionStatement(PyObject *Node) {
  PyRef Value = field(Node, "value");
  // Docstrings and other bare constants do nothing.
  if (nodeKind(Value.get()) == "Constant")
    return;
  typeExpression(Value.get());
}

void FunctionCompiler::typeIf(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body"), Else = field(Node, "orelse");
  TypedValue C = typeExpression(Test.get());
  // `if flag:` on a device-function parameter specialised on a literal
  // (neg_idx=False): only the branch taken is typed and emitted, as Numba
  // prunes it, so the other may hold code only valid for other values.
  if (prunedTest(Test.get(), C.ConstInt)) {
    typeBody(*C.ConstInt ? Body.get() : Else.get());
    return;
  }
  if (!C.T.isUndefined())
    checkCondition(C.T, Test.get());
  typeBody(Body.get());
  typeBody(Else.get());
}

void FunctionCompiler::typeWhile(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body"), Else = field(Node, "orelse");
  TypedValue C = typeExpression(Test.get());
  if (!C.T.isUndefined())
    checkCondition(C.T, Test.get());
  typeBody(Body.get());
  typeBody(Else.get()); // runs when the loop ends without a break
}

void FunctionCompiler::typeFor(PyObject *Node) {
  typeForLoop(Node);
  typeBody(field(Node, "orelse").get()); // runs when the loop ends without a break
}

void FunctionCompiler::typeForLoop(PyObject *Node) {
  PyRef Target = field(Node, "target"), Iter = field(Node, "iter");
  PyRef Body = field(Node, "body");
  // Only range(...): its callee must resolve to the builtin range.
  bool IsRange = false;
  if (nodeKind(Iter.get()) == "Call") {
    frontend::Type Callee = typeExpression(field(Iter.get(), "func").get()).T;
    if (Callee.isPyObject() && isLiteralUnroll(static_cast<PyObject *>(Callee.Object)))
      return typeLiteralUnrollLoop(Node); // LiteralUnroll.cpp
    IsRange = Callee.isPyObject() &&
              static_cast<PyObject *>(Callee.Object) == reinterpret_cast<PyObject *>(&PyRange_Type);
  }
  if (!IsRange)
    return typeForOverIterable(Node);
  if (nodeKind(Target.get()) != "Name")
    unsupported(Target.get(), "the target of a for loop over range() must be a name");
  std::vector<PyObject *> ArgNodes = listItems(field(Iter.get(), "args").get());
  if (ArgNodes.empty() || ArgNodes.size() > 3)
    typingError(Iter.get(), "range expected 1 to 3 arguments, got " +
                                std::to_string(ArgNodes.size()));
  std::vector<TypedValue> Args;
  for (PyObject *A : ArgNodes) {
    Args.push_back(typeExpression(A));
    if (!Args.back().T.isUndefined() && !Args.back().T.isIntegerScalar() &&
        !Args.back().T.isBool())
      typingError(A, "range() arguments must be integers, not " + Args.back().T.str());
  }
  // The counter's type, as Numba's range typing: int32 when every argument
  // fits, uint64 if one is uint64, int64 otherwise.
  Scalar Counter = Scalar::Int32;
  for (const TypedValue &A : Args) {
    if (A.T.isUndefined())
      continue;
    Scalar S = A.T.Dtype;
    if (S == Scalar::UInt64)
      Counter = Counter == Scalar::Int64 ? Scalar::Int64 : Scalar::UInt64;
    else if (!(S == Scalar::Bool || S == Scalar::Int8 || S == Scalar::Int16 ||
               S == Scalar::Int32 || S == Scalar::UInt8 || S == Scalar::UInt16))
      Counter = Scalar::Int64;
  }
  std::optional<int64_t> ConstStep = Args.size() == 3 ? Args[2].ConstInt : std::optional<int64_t>(1);
  if (ConstStep && *ConstStep == 0)
    typingError(ArgNodes[2], "range() step must not be zero");
  // The loop's target records the counter's type.
  Typing.Expressions[Target.get()].T = frontend::Type::scalar(Counter);
  typeStore(identifierField(Target.get(), "id"), TypedValue(frontend::Type::scalar(Counter)),
            Target.get());
  typeBody(Body.get());
}

void FunctionCompiler::typeReturn(PyObject *Node) {
  PyRef ValueNode = field(Node, "value");
  TypedValue V(frontend::Type::none());
  if (!ValueNode.isNone())
    V = typeKeepingOptional(ValueNode.get());
  if (!IsDevice) {
    if (!V.T.isUndefined() && !V.T.isNone())
      typingError(Node, "a kernel cannot return a value (it returns " + V.T.str() +
                            "); write results into an array argument");
    return;
  }
  // The return type of a device function unifies over its returns.
  if (V.T.isUndefined())
    return;
  // Arrays return as views of the same memory (a slice of an argument); one
  // of a local array the function makes is refused once typing settles.
  rejectEscapingClosure(V, Node);
  if (V.T.isPyObject() && !PyObject_HasAttrString(static_cast<PyObject *>(V.T.Object),
                                                  "__tidal_inner__"))
    typingError(Node, "device functions return numbers, arrays, tuples and functions defined "
                      "in them, not " + V.T.str());
  if (V.T.isNone() && !FirstBareReturn)
    FirstBareReturn = Node;
  if (DeclaredReturn) { // every return converts to it (Numba's cast)
    if (!V.T.isNone() || DeclaredReturn->isOptional())
      convertedType(V, *DeclaredReturn, Node); // a value the declared type cannot hold
    if (!HasReturnType)
      TypesChanged = true;
    ReturnType = *DeclaredReturn;
    HasReturnType = true;
    return;
  }
  frontend::Type Unified;
  if (!HasReturnType) {
    Unified = V.T;
  } else if (!unify(ReturnType, V.T, Unified)) {
    // A call of itself (recorded without a function) typed as the returns
    // so far, whose result then grows: Numba's words for it.
    bool CallsItself = std::any_of(Typing.Calls.begin(), Typing.Calls.end(), [](const auto &C) {
      return C.second.SelfCall;
    });
    typingError(Node, std::string(CallsItself ? "Return type of recursive function does not "
                                                "converge: "
                                              : "") +
                          "device function returns " + ReturnType.str() + " and " + V.T.str() +
                          ", which cannot unify");
  }
  if (!HasReturnType || Unified != ReturnType) {
    TypesChanged = true;
    LastReturnChange = Node;
  }
  ReturnType = Unified;
  HasReturnType = true;
}

void FunctionCompiler::typeAssert(PyObject *Node) {
  // Compiled out unless debug=True, as in Numba.
  if (!Options.Debug)
    return;
  TypedValue C = typeExpression(field(Node, "test").get());
  if (!C.T.isUndefined())
    checkCondition(C.T, field(Node, "test").get());
}

// --- reachability -------------------------------------------------------------------

// An `if` that pruning folds (`if y is None:` on a None argument) whose
// branch taken never reaches its end: the statements after it are dead, as
// Numba's dead-branch pruning leaves them, and are neither typed nor emitted.
bool FunctionCompiler::endsPrunedPath(PyObject *Statement) {
  if (nodeKind(Statement) != "If")
    return false;
  PyRef Test = field(Statement, "test");
  const ExpressionType *Typed = Typing.find(Test.get());
  if (!Typed || !prunedTest(Test.get(), Typed->ConstInt))
    return false;
  PyRef Taken = field(Statement, *Typed->ConstInt ? "body" : "orelse");
  bool Breaks = false;
  return !fallsThrough(Taken.get(), Breaks);
}

// A condition emission makes a constant (so that only one way is taken):
// one whose value typing knows and that reads no local variable (a
// parameter specialised on a literal still loads from its variable).
bool FunctionCompiler::constantCondition(PyObject *Test, bool &Value) {
  const ExpressionType *Typed = Typing.find(Test);
  if (!Typed || !Typed->ConstInt)
    return false;
  PyRef Ast = importModule("ast");
  PyRef Walk = PyRef::check(PyObject_CallMethod(Ast.get(), "walk", "O", Test));
  PyRef Iterator = PyRef::check(PyObject_GetIter(Walk.get()));
  while (PyObject *Raw = PyIter_Next(Iterator.get())) {
    PyRef Node = PyRef::steal(Raw);
    if (nodeKind(Node.get()) == "Name" &&
        NameBindings.LocalNames.count(identifierField(Node.get(), "id")))
      return false;
  }
  if (PyErr_Occurred())
    throw PythonErrorSet();
  Value = *Typed->ConstInt != 0;
  return true;
}

// Whether control can reach the end of Body: not past a return, a break
// or continue, an if whose taken branches all end so, a `while True:`
// without a break, or (debug=True) an `assert False`. Breaks: a break
// reachable in Body leaves the loop around it.
bool FunctionCompiler::fallsThrough(PyObject *Body, bool &Breaks) {
  for (PyObject *Statement : listItems(Body)) {
    std::string Kind = nodeKind(Statement);
    if (Kind == "Return" || Kind == "Raise")
      return false;
    if (Kind == "Break") {
      Breaks = true;
      return false;
    }
    if (Kind == "Continue")
      return false;
    if (Kind == "If") {
      PyRef Test = field(Statement, "test");
      PyRef Then = field(Statement, "body"), Else = field(Statement, "orelse");
      bool Value = false;
      const ExpressionType *Typed = Typing.find(Test.get());
      bool Pruned = Typed && prunedTest(Test.get(), Typed->ConstInt);
      if (Pruned) {
        Value = *Typed->ConstInt != 0;
      }
      if (Pruned || constantCondition(Test.get(), Value)) {
        if (!fallsThrough(Value ? Then.get() : Else.get(), Breaks))
          return false;
        continue;
      }
      bool ThenFalls = fallsThrough(Then.get(), Breaks);
      bool ElseFalls = fallsThrough(Else.get(), Breaks);
      if (!ThenFalls && !ElseFalls)
        return false;
      continue;
    }
    // A loop ends by a break, or else by its condition or iterable (never
    // for 'while True'), after which its else runs.
    if (Kind == "While" || Kind == "For") {
      bool Value = false;
      bool LoopBreaks = false;
      bool Forever = Kind == "While" &&
                     constantCondition(field(Statement, "test").get(), Value) && Value;
      fallsThrough(field(Statement, "body").get(), LoopBreaks);
      bool ElseFalls = !Forever && fallsThrough(field(Statement, "orelse").get(), Breaks);
      if (!LoopBreaks && !ElseFalls)
        return false;
      continue;
    }
    if (Kind == "Assert" && Options.Debug) {
      bool Value = true;
      if (constantCondition(field(Statement, "test").get(), Value) && !Value)
        return false;
    }
  }
  return true;
}

} // namespace tidal::frontend
