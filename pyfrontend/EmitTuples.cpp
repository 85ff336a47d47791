// Emission of tuples, namedtuples and enums as TypeTuples.cpp typed them:
// Enum members and namedtuples frozen from Python objects, t[i] with a
// run-time index (a chain of selects), `x in t`, `t == u` and the
// comparisons of Enum members.
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "TupleTypes.h"

#include "llvm/IR/Constants.h"

using namespace llvm;

namespace tidal::frontend {

std::optional<TypedValue> FunctionCompiler::emitEnumOrNamedTuple(PyObject *O, PyObject *Node) {
  if (isNamedTupleInstance(O)) {
    std::vector<TypedValue> Elements;
    for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(O); ++I)
      Elements.push_back(emitFrozen(PyTuple_GET_ITEM(O, I), Node));
    TypedValue V = makeTuple(std::move(Elements));
    V.T.Named = namedTupleInfoOf(O);
    return V;
  }
  if (!isEnumMember(O))
    return std::nullopt;
  PyObject *Value = enumValueOf(O);
  if (!Value)
    throw PythonErrorSet();
  TypedValue V = emitFrozen(Value, Node);
  V.T.Enum = enumInfoOf(O);
  return V;
}

TypedValue FunctionCompiler::emitTupleIndex(const TypedValue &Base, const TypedValue &Index,
                                            PyObject *IndexNode, PyObject *TupleNode) {
  int64_t Size = static_cast<int64_t>(Base.T.Elements.size());
  TypedValue Result(Base.T.Elements[0]);
  // A chain of selects on the index (wrapped once if negative, as Python
  // does); LLVM turns one over constants into a table lookup.
  std::vector<TypedValue> Elements = tupleElements(Base);
  Value *I = B.CreateIntCast(Index.scalar(), B.getInt64Ty(), isSigned(Index.T.Dtype), "tuple.index");
  Value *Original = I;
  if (isSigned(Index.T.Dtype))
    I = B.CreateSelect(B.CreateICmpSLT(I, B.getInt64(0)), B.CreateAdd(I, B.getInt64(Size)), I);
  if (Options.Debug) { // as an array index out of bounds, saying it is a tuple's
    SourceLocation Where = locate(IndexNode);
    std::string Message = "tuple '" + sourceText(TupleNode) + "' (tuple index out of range) in " +
                          (IsDevice ? "device function '" : "kernel '") + functionName() +
                          "' at " + Where.File + ":" + std::to_string(Where.Line);
    BasicBlock *Fail = BasicBlock::Create(Ctx, "tuple.index.error", F);
    BasicBlock *Ok = BasicBlock::Create(Ctx, "tuple.index.ok", F);
    B.CreateCondBr(B.CreateICmpUGE(I, B.getInt64(Size)), Fail, Ok);
    B.SetInsertPoint(Fail);
    callMarker("bounds.error", B.getVoidTy(),
               {constantString(Message, "bounds.where"), Original, B.getInt64(Size), B.getInt32(0)});
    B.CreateUnreachable();
    B.SetInsertPoint(Ok);
  }
  Result.Parts = Elements[0].Parts;
  for (int64_t K = 1; K < Size; ++K) {
    Value *Is = B.CreateICmpEQ(I, B.getInt64(K));
    for (size_t P = 0; P < Result.Parts.size(); ++P)
      Result.Parts[P] = B.CreateSelect(Is, Elements[K].Parts[P], Result.Parts[P]);
  }
  return Result;
}

// A constant bool.
static TypedValue constantBool(FunctionCompiler &C, bool Value) {
  TypedValue R = C.makeScalar(Scalar::Bool, C.builder().getInt1(Value));
  R.ConstInt = Value;
  return R;
}

std::optional<TypedValue> FunctionCompiler::emitTupleOrEnumComparison(ComparisonOperator Op,
                                                                      const TypedValue &L,
                                                                      const TypedValue &R,
                                                                      PyObject *Node) {
  bool Negated = Op == ComparisonOperator::NotIn || Op == ComparisonOperator::NotEqual ||
                 Op == ComparisonOperator::IsNot;
  auto Not = [&](const TypedValue &V) { return makeScalar(Scalar::Bool, B.CreateNot(V.scalar())); };
  // Each element comparison in the type typing gave it.
  auto Equal = [&](const TypedValue &X, const TypedValue &Y) {
    return emitComparison(ComparisonOperator::Equal, X, Y,
                          typeComparison(ComparisonOperator::Equal, X, Y, Node), Node);
  };
  auto AllEqual = [&](const TypedValue &X, const TypedValue &Y) {
    TypedValue All = constantBool(*this, true);
    std::vector<TypedValue> XE = tupleElements(X), YE = tupleElements(Y);
    for (size_t I = 0; I < XE.size(); ++I)
      All = makeScalar(Scalar::Bool, B.CreateAnd(All.scalar(), Equal(XE[I], YE[I]).scalar()));
    return Negated ? Not(All) : All;
  };
  if ((Op == ComparisonOperator::In || Op == ComparisonOperator::NotIn) && R.T.isTuple()) {
    TypedValue Found = constantBool(*this, false);
    for (const TypedValue &E : tupleElements(R))
      Found = makeScalar(Scalar::Bool, B.CreateOr(Found.scalar(), Equal(L, E).scalar()));
    return Negated ? Not(Found) : Found;
  }
  if ((Op == ComparisonOperator::Equal || Op == ComparisonOperator::NotEqual) && L.T.isTuple() &&
      R.T.isTuple() && !L.T.isEnum() && !R.T.isEnum()) {
    if (L.T.Elements.size() != R.T.Elements.size())
      return constantBool(*this, Negated);
    return AllEqual(L, R);
  }
  if (!L.T.isEnum() && !R.T.isEnum())
    return std::nullopt;
  bool Equality = Op == ComparisonOperator::Equal || Op == ComparisonOperator::NotEqual;
  bool Identity = Op == ComparisonOperator::Is || Op == ComparisonOperator::IsNot;
  bool SameClass = L.T.isEnum() && R.T.isEnum() && L.T.Enum->Class == R.T.Enum->Class;
  bool BothInt = (!L.T.isEnum() || L.T.Enum->IsIntEnum) && (!R.T.isEnum() || R.T.Enum->IsIntEnum);
  TypedValue X = L, Y = R;
  X.T = L.T.untagged();
  Y.T = R.T.untagged();
  if ((Equality && (SameClass || BothInt)) || (Identity && SameClass)) {
    if (X.T.isTuple() && Y.T.isTuple() && X.T.Elements.size() == Y.T.Elements.size())
      return AllEqual(X, Y);
    TypedValue Same = Equal(X, Y);
    return Negated ? Not(Same) : Same;
  }
  if (Equality || Identity)
    return constantBool(*this, Negated);
  return emitComparison(Op, X, Y, typeComparison(Op, X, Y, Node), Node); // IntEnum order
}

} // namespace tidal::frontend
