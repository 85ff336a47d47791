// count-memory-accesses: an out-of-tree pass over tidal's marker IR
// (docs/research.md). In every kernel with an int64 array parameter named
// `counts`, each thread counts the loads (counts[2 * t]) and stores
// (counts[2 * t + 1]) it makes through the kernel's other array parameters,
// t being its index in a 1-D grid; a thread past the end of `counts` counts
// nowhere. It runs at tidal's point after-frontend, where the IR is the same
// for both targets:
//   opt-19 -load-pass-plugin=CountMemoryAccesses.so -passes=count-memory-accesses k.ll
//   TIDAL_PASS_PLUGINS=CountMemoryAccesses.so TIDAL_PASSES=after-frontend=count-memory-accesses python3 app.py
#include "tidal/Contract.h" // KernelsMetadataName, MarkerPrefix

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"

using namespace llvm;

namespace {

// The markers of the contract, by kind, from its table.
enum class Marker {
#define TIDAL_MARKER(Kind, Name, Suffixes, Result, Parameters, Sync) Kind,
#include "tidal/Markers.def"
};
constexpr const char *MarkerNames[] = {
#define TIDAL_MARKER(Kind, Name, Suffixes, Result, Parameters, Sync) Name,
#include "tidal/Markers.def"
};

// A call of a special-register marker (i32 tidal.<name>()), widened to i64.
Value *specialRegister(IRBuilder<> &B, Marker Kind) {
  Module &M = *B.GetInsertBlock()->getModule();
  std::string Name = std::string(tidal::MarkerPrefix) + MarkerNames[static_cast<int>(Kind)];
  FunctionCallee Callee = M.getOrInsertFunction(Name, B.getInt32Ty());
  return B.CreateZExt(B.CreateCall(Callee), B.getInt64Ty());
}

Argument *argumentNamed(Function &F, StringRef Name) {
  for (Argument &A : F.args())
    if (A.getName() == Name)
      return &A;
  return nullptr;
}

bool countMemoryAccesses(Function &Kernel) {
  Argument *Counts = argumentNamed(Kernel, "counts");
  Argument *Size = argumentNamed(Kernel, "counts.shape.0");
  if (!Counts || !Size || !Counts->getType()->isPointerTy())
    return false;
  // 1. The accesses through the kernel's other array parameters.
  SmallVector<Instruction *, 16> Accesses;
  for (Instruction &I : instructions(Kernel)) {
    Value *Pointer = getLoadStorePointerOperand(&I);
    auto *Base = Pointer ? dyn_cast<Argument>(getUnderlyingObject(Pointer)) : nullptr;
    if (Base && Base != Counts)
      Accesses.push_back(&I);
  }
  if (Accesses.empty())
    return false;
  // 2. The thread's two counters: counts[2t], counts[2t + 1], or a local
  // pair when they are past the end of counts.
  IRBuilder<> B(&*Kernel.getEntryBlock().getFirstInsertionPt());
  Type *I64 = B.getInt64Ty();
  Value *Block = specialRegister(B, Marker::BlockIndexX);
  Value *BlockSize = specialRegister(B, Marker::BlockDimX);
  Value *InBlock = specialRegister(B, Marker::ThreadIndexX);
  Value *Thread = B.CreateAdd(B.CreateMul(Block, BlockSize), InBlock, "count.thread");
  Value *First = B.CreateMul(Thread, B.getInt64(2));
  Value *Fits = B.CreateICmpULT(B.CreateAdd(First, B.getInt64(1)), Size);
  Value *Spare = B.CreateAlloca(I64, B.getInt64(2), "count.spare");
  Value *Slots = B.CreateSelect(Fits, B.CreateGEP(I64, Counts, First), Spare, "count.slots");
  // 3. Before each access, its counter + 1.
  for (Instruction *I : Accesses) {
    B.SetInsertPoint(I);
    Value *Slot = B.CreateGEP(I64, Slots, B.getInt64(isa<StoreInst>(I) ? 1 : 0));
    Value *Count = B.CreateAlignedLoad(I64, Slot, Align(8));
    B.CreateAlignedStore(B.CreateAdd(Count, B.getInt64(1)), Slot, Align(8));
  }
  return true;
}

struct CountMemoryAccessesPass : PassInfoMixin<CountMemoryAccessesPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    bool Changed = false;
    if (NamedMDNode *Kernels = M.getNamedMetadata(tidal::KernelsMetadataName))
      for (MDNode *Entry : Kernels->operands())
        if (auto *F = mdconst::dyn_extract_or_null<Function>(Entry->getOperand(0)))
          Changed |= countMemoryAccesses(*F);
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "CountMemoryAccesses", "1", [](PassBuilder &PB) {
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name != "count-memory-accesses")
                    return false;
                  MPM.addPass(CountMemoryAccessesPass());
                  return true;
                });
          }};
}
