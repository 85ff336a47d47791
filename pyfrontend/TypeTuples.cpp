// Typing of tuples, namedtuples and enums: namedtuple and Enum values
// frozen from Python objects, t[i] with a constant or (homogeneous tuples)
// a run-time index, p.x of a namedtuple, Color['red'], `x in t`, `t == u`,
// and the comparisons and arithmetic of Enum members as Numba types them
// (an IntEnum member is an int; an Enum member compares by its class and
// value). EmitTuples.cpp emits what these decide.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "TupleTypes.h"

namespace tidal::frontend {

std::optional<TypedValue> FunctionCompiler::typeEnumOrNamedTuple(PyObject *O, PyObject *Node,
                                                                 const std::string &What) {
  if (isNamedTupleInstance(O)) {
    std::vector<TypedValue> Elements;
    for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(O); ++I)
      Elements.push_back(typeFrozen(PyTuple_GET_ITEM(O, I), Node, What));
    TypedValue V = makeTuple(std::move(Elements));
    V.T.Named = namedTupleInfoOf(O);
    return V;
  }
  if (!isEnumMember(O))
    return std::nullopt;
  PyObject *Value = enumValueOf(O);
  if (!Value)
    throw PythonErrorSet();
  std::shared_ptr<const EnumInfo> Info = enumInfoOf(O);
  TypedValue V = typeFrozen(Value, Node, What);
  bool Numbers = V.T.isScalar();
  if (V.T.isTuple()) {
    Numbers = true;
    for (const frontend::Type &E : V.T.Elements)
      Numbers &= E.isScalar();
  }
  if (!Numbers)
    unsupported(Node, What + " is the Enum member " + Info->ClassName + "." +
                          PyRef::borrow(O).attr("name").str() + " whose value is of type '" +
                          typeName(Value) +
                          "': kernels take Enum members whose values are numbers or tuples of numbers");
  V.T.Enum = std::move(Info);
  return V;
}

TypedValue FunctionCompiler::typeTupleIndex(const TypedValue &Base, const TypedValue &Index,
                                            PyObject *IndexNode, PyObject *SubscriptNode) {
  ExpressionType &Recorded = Typing.Expressions[SubscriptNode];
  int64_t Size = static_cast<int64_t>(Base.T.Elements.size());
  if (Index.ConstInt) {
    int64_t I = *Index.ConstInt;
    if (I < -Size || I >= Size)
      typingError(IndexNode, "tuple index " + std::to_string(I) + " out of range for " +
                                 Base.T.str() + " (" + std::to_string(Size) + " element" +
                                 (Size == 1 ? "" : "s") + ")");
    Recorded.Subscript = SubscriptKind::TupleElement;
    return tupleElements(Base)[I < 0 ? I + Size : I];
  }
  if (!Index.T.isIntegerScalar() && !Index.T.isBool())
    typingError(IndexNode, "tuple indices must be integers, not " + Index.T.str());
  if (Size == 0)
    typingError(IndexNode, "cannot index the empty tuple");
  if (!Base.T.isHomogeneousTuple())
    typingError(IndexNode, "cannot index " + Base.T.str() +
                               " with an index computed at run time: its elements differ in type, "
                               "so only a constant index says which one is read");
  Recorded.Subscript = SubscriptKind::TupleRunTimeIndex;
  return TypedValue(Base.T.Elements[0]);
}

std::optional<TypedValue> FunctionCompiler::typeAttributeOfTupleOrEnum(const TypedValue &Base,
                                                                       const std::string &Attr,
                                                                       PyObject *Node) {
  if (Base.T.isEnum() && Attr == "value") {
    TypedValue Value = Base;
    Value.T = Base.T.untagged();
    return Value;
  }
  if (!Base.T.isNamedTuple())
    return std::nullopt;
  const std::vector<std::string> &Fields = Base.T.Named->Fields;
  for (size_t I = 0; I < Fields.size(); ++I)
    if (Fields[I] == Attr) {
      Typing.Expressions[Node].TupleField = I;
      return tupleElements(Base)[I];
    }
  typingError(Node, "namedtuple " + Base.T.Named->ClassName + " has no field '" + Attr + "'");
}

std::optional<TypedValue> FunctionCompiler::typeSubscriptOfObject(const TypedValue &Object,
                                                                  const TypedValue &Index,
                                                                  PyObject *Node) {
  PyObject *O = static_cast<PyObject *>(Object.T.Object);
  PyObject *Key = Index.T.isPyObject() ? static_cast<PyObject *>(Index.T.Object) : nullptr;
  if (!PyType_Check(O) || !Key || !PyUnicode_Check(Key))
    return std::nullopt;
  PyObject *Member = PyObject_GetItem(O, Key);
  if (!Member) {
    PyErr_Clear();
    return std::nullopt;
  }
  PyRef Held = PyRef::steal(Member);
  if (!isEnumMember(Member))
    return std::nullopt;
  KeptAlive.push_back(Held); // the type map points at it
  ExpressionType &Recorded = Typing.Expressions[Node];
  Recorded.Subscript = SubscriptKind::FrozenMember;
  Recorded.Frozen = Member;
  return typeFrozen(Member, Node, "Enum member '" + PyRef::borrow(Key).str() + "'");
}

TypedValue FunctionCompiler::typeEnumOperand(const TypedValue &V, PyObject *Node) {
  if (!V.T.isEnum())
    return V;
  if (!V.T.Enum->IsIntEnum)
    typingError(Node, "cannot compute with " + V.T.str() +
                          ": an Enum member is only compared (==, !=, is, is not); take .value, "
                          "or use an IntEnum");
  TypedValue Plain = V;
  Plain.T = V.T.untagged();
  return Plain;
}

std::optional<frontend::Type>
FunctionCompiler::typeTupleOrEnumComparison(ComparisonOperator Op, const TypedValue &L,
                                            const TypedValue &R, PyObject *Node) {
  frontend::Type Decided = frontend::Type::scalar(Scalar::Bool);
  // x in t: x == t[0] or x == t[1] ...
  if ((Op == ComparisonOperator::In || Op == ComparisonOperator::NotIn) && R.T.isTuple()) {
    for (const TypedValue &E : tupleElements(R))
      typeComparison(ComparisonOperator::Equal, L, E, Node);
    return Decided;
  }
  // t == u: of equal lengths, element by element (else false).
  if ((Op == ComparisonOperator::Equal || Op == ComparisonOperator::NotEqual) && L.T.isTuple() &&
      R.T.isTuple() && !L.T.isEnum() && !R.T.isEnum()) {
    if (L.T.Elements.size() == R.T.Elements.size()) {
      std::vector<TypedValue> LE = tupleElements(L), RE = tupleElements(R);
      for (size_t I = 0; I < LE.size(); ++I)
        typeComparison(ComparisonOperator::Equal, LE[I], RE[I], Node);
    }
    return Decided;
  }
  if (!L.T.isEnum() && !R.T.isEnum())
    return std::nullopt;
  bool Equality = Op == ComparisonOperator::Equal || Op == ComparisonOperator::NotEqual;
  bool Identity = Op == ComparisonOperator::Is || Op == ComparisonOperator::IsNot;
  bool SameClass = L.T.isEnum() && R.T.isEnum() && L.T.Enum->Class == R.T.Enum->Class;
  bool BothInt = (!L.T.isEnum() || L.T.Enum->IsIntEnum) && (!R.T.isEnum() || R.T.Enum->IsIntEnum);
  if ((Equality && (SameClass || BothInt)) || (Identity && SameClass)) {
    TypedValue X = L, Y = R;
    X.T = L.T.untagged();
    Y.T = R.T.untagged();
    if (X.T.isTuple() && Y.T.isTuple() && X.T.Elements.size() == Y.T.Elements.size()) {
      std::vector<TypedValue> XE = tupleElements(X), YE = tupleElements(Y);
      for (size_t I = 0; I < XE.size(); ++I)
        typeComparison(ComparisonOperator::Equal, XE[I], YE[I], Node);
      return Decided;
    }
    typeComparison(ComparisonOperator::Equal, X, Y, Node);
    return Decided;
  }
  if (Equality || Identity) // members of other classes: another object
    return Decided;
  // <, <=, >, >= and in: an IntEnum member is its int.
  if (BothInt)
    return typeComparison(Op, typeEnumOperand(L, Node), typeEnumOperand(R, Node), Node);
  typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) + ": " +
                        L.T.str() + " and " + R.T.str() +
                        ": Enum members are only compared with ==, !=, is and is not");
}

} // namespace tidal::frontend
