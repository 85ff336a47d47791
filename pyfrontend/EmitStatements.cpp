// Emission of statements: assignments, if, while, for over range(), break,
// continue, return and assert, as typing decided them (TypeStatements.cpp).
#include "FunctionCompiler.h"
#include "AstAccess.h"
#include "Operators.h"

#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>

using namespace llvm;

namespace tidal::frontend {

// --- statements --------------------------------------------------------------------

// a, b = p[i]: the array's length must be the targets' count (else, as
// Numba, ValueError, raised as any raise is: debug mode reports it, without
// the thread ends); then each element or row, in order.
void FunctionCompiler::emitUnpackArray(const std::vector<PyObject *> &Targets,
                                       const TypedValue &V, PyObject *ValueNode) {
  BasicBlock *Wrong = BasicBlock::Create(Ctx, "unpack.wrong.length", F);
  BasicBlock *Right = BasicBlock::Create(Ctx, "unpack", F);
  B.CreateCondBr(B.CreateICmpNE(V.Parts[1], B.getInt64(static_cast<int64_t>(Targets.size()))),
                 Wrong, Right);
  B.SetInsertPoint(Wrong);
  PyRef Arguments = PyRef::check(Py_BuildValue(
      "(s)", ("cannot unpack an array whose length is not " + std::to_string(Targets.size()))
                 .c_str()));
  emitRaise(PyExc_ValueError, Arguments.get(), ValueNode);
  if (!B.GetInsertBlock()->getTerminator()) // emitRaise's dead block
    B.CreateUnreachable();
  B.SetInsertPoint(Right);
  IterationSource Source;
  Source.Kind = IterationSource::Array;
  Source.Node = ValueNode;
  Source.Value = V;
  std::vector<TypedValue> Elements;
  for (size_t I = 0; I < Targets.size(); ++I)
    Elements.push_back(emitIterationElement(Source, nullptr, static_cast<int64_t>(I)));
  for (size_t I = 0; I < Targets.size(); ++I)
    emitAssignTo(Targets[I], Elements[I], ValueNode);
}

void FunctionCompiler::emitAssignTo(PyObject *Target, const TypedValue &V, PyObject *ValueNode) {
  std::string Kind = nodeKind(Target);
  if (Kind == "Name")
    return emitStore(identifierField(Target, "id"), V, Target);
  if (Kind == "Tuple" || Kind == "List") {
    std::vector<PyObject *> Targets = listItems(field(Target, "elts").get());
    if (V.T.isArray())
      return emitUnpackArray(Targets, V, ValueNode);
    std::vector<TypedValue> Elements = tupleElements(V);
    for (size_t I = 0; I < Targets.size(); ++I)
      emitAssignTo(Targets[I], Elements[I], ValueNode);
    return;
  }
  if (Kind == "Subscript") {
    if (const ExpressionType *Whole = Typing.find(Target);
        Whole && Whole->Subscript == SubscriptKind::ArrayView) // a[1:n] = v
      return emitViewStore(Target, V, ValueNode);
    PyRef ArrayNode = field(Target, "value");
    TypedValue Base = emitExpression(ArrayNode.get());
    PyRef SliceNode = field(Target, "slice");
    TypedValue Index = emitExpression(SliceNode.get());
    if (Base.T.isRecord()) // r['x'] = v
      return emitRecordFieldStore(Base, typeOf(Target).FieldName, V, Target, ValueNode);
    Value *Ptr = elementPointer(Base, SliceNode.get(), Index, ArrayNode.get());
    if (Base.T.hasRecordElements()) { // a[i] = record: copy its bytes
      B.CreateMemMove(Ptr, Align(1), V.scalar(), Align(1), Base.T.Record->Size);
      return;
    }
    Value *X = convert(V, Base.T.elementType(), ValueNode).scalar();
    if (Base.T.Dtype == Scalar::Bool)
      X = B.CreateZExt(X, B.getInt8Ty());
    B.CreateAlignedStore(X, Ptr, Align(elementAlign(Base.T.Dtype)));
    return;
  }
  if (Kind == "Attribute") { // r.field = v on a record
    TypedValue Base = emitExpression(field(Target, "value").get());
    return emitRecordFieldStore(Base, identifierField(Target, "attr"), V, Target, ValueNode);
  }
  internalError(Target, "an assignment target typing did not accept");
}

void FunctionCompiler::emitIndexLoops(ArrayRef<Value *> Extents,
                                      function_ref<void(ArrayRef<Value *>)> Body) {
  std::vector<Value *> Indices;
  std::function<void(size_t)> Level = [&](size_t D) {
    if (D == Extents.size())
      return Body(Indices);
    BasicBlock *Before = B.GetInsertBlock();
    BasicBlock *Head = BasicBlock::Create(Ctx, "fill.head", F);
    BasicBlock *Loop = BasicBlock::Create(Ctx, "fill.body", F);
    BasicBlock *Done = BasicBlock::Create(Ctx, "fill.end", F);
    B.CreateBr(Head);
    B.SetInsertPoint(Head);
    PHINode *I = B.CreatePHI(B.getInt64Ty(), 2, "fill.i");
    I->addIncoming(B.getInt64(0), Before);
    B.CreateCondBr(B.CreateICmpSLT(I, Extents[D]), Loop, Done);
    B.SetInsertPoint(Loop);
    Indices.push_back(I);
    Level(D + 1);
    Indices.pop_back();
    I->addIncoming(B.CreateAdd(I, B.getInt64(1)), B.GetInsertBlock());
    B.CreateBr(Head);
    B.SetInsertPoint(Done);
  };
  Level(0);
}

// Every element of the view gets the number, or the source array's element
// (NumPy's broadcasting: dimensions aligned at the end, an extent of 1
// repeats). Element by element in C order: a source that overlaps the view
// reads what earlier iterations wrote (NumPy would copy it first).
void FunctionCompiler::emitViewStore(PyObject *Target, const TypedValue &V, PyObject *ValueNode) {
  TypedValue View = emitExpression(Target);
  unsigned N = View.T.NDim;
  ArrayRef<Value *> Extents(View.Parts.data() + 1, N);
  Type Element = View.T.elementType();
  auto Store = [&](Value *Ptr, TypedValue X) {
    Value *Stored = convert(X, Element, ValueNode).scalar();
    if (Element.Dtype == Scalar::Bool)
      Stored = B.CreateZExt(Stored, B.getInt8Ty());
    B.CreateAlignedStore(Stored, Ptr, Align(elementAlign(Element.Dtype)));
  };
  auto IndexOf = [&](ArrayRef<Value *> Indices) {
    std::vector<TypedValue> Parts;
    for (Value *I : Indices)
      Parts.push_back(makeScalar(Scalar::Int64, I));
    return Parts.size() == 1 ? Parts[0] : makeTuple(std::move(Parts));
  };
  if (V.T.isScalar()) {
    TypedValue Converted = convert(V, Element, ValueNode); // once, before the loops
    emitIndexLoops(Extents, [&](ArrayRef<Value *> Indices) {
      Store(elementPointer(View, Target, IndexOf(Indices), nullptr), Converted);
    });
    return;
  }
  unsigned M = V.T.NDim, Skipped = N - M;
  if (Options.Debug) // a source extent must be the view's or 1, as NumPy's rule
    for (unsigned D = 0; D < M; ++D) {
      Value *Source = V.Parts[1 + D], *Destination = Extents[Skipped + D];
      Value *Bad = B.CreateAnd(B.CreateICmpNE(Source, Destination),
                               B.CreateICmpNE(Source, B.getInt64(1)));
      BasicBlock *Fail = BasicBlock::Create(Ctx, "broadcast.error", F);
      BasicBlock *Ok = BasicBlock::Create(Ctx, "broadcast.ok", F);
      B.CreateCondBr(Bad, Fail, Ok);
      B.SetInsertPoint(Fail);
      PyRef Arguments = PyRef::check(Py_BuildValue(
          "(s)", ("cannot broadcast the assigned array to the slice's shape in dimension " +
                  std::to_string(D)).c_str()));
      emitRaise(PyExc_ValueError, Arguments.get(), ValueNode);
      if (!B.GetInsertBlock()->getTerminator())
        B.CreateUnreachable();
      B.SetInsertPoint(Ok);
    }
  emitIndexLoops(Extents, [&](ArrayRef<Value *> Indices) {
    std::vector<Value *> SourceIndices;
    for (unsigned D = 0; D < M; ++D) {
      Value *Extent = V.Parts[1 + D];
      SourceIndices.push_back(B.CreateSelect(B.CreateICmpEQ(Extent, B.getInt64(1)),
                                             B.getInt64(0), Indices[Skipped + D]));
    }
    Value *From = elementPointer(V, ValueNode, IndexOf(SourceIndices), nullptr,
                                 ElementAccess::Read);
    LoadInst *L = B.CreateAlignedLoad(llvmMemoryType(V.T.Dtype), From,
                                      Align(elementAlign(V.T.Dtype)));
    Store(elementPointer(View, Target, IndexOf(Indices), nullptr),
          makeElement(V.T, V.T.Dtype == Scalar::Bool ? B.CreateICmpNE(L, B.getInt8(0))
                                                     : static_cast<Value *>(L)));
  });
}

void FunctionCompiler::emitAssign(PyObject *Node) {
  PyRef ValueNode = field(Node, "value");
  TypedValue V = emitExpression(ValueNode.get());
  for (PyObject *Target : listItems(field(Node, "targets").get()))
    emitAssignTo(Target, V, ValueNode.get());
}

void FunctionCompiler::emitAugAssign(PyObject *Node) {
  PyRef Target = field(Node, "target");
  PyRef ValueNode = field(Node, "value");
  BinaryOperator Op = binaryOperatorOf(field(Node, "op").get());
  std::string Kind = nodeKind(Target.get());
  if (Kind == "Name") {
    std::string Name = identifierField(Target.get(), "id");
    TypedValue Current = emitLoad(Name, Target.get());
    if (Current.T.isOptional()) // r += 1 of an Optional: its value (OptionalValues.cpp)
      Current = unwrapOptional(Current, Target.get());
    TypedValue Result = emitBinary(Op, Current, emitExpression(ValueNode.get()), Node);
    return emitStore(Name, Result, Node);
  }
  if (Kind == "Subscript") {
    // a[i] op= v: the index is evaluated once.
    PyRef ArrayNode = field(Target.get(), "value");
    TypedValue Base = emitExpression(ArrayNode.get());
    PyRef SliceNode = field(Target.get(), "slice");
    TypedValue Index = emitExpression(SliceNode.get());
    TypedValue Operand = emitExpression(ValueNode.get());
    if (Base.T.isRecord()) { // r['x'] op= v
      const std::string &Name = typeOf(Target.get()).FieldName;
      TypedValue Result = emitBinary(Op, emitRecordFieldLoad(Base, Name, Target.get()), Operand, Node);
      return emitRecordFieldStore(Base, Name, Result, Target.get(), ValueNode.get());
    }
    Value *Ptr = elementPointer(Base, SliceNode.get(), Index, ArrayNode.get());
    Value *L = B.CreateAlignedLoad(llvmMemoryType(Base.T.Dtype), Ptr, Align(elementAlign(Base.T.Dtype)));
    TypedValue Old = makeElement(Base.T,
                                Base.T.Dtype == Scalar::Bool ? B.CreateICmpNE(L, B.getInt8(0)) : L);
    TypedValue Result = emitBinary(Op, Old, Operand, Node);
    Value *X = convert(Result, Base.T.elementType(), Node).scalar();
    if (Base.T.Dtype == Scalar::Bool)
      X = B.CreateZExt(X, B.getInt8Ty());
    B.CreateAlignedStore(X, Ptr, Align(elementAlign(Base.T.Dtype)));
    return;
  }
  // r.field op= v: read, compute, write back
  TypedValue Current = emitExpression(Target.get());
  TypedValue Result = emitBinary(Op, Current, emitExpression(ValueNode.get()), Node);
  emitAssignTo(Target.get(), Result, ValueNode.get());
}

void FunctionCompiler::emitExpressionStatement(PyObject *Node) {
  PyRef Value = field(Node, "value");
  // Docstrings and other bare constants do nothing.
  if (nodeKind(Value.get()) == "Constant")
    return;
  emitExpression(Value.get());
}

void FunctionCompiler::emitPass(PyObject *) {}

void FunctionCompiler::emitIf(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body"), Else = field(Node, "orelse");
  TypedValue C = emitExpression(Test.get());
  // `if flag:` on a parameter specialised on a literal: only the branch
  // taken, which is the only one typing typed.
  if (prunedTest(Test.get(), C.ConstInt)) {
    emitBody(*C.ConstInt ? Body.get() : Else.get());
    return;
  }
  Value *Cond = truth(C, Test.get());
  BasicBlock *Then = BasicBlock::Create(Ctx, "if.then", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "if.end", F);
  bool HasElse = PyList_GET_SIZE(Else.get()) > 0;
  BasicBlock *Otherwise = HasElse ? BasicBlock::Create(Ctx, "if.else", F) : Done;
  B.CreateCondBr(Cond, Then, Otherwise);
  B.SetInsertPoint(Then);
  emitBody(Body.get());
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(Done);
  if (HasElse) {
    B.SetInsertPoint(Otherwise);
    emitBody(Else.get());
    if (!B.GetInsertBlock()->getTerminator())
      B.CreateBr(Done);
  }
  B.SetInsertPoint(Done);
}

void FunctionCompiler::emitLoopWithElse(PyObject *Node, void (FunctionCompiler::*Loop)(PyObject *)) {
  PyRef Else = field(Node, "orelse");
  if (PyList_GET_SIZE(Else.get()) == 0)
    return (this->*Loop)(Node);
  // 1. The loop, its breaks to Broken; 2. at its normal exit, the else;
  // 3. both join after it.
  BasicBlock *Broken = BasicBlock::Create(Ctx, "loop.break", F);
  PendingLoopBreak = Broken;
  (this->*Loop)(Node);
  emitBody(Else.get());
  BasicBlock *After = BasicBlock::Create(Ctx, "loop.end", F);
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(After);
  B.SetInsertPoint(Broken);
  B.CreateBr(After);
  B.SetInsertPoint(After);
}

BasicBlock *FunctionCompiler::loopBreakTarget(BasicBlock *Done) {
  BasicBlock *Target = PendingLoopBreak ? PendingLoopBreak : Done;
  PendingLoopBreak = nullptr;
  return Target;
}

void FunctionCompiler::emitWhile(PyObject *Node) {
  emitLoopWithElse(Node, &FunctionCompiler::emitWhileLoop);
}

void FunctionCompiler::emitFor(PyObject *Node) {
  emitLoopWithElse(Node, &FunctionCompiler::emitForLoop);
}

void FunctionCompiler::emitWhileLoop(PyObject *Node) {
  PyRef Test = field(Node, "test"), Body = field(Node, "body");
  BasicBlock *Header = BasicBlock::Create(Ctx, "while.cond", F);
  BasicBlock *Loop = BasicBlock::Create(Ctx, "while.body", F);
  BasicBlock *Done = BasicBlock::Create(Ctx, "while.end", F);
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  B.CreateCondBr(truth(emitExpression(Test.get()), Test.get()), Loop, Done);
  B.SetInsertPoint(Loop);
  Loops.push_back({Header, loopBreakTarget(Done)});
  emitBody(Body.get());
  Loops.pop_back();
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(Header);
  B.SetInsertPoint(Done);
}

void FunctionCompiler::emitForLoop(PyObject *Node) {
  PyRef Target = field(Node, "target"), Iter = field(Node, "iter");
  PyRef Body = field(Node, "body");
  // Other iterables than range(...): EmitIteration.cpp.
  bool IsRange = false;
  if (nodeKind(Iter.get()) == "Call") {
    frontend::Type Callee = typeOf(field(Iter.get(), "func").get()).T;
    IsRange = Callee.isPyObject() &&
              static_cast<PyObject *>(Callee.Object) == reinterpret_cast<PyObject *>(&PyRange_Type);
  }
  if (!IsRange)
    return emitForOverIterable(Node);
  std::vector<PyObject *> ArgNodes = listItems(field(Iter.get(), "args").get());
  std::vector<TypedValue> Args;
  for (PyObject *A : ArgNodes)
    Args.push_back(emitExpression(A));
  std::string Name = identifierField(Target.get(), "id");
  // The counter's type, which typing recorded on the loop's target.
  Scalar Counter = typeOf(Target.get()).T.Dtype;
  frontend::Type CommonType = frontend::Type::scalar(Counter);
  std::optional<int64_t> ConstStep = Args.size() == 3 ? Args[2].ConstInt : std::optional<int64_t>(1);
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
  emitStore(Name, makeScalar(Counter, I), Target.get());
  Loops.push_back({Latch, loopBreakTarget(Done)});
  emitBody(Body.get());
  Loops.pop_back();
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(Latch);
  B.SetInsertPoint(Latch);
  B.CreateStore(B.CreateAdd(B.CreateLoad(llvmType(Counter), Index), Step), Index);
  B.CreateBr(Header);
  B.SetInsertPoint(Done);
}

void FunctionCompiler::emitBreak(PyObject *) {
  // The binding analysis rejected a 'break' outside a loop.
  B.CreateBr(Loops.back().Break);
  startDeadBlock();
}

void FunctionCompiler::emitContinue(PyObject *) {
  B.CreateBr(Loops.back().Continue);
  startDeadBlock();
}

void FunctionCompiler::emitReturn(PyObject *Node) {
  PyRef ValueNode = field(Node, "value");
  TypedValue V(frontend::Type::none());
  if (!ValueNode.isNone())
    V = emitExpression(ValueNode.get());
  if (!IsDevice || ReturnType.isNone() || F->getReturnType()->isVoidTy()) {
    B.CreateRetVoid();
  } else {
    emitReturnValue(convert(V, ReturnType, Node));
  }
  startDeadBlock();
}

void FunctionCompiler::emitReturnValue(const TypedValue &R) {
  if (R.Parts.size() == 1) {
    B.CreateRet(R.Parts[0]);
    return;
  }
  Value *Aggregate = UndefValue::get(F->getReturnType());
  for (unsigned I = 0; I < R.Parts.size(); ++I)
    Aggregate = B.CreateInsertValue(Aggregate, R.Parts[I], I);
  B.CreateRet(Aggregate);
}

void FunctionCompiler::emitAssert(PyObject *Node) {
  // Compiled out unless debug=True, as in Numba.
  if (!Options.Debug)
    return;
  PyRef Test = field(Node, "test"), Msg = field(Node, "msg");
  Value *Holds = truth(emitExpression(Test.get()), Test.get());
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
