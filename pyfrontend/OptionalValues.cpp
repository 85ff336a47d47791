// Numba's Optional(T): a value that is None or a T, typed where None and a
// T meet (a device function returning None on one path and a number on
// another, a variable assigned both, `x if c else None`), as unify() does.
// Its parts are {i1 valid, T's parts}: no marker. Where it is used as a T
// (arithmetic, an index, a store into an array, an intrinsic's argument)
// it is unwrapped, as Numba's cast from Optional does: a None there raises
// TypeError("expected T, got None") at that expression (with debug=True the
// host raises it after the launch; without, the thread ends, as any raise
// in Numba's CUDA kernels). Kept as Optional: what a variable is assigned,
// what a function returns, device functions' arguments, tuple elements,
// the branches of a conditional expression and the operands of `is`.
#include "FunctionCompiler.h"
#include "AstAccess.h"

using namespace llvm;

namespace tidal::frontend {

TypedValue FunctionCompiler::typeKeepingOptional(PyObject *Node) {
  KeepOptional = true;
  return typeExpression(Node);
}

TypedValue FunctionCompiler::typedUse(TypedValue Result, ExpressionType &Recorded, bool Keep) {
  Recorded.UnwrapsOptional = !Keep && Result.T.isOptional();
  if (!Recorded.UnwrapsOptional)
    return Result;
  TypedValue Inner(Result.T.optionalInner());
  Inner.ConstInt = Result.ConstInt;
  Inner.TupleConstInts = Result.TupleConstInts;
  return Inner;
}

// --- conversions -----------------------------------------------------------------

// Typing: None to Optional(T); T to Optional(U) and Optional(T) to
// Optional(U) when T converts to U; Optional(T) to U (unwrapped, checked
// when emitted) when T converts to U.
TypedValue FunctionCompiler::convertedOptionalType(const TypedValue &V, const frontend::Type &To,
                                                   PyObject *Node) {
  if (V.T.isNone()) {
    if (!To.isOptional())
      typingError(Node, "cannot convert none to " + To.str());
    return TypedValue(To);
  }
  TypedValue Inner = V.T.isOptional() ? TypedValue(V.T.optionalInner()) : V;
  convertedType(Inner, To.isOptional() ? To.optionalInner() : To, Node);
  return TypedValue(To);
}

TypedValue FunctionCompiler::convertOptional(const TypedValue &V, const frontend::Type &To,
                                             PyObject *Node) {
  TypedValue R(To);
  if (V.T.isNone()) { // None: not valid, the value's parts zero
    if (!To.isOptional())
      internalError(Node, "converting none to " + To.str() + " while emitting");
    for (llvm::Type *P : partTypes(To))
      R.Parts.push_back(Constant::getNullValue(P));
    return R;
  }
  if (!To.isOptional()) // used as a value: None raises
    return convert(unwrapOptional(V, Node), To, Node);
  Value *Valid = V.T.isOptional() ? V.Parts[0] : B.getTrue();
  TypedValue Inner = V.T.isOptional() ? optionalContents(V) : V;
  TypedValue Converted = convert(Inner, To.optionalInner(), Node);
  R.Parts.push_back(Valid);
  R.Parts.insert(R.Parts.end(), Converted.Parts.begin(), Converted.Parts.end());
  return R;
}

TypedValue FunctionCompiler::optionalContents(const TypedValue &V) const {
  TypedValue Inner(V.T.optionalInner());
  Inner.Parts.assign(V.Parts.begin() + 1, V.Parts.end());
  return Inner;
}

TypedValue FunctionCompiler::unwrapOptional(const TypedValue &V, PyObject *Node) {
  BasicBlock *None = BasicBlock::Create(Ctx, "optional.none", F);
  BasicBlock *Value = BasicBlock::Create(Ctx, "optional.value", F);
  B.CreateCondBr(V.Parts[0], Value, None);
  B.SetInsertPoint(None);
  // Numba's words (its cast from Optional to the value's type).
  PyRef Arguments = PyRef::check(
      Py_BuildValue("(s)", ("expected " + V.T.optionalInner().str() + ", got None").c_str()));
  emitRaise(PyExc_TypeError, Arguments.get(), Node);
  if (!B.GetInsertBlock()->getTerminator()) // emitRaise's dead block
    B.CreateUnreachable();
  B.SetInsertPoint(Value);
  return optionalContents(V);
}

// --- x is None, x is not None --------------------------------------------------------

// Typing: the operand type of `is`/`is not` when one side is None and the
// other an Optional (a test at run time); nullopt otherwise.
std::optional<frontend::Type> FunctionCompiler::typeOptionalIdentity(ComparisonOperator Op,
                                                                     const TypedValue &L,
                                                                     const TypedValue &R) {
  if (Op != ComparisonOperator::Is && Op != ComparisonOperator::IsNot)
    return std::nullopt;
  if (L.T.isOptional() && R.T.isNone())
    return L.T;
  if (R.T.isOptional() && L.T.isNone())
    return R.T;
  return std::nullopt;
}

TypedValue FunctionCompiler::emitOptionalIdentity(ComparisonOperator Op, const TypedValue &L,
                                                  const TypedValue &R) {
  Value *Valid = (L.T.isOptional() ? L : R).Parts[0];
  return makeScalar(Scalar::Bool, Op == ComparisonOperator::IsNot ? Valid : B.CreateNot(Valid));
}

} // namespace tidal::frontend
