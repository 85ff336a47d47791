// Statements: assignments, if, while, for over range(), break, continue,
// return and assert.
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

// --- statements --------------------------------------------------------------------

void FunctionCompiler::assignTo(PyObject *Target, const TypedValue &V, PyObject *ValueNode) {
  std::string Kind = nodeKind(Target);
  if (Kind == "Name")
    return storeVariable(identifierField(Target, "id"), V, Target);
  if (Kind == "Tuple" || Kind == "List") {
    std::vector<PyObject *> Targets = listItems(field(Target, "elts").get());
    if (V.T.isUndefined()) {
      for (PyObject *T : Targets)
        assignTo(T, TypedValue(), ValueNode);
      return;
    }
    if (!V.T.isTuple())
      typingError(ValueNode, "cannot unpack a value of type " + V.T.str());
    if (V.T.Elements.size() != Targets.size())
      typingError(ValueNode, "cannot unpack " + V.T.str() + " into " +
                                 std::to_string(Targets.size()) + " targets");
    std::vector<TypedValue> Elements = tupleElements(V);
    for (size_t I = 0; I < Targets.size(); ++I)
      assignTo(Targets[I], Elements[I], ValueNode);
    return;
  }
  if (Kind == "Subscript") {
    PyRef ArrayNode = field(Target, "value");
    TypedValue Base = expr(ArrayNode.get());
    PyRef SliceNode = field(Target, "slice");
    if (nodeKind(SliceNode.get()) == "Slice")
      unsupported(SliceNode.get(), "assigning to array slices is not supported yet");
    TypedValue Index = expr(SliceNode.get());
    if (Base.T.isUndefined() || Index.T.isUndefined() || V.T.isUndefined())
      return;
    if (Base.T.isTuple())
      typingError(Target, "tuples are immutable: cannot assign to an element");
    if (Base.T.isRecord()) { // r['x'] = v: the field named by a string constant
      std::optional<std::string> Name = recordFieldName(Index);
      if (!Name)
        typingError(SliceNode.get(), "a record's field is named by a string constant, not by " +
                                         Index.T.str());
      return storeRecordField(Base, *Name, V, Target, ValueNode);
    }
    if (!Base.T.isArray())
      typingError(Target, "cannot assign to an element of a value of type " + Base.T.str());
    if (Base.T.ReadOnly)
      typingError(Target, "cannot write to a read-only array (" + Base.T.str() + ")");
    if (Base.T.hasRecordElements()) { // a[i] = record: copy its bytes
      if (!V.T.isRecord() || !(*V.T.Record == *Base.T.Record))
        typingError(ValueNode, "cannot store a value of type " + V.T.str() +
                                   " into an element of " + Base.T.str());
      Value *Ptr = elementPointer(Base, SliceNode.get(), Index, ArrayNode.get());
      if (Emitting)
        B.CreateMemMove(Ptr, Align(1), V.scalar(), Align(1), Base.T.Record->Size);
      return;
    }
    if (!V.T.isScalar())
      typingError(ValueNode, "cannot store a value of type " + V.T.str() +
                                 " into an element of " + Base.T.str());
    Value *Ptr = elementPointer(Base, SliceNode.get(), Index, ArrayNode.get());
    if (!Emitting)
      return;
    Value *X = convert(V, frontend::Type::scalar(Base.T.Dtype), ValueNode).scalar();
    if (Base.T.Dtype == Scalar::Bool)
      X = B.CreateZExt(X, B.getInt8Ty());
    B.CreateAlignedStore(X, Ptr, Align(elementAlign(Base.T.Dtype)));
    return;
  }
  if (Kind == "Attribute") {
    // r.field = v on a record (a[i].x = v writes into the array).
    TypedValue Base = expr(field(Target, "value").get());
    std::string Attr = identifierField(Target, "attr");
    if (Base.T.isUndefined() || V.T.isUndefined())
      return;
    if (!Base.T.isRecord())
      unsupported(Target, "assigning to attributes is only supported on record fields, not on " +
                              Base.T.str());
    return storeRecordField(Base, Attr, V, Target, ValueNode);
  }
  unsupported(Target, "cannot assign to this target in a kernel");
}

void FunctionCompiler::visitAssign(PyObject *Node) {
  TypedValue V = expr(field(Node, "value").get());
  PyRef ValueNode = field(Node, "value");
  for (PyObject *Target : listItems(field(Node, "targets").get()))
    assignTo(Target, V, ValueNode.get());
}

void FunctionCompiler::visitAugAssign(PyObject *Node) {
  PyRef Target = field(Node, "target");
  PyRef ValueNode = field(Node, "value");
  BinaryOperator Op = binaryOperatorOf(field(Node, "op").get());
  std::string Kind = nodeKind(Target.get());
  if (Kind == "Name") {
    std::string Name = identifierField(Target.get(), "id");
    TypedValue Current = loadVariable(Name, Target.get());
    TypedValue Result = binaryOp(Op, Current, expr(ValueNode.get()), Node);
    return storeVariable(Name, Result, Node);
  }
  if (Kind == "Subscript") {
    // a[i] op= v: the index is evaluated once.
    PyRef ArrayNode = field(Target.get(), "value");
    TypedValue Base = expr(ArrayNode.get());
    PyRef SliceNode = field(Target.get(), "slice");
    TypedValue Index = expr(SliceNode.get());
    TypedValue Operand = expr(ValueNode.get());
    if (Base.T.isUndefined() || Index.T.isUndefined() || Operand.T.isUndefined())
      return;
    if (Base.T.isRecord()) { // r['x'] op= v
      std::optional<std::string> Name = recordFieldName(Index);
      if (!Name)
        typingError(SliceNode.get(), "a record's field is named by a string constant, not by " +
                                         Index.T.str());
      TypedValue Result = binaryOp(Op, loadRecordField(Base, *Name, Target.get()), Operand, Node);
      return storeRecordField(Base, *Name, Result, Target.get(), ValueNode.get());
    }
    if (!Base.T.isArray())
      typingError(Target.get(), "cannot assign to an element of a value of type " + Base.T.str());
    if (Base.T.ReadOnly)
      typingError(Target.get(), "cannot write to a read-only array (" + Base.T.str() + ")");
    Value *Ptr = elementPointer(Base, SliceNode.get(), Index, ArrayNode.get());
    TypedValue Old = makeScalar(Base.T.Dtype, nullptr);
    if (Emitting) {
      Value *L = B.CreateAlignedLoad(llvmMemoryType(Base.T.Dtype), Ptr, Align(elementAlign(Base.T.Dtype)));
      Old.Parts.push_back(Base.T.Dtype == Scalar::Bool ? B.CreateICmpNE(L, B.getInt8(0)) : L);
    }
    TypedValue Result = binaryOp(Op, Old, Operand, Node);
    if (!Emitting)
      return;
    Value *X = convert(Result, frontend::Type::scalar(Base.T.Dtype), Node).scalar();
    if (Base.T.Dtype == Scalar::Bool)
      X = B.CreateZExt(X, B.getInt8Ty());
    B.CreateAlignedStore(X, Ptr, Align(elementAlign(Base.T.Dtype)));
    return;
  }
  if (Kind == "Attribute") { // r.field op= v: read, compute, write back
    TypedValue Current = expr(Target.get());
    TypedValue Result = binaryOp(Op, Current, expr(ValueNode.get()), Node);
    return assignTo(Target.get(), Result, ValueNode.get());
  }
  unsupported(Target.get(), "cannot use this target of an augmented assignment in a kernel");
}

void FunctionCompiler::visitExpr(PyObject *Node) {
  PyRef Value = field(Node, "value");
  // Docstrings and other bare constants do nothing.
  if (nodeKind(Value.get()) == "Constant")
    return;
  expr(Value.get());
}

void FunctionCompiler::visitPass(PyObject *) {}

void FunctionCompiler::visitIf(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body"), Else = field(Node, "orelse");
  TypedValue C = expr(Test.get());
  // `if flag:` on a device-function parameter specialised on a literal
  // (neg_idx=False): only the branch taken is typed and emitted, as Numba
  // prunes it, so the other may hold code only valid for other values.
  if (C.ConstInt && nodeKind(Test.get()) == "Name" &&
      ConstantParameters.count(identifierField(Test.get(), "id"))) {
    body(*C.ConstInt ? Body.get() : Else.get());
    return;
  }
  if (!Emitting) {
    if (!C.T.isUndefined())
      truth(C, Test.get());
    body(Body.get());
    body(Else.get());
    return;
  }
  Value *Cond = truth(C, Test.get());
  BasicBlock *Then = BasicBlock::Create(Ctx, "if.then", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "if.end", F);
  bool HasElse = PyList_GET_SIZE(Else.get()) > 0;
  BasicBlock *Otherwise = HasElse ? BasicBlock::Create(Ctx, "if.else", F) : Done;
  B.CreateCondBr(Cond, Then, Otherwise);
  B.SetInsertPoint(Then);
  body(Body.get());
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(Done);
  if (HasElse) {
    B.SetInsertPoint(Otherwise);
    body(Else.get());
    if (!B.GetInsertBlock()->getTerminator())
      B.CreateBr(Done);
  }
  B.SetInsertPoint(Done);
}

void FunctionCompiler::visitWhile(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body"), Else = field(Node, "orelse");
  if (PyList_GET_SIZE(Else.get()) > 0)
    unsupported(Node, "'while ... else' is not supported in kernels");
  if (!Emitting) {
    TypedValue C = expr(Test.get());
    if (!C.T.isUndefined())
      truth(C, Test.get());
    body(Body.get());
    return;
  }
  BasicBlock *Header = BasicBlock::Create(Ctx, "while.cond", F);
  BasicBlock *Loop = BasicBlock::Create(Ctx, "while.body", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "while.end", F);
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  B.CreateCondBr(truth(expr(Test.get()), Test.get()), Loop, Done);
  B.SetInsertPoint(Loop);
  Loops.push_back({Header, Done});
  body(Body.get());
  Loops.pop_back();
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(Header);
  B.SetInsertPoint(Done);
}

void FunctionCompiler::visitFor(PyObject *Node) {
  PyRef Target = field(Node, "target"), Iter = field(Node, "iter");
  PyRef Body = field(Node, "body"), Else = field(Node, "orelse");
  if (PyList_GET_SIZE(Else.get()) > 0)
    unsupported(Node, "'for ... else' is not supported in kernels");
  // Only range(...): its callee must resolve to the builtin range.
  bool IsRange = false;
  if (nodeKind(Iter.get()) == "Call") {
    PyRef CalleeNode = field(Iter.get(), "func");
    frontend::Type Callee = Emitting ? typeOf(CalleeNode.get()).T : expr(CalleeNode.get()).T;
    IsRange = Callee.isPyObject() &&
              static_cast<PyObject *>(Callee.Object) == reinterpret_cast<PyObject *>(&PyRange_Type);
  }
  if (!IsRange)
    unsupported(Iter.get(), "for loops in kernels can only iterate over range(...)");
  if (nodeKind(Target.get()) != "Name")
    unsupported(Target.get(), "the target of a for loop over range() must be a name");
  std::vector<PyObject *> ArgNodes = listItems(field(Iter.get(), "args").get());
  if (ArgNodes.empty() || ArgNodes.size() > 3)
    typingError(Iter.get(), "range expected 1 to 3 arguments, got " +
                                std::to_string(ArgNodes.size()));
  std::vector<TypedValue> Args;
  for (PyObject *A : ArgNodes) {
    Args.push_back(expr(A));
    if (!Args.back().T.isUndefined() && !Args.back().T.isIntegerScalar() &&
        !Args.back().T.isBool())
      typingError(A, "range() arguments must be integers, not " + Args.back().T.str());
  }
  std::string Name = identifierField(Target.get(), "id");
  // The counter's type, as Numba's range typing: int32 when every argument
  // fits, uint64 if one is uint64, int64 otherwise.
  Scalar Counter = Scalar::Int32;
  for (const TypedValue &A : Args) {
    if (A.T.isUndefined())
      continue;
    Scalar S = A.T.Dtype;
    if (S == Scalar::UInt64)
      Counter = Counter == Scalar::Int64 ? Scalar::Int64 : Scalar::UInt64;
    else if (!(S == Scalar::Bool || S == Scalar::Int8 || S == Scalar::Int16 ||
               S == Scalar::Int32 || S == Scalar::UInt8 || S == Scalar::UInt16))
      Counter = Scalar::Int64;
  }
  frontend::Type CommonType = frontend::Type::scalar(Counter);
  std::optional<int64_t> ConstStep = Args.size() == 3 ? Args[2].ConstInt : std::optional<int64_t>(1);
  if (ConstStep && *ConstStep == 0)
    typingError(ArgNodes[2], "range() step must not be zero");
  if (!Emitting) {
    storeVariable(Name, TypedValue(CommonType), Target.get());
    body(Body.get());
    return;
  }
  Value *Start = Args.size() >= 2 ? convert(Args[0], CommonType, ArgNodes[0]).scalar()
                                  : ConstantInt::get(llvmType(Counter), 0);
  Value *Stop = convert(Args.size() >= 2 ? Args[1] : Args[0], CommonType,
                        ArgNodes[Args.size() >= 2 ? 1 : 0]).scalar();
  Value *Step = Args.size() == 3 ? convert(Args[2], CommonType, ArgNodes[2]).scalar()
                                 : ConstantInt::get(llvmType(Counter), 1);
  bool Signed = isSigned(Counter);
  AllocaInst *Index = entryAlloca(llvmType(Counter), Name + ".next");
  B.CreateStore(Start, Index);
  BasicBlock *Header = BasicBlock::Create(Ctx, "for.cond", F);
  BasicBlock *Loop = BasicBlock::Create(Ctx, "for.body", F);
  BasicBlock *Latch = BasicBlock::Create(Ctx, "for.inc", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "for.end", F);
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  Value *I = B.CreateLoad(llvmType(Counter), Index, Name);
  Value *Continue;
  auto Less = [&](Value *A, Value *C) { return Signed ? B.CreateICmpSLT(A, C) : B.CreateICmpULT(A, C); };
  if (ConstStep)
    Continue = *ConstStep > 0 ? Less(I, Stop) : B.CreateICmpSGT(I, Stop);
  else
    Continue = B.CreateSelect(B.CreateICmpSGT(Step, ConstantInt::get(Step->getType(), 0)),
                              Less(I, Stop), B.CreateICmpSGT(I, Stop));
  B.CreateCondBr(Continue, Loop, Done);
  B.SetInsertPoint(Loop);
  storeVariable(Name, makeScalar(Counter, I), Target.get());
  Loops.push_back({Latch, Done});
  body(Body.get());
  Loops.pop_back();
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(Latch);
  B.SetInsertPoint(Latch);
  B.CreateStore(B.CreateAdd(B.CreateLoad(llvmType(Counter), Index), Step), Index);
  B.CreateBr(Header);
  B.SetInsertPoint(Done);
}

void FunctionCompiler::visitBreak(PyObject *Node) {
  // The binding analysis rejected a 'break' outside a loop.
  if (!Emitting)
    return;
  B.CreateBr(Loops.back().Break);
  startDeadBlock();
}

void FunctionCompiler::visitContinue(PyObject *Node) {
  if (!Emitting)
    return;
  B.CreateBr(Loops.back().Continue);
  startDeadBlock();
}

void FunctionCompiler::visitReturn(PyObject *Node) {
  PyRef ValueNode = field(Node, "value");
  TypedValue V(frontend::Type::none());
  if (!ValueNode.isNone())
    V = expr(ValueNode.get());
  if (!IsDevice) {
    if (!V.T.isUndefined() && !V.T.isNone())
      typingError(Node, "a kernel cannot return a value (it returns " + V.T.str() +
                            "); write results into an array argument");
  } else if (!Emitting) {
    // The return type of a device function unifies over its returns.
    if (V.T.isUndefined())
      return;
    if (V.T.isPyObject() || V.T.isArray())
      typingError(Node, "device functions return numbers and tuples, not " + V.T.str());
    if (V.T.isNone() && !FirstBareReturn)
      FirstBareReturn = Node;
    if (DeclaredReturn && !V.T.isNone() && !DeclaredReturn->isNone())
      convert(V, *DeclaredReturn, Node); // a value the declared type cannot hold
    frontend::Type Unified;
    if (!HasReturnType) {
      Unified = V.T;
    } else if (!unify(ReturnType, V.T, Unified)) {
      typingError(Node, "device function returns " + ReturnType.str() + " and " + V.T.str() +
                            ", which cannot unify");
    }
    if (!HasReturnType || Unified != ReturnType)
      TypesChanged = true;
    ReturnType = Unified;
    HasReturnType = true;
    return;
  }
  if (!Emitting)
    return;
  if (!IsDevice || ReturnType.isNone()) {
    B.CreateRetVoid();
  } else {
    TypedValue R = convert(V, ReturnType, Node);
    if (R.Parts.size() == 1) {
      B.CreateRet(R.Parts[0]);
    } else {
      Value *Aggregate = UndefValue::get(F->getReturnType());
      for (unsigned I = 0; I < R.Parts.size(); ++I)
        Aggregate = B.CreateInsertValue(Aggregate, R.Parts[I], I);
      B.CreateRet(Aggregate);
    }
  }
  startDeadBlock();
}

void FunctionCompiler::visitAssert(PyObject *Node) {
  // Compiled out unless debug=True, as in Numba.
  if (!Options.Debug)
    return;
  PyRef Test = field(Node, "test"), Msg = field(Node, "msg");
  TypedValue C = expr(Test.get());
  if (C.T.isUndefined())
    return;
  Value *Holds = truth(C, Test.get());
  if (!Emitting)
    return;
  std::string Text;
  if (!Msg.isNone() && nodeKind(Msg.get()) == "Constant")
    Text = PyRef::borrow(Msg.get()).attr("value").str();
  SourceLocation Where = locate(Node);
  std::string Message = (Text.empty() ? std::string("assertion failed") : Text) + " (assert " +
                        sourceText(Test.get()) + " in " + (IsDevice ? "device function '" : "kernel '") +
                        functionName() + "' at " + Where.File + ":" + std::to_string(Where.Line) + ")";
  BasicBlock *Fail = BasicBlock::Create(Ctx, "assert.fail", F);
  BasicBlock *Ok = BasicBlock::Create(Ctx, "assert.ok", F);
  B.CreateCondBr(Holds, Ok, Fail);
  B.SetInsertPoint(Fail);
  callMarker("assert.fail", B.getVoidTy(), {constantString(Message, "assert.message")});
  B.CreateUnreachable();
  B.SetInsertPoint(Ok);
}

} // namespace tidal::frontend
