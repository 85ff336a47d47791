// The host lowering's small shared pieces (LowerHost.h): the block
// context in IR, the entry values of K.thread, runtime hooks, counted loops
// over the block's threads, the warp bit helper, exchange-buffer images.

#include "LowerHost.h"

#define DEBUG_TYPE "tidal-lower-host"

namespace tidal::host_lowering {

StructType *getContextType(LLVMContext &Context) {
  if (StructType *Existing =
          StructType::getTypeByName(Context, "tidal.BlockContext"))
    return Existing;
  Type *I32 = Type::getInt32Ty(Context);
  Type *Dim3 = ArrayType::get(I32, 3);
  Type *Pointer = PointerType::getUnqual(Context);
  return StructType::create(
      Context, {Dim3, Dim3, Dim3, I32, Pointer, Type::getInt64Ty(Context), Pointer},
      "tidal.BlockContext");
}

// ctx->Field[Dimension]. The runtime never changes a block's context while
// the block runs, so the load is invariant: LICM may hoist it out of the
// thread loops even though the kernel stores through other pointers.
Value *loadContextField(IRBuilder<> &Builder, Value *ContextPointer,
                        ContextField Field, unsigned Dimension,
                        const Twine &Name) {
  Value *Address = Builder.CreateInBoundsGEP(
      getContextType(Builder.getContext()), ContextPointer,
      {Builder.getInt32(0), Builder.getInt32(Field),
       Builder.getInt32(Dimension)},
      Name + ".addr");
  LoadInst *Load =
      Builder.CreateAlignedLoad(Builder.getInt32Ty(), Address, Align(4), Name);
  Load->setMetadata(LLVMContext::MD_invariant_load,
                    MDNode::get(Builder.getContext(), {}));
  // The runtime enforces CUDA's launch limits (HostABI.h), so the fields
  // have CUDA's ranges: LLVM can then prove indices non-negative.
  static const uint32_t MaxBlockDim[3] = {TIDAL_MAX_BLOCK_DIM_X, TIDAL_MAX_BLOCK_DIM_Y,
                                          TIDAL_MAX_BLOCK_DIM_Z};
  static const uint32_t MaxGridDim[3] = {TIDAL_MAX_GRID_DIM_X, TIDAL_MAX_GRID_DIM_Y,
                                         TIDAL_MAX_GRID_DIM_Z};
  uint64_t Low = Field == BlockIndexField ? 0 : 1;
  uint64_t High = Field == BlockDimField    ? uint64_t(MaxBlockDim[Dimension]) + 1
                  : Field == GridDimField   ? uint64_t(MaxGridDim[Dimension]) + 1
                                            : uint64_t(MaxGridDim[Dimension]);
  MDBuilder Ranges(Builder.getContext());
  Load->setMetadata(LLVMContext::MD_range,
                    Ranges.createRange(APInt(32, Low), APInt(32, High)));
  return Load;
}


Value *EntryValues::contextField(ContextField Field, unsigned Dimension) {
  Value *&Cached = Fields[Field * 3 + Dimension];
  if (!Cached) {
    static const char *Names[3][3] = {{"ntid.x", "ntid.y", "ntid.z"},
                                      {"nctaid.x", "nctaid.y", "nctaid.z"},
                                      {"ctaid.x", "ctaid.y", "ctaid.z"}};
    IRBuilder<> B = entryBuilder();
    Cached = loadContextField(B, Thread.ContextPointer, Field, Dimension,
                              Names[Field][Dimension]);
  }
  return Cached;
}

Value *EntryValues::threadCount() {
  if (!ThreadCount) {
    Value *X = contextField(BlockDimField, 0), *Y = contextField(BlockDimField, 1),
          *Z = contextField(BlockDimField, 2);
    IRBuilder<> B = entryBuilder();
    ThreadCount = B.CreateNUWMul(B.CreateNUWMul(X, Y), Z, "nthreads");
  }
  return ThreadCount;
}

Value *EntryValues::paddedThreadCount() {
  if (!PaddedThreadCount) {
    Value *Count = threadCount();
    IRBuilder<> B = entryBuilder();
    PaddedThreadCount = B.CreateAnd(
        B.CreateNUWAdd(B.CreateZExt(Count, B.getInt64Ty()), B.getInt64(15)),
        B.getInt64(~uint64_t(15)), "nthreads.padded");
  }
  return PaddedThreadCount;
}

Value *EntryValues::linearThread() {
  if (!LinearThread) {
    Value *DimX = contextField(BlockDimField, 0),
          *DimY = contextField(BlockDimField, 1);
    IRBuilder<> B = entryBuilder();
    Value *ZY = B.CreateNUWAdd(B.CreateNUWMul(Thread.ThreadIndex[2], DimY),
                               Thread.ThreadIndex[1]);
    LinearThread =
        B.CreateNUWAdd(B.CreateNUWMul(ZY, DimX), Thread.ThreadIndex[0], "thread");
  }
  return LinearThread;
}

Value *EntryValues::linearThread64() {
  if (!LinearThread64) {
    Value *Linear = linearThread();
    IRBuilder<> B = entryBuilder();
    LinearThread64 = B.CreateZExt(Linear, B.getInt64Ty(), "thread.i64");
  }
  return LinearThread64;
}

Value *EntryValues::frameArray(uint64_t Prefix, Value *ExtraPrefix,
                               const Twine &Name) {
  Value *Padded = paddedThreadCount();
  IRBuilder<> B = entryBuilder();
  Value *PrefixValue = B.getInt64(Prefix);
  if (ExtraPrefix)
    PrefixValue = B.CreateNUWAdd(PrefixValue, ExtraPrefix);
  Value *Offset = B.CreateNUWAdd(B.getInt64(FrameHeaderBytes),
                                 B.CreateNUWMul(Padded, PrefixValue));
  return B.CreateInBoundsGEP(B.getInt8Ty(), Thread.Frame, Offset, Name);
}

Value *EntryValues::exchangeBuffer(bool Write) {
  if (!ExchangeWrite) {
    IRBuilder<> B = entryBuilder();
    Value *PhaseBytes =
        B.CreateShl(B.CreateZExt(Thread.Phase, B.getInt64Ty()), 3);
    Value *OtherBytes = B.CreateSub(B.getInt64(8), PhaseBytes);
    ExchangeWrite = frameArray(ExchangePrefix, PhaseBytes, "exchange.write");
    ExchangeRead = frameArray(ExchangePrefix, OtherBytes, "exchange.read");
  }
  return Write ? ExchangeWrite : ExchangeRead;
}


Function *getHook(Module &M, StringRef Name, Type *Result,
                  ArrayRef<Type *> Parameters, bool VarArg) {
  FunctionCallee Callee = M.getOrInsertFunction(
      Name, FunctionType::get(Result, Parameters, VarArg));
  auto *F = cast<Function>(Callee.getCallee());
  F->addFnAttr(Attribute::NoUnwind);
  // The failure reports: a thread calls one at most once, on its way out.
  // Cold, their paths are laid out of the loops and the register allocator
  // spills around their calls there, not in the hot path (the histogram's
  // bins pointer was reloaded per element to free a register for the call).
  if (Name == CpuBoundsErrorHook || Name == CpuAssertFailHook ||
      Name == CpuBarrierErrorHook || Name == CpuWarpExitErrorHook)
    F->addFnAttr(Attribute::Cold);
  return F;
}

bool isDebugModule(const Module &M) {
  if (auto *Flag =
          mdconst::extract_or_null<ConstantInt>(M.getModuleFlag(DebugFlag)))
    if (!Flag->isZero())
      return true;
  const char *Environment = std::getenv("TIDAL_CPU_DEBUG");
  return Environment && std::strcmp(Environment, "1") == 0;
}


// Emits the loop's head at the builder and leaves the builder in its body.
CountedLoop beginLoop(IRBuilder<> &Builder, Value *Count, const Twine &Name) {
  LLVMContext &Context = Builder.getContext();
  Function *F = Builder.GetInsertBlock()->getParent();
  BasicBlock *Preheader = Builder.GetInsertBlock();
  BasicBlock *Condition = BasicBlock::Create(Context, Name + ".cond", F);
  BasicBlock *Body = BasicBlock::Create(Context, Name + ".body", F);
  BasicBlock *Exit = BasicBlock::Create(Context, Name + ".end");
  Builder.CreateBr(Condition);
  Builder.SetInsertPoint(Condition);
  PHINode *Counter = Builder.CreatePHI(Builder.getInt32Ty(), 2, Name);
  Counter->addIncoming(Builder.getInt32(0), Preheader);
  Builder.CreateCondBr(Builder.CreateICmpULT(Counter, Count, Name + ".inrange"),
                       Body, Exit);
  Builder.SetInsertPoint(Body);
  return {Counter, Condition, Exit};
}

// The loop ID of a thread loop (ThreadLoopHints): left scalar and not
// unrolled, or its parallel accesses, or its unroll count where it stays
// scalar. LLVM's vectoriser gives the loops it makes the followup
// attributes only, so a loop it vectorises anyway (it may, with runtime
// checks) is not unrolled again after its own interleaving. Null: none.
static MDNode *threadLoopID(LLVMContext &Context, const ThreadLoopHints &Hints,
                            bool Innermost) {
  auto Option = [&](StringRef Name, Metadata *Value) -> Metadata * {
    return MDNode::get(Context, {MDString::get(Context, Name), Value});
  };
  auto Int = [&](unsigned Value) {
    return ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(Context), Value));
  };
  SmallVector<Metadata *, 4> Operands = {nullptr};
  if (Innermost && Hints.Scalar) {
    Operands.push_back(Option("llvm.loop.vectorize.enable",
                              ConstantAsMetadata::get(ConstantInt::getFalse(Context))));
    Operands.push_back(MDNode::get(Context, MDString::get(Context, "llvm.loop.unroll.disable")));
  } else if (Hints.AccessGroup) {
    Operands.push_back(Option("llvm.loop.parallel_accesses", Hints.AccessGroup));
  } else if (Innermost && Hints.SerialUnroll > 1) {
    Operands.push_back(Option("llvm.loop.unroll.count", Int(Hints.SerialUnroll)));
    Operands.push_back(Option(
        "llvm.loop.vectorize.followup_all",
        MDNode::get(Context, {MDString::get(Context, "llvm.loop.isvectorized"), Int(1)})));
  } else {
    return nullptr;
  }
  MDNode *LoopID = MDNode::getDistinct(Context, Operands);
  LoopID->replaceOperandWith(0, LoopID);
  return LoopID;
}

// Closes the loop where the builder is and leaves the builder after it.
void endLoop(IRBuilder<> &Builder, const CountedLoop &Loop,
             const ThreadLoopHints &Hints, bool Innermost) {
  Value *Next = Builder.CreateNUWAdd(Loop.Counter, Builder.getInt32(1),
                                     Loop.Counter->getName() + ".next");
  Loop.Counter->addIncoming(Next, Builder.GetInsertBlock());
  BranchInst *Latch = Builder.CreateBr(Loop.Condition);
  if (MDNode *LoopID = threadLoopID(Builder.getContext(), Hints, Innermost))
    Latch->setMetadata(LLVMContext::MD_loop, LoopID);
  Loop.Exit->insertInto(Builder.GetInsertBlock()->getParent());
  Builder.SetInsertPoint(Loop.Exit);
}

// Every thread of the block: for tid.z, for tid.y, for tid.x: Body(x, y, z),
// x innermost; with YInnermost, y innermost instead whenever the block has
// more than one row (else the x order). Leaves the builder after the loops.
void emitThreadLoops(IRBuilder<> &Builder, Value *const BlockDim[3],
                     bool YInnermost, const ThreadLoopHints &Hints,
                     function_ref<void(Value *, Value *, Value *)> Body) {
  auto Nest = [&](unsigned Outer, unsigned Middle, unsigned Inner) {
    static const char *Names[3] = {"tid.x", "tid.y", "tid.z"};
    CountedLoop Loops[3];
    for (unsigned Dimension : {Outer, Middle, Inner})
      Loops[Dimension] = beginLoop(Builder, BlockDim[Dimension], Names[Dimension]);
    Body(Loops[0].Counter, Loops[1].Counter, Loops[2].Counter);
    for (unsigned Dimension : {Inner, Middle, Outer})
      endLoop(Builder, Loops[Dimension], Hints, Dimension == Inner);
  };
  if (!YInnermost) {
    Nest(2, 1, 0);
    return;
  }
  LLVMContext &Context = Builder.getContext();
  Function *F = Builder.GetInsertBlock()->getParent();
  BasicBlock *Rows = BasicBlock::Create(Context, "y.innermost", F);
  BasicBlock *Columns = BasicBlock::Create(Context, "x.innermost", F);
  BasicBlock *Join = BasicBlock::Create(Context, "threads.done", F);
  Builder.CreateCondBr(Builder.CreateICmpUGT(BlockDim[1], Builder.getInt32(1)),
                       Rows, Columns);
  Builder.SetInsertPoint(Rows);
  Nest(2, 0, 1);
  Builder.CreateBr(Join);
  Builder.SetInsertPoint(Columns);
  Nest(2, 1, 0);
  Builder.CreateBr(Join);
  Join->moveAfter(Builder.GetInsertBlock());
  Builder.SetInsertPoint(Join);
}


// i32 @__tidal.warp.bits(ptr %lanes, i32 %count, i64 %value, i1 %match):
// bit i set for i < %count if lanes[i] (i64) == %value (match) or != 0.
Function *getWarpBitsFunction(Module &M) {
  if (Function *Existing = M.getFunction("__tidal.warp.bits"))
    return Existing;
  LLVMContext &Context = M.getContext();
  Type *I32 = Type::getInt32Ty(Context), *I64 = Type::getInt64Ty(Context);
  Function *F = Function::Create(
      FunctionType::get(I32,
                        {PointerType::getUnqual(Context), I32, I64,
                         Type::getInt1Ty(Context)},
                        false),
      GlobalValue::InternalLinkage, "__tidal.warp.bits", M);
  F->addFnAttr(Attribute::NoUnwind);
  F->addFnAttr(Attribute::AlwaysInline);
  Argument *Lanes = F->getArg(0), *Count = F->getArg(1), *Wanted = F->getArg(2),
           *Match = F->getArg(3);
  BasicBlock *Entry = BasicBlock::Create(Context, "entry", F);
  BasicBlock *Loop = BasicBlock::Create(Context, "lane", F);
  BasicBlock *Exit = BasicBlock::Create(Context, "exit", F);
  IRBuilder<> B(Entry);
  B.CreateCondBr(B.CreateICmpEQ(Count, B.getInt32(0)), Exit, Loop);
  B.SetInsertPoint(Loop);
  PHINode *Lane = B.CreatePHI(I32, 2, "i");
  PHINode *Bits = B.CreatePHI(I32, 2, "bits");
  Lane->addIncoming(B.getInt32(0), Entry);
  Bits->addIncoming(B.getInt32(0), Entry);
  Value *Element = B.CreateLoad(
      I64, B.CreateInBoundsGEP(I64, Lanes, B.CreateZExt(Lane, I64)), "v");
  Value *Set = B.CreateSelect(Match, B.CreateICmpEQ(Element, Wanted),
                              B.CreateICmpNE(Element, B.getInt64(0)));
  Value *NewBits =
      B.CreateOr(Bits, B.CreateShl(B.CreateZExt(Set, I32), Lane), "bits.next");
  Value *NextLane = B.CreateNUWAdd(Lane, B.getInt32(1));
  Lane->addIncoming(NextLane, Loop);
  Bits->addIncoming(NewBits, Loop);
  B.CreateCondBr(B.CreateICmpULT(NextLane, Count), Loop, Exit);
  B.SetInsertPoint(Exit);
  PHINode *Result = B.CreatePHI(I32, 2, "result");
  Result->addIncoming(B.getInt32(0), Entry);
  Result->addIncoming(NewBits, Loop);
  B.CreateRet(Result);
  return F;
}


// The i64 image of a collective's value in the exchange buffer, and back.
Value *toExchange(IRBuilder<> &B, Value *V) {
  Type *T = V->getType();
  if (T->isFloatTy())
    V = B.CreateBitCast(V, B.getInt32Ty());
  else if (T->isDoubleTy())
    V = B.CreateBitCast(V, B.getInt64Ty());
  return B.CreateZExt(V, B.getInt64Ty());
}

Value *fromExchange(IRBuilder<> &B, Value *V, Type *T) {
  if (T->isFloatTy())
    return B.CreateBitCast(B.CreateTrunc(V, B.getInt32Ty()), T);
  if (T->isDoubleTy())
    return B.CreateBitCast(V, T);
  return B.CreateTrunc(V, T);
}


// A private constant C string.
Constant *getString(Module &M, StringRef Text, const Twine &Name) {
  IRBuilder<> B(M.getContext());
  auto *Global = new GlobalVariable(
      M, ArrayType::get(B.getInt8Ty(), Text.size() + 1), true,
      GlobalValue::PrivateLinkage,
      ConstantDataArray::getString(M.getContext(), Text), Name);
  Global->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  Global->setAlignment(Align(1));
  return Global;
}


} // namespace tidal::host_lowering
