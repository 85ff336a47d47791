// Operators: arithmetic, unary, comparisons (chained), and/or, and the
// conditional expression, with Python's and Numba's semantics.
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

TypedValue FunctionCompiler::visitBinOp(PyObject *Node) {
  TypedValue L = expr(field(Node, "left").get());
  TypedValue R = expr(field(Node, "right").get());
  return binaryOp(binaryOperatorOf(field(Node, "op").get()), L, R, Node);
}

TypedValue FunctionCompiler::binaryOp(BinaryOperator Op, const TypedValue &L, const TypedValue &R,
                                  PyObject *Node) {
  if (L.T.isUndefined() || R.T.isUndefined())
    return TypedValue();
  if (!L.T.isScalar() || !R.T.isScalar())
    typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) +
                          ": " + L.T.str() + " and " + R.T.str());
  Scalar Common = promoteArithmetic(L.T.Dtype, R.T.Dtype);
  bool Bitwise = Op == BinaryOperator::BitwiseAnd || Op == BinaryOperator::BitwiseOr ||
                 Op == BinaryOperator::BitwiseXor;
  bool Shift = Op == BinaryOperator::ShiftLeft || Op == BinaryOperator::ShiftRight;
  if (isComplex(Common)) {
    if (Op != BinaryOperator::Add && Op != BinaryOperator::Subtract &&
        Op != BinaryOperator::Multiply && Op != BinaryOperator::Divide)
      typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) +
                            ": " + L.T.str() + " and " + R.T.str() +
                            ": complex numbers take + - * / in kernels");
    if (!Emitting)
      return TypedValue(frontend::Type::scalar(Common));
    frontend::Type CommonType = frontend::Type::scalar(Common);
    return makeScalar(Common, complexArithmetic(Op, Common, convert(L, CommonType, Node).scalar(),
                                                convert(R, CommonType, Node).scalar()));
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
  }
  if (!Emitting) {
    TypedValue Out(frontend::Type::scalar(Result));
    Out.ConstInt = Folded;
    return Out;
  }
  frontend::Type CommonType = frontend::Type::scalar(Common);
  TypedValue A = convert(L, CommonType, Node), C = convert(R, CommonType, Node);
  Value *X = A.scalar(), *Y = C.scalar();
  bool Float = isFloat(Common), Signed = isSigned(Common);
  Value *V = nullptr;
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
    if (Common == Scalar::Float16) {
      X = B.CreateFPExt(X, B.getFloatTy());
      Y = B.CreateFPExt(Y, B.getFloatTy());
    }
    V = callMarker(Common == Scalar::Float64 ? "math.pow.f64" : "math.pow.f32", X->getType(), {X, Y});
    if (Common == Scalar::Float16)
      V = B.CreateFPTrunc(V, llvmType(Scalar::Float16));
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
  case BinaryOperator::MatrixMultiply:
    unsupported(Node, std::string("operator ") + operatorSymbol(Op) + " is not supported");
  }
  TypedValue Out = makeScalar(Result, V);
  Out.ConstInt = Folded;
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

TypedValue FunctionCompiler::visitUnaryOp(PyObject *Node) {
  UnaryOperator Op = unaryOperatorOf(field(Node, "op").get());
  TypedValue V = expr(field(Node, "operand").get());
  if (V.T.isUndefined())
    return TypedValue();
  if (Op == UnaryOperator::Not) {
    Value *T = truth(V, Node);
    return makeScalar(Scalar::Bool, Emitting ? B.CreateNot(T) : nullptr);
  }
  if (!V.T.isScalar())
    typingError(Node, "bad operand type for unary operator: " + V.T.str());
  // Numba widens small integers (and bools) as for binary arithmetic.
  Scalar S = isFloat(V.T.Dtype) || isComplex(V.T.Dtype) ? V.T.Dtype
                                                     : promoteArithmetic(V.T.Dtype, V.T.Dtype);
  if (isComplex(S)) {
    if (Op == UnaryOperator::Invert)
      typingError(Node, "bad operand type for unary ~: " + V.T.str());
    if (!Emitting || Op == UnaryOperator::Plus)
      return Emitting ? V : TypedValue(V.T);
    Value *Z = V.scalar();
    return makeScalar(S, makeComplex(S, B.CreateFNeg(B.CreateExtractValue(Z, 0)),
                                     B.CreateFNeg(B.CreateExtractValue(Z, 1))));
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
  if (!Emitting) {
    TypedValue Out(frontend::Type::scalar(S));
    Out.ConstInt = Folded;
    return Out;
  }
  TypedValue X = convert(V, frontend::Type::scalar(S), Node);
  Value *R = X.scalar();
  if (Op == UnaryOperator::Negate)
    R = isFloat(S) ? B.CreateFNeg(R) : B.CreateNeg(R);
  else if (Op == UnaryOperator::Invert)
    R = B.CreateNot(R);
  TypedValue Out = makeScalar(S, R);
  Out.ConstInt = Folded;
  return Out;
}

TypedValue FunctionCompiler::compareOp(ComparisonOperator Op, const TypedValue &L, const TypedValue &R,
                                   PyObject *Node) {
  if (L.T.isUndefined() || R.T.isUndefined())
    return TypedValue();
  if (!L.T.isScalar() || !R.T.isScalar())
    typingError(Node, std::string("unsupported operand types for ") + operatorSymbol(Op) +
                          ": " + L.T.str() + " and " + R.T.str());
  if (Op == ComparisonOperator::Is || Op == ComparisonOperator::IsNot ||
      Op == ComparisonOperator::In || Op == ComparisonOperator::NotIn)
    unsupported(Node, std::string("the '") + operatorSymbol(Op) +
                          "' operator is not supported on numbers");
  bool ComplexOperands = isComplex(L.T.Dtype) || isComplex(R.T.Dtype);
  if (ComplexOperands && Op != ComparisonOperator::Equal && Op != ComparisonOperator::NotEqual)
    typingError(Node, std::string("complex numbers have no order: ") + operatorSymbol(Op) +
                          " is not supported on " + L.T.str() + " and " + R.T.str());
  if (!Emitting)
    return makeScalar(Scalar::Bool, nullptr);
  if (ComplexOperands) {
    frontend::Type CommonType = frontend::Type::scalar(promoteArithmetic(L.T.Dtype, R.T.Dtype));
    Value *X = convert(L, CommonType, Node).scalar(), *Y = convert(R, CommonType, Node).scalar();
    Value *Same = B.CreateAnd(B.CreateFCmpOEQ(B.CreateExtractValue(X, 0), B.CreateExtractValue(Y, 0)),
                              B.CreateFCmpOEQ(B.CreateExtractValue(X, 1), B.CreateExtractValue(Y, 1)));
    return makeScalar(Scalar::Bool, Op == ComparisonOperator::Equal ? Same : B.CreateNot(Same));
  }
  // Compare in the common type: mixed signed/unsigned compares as Numba does.
  Scalar Common = (L.T.isBool() && R.T.isBool()) ? Scalar::Int64
                                                 : promoteArithmetic(L.T.Dtype, R.T.Dtype);
  frontend::Type CommonType = frontend::Type::scalar(Common);
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

TypedValue FunctionCompiler::visitCompare(PyObject *Node) {
  // a < b < c is (a < b) and (b < c), with b evaluated once.
  TypedValue Left = expr(field(Node, "left").get());
  std::vector<PyObject *> Ops = listItems(field(Node, "ops").get());
  std::vector<PyObject *> Rights = listItems(field(Node, "comparators").get());
  if (Ops.size() == 1)
    return compareOp(comparisonOperatorOf(Ops[0]), Left, expr(Rights[0]), Node);
  if (!Emitting) {
    TypedValue Out = makeScalar(Scalar::Bool, nullptr);
    for (size_t I = 0; I < Ops.size(); ++I) {
      TypedValue Right = expr(Rights[I]);
      if (compareOp(comparisonOperatorOf(Ops[I]), Left, Right, Node).T.isUndefined())
        Out = TypedValue();
      Left = Right;
    }
    return Out;
  }
  BasicBlock *Done = BasicBlock::Create(Ctx, "cmp.done", F);
  std::vector<std::pair<Value *, BasicBlock *>> Incoming;
  for (size_t I = 0; I < Ops.size(); ++I) {
    TypedValue Right = expr(Rights[I]);
    Value *C = compareOp(comparisonOperatorOf(Ops[I]), Left, Right, Node).scalar();
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

TypedValue FunctionCompiler::visitBoolOp(PyObject *Node) {
  bool IsAnd = booleanOperatorOf(field(Node, "op").get()) == BooleanOperator::And;
  std::vector<PyObject *> Operands = listItems(field(Node, "values").get());
  // The result is one of the operands (Python semantics): their unified type.
  if (!Emitting) {
    frontend::Type T;
    for (PyObject *O : Operands) {
      TypedValue V = expr(O);
      if (V.T.isUndefined())
        return TypedValue();
      truth(V, O);
      if (!unify(T, V.T, T))
        typingError(Node, "the operands of '" + std::string(IsAnd ? "and" : "or") +
                              "' have types that cannot unify");
    }
    return TypedValue(T);
  }
  frontend::Type ResultType = typeOf(Node).T;
  BasicBlock *Done = BasicBlock::Create(Ctx, IsAnd ? "and.done" : "or.done", F);
  std::vector<std::pair<Value *, BasicBlock *>> Incoming;
  for (size_t I = 0; I < Operands.size(); ++I) {
    TypedValue V = expr(Operands[I]);
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

TypedValue FunctionCompiler::visitIfExp(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body"), Else = field(Node, "orelse");
  if (!Emitting) {
    TypedValue C = expr(Test.get());
    if (!C.T.isUndefined())
      truth(C, Test.get());
    TypedValue L = expr(Body.get()), R = expr(Else.get());
    if (L.T.isUndefined() || R.T.isUndefined())
      return TypedValue();
    frontend::Type T;
    if (!unify(L.T, R.T, T))
      typingError(Node, "the two branches of the conditional expression have types " +
                            L.T.str() + " and " + R.T.str() + ", which cannot unify");
    return TypedValue(T);
  }
  frontend::Type ResultType = typeOf(Node).T;
  Value *C = truth(expr(Test.get()), Test.get());
  BasicBlock *Then = BasicBlock::Create(Ctx, "ifexp.then", F);
  BasicBlock *Otherwise = BasicBlock::Create(Ctx, "ifexp.else", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "ifexp.done", F);
  B.CreateCondBr(C, Then, Otherwise);
  B.SetInsertPoint(Then);
  TypedValue L = convert(expr(Body.get()), ResultType, Body.get());
  BasicBlock *ThenEnd = B.GetInsertBlock();
  B.CreateBr(Done);
  B.SetInsertPoint(Otherwise);
  TypedValue R = convert(expr(Else.get()), ResultType, Else.get());
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
