// datetime64 and timedelta64 (NumPy's, as Numba types them): int64 counts of
// a time unit, NaT being INT64_MIN. Typing: which operators they take and in
// which unit (the finer of the two; calendar units Y and M only with each
// other) they compute; emission: the counts scaled to that unit, NaT kept
// (any NaT operand gives NaT, or NaN for a float result; comparisons with
// NaT are false, != true).
#include "FunctionCompiler.h"
#include "AstAccess.h"

#include "llvm/IR/Constants.h"

using namespace llvm;

namespace tidal::frontend {

namespace {

Value *isNaT(IRBuilder<> &B, Value *X) {
  return B.CreateICmpEQ(X, B.getInt64(std::numeric_limits<int64_t>::min()));
}

} // namespace

std::optional<frontend::Type> FunctionCompiler::frozenDatetimeType(PyObject *O) {
  PyRef DType = PyRef::borrow(O).attrOrNull("dtype");
  PyRef Kind = DType ? DType.attrOrNull("kind") : PyRef();
  if (!Kind || !PyUnicode_Check(Kind.get()) || (Kind.str() != "M" && Kind.str() != "m"))
    return std::nullopt;
  try {
    return parseType(DType.attr("name").str()); // datetime64[D]
  } catch (const std::invalid_argument &) {
    return std::nullopt; // datetime64[2D]: a multiple of a unit
  }
}

std::optional<TypedValue> FunctionCompiler::typeDatetimeBinary(BinaryOperator Op, const TypedValue &L,
                                                               const TypedValue &R, PyObject *Node) {
  const frontend::Type &X = L.T, &Y = R.T;
  if (!isDatetime(X.Dtype) && !isDatetime(Y.Dtype))
    return std::nullopt;
  auto Fail = [&](const std::string &Why) {
    typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) + ": " +
                          X.str() + " and " + Y.str() + Why);
  };
  bool Add = Op == BinaryOperator::Add, Subtract = Op == BinaryOperator::Subtract;
  auto IsInt = [](const frontend::Type &T) { return T.isIntegerScalar() || T.isBool(); };
  frontend::Type Result;
  TimeUnit Common = TimeUnit::Generic;
  Scalar OperandKind = Scalar::Timedelta64;
  if (isDatetime(X.Dtype) && isDatetime(Y.Dtype)) {
    if (!commonTimeUnit(X.Unit, Y.Unit, Common))
      Fail(": their units convert to no common one");
    bool XDate = X.Dtype == Scalar::Datetime64, YDate = Y.Dtype == Scalar::Datetime64;
    if (XDate && YDate && Subtract) // date - date
      Result = frontend::Type::datetime(Scalar::Timedelta64, Common);
    else if ((XDate != YDate) && (Add || (Subtract && XDate))) // date +- delta, delta + date
      Result = frontend::Type::datetime(Scalar::Datetime64, Common);
    else if (!XDate && !YDate && (Add || Subtract))
      Result = frontend::Type::datetime(Scalar::Timedelta64, Common);
    else if (!XDate && !YDate && Op == BinaryOperator::Divide)
      Result = frontend::Type::scalar(Scalar::Float64);
    else if (!XDate && !YDate && Op == BinaryOperator::FloorDivide)
      Result = frontend::Type::scalar(Scalar::Int64);
    else
      Fail("");
    OperandKind = XDate && YDate ? Scalar::Datetime64 : Scalar::Timedelta64;
  } else {
    const frontend::Type &Delta = isDatetime(X.Dtype) ? X : Y;
    const frontend::Type &Other = isDatetime(X.Dtype) ? Y : X;
    // A datetime or timedelta and an integer count of its unit: + (either
    // side), - (the count second), as NumPy's.
    if (IsInt(Other) && (Add || (Subtract && isDatetime(X.Dtype)))) {
      ExpressionType &Recorded = Typing.Expressions[Node];
      Recorded.Operands = {frontend::Type::datetime(Delta.Dtype, Delta.Unit)};
      Recorded.T = Delta;
      Recorded.ConstInt.reset();
      return TypedValue(Delta);
    }
    // A timedelta with an integer: * (either side), / and // (delta first).
    bool Scales = Op == BinaryOperator::Multiply ||
                  (isDatetime(X.Dtype) &&
                   (Op == BinaryOperator::Divide || Op == BinaryOperator::FloorDivide));
    if (Delta.Dtype != Scalar::Timedelta64 || !IsInt(Other) || !Scales)
      Fail(": an integer is added to or subtracted from a datetime64 or timedelta64, or "
           "multiplies or divides a timedelta64");
    Common = Delta.Unit;
    Result = frontend::Type::datetime(Scalar::Timedelta64, Common);
  }
  ExpressionType &Recorded = Typing.Expressions[Node];
  Recorded.Operands = {frontend::Type::datetime(OperandKind, Common)};
  Recorded.T = Result;
  Recorded.ConstInt.reset();
  return TypedValue(Result);
}

std::optional<frontend::Type> FunctionCompiler::typeDatetimeComparison(ComparisonOperator Op,
                                                                       const TypedValue &L,
                                                                       const TypedValue &R,
                                                                       PyObject *Node) {
  if (!isDatetime(L.T.Dtype) && !isDatetime(R.T.Dtype))
    return std::nullopt;
  TimeUnit Common;
  if (L.T.Dtype != R.T.Dtype || !commonTimeUnit(L.T.Unit, R.T.Unit, Common) ||
      Op == ComparisonOperator::Is || Op == ComparisonOperator::IsNot ||
      Op == ComparisonOperator::In || Op == ComparisonOperator::NotIn)
    typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) + ": " +
                          L.T.str() + " and " + R.T.str());
  return frontend::Type::datetime(L.T.Dtype, Common);
}

Value *FunctionCompiler::datetimeIn(const TypedValue &V, TimeUnit Unit) {
  if (!isDatetime(V.T.Dtype)) // an integer operand
    return B.CreateIntCast(V.scalar(), B.getInt64Ty(), V.T.isIntegerScalar() && isSigned(V.T.Dtype));
  int64_t Ratio = timeUnitRatio(V.T.Unit, Unit);
  if (Ratio == 1)
    return V.scalar();
  return B.CreateSelect(isNaT(B, V.scalar()), V.scalar(),
                        B.CreateMul(V.scalar(), B.getInt64(Ratio)));
}

TypedValue FunctionCompiler::emitDatetimeBinary(BinaryOperator Op, const TypedValue &L,
                                                const TypedValue &R, PyObject *Node) {
  const ExpressionType &Typed = typeOf(Node);
  TimeUnit Unit = Typed.Operands[0].Unit;
  Value *X = datetimeIn(L, Unit), *Y = datetimeIn(R, Unit);
  // NaT in: NaT out (the datetime operands only: an integer is a count).
  Value *AnyNaT = B.getFalse();
  if (isDatetime(L.T.Dtype))
    AnyNaT = B.CreateOr(AnyNaT, isNaT(B, X));
  if (isDatetime(R.T.Dtype))
    AnyNaT = B.CreateOr(AnyNaT, isNaT(B, Y));
  const frontend::Type &Result = Typed.T;
  Value *V = nullptr;
  switch (Op) {
  case BinaryOperator::Add:
    V = B.CreateAdd(X, Y);
    break;
  case BinaryOperator::Subtract:
    V = B.CreateSub(X, Y);
    break;
  case BinaryOperator::Multiply:
    V = B.CreateMul(X, Y);
    break;
  case BinaryOperator::Divide:
    if (Result.isFloatScalar()) {
      V = B.CreateFDiv(B.CreateSIToFP(X, B.getDoubleTy()), B.CreateSIToFP(Y, B.getDoubleTy()));
      TypedValue F = makeScalar(Scalar::Float64,
                                B.CreateSelect(AnyNaT, ConstantFP::getNaN(B.getDoubleTy()), V));
      return F;
    }
    [[fallthrough]];
  case BinaryOperator::FloorDivide: {
    // Floor, as NumPy's; a zero divisor gives NaT (0 for delta // delta).
    Value *Zero = B.getInt64(0);
    Value *IsZero = B.CreateICmpEQ(Y, Zero);
    Value *SafeY = B.CreateSelect(IsZero, B.getInt64(1), Y);
    Value *Q = B.CreateSDiv(X, SafeY), *Rem = B.CreateSRem(X, SafeY);
    Value *Adjust = B.CreateAnd(B.CreateICmpNE(Rem, Zero),
                                B.CreateICmpSLT(B.CreateXor(Rem, SafeY), Zero));
    V = B.CreateSelect(Adjust, B.CreateSub(Q, B.getInt64(1)), Q);
    AnyNaT = B.CreateOr(AnyNaT, IsZero);
    break;
  }
  default:
    internalError(Node, "a datetime operation typing did not allow");
  }
  TypedValue Out(Result);
  Out.Parts.push_back(B.CreateSelect(
      AnyNaT, B.getInt64(Result.isIntegerScalar() ? 0 : std::numeric_limits<int64_t>::min()), V));
  return Out;
}

TypedValue FunctionCompiler::emitDatetimeComparison(ComparisonOperator Op, const TypedValue &L,
                                                    const TypedValue &R,
                                                    const frontend::Type &Common) {
  Value *X = datetimeIn(L, Common.Unit), *Y = datetimeIn(R, Common.Unit);
  Value *AnyNaT = B.CreateOr(isNaT(B, X), isNaT(B, Y));
  Value *C = nullptr;
  switch (Op) {
  case ComparisonOperator::Equal: C = B.CreateICmpEQ(X, Y); break;
  case ComparisonOperator::NotEqual: C = B.CreateICmpNE(X, Y); break;
  case ComparisonOperator::Less: C = B.CreateICmpSLT(X, Y); break;
  case ComparisonOperator::LessEqual: C = B.CreateICmpSLE(X, Y); break;
  case ComparisonOperator::Greater: C = B.CreateICmpSGT(X, Y); break;
  default: C = B.CreateICmpSGE(X, Y); break;
  }
  Value *V = Op == ComparisonOperator::NotEqual ? B.CreateOr(AnyNaT, C)
                                                : B.CreateAnd(B.CreateNot(AnyNaT), C);
  return makeScalar(Scalar::Bool, V);
}

} // namespace tidal::frontend
