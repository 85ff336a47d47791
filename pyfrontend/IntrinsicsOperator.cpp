// The operator module: operator.add(a, b) and its kin are the operators
// written in the source (a + b), with the same typing and code; the
// in-place forms (operator.iadd) are the same on numbers. Their Python
// objects live in the C module _operator, which `operator` re-exports, so
// the rows are keyed "_operator.<name>".
#include "IntrinsicTable.h"

#include <cstring>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// What one function of the operator module computes.
struct OperatorFunction {
  const char *Name; // without the module
  enum { BinaryKind, ComparisonKind, UnaryKind } Kind;
  BinaryOperator Binary;
  ComparisonOperator Comparison;
  UnaryOperator Unary;
};

constexpr BinaryOperator NoBinary = BinaryOperator::Add;
constexpr ComparisonOperator NoComparison = ComparisonOperator::Equal;
constexpr UnaryOperator NoUnary = UnaryOperator::Plus;

#define TIDAL_BINARY(Name, InPlace, Op)                                                          \
  {Name, OperatorFunction::BinaryKind, BinaryOperator::Op, NoComparison, NoUnary},               \
      {InPlace, OperatorFunction::BinaryKind, BinaryOperator::Op, NoComparison, NoUnary}
#define TIDAL_COMPARISON(Name, Op)                                                               \
  { Name, OperatorFunction::ComparisonKind, NoBinary, ComparisonOperator::Op, NoUnary }
#define TIDAL_UNARY(Name, Op)                                                                    \
  { Name, OperatorFunction::UnaryKind, NoBinary, NoComparison, UnaryOperator::Op }

const OperatorFunction Functions[] = {
    TIDAL_BINARY("add", "iadd", Add),
    TIDAL_BINARY("sub", "isub", Subtract),
    TIDAL_BINARY("mul", "imul", Multiply),
    TIDAL_BINARY("truediv", "itruediv", Divide),
    TIDAL_BINARY("floordiv", "ifloordiv", FloorDivide),
    TIDAL_BINARY("mod", "imod", Modulo),
    TIDAL_BINARY("pow", "ipow", Power),
    TIDAL_BINARY("lshift", "ilshift", ShiftLeft),
    TIDAL_BINARY("rshift", "irshift", ShiftRight),
    TIDAL_BINARY("and_", "iand", BitwiseAnd),
    TIDAL_BINARY("or_", "ior", BitwiseOr),
    TIDAL_BINARY("xor", "ixor", BitwiseXor),
    TIDAL_COMPARISON("eq", Equal),     TIDAL_COMPARISON("ne", NotEqual),
    TIDAL_COMPARISON("lt", Less),      TIDAL_COMPARISON("le", LessEqual),
    TIDAL_COMPARISON("gt", Greater),   TIDAL_COMPARISON("ge", GreaterEqual),
    TIDAL_UNARY("neg", Negate),        TIDAL_UNARY("pos", Plus),
    TIDAL_UNARY("invert", Invert),     TIDAL_UNARY("inv", Invert),
    TIDAL_UNARY("not_", Not),
};

#undef TIDAL_BINARY
#undef TIDAL_COMPARISON
#undef TIDAL_UNARY

const OperatorFunction &functionOf(const IntrinsicCall &Call) {
  const char *Name = Call.Record->PythonPath + std::strlen("_operator.");
  for (const OperatorFunction &Function : Functions)
    if (std::strcmp(Function.Name, Name) == 0)
      return Function;
  throw CompileError("CompileError", std::string("internal error: no operator function ") + Name,
                     Call.C.location(Call.Node));
}

std::string pythonName(const IntrinsicCall &Call) {
  return std::string("operator.") + functionOf(Call).Name;
}

// The type of -x, +x, ~x: Numba widens small integers and bools as for
// binary arithmetic; ~ keeps a bool a bool.
Scalar unaryResult(IntrinsicCall &Call, UnaryOperator Op) {
  const TypedValue &X = Call.Args[0];
  if (!X.T.isScalar())
    Call.C.typingError(Call.ArgNodes[0], "bad operand type for " + pythonName(Call) + "(): " +
                                             X.T.str());
  Scalar S = X.T.Dtype;
  if ((isComplex(S) || isFloat(S)) && Op == UnaryOperator::Invert)
    Call.C.typingError(Call.ArgNodes[0], "bad operand type for " + pythonName(Call) + "(): " +
                                             X.T.str() + ": ~ needs an integer");
  if (Op == UnaryOperator::Invert && X.T.isBool())
    return Scalar::Bool;
  return isFloat(S) || isComplex(S) ? S : promoteArithmetic(S, S);
}

TypedValue typeOperatorFunction(IntrinsicCall &Call) {
  const OperatorFunction &Function = functionOf(Call);
  std::string Name = pythonName(Call);
  if (Function.Kind == OperatorFunction::UnaryKind) {
    expectArgCount(Call, Name, 1, 1);
    if (Function.Unary == UnaryOperator::Not) {
      Call.C.checkCondition(Call.Args[0].T, Call.ArgNodes[0]);
      return TypedValue(Type::scalar(Scalar::Bool));
    }
    TypedValue R(Type::scalar(unaryResult(Call, Function.Unary)));
    if (Call.Args[0].ConstInt && isInteger(R.T.Dtype))
      R.ConstInt = Function.Unary == UnaryOperator::Negate
                       ? static_cast<int64_t>(0 - static_cast<uint64_t>(*Call.Args[0].ConstInt))
                       : *Call.Args[0].ConstInt;
    if (Function.Unary == UnaryOperator::Invert)
      R.ConstInt.reset();
    return R;
  }
  expectArgCount(Call, Name, 2, 2);
  if (Function.Kind == OperatorFunction::BinaryKind)
    return Call.C.typeBinaryOperator(Function.Binary, Call.Args[0], Call.Args[1], Call.Node);
  Call.C.typeComparisonOperator(Function.Comparison, Call.Args[0], Call.Args[1], Call.Node);
  return TypedValue(Type::scalar(Scalar::Bool));
}

TypedValue emitOperatorFunction(IntrinsicCall &Call, const Type &Result) {
  const OperatorFunction &Function = functionOf(Call);
  if (Function.Kind == OperatorFunction::BinaryKind)
    return Call.C.emitBinaryOperator(Function.Binary, Call.Args[0], Call.Args[1], Call.Node);
  if (Function.Kind == OperatorFunction::ComparisonKind) {
    // The type both sides compare in, as typing decided it.
    Type Operand = Call.C.typeComparisonOperator(Function.Comparison, Call.Args[0], Call.Args[1],
                                                 Call.Node);
    return Call.C.emitComparisonOperator(Function.Comparison, Call.Args[0], Call.Args[1], Operand,
                                         Call.Node);
  }
  IRBuilder<> &B = Call.C.builder();
  if (Function.Unary == UnaryOperator::Not)
    return Call.C.makeScalar(Scalar::Bool,
                             B.CreateNot(Call.C.truth(Call.Args[0], Call.ArgNodes[0])));
  Scalar S = Result.Dtype;
  TypedValue X = Call.C.convert(Call.Args[0], Result, Call.Node);
  Value *V = X.scalar();
  if (Function.Unary == UnaryOperator::Invert)
    return Call.C.makeScalar(S, B.CreateNot(V));
  if (Function.Unary == UnaryOperator::Plus)
    return X;
  if (isComplex(S))
    return Call.C.makeScalar(S, Call.C.makeComplex(S, B.CreateFNeg(B.CreateExtractValue(V, 0)),
                                                   B.CreateFNeg(B.CreateExtractValue(V, 1))));
  return Call.C.makeScalar(S, isFloat(S) ? B.CreateFNeg(V) : B.CreateNeg(V));
}

// operator.truth(x) is bool(x); operator.abs(x) is abs(x).
TypedValue typeTruth(IntrinsicCall &Call) {
  expectArgCount(Call, "operator.truth", 1, 1);
  Call.C.checkCondition(Call.Args[0].T, Call.ArgNodes[0]);
  return TypedValue(Type::scalar(Scalar::Bool));
}
TypedValue emitTruth(IntrinsicCall &Call, const Type &) {
  return Call.C.makeScalar(Scalar::Bool, Call.C.truth(Call.Args[0], Call.ArgNodes[0]));
}
TypedValue typeAbsolute(IntrinsicCall &Call) {
  return findIntrinsic("builtins.abs")->TypeRule(Call);
}
TypedValue emitAbsolute(IntrinsicCall &Call, const Type &Result) {
  return findIntrinsic("builtins.abs")->Emitter(Call, Result);
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> operatorIntrinsics() {
  static const std::vector<IntrinsicRecord> Records = [] {
    static std::vector<std::string> Paths, Docs;
    for (const OperatorFunction &Function : Functions) {
      Paths.push_back(std::string("_operator.") + Function.Name);
      const char *Symbol = Function.Kind == OperatorFunction::BinaryKind
                               ? operatorSymbol(Function.Binary)
                           : Function.Kind == OperatorFunction::ComparisonKind
                               ? operatorSymbol(Function.Comparison)
                               : operatorSymbol(Function.Unary);
      Docs.push_back(std::string("operator.") + Function.Name + ": the operator " + Symbol + ".");
    }
    std::vector<IntrinsicRecord> Out;
    for (size_t I = 0; I < Paths.size(); ++I)
      Out.push_back({Paths[I].c_str(), IntrinsicKind::Function, typeOperatorFunction,
                     emitOperatorFunction, "", Docs[I].c_str()});
    Out.push_back({"_operator.truth", IntrinsicKind::Function, typeTruth, emitTruth, "",
                   "operator.truth(x): bool(x)."});
    Out.push_back({"_operator.abs", IntrinsicKind::Function, typeAbsolute, emitAbsolute, "",
                   "operator.abs(x): abs(x)."});
    return Out;
  }();
  return Records;
}

} // namespace tidal::frontend
