// Python's operators as enums: each AST operator node (ast.Add, ast.Lt,
// ast.And, ...) is mapped once, where the expression is read, and the
// typing and emitting code switch over the enum instead of comparing the
// node's class name.
#ifndef TIDAL_FRONTEND_OPERATORS_H
#define TIDAL_FRONTEND_OPERATORS_H

typedef struct _object PyObject;

namespace tidal::frontend {

// + - * / // % ** << >> | ^ & @ (ast.BinOp, ast.AugAssign)
enum class BinaryOperator {
  Add, Subtract, Multiply, Divide, FloorDivide, Modulo, Power,
  ShiftLeft, ShiftRight, BitwiseOr, BitwiseXor, BitwiseAnd, MatrixMultiply,
};

// -x +x ~x not x (ast.UnaryOp)
enum class UnaryOperator { Negate, Plus, Invert, Not };

// == != < <= > >= is, is not, in, not in (ast.Compare)
enum class ComparisonOperator {
  Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, Is, IsNot, In, NotIn,
};

// and, or (ast.BoolOp)
enum class BooleanOperator { And, Or };

// The operator of an AST operator node; the node kinds are fixed by the
// Python grammar, so an unknown one is an internal error (std::logic_error).
BinaryOperator binaryOperatorOf(PyObject *OperatorNode);
UnaryOperator unaryOperatorOf(PyObject *OperatorNode);
ComparisonOperator comparisonOperatorOf(PyObject *OperatorNode);
BooleanOperator booleanOperatorOf(PyObject *OperatorNode);

// The operator as it is written in Python source ("+", "<=", "not in").
const char *operatorSymbol(BinaryOperator Operator);
const char *operatorSymbol(UnaryOperator Operator);
const char *operatorSymbol(ComparisonOperator Operator);
const char *operatorSymbol(BooleanOperator Operator);

} // namespace tidal::frontend

#endif
