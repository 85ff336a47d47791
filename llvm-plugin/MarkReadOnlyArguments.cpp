// tidal-mark-readonly-arguments: marks the array (pointer) parameters of a
// kernel `noalias readonly` when no thread of the kernel can write global
// memory, so that NVPTX loads them with ld.global.nc (the read-only cache).
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-mark-readonly-arguments in.ll
//
// The rule, chosen to be sound without knowing the launch's arguments (two
// array arguments may be the same array): a kernel qualifies if every write
// of the kernel and of the functions it calls (store, atomic, memset/memcpy
// destination) provably goes to thread-local or shared memory (an alloca, an
// addrspace(3) or addrspace(5) global), and it calls nothing unknown. Then no
// global memory changes while it runs, which is what ld.global.nc needs and
// what makes `noalias` true. A kernel that writes any array gets nothing.

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "tidal-mark-readonly-arguments"

using namespace llvm;

namespace tidal {
namespace {

constexpr unsigned SharedAddressSpace = 3, LocalAddressSpace = 5;

// True if every object `Pointer` may point into is private to the thread or
// the block (never global memory).
bool pointsOutsideGlobalMemory(const Value *Pointer) {
  unsigned AddressSpace = Pointer->getType()->getPointerAddressSpace();
  if (AddressSpace == SharedAddressSpace || AddressSpace == LocalAddressSpace)
    return true;
  SmallVector<const Value *, 4> Objects;
  getUnderlyingObjects(Pointer, Objects);
  return all_of(Objects, [](const Value *Object) {
    if (isa<AllocaInst>(Object))
      return true;
    unsigned Space = Object->getType()->getPointerAddressSpace();
    return isa<GlobalVariable>(Object) &&
           (Space == SharedAddressSpace || Space == LocalAddressSpace);
  });
}

// Calls that write no memory another thread could read: barriers, fences,
// warp collectives, traps, and CUDA's vprintf / __assertfail.
bool isHarmlessCall(const CallBase &Call) {
  if (!Call.mayWriteToMemory())
    return true;
  switch (Call.getIntrinsicID()) {
  case Intrinsic::nvvm_barrier0:
  case Intrinsic::nvvm_barrier0_popc:
  case Intrinsic::nvvm_barrier0_and:
  case Intrinsic::nvvm_barrier0_or:
  case Intrinsic::nvvm_bar_warp_sync:
  case Intrinsic::nvvm_membar_cta:
  case Intrinsic::nvvm_membar_gl:
  case Intrinsic::nvvm_membar_sys:
  case Intrinsic::trap:
  case Intrinsic::lifetime_start:
  case Intrinsic::lifetime_end:
  case Intrinsic::assume:
    return true;
  default:
    break;
  }
  const Function *Callee = Call.getCalledFunction();
  return Callee && Callee->isDeclaration() && !Callee->isIntrinsic() &&
         (Callee->getName() == "vprintf" || Callee->getName() == "__assertfail");
}

// True if no thread running `Kernel` can write global memory.
bool writesNoGlobalMemory(Function &Kernel) {
  SetVector<Function *> Reachable;
  Reachable.insert(&Kernel);
  for (unsigned Next = 0; Next < Reachable.size(); ++Next) {
    for (Instruction &I : instructions(*Reachable[Next])) {
      if (!I.mayWriteToMemory())
        continue;
      if (auto *Store = dyn_cast<StoreInst>(&I)) {
        if (!pointsOutsideGlobalMemory(Store->getPointerOperand()))
          return false;
      } else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
        if (!pointsOutsideGlobalMemory(RMW->getPointerOperand()))
          return false;
      } else if (auto *CAS = dyn_cast<AtomicCmpXchgInst>(&I)) {
        if (!pointsOutsideGlobalMemory(CAS->getPointerOperand()))
          return false;
      } else if (auto *Transfer = dyn_cast<MemIntrinsic>(&I)) {
        if (!pointsOutsideGlobalMemory(Transfer->getDest()))
          return false;
      } else if (auto *Call = dyn_cast<CallBase>(&I)) {
        Function *Callee = Call->getCalledFunction();
        if (Callee && !Callee->isDeclaration())
          Reachable.insert(Callee); // its own writes are checked in turn
        else if (!isHarmlessCall(*Call))
          return false;
      } else {
        return false; // fence and anything else that may write
      }
    }
  }
  return true;
}

} // namespace

bool markReadOnlyArguments(Module &M) {
  bool Changed = false;
  for (Function *Kernel : getKernels(M)) {
    if (Kernel->isDeclaration() || !writesNoGlobalMemory(*Kernel))
      continue;
    for (Argument &Parameter : Kernel->args()) {
      if (!Parameter.getType()->isPointerTy() ||
          (Parameter.hasNoAliasAttr() && Parameter.onlyReadsMemory()))
        continue;
      Parameter.addAttr(Attribute::NoAlias);
      Parameter.addAttr(Attribute::ReadOnly);
      Changed = true;
    }
  }
  return Changed;
}


} // namespace tidal
