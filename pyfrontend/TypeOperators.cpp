// Typing of operators: arithmetic, unary, comparisons (chained), and/or
// and the conditional expression, with Python's and Numba's rules. Each
// records the type its operands convert to (ExpressionType::Operands).
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "Fp8.h"
#include "Operators.h"

#include <cstdint>

namespace tidal::frontend {

TypedValue FunctionCompiler::typeBinOp(PyObject *Node) {
  TypedValue L = typeExpression(field(Node, "left").get());
  TypedValue R = typeExpression(field(Node, "right").get());
  return typeBinary(binaryOperatorOf(field(Node, "op").get()), L, R, Node);
}

// Node: the BinOp, or the augmented assignment, that the map keys it by.
// Python's a // c and a % c of constants (c != 0): the quotient rounds
// toward minus infinity, the remainder takes c's sign.
static int64_t foldFloorDivide(bool Quotient, int64_t A, int64_t C) {
  int64_t Q = A / C, R = A % C;
  if (R != 0 && ((R < 0) != (C < 0))) {
    Q -= 1;
    R += C;
  }
  return Quotient ? Q : R;
}

TypedValue FunctionCompiler::typeBinary(BinaryOperator Op, const TypedValue &L, const TypedValue &R,
                                        PyObject *Node) {
  if (L.T.isUndefined() || R.T.isUndefined())
    return TypedValue();
  if (L.T.isEnum() || R.T.isEnum()) // an IntEnum member computes as its int
    return typeBinary(Op, typeEnumOperand(L, Node), typeEnumOperand(R, Node), Node);
  if (!L.T.isScalar() || !R.T.isScalar())
    typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) +
                          ": " + L.T.str() + " and " + R.T.str());
  fp8::rejectOperands(*this, std::string("the operator ") + operatorSymbol(Op), L.T, R.T, Node);
  if (std::optional<TypedValue> Datetime = typeDatetimeBinary(Op, L, R, Node)) // Datetimes.cpp
    return *Datetime;
  Scalar Common = promoteArithmetic(L.T.Dtype, R.T.Dtype);
  bool Bitwise = Op == BinaryOperator::BitwiseAnd || Op == BinaryOperator::BitwiseOr ||
                 Op == BinaryOperator::BitwiseXor;
  bool Shift = Op == BinaryOperator::ShiftLeft || Op == BinaryOperator::ShiftRight;
  ExpressionType &Recorded = Typing.Expressions[Node];
  if (isComplex(Common)) {
    if (Op != BinaryOperator::Add && Op != BinaryOperator::Subtract &&
        Op != BinaryOperator::Multiply && Op != BinaryOperator::Divide &&
        Op != BinaryOperator::Power)
      typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) +
                            ": " + L.T.str() + " and " + R.T.str() +
                            ": complex numbers take + - * / ** in kernels");
    if (Op == BinaryOperator::Power)
      typeComplexPower(Node); // ComplexSupport.cpp
    Recorded.Operands = {frontend::Type::scalar(Common)};
    Recorded.T = frontend::Type::scalar(Common);
    Recorded.ConstInt.reset();
    return TypedValue(frontend::Type::scalar(Common));
  }
  if ((Bitwise || Shift) && isFloat(Common))
    typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) +
                          ": " + L.T.str() + " and " + R.T.str() +
                          ": bitwise operators need integers");
  if (Bitwise && L.T.isBool() && R.T.isBool())
    Common = Scalar::Bool;
  Scalar Result = Common;
  if (Op == BinaryOperator::Divide && !isFloat(Common))
    Result = Common = Scalar::Float64; // int / int is true division
  if (Op == BinaryOperator::MatrixMultiply)
    unsupported(Node, "the '@' operator is not supported on scalars");

  // Constant folding of integer + - * keeps indices like a[-1] constant.
  std::optional<int64_t> Folded;
  if (L.ConstInt && R.ConstInt && isInteger(Common)) {
    int64_t A = *L.ConstInt, C = *R.ConstInt;
    if (Op == BinaryOperator::Add)
      Folded = static_cast<int64_t>(static_cast<uint64_t>(A) + static_cast<uint64_t>(C));
    else if (Op == BinaryOperator::Subtract)
      Folded = static_cast<int64_t>(static_cast<uint64_t>(A) - static_cast<uint64_t>(C));
    else if (Op == BinaryOperator::Multiply)
      Folded = static_cast<int64_t>(static_cast<uint64_t>(A) * static_cast<uint64_t>(C));
    else if ((Op == BinaryOperator::FloorDivide || Op == BinaryOperator::Modulo) && C != 0 &&
             isSigned(Common) && !(A == INT64_MIN && C == -1))
      Folded = foldFloorDivide(Op == BinaryOperator::FloorDivide, A, C);
  }
  TypedValue Out(frontend::Type::scalar(Result));
  Out.ConstInt = Folded;
  Recorded.Operands = {frontend::Type::scalar(Common)};
  Recorded.T = Out.T;
  Recorded.ConstInt = Folded;
  return Out;
}

TypedValue FunctionCompiler::typeUnaryOp(PyObject *Node) {
  UnaryOperator Op = unaryOperatorOf(field(Node, "op").get());
  TypedValue V = typeEnumOperand(typeExpression(field(Node, "operand").get()), Node);
  if (V.T.isUndefined())
    return TypedValue();
  if (Op == UnaryOperator::Not) {
    checkCondition(V.T, Node);
    return makeScalar(Scalar::Bool, nullptr);
  }
  if (!V.T.isScalar())
    typingError(Node, "bad operand type for unary operator: " + V.T.str());
  fp8::rejectOperands(*this, "a unary operator", V.T, V.T, Node);
  // Numba widens small integers (and bools) as for binary arithmetic.
  Scalar S = isFloat(V.T.Dtype) || isComplex(V.T.Dtype) ? V.T.Dtype
                                                     : promoteArithmetic(V.T.Dtype, V.T.Dtype);
  if (isComplex(S)) {
    if (Op == UnaryOperator::Invert)
      typingError(Node, "bad operand type for unary ~: " + V.T.str());
    Typing.Expressions[Node].Operands = {frontend::Type::scalar(S)};
    return TypedValue(V.T);
  }
  if (Op == UnaryOperator::Invert && isFloat(S))
    typingError(Node, "bad operand type for unary ~: " + V.T.str());
  if (Op == UnaryOperator::Invert && V.T.isBool())
    S = Scalar::Bool;
  std::optional<int64_t> Folded;
  if (V.ConstInt && Op == UnaryOperator::Negate)
    Folded = static_cast<int64_t>(0 - static_cast<uint64_t>(*V.ConstInt));
  else if (V.ConstInt && Op == UnaryOperator::Plus)
    Folded = V.ConstInt;
  Typing.Expressions[Node].Operands = {frontend::Type::scalar(S)};
  TypedValue Out(frontend::Type::scalar(S));
  Out.ConstInt = Folded;
  return Out;
}

// The type both sides of one comparison convert to; undefined while a side is.
frontend::Type FunctionCompiler::typeComparison(ComparisonOperator Op, const TypedValue &L,
                                                const TypedValue &R, PyObject *Node) {
  if (L.T.isUndefined() || R.T.isUndefined())
    return frontend::Type();
  if (std::optional<frontend::Type> Optional = typeOptionalIdentity(Op, L, R))
    return *Optional; // `x is None` of an Optional: a test at run time
  // `x is None` of a value that is not None: a constant (Numba folds it,
  // and prunes an `if` on it). The none type marks the fold.
  if ((Op == ComparisonOperator::Is || Op == ComparisonOperator::IsNot) &&
      (L.T.isNone() || R.T.isNone()))
    return frontend::Type::none();
  if (std::optional<frontend::Type> Special = typeTupleOrEnumComparison(Op, L, R, Node))
    return *Special;
  if (!L.T.isScalar() || !R.T.isScalar())
    typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) +
                          ": " + L.T.str() + " and " + R.T.str());
  fp8::rejectOperands(*this, std::string("the comparison ") + operatorSymbol(Op), L.T, R.T, Node);
  if (std::optional<frontend::Type> Datetime = typeDatetimeComparison(Op, L, R, Node))
    return *Datetime;
  if (Op == ComparisonOperator::Is || Op == ComparisonOperator::IsNot ||
      Op == ComparisonOperator::In || Op == ComparisonOperator::NotIn)
    unsupported(Node, std::string("the '") + operatorSymbol(Op) +
                          "' operator is not supported on numbers");
  bool ComplexOperands = isComplex(L.T.Dtype) || isComplex(R.T.Dtype);
  if (ComplexOperands && Op != ComparisonOperator::Equal && Op != ComparisonOperator::NotEqual)
    typingError(Node, std::string("complex numbers have no order: ") + operatorSymbol(Op) +
                          " is not supported on " + L.T.str() + " and " + R.T.str());
  // Compare in the common type: mixed signed/unsigned compares as Numba does.
  if (!ComplexOperands && L.T.isBool() && R.T.isBool())
    return frontend::Type::scalar(Scalar::Int64);
  return frontend::Type::scalar(promoteArithmetic(L.T.Dtype, R.T.Dtype));
}

// `a is None`, `a is not None` where a side is None: whether both are.
int64_t FunctionCompiler::foldedIdentity(ComparisonOperator Op, const frontend::Type &L,
                                         const frontend::Type &R) {
  bool Same = L.isNone() && R.isNone();
  return (Op == ComparisonOperator::Is) == Same ? 1 : 0;
}

// An `if` whose test typing made a constant that Numba's dead-branch
// pruning folds: a literal parameter (`if flag:`) or `x is None`. Only the
// branch taken is typed and emitted.
bool FunctionCompiler::prunedTest(PyObject *Test, const std::optional<int64_t> &Constant) const {
  if (!Constant)
    return false;
  std::string Kind = nodeKind(Test);
  if (Kind == "Name")
    return ConstantParameters.count(identifierField(Test, "id")) > 0;
  if (Kind == "Compare")
    if (const ExpressionType *Typed = Typing.find(Test))
      return Typed->Operands.size() == 1 && Typed->Operands[0].isNone();
  return false;
}

TypedValue FunctionCompiler::typeCompare(PyObject *Node) {
  // a < b < c is (a < b) and (b < c), with b evaluated once.
  std::vector<PyObject *> Ops = listItems(field(Node, "ops").get());
  std::vector<PyObject *> Rights = listItems(field(Node, "comparators").get());
  // `x is None` takes an Optional as it is; other comparisons its value.
  auto Identity = [&](size_t I) {
    ComparisonOperator Op = comparisonOperatorOf(Ops[I]);
    return Op == ComparisonOperator::Is || Op == ComparisonOperator::IsNot;
  };
  KeepOptional = Ops.size() == 1 && Identity(0);
  TypedValue Left = typeExpression(field(Node, "left").get());
  std::vector<frontend::Type> Operands;
  bool Undefined = false;
  std::optional<int64_t> Folded;
  for (size_t I = 0; I < Ops.size(); ++I) {
    KeepOptional = Ops.size() == 1 && Identity(I);
    TypedValue Right = typeExpression(Rights[I]);
    ComparisonOperator Op = comparisonOperatorOf(Ops[I]);
    Operands.push_back(typeComparison(Op, Left, Right, Node));
    Undefined |= Operands.back().isUndefined();
    if (Ops.size() == 1 && Operands.back().isNone())
      Folded = foldedIdentity(Op, Left.T, Right.T);
    Left = Right;
  }
  Typing.Expressions[Node].Operands = std::move(Operands);
  if (Undefined)
    return TypedValue();
  TypedValue Result = makeScalar(Scalar::Bool, nullptr);
  Result.ConstInt = Folded;
  return Result;
}

TypedValue FunctionCompiler::typeBoolOp(PyObject *Node) {
  bool IsAnd = booleanOperatorOf(field(Node, "op").get()) == BooleanOperator::And;
  // The result is one of the operands (Python semantics): their unified type.
  frontend::Type T;
  for (PyObject *O : listItems(field(Node, "values").get())) {
    TypedValue V = typeExpression(O);
    if (V.T.isUndefined())
      return TypedValue();
    checkCondition(V.T, O);
    if (!unify(T, V.T, T))
      typingError(Node, "the operands of '" + std::string(IsAnd ? "and" : "or") +
                            "' have types that cannot unify");
  }
  return TypedValue(T);
}

TypedValue FunctionCompiler::typeIfExp(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body"), Else = field(Node, "orelse");
  TypedValue C = typeExpression(Test.get());
  if (!C.T.isUndefined())
    checkCondition(C.T, Test.get());
  TypedValue L = typeKeepingOptional(Body.get());
  TypedValue R = typeKeepingOptional(Else.get());
  if (L.T.isUndefined() || R.T.isUndefined())
    return TypedValue();
  frontend::Type T;
  if (!unify(L.T, R.T, T))
    typingError(Node, "the two branches of the conditional expression have types " +
                          L.T.str() + " and " + R.T.str() + ", which cannot unify");
  return TypedValue(T);
}

} // namespace tidal::frontend
