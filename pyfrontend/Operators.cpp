// The mapping from AST operator nodes to the operator enums, and back to
// their Python spelling for error messages.
#include "Operators.h"

#include "PyRef.h"

#include <stdexcept>
#include <string>
#include <unordered_map>

namespace tidal::frontend {

namespace {

// Looks up the class name of an AST operator node in one of the tables.
template <typename Operator>
Operator lookUp(const std::unordered_map<std::string, Operator> &Table, PyObject *Node,
                const char *What) {
  std::string Kind = typeName(Node);
  auto It = Table.find(Kind);
  if (It == Table.end())
    throw std::logic_error(std::string("unknown ") + What + " operator node 'ast." + Kind + "'");
  return It->second;
}

} // namespace

BinaryOperator binaryOperatorOf(PyObject *OperatorNode) {
  static const std::unordered_map<std::string, BinaryOperator> Table = {
      {"Add", BinaryOperator::Add},
      {"Sub", BinaryOperator::Subtract},
      {"Mult", BinaryOperator::Multiply},
      {"Div", BinaryOperator::Divide},
      {"FloorDiv", BinaryOperator::FloorDivide},
      {"Mod", BinaryOperator::Modulo},
      {"Pow", BinaryOperator::Power},
      {"LShift", BinaryOperator::ShiftLeft},
      {"RShift", BinaryOperator::ShiftRight},
      {"BitOr", BinaryOperator::BitwiseOr},
      {"BitXor", BinaryOperator::BitwiseXor},
      {"BitAnd", BinaryOperator::BitwiseAnd},
      {"MatMult", BinaryOperator::MatrixMultiply},
  };
  return lookUp(Table, OperatorNode, "binary");
}

UnaryOperator unaryOperatorOf(PyObject *OperatorNode) {
  static const std::unordered_map<std::string, UnaryOperator> Table = {
      {"USub", UnaryOperator::Negate},
      {"UAdd", UnaryOperator::Plus},
      {"Invert", UnaryOperator::Invert},
      {"Not", UnaryOperator::Not},
  };
  return lookUp(Table, OperatorNode, "unary");
}

ComparisonOperator comparisonOperatorOf(PyObject *OperatorNode) {
  static const std::unordered_map<std::string, ComparisonOperator> Table = {
      {"Eq", ComparisonOperator::Equal},
      {"NotEq", ComparisonOperator::NotEqual},
      {"Lt", ComparisonOperator::Less},
      {"LtE", ComparisonOperator::LessEqual},
      {"Gt", ComparisonOperator::Greater},
      {"GtE", ComparisonOperator::GreaterEqual},
      {"Is", ComparisonOperator::Is},
      {"IsNot", ComparisonOperator::IsNot},
      {"In", ComparisonOperator::In},
      {"NotIn", ComparisonOperator::NotIn},
  };
  return lookUp(Table, OperatorNode, "comparison");
}

BooleanOperator booleanOperatorOf(PyObject *OperatorNode) {
  static const std::unordered_map<std::string, BooleanOperator> Table = {
      {"And", BooleanOperator::And},
      {"Or", BooleanOperator::Or},
  };
  return lookUp(Table, OperatorNode, "boolean");
}

const char *operatorSymbol(BinaryOperator Operator) {
  switch (Operator) {
  case BinaryOperator::Add: return "+";
  case BinaryOperator::Subtract: return "-";
  case BinaryOperator::Multiply: return "*";
  case BinaryOperator::Divide: return "/";
  case BinaryOperator::FloorDivide: return "//";
  case BinaryOperator::Modulo: return "%";
  case BinaryOperator::Power: return "**";
  case BinaryOperator::ShiftLeft: return "<<";
  case BinaryOperator::ShiftRight: return ">>";
  case BinaryOperator::BitwiseOr: return "|";
  case BinaryOperator::BitwiseXor: return "^";
  case BinaryOperator::BitwiseAnd: return "&";
  case BinaryOperator::MatrixMultiply: return "@";
  }
  return "?";
}

const char *operatorSymbol(UnaryOperator Operator) {
  switch (Operator) {
  case UnaryOperator::Negate: return "-";
  case UnaryOperator::Plus: return "+";
  case UnaryOperator::Invert: return "~";
  case UnaryOperator::Not: return "not";
  }
  return "?";
}

const char *operatorSymbol(ComparisonOperator Operator) {
  switch (Operator) {
  case ComparisonOperator::Equal: return "==";
  case ComparisonOperator::NotEqual: return "!=";
  case ComparisonOperator::Less: return "<";
  case ComparisonOperator::LessEqual: return "<=";
  case ComparisonOperator::Greater: return ">";
  case ComparisonOperator::GreaterEqual: return ">=";
  case ComparisonOperator::Is: return "is";
  case ComparisonOperator::IsNot: return "is not";
  case ComparisonOperator::In: return "in";
  case ComparisonOperator::NotIn: return "not in";
  }
  return "?";
}

const char *operatorSymbol(BooleanOperator Operator) {
  return Operator == BooleanOperator::And ? "and" : "or";
}

} // namespace tidal::frontend
