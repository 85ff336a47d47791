// Emission of operators: arithmetic, unary, comparisons (chained), and/or,
// and the conditional expression, with Python's and Numba's semantics, in
// the types typing recorded (TypeOperators.cpp).
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "Operators.h"

#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace tidal::frontend {

// --- arithmetic --------------------------------------------------------------------

TypedValue FunctionCompiler::emitBinOp(PyObject *Node) {
  TypedValue L = emitExpression(field(Node, "left").get());
  TypedValue R = emitExpression(field(Node, "right").get());
  return emitBinary(binaryOperatorOf(field(Node, "op").get()), L, R, Node);
}

// Node: the BinOp, or the augmented assignment, whose operand type typing
// recorded.
TypedValue FunctionCompiler::emitBinary(BinaryOperator Op, const TypedValue &L, const TypedValue &R,
                                        PyObject *Node) {
  const ExpressionType &Typed = typeOf(Node);
  if (Typed.Operands.size() != 1)
    internalError(Node, "the operation '" + sourceText(Node) + "' has no operand type");
  frontend::Type CommonType = Typed.Operands[0];
  if (isDatetime(CommonType.Dtype))
    return emitDatetimeBinary(Op, L, R, Node); // Datetimes.cpp
  Scalar Common = CommonType.Dtype, Result = Typed.T.Dtype;
  if (isComplex(Common) && Op == BinaryOperator::Power)
    return emitComplexPower(L, R, Common, Node); // ComplexSupport.cpp
  if (isComplex(Common))
    return makeScalar(Common, complexArithmetic(Op, Common, convert(L, CommonType, Node).scalar(),
                                                convert(R, CommonType, Node).scalar()));
  TypedValue A = convert(L, CommonType, Node), C = convert(R, CommonType, Node);
  Value *X = A.scalar(), *Y = C.scalar();
  bool Float = isFloat(Common), Signed = isSigned(Common);
  Value *V = nullptr;
  if (Op == BinaryOperator::Divide || Op == BinaryOperator::FloorDivide ||
      Op == BinaryOperator::Modulo)
    checkDivisor(Y, Node); // debug mode: ZeroDivisionError
  switch (Op) {
  case BinaryOperator::Add:
    V = Float ? B.CreateFAdd(X, Y) : B.CreateAdd(X, Y);
    break;
  case BinaryOperator::Subtract:
    V = Float ? B.CreateFSub(X, Y) : B.CreateSub(X, Y);
    break;
  case BinaryOperator::Multiply:
    V = Float ? B.CreateFMul(X, Y) : B.CreateMul(X, Y);
    break;
  case BinaryOperator::Divide:
    V = B.CreateFDiv(X, Y);
    break;
  case BinaryOperator::FloorDivide:
  case BinaryOperator::Modulo: {
    bool IsFloorDivide = Op == BinaryOperator::FloorDivide;
    if (!Float)
      return integerDivide(IsFloorDivide, A, C);
    auto [Quotient, Remainder] = floatDivMod(X, Y);
    V = IsFloorDivide ? Quotient : Remainder;
    break;
  }
  case BinaryOperator::Power:
    if (!Float)
      return integerPower(A, C);
    // Through the math marker: each target has its own pow (libdevice, libm).
    if (Common == Scalar::Float16 || Common == Scalar::BFloat16) {
      X = B.CreateFPExt(X, B.getFloatTy());
      Y = B.CreateFPExt(Y, B.getFloatTy());
    }
    V = callMarker(Common == Scalar::Float64 ? "math.pow.f64" : "math.pow.f32", X->getType(), {X, Y});
    if (Common == Scalar::Float16 || Common == Scalar::BFloat16)
      V = B.CreateFPTrunc(V, llvmType(Common));
    break;
  case BinaryOperator::BitwiseAnd:
    V = B.CreateAnd(X, Y);
    break;
  case BinaryOperator::BitwiseOr:
    V = B.CreateOr(X, Y);
    break;
  case BinaryOperator::BitwiseXor:
    V = B.CreateXor(X, Y);
    break;
  case BinaryOperator::ShiftLeft:
  case BinaryOperator::ShiftRight: {
    // Shifting by the width or more gives 0 (or the sign) instead of poison.
    unsigned Bits = bitWidth(Common);
    Value *Limit = ConstantInt::get(Y->getType(), Bits - 1);
    Value *Amount = B.CreateSelect(B.CreateICmpUGT(Y, Limit), Limit, Y);
    if (Op == BinaryOperator::ShiftLeft) {
      V = B.CreateShl(X, Amount);
      V = B.CreateSelect(B.CreateICmpUGT(Y, Limit), ConstantInt::get(X->getType(), 0), V);
    } else {
      V = Signed ? B.CreateAShr(X, Amount) : B.CreateLShr(X, Amount);
      if (!Signed)
        V = B.CreateSelect(B.CreateICmpUGT(Y, Limit), ConstantInt::get(X->getType(), 0), V);
    }
    break;
  }
  case BinaryOperator::MatrixMultiply: // typing rejected it
    internalError(Node, "the '@' operator while emitting");
  }
  TypedValue Out = makeScalar(Result, V);
  Out.ConstInt = Typed.ConstInt;
  return Out;
}

// Python's float // and % (CPython's float_divmod, which Numba follows):
// from fmod, so that x // y and x % y agree with each other even where
// x / y rounds across an integer.
std::pair<Value *, Value *> FunctionCompiler::floatDivMod(Value *X, Value *Y) {
  llvm::Type *T = X->getType();
  Value *Zero = ConstantFP::get(T, 0.0), *One = ConstantFP::get(T, 1.0);
  Value *Mod = B.CreateFRem(X, Y);
  Value *Div = B.CreateFDiv(B.CreateFSub(X, Mod), Y);
  // 1. A remainder of the other sign than y moves to y's side.
  Value *Fix = B.CreateAnd(B.CreateFCmpUNE(Mod, Zero),
                           B.CreateXor(B.CreateFCmpOLT(Y, Zero), B.CreateFCmpOLT(Mod, Zero)));
  Value *ZeroMod = B.CreateBinaryIntrinsic(Intrinsic::copysign, Zero, Y);
  Mod = B.CreateSelect(B.CreateFCmpOEQ(Mod, Zero), ZeroMod,
                       B.CreateSelect(Fix, B.CreateFAdd(Mod, Y), Mod));
  Div = B.CreateSelect(Fix, B.CreateFSub(Div, One), Div);
  // 2. The quotient snaps to the nearest integer below (div is nearly one).
  Value *Floor = B.CreateUnaryIntrinsic(Intrinsic::floor, Div);
  Value *Up = B.CreateFCmpOGT(B.CreateFSub(Div, Floor), ConstantFP::get(T, 0.5));
  Floor = B.CreateSelect(Up, B.CreateFAdd(Floor, One), Floor);
  Value *ZeroDiv = B.CreateBinaryIntrinsic(Intrinsic::copysign, Zero, B.CreateFDiv(X, Y));
  Value *Quotient = B.CreateSelect(B.CreateFCmpUNE(Div, Zero), Floor, ZeroDiv);
  return {Quotient, Mod};
}

// Python's floor division and modulo on integers, with NumPy's error model
// (division by zero gives 0) and no trap on INT_MIN // -1.
TypedValue FunctionCompiler::integerDivide(bool Floor, const TypedValue &L, const TypedValue &R) {
  Value *X = L.scalar(), *Y = R.scalar();
  llvm::Type *T = X->getType();
  Value *Zero = ConstantInt::get(T, 0), *One = ConstantInt::get(T, 1);
  Value *DivByZero = B.CreateICmpEQ(Y, Zero);
  Value *Result;
  if (!isSigned(L.T.Dtype)) {
    Value *SafeY = B.CreateSelect(DivByZero, One, Y);
    Result = Floor ? B.CreateUDiv(X, SafeY) : B.CreateURem(X, SafeY);
  } else {
    Value *MinusOne = ConstantInt::getSigned(T, -1);
    Value *ByMinusOne = B.CreateICmpEQ(Y, MinusOne);
    Value *SafeY = B.CreateSelect(B.CreateOr(DivByZero, ByMinusOne), One, Y);
    Value *Quotient = B.CreateSDiv(X, SafeY);
    Value *Remainder = B.CreateSRem(X, SafeY);
    // Round toward negative infinity when the signs differ and it's inexact.
    Value *Inexact = B.CreateICmpNE(Remainder, Zero);
    Value *SignsDiffer = B.CreateICmpSLT(B.CreateXor(Remainder, SafeY), Zero);
    Value *Fix = B.CreateAnd(Inexact, SignsDiffer);
    if (Floor) {
      Result = B.CreateSelect(Fix, B.CreateSub(Quotient, One), Quotient);
      Result = B.CreateSelect(ByMinusOne, B.CreateSub(Zero, X), Result);
    } else {
      Result = B.CreateSelect(Fix, B.CreateAdd(Remainder, SafeY), Remainder);
      Result = B.CreateSelect(ByMinusOne, Zero, Result);
    }
  }
  return makeScalar(L.T.Dtype, B.CreateSelect(DivByZero, Zero, Result));
}

// Integer power by repeated squaring, emitted inline as a loop; a negative
// exponent gives 0 unless the base is 1 or -1 (integer result of 1/b**n).
TypedValue FunctionCompiler::integerPower(const TypedValue &Base, const TypedValue &Exponent) {
  Value *X = Base.scalar(), *N = Exponent.scalar();
  llvm::Type *T = X->getType();
  BasicBlock *Before = B.GetInsertBlock();
  BasicBlock *Loop = BasicBlock::Create(Ctx, "ipow.loop", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "ipow.done", F);
  Value *Negative = isSigned(Exponent.T.Dtype) ? B.CreateICmpSLT(N, ConstantInt::get(T, 0))
                                              : B.getFalse();
  Value *AbsN = B.CreateSelect(Negative, B.CreateSub(ConstantInt::get(T, 0), N), N);
  Before = B.GetInsertBlock();
  B.CreateCondBr(B.CreateICmpEQ(N, ConstantInt::get(T, 0)), Done, Loop);
  B.SetInsertPoint(Loop);
  PHINode *Acc = B.CreatePHI(T, 2), *Sq = B.CreatePHI(T, 2), *E = B.CreatePHI(T, 2);
  Acc->addIncoming(ConstantInt::get(T, 1), Before);
  Sq->addIncoming(X, Before);
  E->addIncoming(AbsN, Before);
  Value *Odd = B.CreateTrunc(E, B.getInt1Ty());
  Value *NextAcc = B.CreateSelect(Odd, B.CreateMul(Acc, Sq), Acc);
  Value *NextE = B.CreateLShr(E, 1);
  Value *NextSq = B.CreateMul(Sq, Sq);
  Acc->addIncoming(NextAcc, Loop);
  Sq->addIncoming(NextSq, Loop);
  E->addIncoming(NextE, Loop);
  B.CreateCondBr(B.CreateICmpEQ(NextE, ConstantInt::get(T, 0)), Done, Loop);
  B.SetInsertPoint(Done);
  PHINode *Result = B.CreatePHI(T, 2);
  Result->addIncoming(ConstantInt::get(T, 1), Before);
  Result->addIncoming(NextAcc, Loop);
  // 1/x**n in integers: 1 for x == 1, +-1 for x == -1, else 0.
  Value *IsOne = B.CreateICmpEQ(X, ConstantInt::get(T, 1));
  Value *IsMinusOne = B.CreateICmpEQ(X, ConstantInt::getSigned(T, -1));
  Value *NegativeResult =
      B.CreateSelect(IsOne, ConstantInt::get(T, 1),
                     B.CreateSelect(IsMinusOne, Result, ConstantInt::get(T, 0)));
  return makeScalar(Base.T.Dtype, B.CreateSelect(Negative, NegativeResult, Result));
}

TypedValue FunctionCompiler::emitUnaryOp(PyObject *Node) {
  UnaryOperator Op = unaryOperatorOf(field(Node, "op").get());
  TypedValue V = emitExpression(field(Node, "operand").get());
  if (Op == UnaryOperator::Not)
    return makeScalar(Scalar::Bool, B.CreateNot(truth(V, Node)));
  Scalar S = typeOf(Node).Operands.at(0).Dtype;
  if (isComplex(S)) {
    if (Op == UnaryOperator::Plus)
      return V;
    Value *Z = V.scalar();
    return makeScalar(S, makeComplex(S, B.CreateFNeg(B.CreateExtractValue(Z, 0)),
                                     B.CreateFNeg(B.CreateExtractValue(Z, 1))));
  }
  TypedValue X = convert(V, frontend::Type::scalar(S), Node);
  Value *R = X.scalar();
  if (Op == UnaryOperator::Negate)
    R = isFloat(S) ? B.CreateFNeg(R) : B.CreateNeg(R);
  else if (Op == UnaryOperator::Invert)
    R = B.CreateNot(R);
  return makeScalar(S, R);
}

// One comparison, in the type typing recorded for it (Operand).
TypedValue FunctionCompiler::emitComparison(ComparisonOperator Op, const TypedValue &L,
                                            const TypedValue &R, const frontend::Type &CommonType,
                                            PyObject *Node) {
  if (CommonType.isOptional()) // x is None of an Optional (OptionalValues.cpp)
    return emitOptionalIdentity(Op, L, R);
  if (CommonType.isNone()) { // x is None, folded by typing
    TypedValue Folded = makeScalar(Scalar::Bool, B.getInt1(foldedIdentity(Op, L.T, R.T)));
    Folded.ConstInt = foldedIdentity(Op, L.T, R.T);
    return Folded;
  }
  if (std::optional<TypedValue> Special = emitTupleOrEnumComparison(Op, L, R, Node))
    return *Special;
  if (isDatetime(CommonType.Dtype))
    return emitDatetimeComparison(Op, L, R, CommonType); // Datetimes.cpp
  if (isComplex(L.T.Dtype) || isComplex(R.T.Dtype)) {
    Value *X = convert(L, CommonType, Node).scalar(), *Y = convert(R, CommonType, Node).scalar();
    Value *Same = B.CreateAnd(B.CreateFCmpOEQ(B.CreateExtractValue(X, 0), B.CreateExtractValue(Y, 0)),
                              B.CreateFCmpOEQ(B.CreateExtractValue(X, 1), B.CreateExtractValue(Y, 1)));
    return makeScalar(Scalar::Bool, Op == ComparisonOperator::Equal ? Same : B.CreateNot(Same));
  }
  Scalar Common = CommonType.Dtype;
  Value *X = convert(L, CommonType, Node).scalar(), *Y = convert(R, CommonType, Node).scalar();
  CmpInst::Predicate P = CmpInst::BAD_ICMP_PREDICATE;
  bool Float = isFloat(Common), Signed = isSigned(Common);
  switch (Op) {
  case ComparisonOperator::Equal:
    P = Float ? CmpInst::FCMP_OEQ : CmpInst::ICMP_EQ;
    break;
  case ComparisonOperator::NotEqual:
    P = Float ? CmpInst::FCMP_UNE : CmpInst::ICMP_NE;
    break;
  case ComparisonOperator::Less:
    P = Float ? CmpInst::FCMP_OLT : Signed ? CmpInst::ICMP_SLT : CmpInst::ICMP_ULT;
    break;
  case ComparisonOperator::LessEqual:
    P = Float ? CmpInst::FCMP_OLE : Signed ? CmpInst::ICMP_SLE : CmpInst::ICMP_ULE;
    break;
  case ComparisonOperator::Greater:
    P = Float ? CmpInst::FCMP_OGT : Signed ? CmpInst::ICMP_SGT : CmpInst::ICMP_UGT;
    break;
  // is, is not, in and not in were rejected above.
  case ComparisonOperator::Is:
  case ComparisonOperator::IsNot:
  case ComparisonOperator::In:
  case ComparisonOperator::NotIn:
  case ComparisonOperator::GreaterEqual:
    P = Float ? CmpInst::FCMP_OGE : Signed ? CmpInst::ICMP_SGE : CmpInst::ICMP_UGE;
    break;
  }
  return makeScalar(Scalar::Bool, Float ? B.CreateFCmp(P, X, Y) : B.CreateICmp(P, X, Y));
}

TypedValue FunctionCompiler::emitCompare(PyObject *Node) {
  // a < b < c is (a < b) and (b < c), with b evaluated once.
  TypedValue Left = emitExpression(field(Node, "left").get());
  std::vector<PyObject *> Ops = listItems(field(Node, "ops").get());
  std::vector<PyObject *> Rights = listItems(field(Node, "comparators").get());
  const std::vector<frontend::Type> &Operands = typeOf(Node).Operands;
  if (Operands.size() != Ops.size())
    internalError(Node, "the comparison '" + sourceText(Node) + "' has no operand types");
  if (Ops.size() == 1)
    return emitComparison(comparisonOperatorOf(Ops[0]), Left, emitExpression(Rights[0]),
                          Operands[0], Node);
  BasicBlock *Done = BasicBlock::Create(Ctx, "cmp.done", F);
  std::vector<std::pair<Value *, BasicBlock *>> Incoming;
  for (size_t I = 0; I < Ops.size(); ++I) {
    TypedValue Right = emitExpression(Rights[I]);
    Value *C = emitComparison(comparisonOperatorOf(Ops[I]), Left, Right, Operands[I], Node).scalar();
    Incoming.push_back({C, B.GetInsertBlock()});
    if (I + 1 < Ops.size()) {
      BasicBlock *Next = BasicBlock::Create(Ctx, "cmp.next", F);
      B.CreateCondBr(C, Next, Done);
      B.SetInsertPoint(Next);
    } else {
      B.CreateBr(Done);
    }
    Left = Right;
  }
  B.SetInsertPoint(Done);
  PHINode *Phi = B.CreatePHI(B.getInt1Ty(), Incoming.size());
  for (auto &[V, BB] : Incoming)
    Phi->addIncoming(V, BB);
  return makeScalar(Scalar::Bool, Phi);
}

TypedValue FunctionCompiler::emitBoolOp(PyObject *Node) {
  bool IsAnd = booleanOperatorOf(field(Node, "op").get()) == BooleanOperator::And;
  std::vector<PyObject *> Operands = listItems(field(Node, "values").get());
  // The result is one of the operands (Python semantics), in their unified type.
  frontend::Type ResultType = typeOf(Node).T;
  BasicBlock *Done = BasicBlock::Create(Ctx, IsAnd ? "and.done" : "or.done", F);
  std::vector<std::pair<Value *, BasicBlock *>> Incoming;
  for (size_t I = 0; I < Operands.size(); ++I) {
    TypedValue V = emitExpression(Operands[I]);
    Value *Converted = convert(V, ResultType, Operands[I]).scalar();
    if (I + 1 == Operands.size()) {
      Incoming.push_back({Converted, B.GetInsertBlock()});
      B.CreateBr(Done);
      break;
    }
    Value *T = truth(V, Operands[I]);
    Incoming.push_back({Converted, B.GetInsertBlock()});
    BasicBlock *Next = BasicBlock::Create(Ctx, IsAnd ? "and.next" : "or.next", F);
    if (IsAnd)
      B.CreateCondBr(T, Next, Done);
    else
      B.CreateCondBr(T, Done, Next);
    B.SetInsertPoint(Next);
  }
  B.SetInsertPoint(Done);
  PHINode *Phi = B.CreatePHI(llvmType(ResultType.Dtype), Incoming.size());
  for (auto &[V, BB] : Incoming)
    Phi->addIncoming(V, BB);
  return makeScalar(ResultType.Dtype, Phi);
}

TypedValue FunctionCompiler::emitIfExp(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body"), Else = field(Node, "orelse");
  frontend::Type ResultType = typeOf(Node).T;
  Value *C = truth(emitExpression(Test.get()), Test.get());
  BasicBlock *Then = BasicBlock::Create(Ctx, "ifexp.then", F);
  BasicBlock *Otherwise = BasicBlock::Create(Ctx, "ifexp.else", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "ifexp.done", F);
  B.CreateCondBr(C, Then, Otherwise);
  B.SetInsertPoint(Then);
  TypedValue L = convert(emitExpression(Body.get()), ResultType, Body.get());
  BasicBlock *ThenEnd = B.GetInsertBlock();
  B.CreateBr(Done);
  B.SetInsertPoint(Otherwise);
  TypedValue R = convert(emitExpression(Else.get()), ResultType, Else.get());
  BasicBlock *ElseEnd = B.GetInsertBlock();
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
  TypedValue Out(ResultType);
  for (size_t I = 0; I < L.Parts.size(); ++I) {
    PHINode *Phi = B.CreatePHI(L.Parts[I]->getType(), 2);
    Phi->addIncoming(L.Parts[I], ThenEnd);
    Phi->addIncoming(R.Parts[I], ElseEnd);
    Out.Parts.push_back(Phi);
  }
  return Out;
}

} // namespace tidal::frontend
