// Emission of `for` over enumerate(...), zip(...), 1-D arrays and tuples,
// as TypeIteration.cpp typed it. A loop whose iterable holds a tuple is
// unrolled, one copy of the body per element (a zip with a run-time
// iterable stops early at its length); any other loop counts an int64
// index up to the length (zip: the shortest), reading each element at it.
#include "FunctionCompiler.h"
#include "AstAccess.h"

#include "llvm/IR/Constants.h"

#include <algorithm>

using namespace llvm;

namespace tidal::frontend {

FunctionCompiler::IterationSource FunctionCompiler::emitIterationSource(PyObject *IterNode) {
  IterationSource S;
  S.Node = IterNode;
  auto AsInt64 = [&](PyObject *ArgNode) {
    TypedValue V = emitExpression(ArgNode);
    std::optional<int64_t> Known = V.ConstInt;
    V = convert(V, frontend::Type::scalar(Scalar::Int64), ArgNode);
    V.ConstInt = Known;
    return V;
  };
  auto Constant = [&](int64_t V) {
    TypedValue C = makeScalar(Scalar::Int64, B.getInt64(V));
    C.ConstInt = V;
    return C;
  };
  if (nodeKind(IterNode) == "Call") {
    frontend::Type Callee = typeOf(field(IterNode, "func").get()).T;
    auto *O = Callee.isPyObject() ? static_cast<PyObject *>(Callee.Object) : nullptr;
    std::vector<PyObject *> Args = listItems(field(IterNode, "args").get());
    std::vector<PyObject *> Keywords = listItems(field(IterNode, "keywords").get());
    if (O == reinterpret_cast<PyObject *>(&PyEnum_Type)) {
      S.Kind = IterationSource::Enumerate;
      S.Children.push_back(emitIterationSource(Args[0]));
      PyObject *StartNode = Args.size() == 2 ? Args[1]
                            : Keywords.empty() ? nullptr
                                               : field(Keywords[0], "value").get();
      S.Start = StartNode ? AsInt64(StartNode) : Constant(0);
      return S;
    }
    if (O == reinterpret_cast<PyObject *>(&PyZip_Type)) {
      S.Kind = IterationSource::Zip;
      for (PyObject *A : Args)
        S.Children.push_back(emitIterationSource(A));
      return S;
    }
    if (O == reinterpret_cast<PyObject *>(&PyRange_Type)) {
      S.Kind = IterationSource::Range;
      std::vector<TypedValue> Values;
      for (PyObject *A : Args)
        Values.push_back(AsInt64(A));
      S.Start = Values.size() >= 2 ? Values[0] : Constant(0);
      S.Stop = Values.size() >= 2 ? Values[1] : Values[0];
      S.Step = Values.size() == 3 ? Values[2] : Constant(1);
      return S;
    }
  }
  S.Value = emitExpression(IterNode);
  S.Kind = S.Value.T.isTuple() ? IterationSource::Tuple : IterationSource::Array;
  return S;
}

// True when the length is only known at run time somewhere in S.
static bool hasRunTimeLength(const FunctionCompiler::IterationSource &S) {
  if (S.Kind == FunctionCompiler::IterationSource::Range ||
      S.Kind == FunctionCompiler::IterationSource::Array)
    return true;
  return std::any_of(S.Children.begin(), S.Children.end(), hasRunTimeLength);
}

Value *FunctionCompiler::iterationLength(const IterationSource &S) {
  switch (S.Kind) {
  case IterationSource::Tuple:
    return B.getInt64(static_cast<int64_t>(S.Value.T.Elements.size()));
  case IterationSource::Array:
    return S.Value.Parts[1];
  case IterationSource::Enumerate:
    return iterationLength(S.Children[0]);
  case IterationSource::Zip: {
    Value *Shortest = nullptr;
    for (const IterationSource &C : S.Children) {
      Value *N = iterationLength(C);
      Shortest = Shortest ? B.CreateSelect(B.CreateICmpSLT(N, Shortest), N, Shortest) : N;
    }
    return Shortest;
  }
  case IterationSource::Range: {
    // Python's len(range(start, stop, step)), at least 0.
    Value *Start = S.Start.scalar(), *Stop = S.Stop.scalar(), *Step = S.Step.scalar();
    Value *One = B.getInt64(1);
    Value *Up = B.CreateSDiv(B.CreateAdd(B.CreateSub(Stop, Start), B.CreateSub(Step, One)), Step);
    Value *Down = B.CreateSDiv(B.CreateSub(B.CreateSub(Start, Stop), B.CreateAdd(Step, One)),
                               B.CreateNeg(Step));
    Value *N = S.Step.ConstInt ? (*S.Step.ConstInt > 0 ? Up : Down)
                               : B.CreateSelect(B.CreateICmpSGT(Step, B.getInt64(0)), Up, Down);
    return B.CreateSelect(B.CreateICmpSGT(N, B.getInt64(0)), N, B.getInt64(0), "range.length");
  }
  }
  return nullptr;
}

TypedValue FunctionCompiler::emitIterationElement(const IterationSource &S, Value *Index,
                                                  std::optional<int64_t> StaticIndex) {
  if (!Index)
    Index = B.getInt64(StaticIndex.value_or(0));
  switch (S.Kind) {
  case IterationSource::Range:
    return makeScalar(Scalar::Int64,
                      B.CreateAdd(S.Start.scalar(), B.CreateMul(Index, S.Step.scalar())));
  case IterationSource::Tuple:
    return tupleElements(S.Value)[static_cast<size_t>(StaticIndex.value_or(0))];
  case IterationSource::Array: {
    const frontend::Type &A = S.Value.T;
    if (A.NDim > 1) { // row Index: the data moved by Index strides, the other dimensions
      TypedValue Row(rowViewType(A));
      Row.Parts.push_back(B.CreateGEP(B.getInt8Ty(), S.Value.Parts[0],
                                      B.CreateMul(Index, S.Value.Parts[1 + A.NDim]), "row"));
      for (unsigned D = 1; D < A.NDim; ++D)
        Row.Parts.push_back(S.Value.Parts[1 + D]);
      for (unsigned D = 1; D < A.NDim; ++D)
        Row.Parts.push_back(S.Value.Parts[1 + A.NDim + D]);
      return Row;
    }
    TypedValue I = makeScalar(Scalar::Int64, Index);
    if (StaticIndex)
      I.ConstInt = StaticIndex;
    // In range by the loop's bounds; a record may be written through.
    Value *Ptr = elementPointer(S.Value, S.Node, I, S.Node,
                                A.hasRecordElements() ? ElementAccess::Write
                                                      : ElementAccess::Read);
    if (A.hasRecordElements()) { // a reference to the record, as a[i] gives
      TypedValue Ref(frontend::Type::record(A.Record, A.ReadOnly));
      Ref.Parts.push_back(Ptr);
      return Ref;
    }
    Value *L = B.CreateAlignedLoad(llvmMemoryType(A.Dtype), Ptr, Align(elementAlign(A.Dtype)));
    return makeElement(A, A.Dtype == Scalar::Bool ? B.CreateICmpNE(L, B.getInt8(0)) : L);
  }
  case IterationSource::Enumerate: {
    TypedValue Count = makeScalar(Scalar::Int64, B.CreateAdd(S.Start.scalar(), Index));
    if (StaticIndex && S.Start.ConstInt)
      Count.ConstInt = *S.Start.ConstInt + *StaticIndex;
    return makeTuple({Count, emitIterationElement(S.Children[0], Index, StaticIndex)});
  }
  case IterationSource::Zip: {
    std::vector<TypedValue> Elements;
    for (const IterationSource &C : S.Children)
      Elements.push_back(emitIterationElement(C, Index, StaticIndex));
    return makeTuple(std::move(Elements));
  }
  }
  return TypedValue();
}

void FunctionCompiler::emitForOverIterable(PyObject *Node) {
  PyRef Target = field(Node, "target"), Iter = field(Node, "iter"), Body = field(Node, "body");
  IterationSource Source = emitIterationSource(Iter.get());
  std::optional<int64_t> Unrolled = staticIterationLength(Source);
  BasicBlock *Done = BasicBlock::Create(Ctx, "for.end", F);
  BasicBlock *BreakTo = loopBreakTarget(Done);
  if (Unrolled) {
    Value *Length = hasRunTimeLength(Source) ? iterationLength(Source) : nullptr;
    for (int64_t K = 0; K < *Unrolled; ++K) {
      BasicBlock *Next = BasicBlock::Create(Ctx, "for.next", F);
      if (Length) {
        BasicBlock *Copy = BasicBlock::Create(Ctx, "for.unrolled", F);
        B.CreateCondBr(B.CreateICmpSLT(B.getInt64(K), Length), Copy, Done);
        B.SetInsertPoint(Copy);
      }
      emitAssignTo(Target.get(), emitIterationElement(Source, nullptr, K), Iter.get());
      Loops.push_back({Next, BreakTo});
      emitBody(Body.get());
      Loops.pop_back();
      if (!B.GetInsertBlock()->getTerminator())
        B.CreateBr(Next);
      B.SetInsertPoint(Next);
    }
    B.CreateBr(Done);
    B.SetInsertPoint(Done);
    return;
  }
  Value *Length = iterationLength(Source);
  AllocaInst *Counter = entryAlloca(B.getInt64Ty(), "for.index");
  B.CreateStore(B.getInt64(0), Counter);
  BasicBlock *Header = BasicBlock::Create(Ctx, "for.cond", F);
  BasicBlock *Loop = BasicBlock::Create(Ctx, "for.body", F);
  BasicBlock *Latch = BasicBlock::Create(Ctx, "for.inc", F);
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  Value *I = B.CreateLoad(B.getInt64Ty(), Counter, "for.i");
  B.CreateCondBr(B.CreateICmpSLT(I, Length), Loop, Done);
  B.SetInsertPoint(Loop);
  emitAssignTo(Target.get(), emitIterationElement(Source, I, std::nullopt), Iter.get());
  Loops.push_back({Latch, BreakTo});
  emitBody(Body.get());
  Loops.pop_back();
  if (!B.GetInsertBlock()->getTerminator())
    B.CreateBr(Latch);
  B.SetInsertPoint(Latch);
  B.CreateStore(B.CreateAdd(B.CreateLoad(B.getInt64Ty(), Counter), B.getInt64(1)), Counter);
  B.CreateBr(Header);
  B.SetInsertPoint(Done);
}

} // namespace tidal::frontend
