// guardLocalArrays (LowerHost.h): every access to a local array of K.thread
// checked against the array's size, with or without debug mode.
//
// On a GPU a local array lives in local memory, apart from the call stack;
// here it is a slot of the worker's native stack (or of the frame, for a
// kernel with sync points), next to return addresses and saved registers.
// A store a few elements past one would overwrite those, and the worker
// would return into garbage, past any signal handler's reach: the process
// dies. A local array's size is a constant, so the check is one compare
// against a constant, which LLVM removes wherever it can prove the index
// in range (a `for k in range(4)` over an array of 4). The failure is the
// IndexError of debug mode's bounds checks, without the source line.
//
// The accesses are the loads, stores, atomics and memory intrinsics whose
// address is the array plus GEP offsets (through casts). A pointer that
// leaves that chain (a phi or select of two arrays, a pointer stored to
// memory, a call that could not be inlined, a vector of addresses) is not
// followed; LowerHost.cpp inlines the functions given a local array so that
// calls seldom are the reason.

#include "LowerHost.h"

#define DEBUG_TYPE "tidal-lower-host"

TIDAL_STATISTIC(NumLocalArrayChecks, "Local array accesses checked against the array's size");

namespace tidal::host_lowering {

namespace {

struct LocalArrayGuard {
  ThreadFunction &Thread;
  const DataLayout &DL;
  uint64_t Bytes;
  Constant *Where;

  // Before `Access`: fail unless [Offset, Offset + Size) lies in the array.
  void check(Instruction *Access, Value *Offset, Value *Size) {
    IRBuilder<> B(Access);
    Type *I64 = B.getInt64Ty();
    Size = B.CreateZExtOrTrunc(Size, I64);
    Value *Limit = B.CreateSub(B.getInt64(Bytes), Size);
    Value *Outside = B.CreateOr(B.CreateICmpUGT(Size, B.getInt64(Bytes)),
                                B.CreateICmpUGT(Offset, Limit), "local.outside");
    if (auto *Known = dyn_cast<ConstantInt>(Outside); Known && Known->isZero())
      return;
    MDNode *Unlikely = MDBuilder(Access->getContext()).createUnlikelyBranchWeights();
    Instruction *Fail = SplitBlockAndInsertIfThen(Outside, Access, /*Unreachable=*/true,
                                                  Unlikely);
    B.SetInsertPoint(Fail);
    // Reported in elements of the access's size: "index 32 ... with size 4".
    Value *Unit = B.CreateSelect(B.CreateICmpEQ(Size, B.getInt64(0)), B.getInt64(1), Size);
    Value *Index = B.CreateSDiv(Offset, Unit);
    Value *Extent = B.CreateUDiv(B.getInt64(Bytes), Unit);
    Module &M = *Thread.Thread->getParent();
    Type *Pointer = B.getPtrTy(), *I32 = B.getInt32Ty();
    Function *Hook = getHook(M, CpuBoundsErrorHook, B.getVoidTy(),
                             {Pointer, Pointer, I64, I64, I32, I32, I32, I32});
    B.CreateCall(Hook, {Thread.ContextPointer, Where, Index, Extent, B.getInt32(0),
                        Thread.ThreadIndex[0], Thread.ThreadIndex[1],
                        Thread.ThreadIndex[2]});
    ReplaceInstWithInst(Fail, ReturnInst::Create(Access->getContext(),
                                                 B.getInt32(ThreadFailed)));
    ++NumLocalArrayChecks;
  }

  Value *sizeOf(Type *T) {
    return ConstantInt::get(Type::getInt64Ty(T->getContext()),
                            DL.getTypeStoreSize(T).getFixedValue());
  }

  // Every access through `Array` (a tidal.local.array call), in order.
  void guard(CallInst &Array) {
    SmallVector<std::pair<Value *, Value *>, 16> Work; // pointer, byte offset
    Work.emplace_back(&Array, ConstantInt::get(Type::getInt64Ty(Array.getContext()), 0));
    while (!Work.empty()) {
      auto [Pointer, Offset] = Work.pop_back_val();
      SmallVector<User *, 8> Users(Pointer->users());
      for (User *U : Users) {
        if (auto *GEP = dyn_cast<GetElementPtrInst>(U)) {
          if (GEP->getPointerOperand() != Pointer || GEP->getType()->isVectorTy())
            continue; // an index into the array, or a vector of addresses: not followed
          IRBuilder<> B(GEP);
          Value *Step = emitGEPOffset(&B, DL, GEP, /*NoAssumptions=*/true);
          Work.emplace_back(GEP, B.CreateAdd(Offset, B.CreateSExtOrTrunc(Step, B.getInt64Ty())));
        } else if (isa<BitCastInst, AddrSpaceCastInst>(U)) {
          Work.emplace_back(U, Offset); // the same address
        } else if (auto *Load = dyn_cast<LoadInst>(U)) {
          check(Load, Offset, sizeOf(Load->getType()));
        } else if (auto *Store = dyn_cast<StoreInst>(U)) {
          if (Store->getPointerOperand() == Pointer)
            check(Store, Offset, sizeOf(Store->getValueOperand()->getType()));
        } else if (auto *RMW = dyn_cast<AtomicRMWInst>(U)) {
          check(RMW, Offset, sizeOf(RMW->getValOperand()->getType()));
        } else if (auto *CmpXchg = dyn_cast<AtomicCmpXchgInst>(U)) {
          if (CmpXchg->getPointerOperand() == Pointer)
            check(CmpXchg, Offset, sizeOf(CmpXchg->getNewValOperand()->getType()));
        } else if (auto *Memory = dyn_cast<MemIntrinsic>(U)) {
          check(Memory, Offset, Memory->getLength());
        } else if (auto *Call = dyn_cast<CallInst>(U)) {
          // an atomic marker: its address first, its old value returned
          std::optional<MarkerName> Marker = getMarkerCall(*Call);
          if (Marker && getAtomicRule(*Marker) && Call->getArgOperand(0) == Pointer)
            check(Call, Offset, sizeOf(Call->getType()));
        }
      }
    }
  }
};

} // namespace

void guardLocalArrays(ThreadFunction &Thread) {
  SmallVector<std::pair<CallInst *, uint64_t>, 4> Arrays;
  for (Instruction &I : instructions(*Thread.Thread))
    if (auto *Call = dyn_cast<CallInst>(&I))
      if (std::optional<MarkerName> Marker = getMarkerCall(*Call);
          Marker && Marker->Kind == MarkerKind::LocalArray)
        if (std::optional<ArrayArguments> Size = getArrayArguments(*Call))
          Arrays.emplace_back(Call, Size->Bytes);
  Module &M = *Thread.Thread->getParent();
  for (auto [Array, Bytes] : Arrays) {
    std::string Text = "a local array of " + std::to_string(Bytes) + " bytes of kernel '" +
                       Thread.Kernel->getName().str() +
                       "' (checked on the cpu target also without debug=True)";
    LocalArrayGuard Guard{Thread, M.getDataLayout(), Bytes,
                          getString(M, Text, "local.where")};
    Guard.guard(*Array);
  }
}

} // namespace tidal::host_lowering
