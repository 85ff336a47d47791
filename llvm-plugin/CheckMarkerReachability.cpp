// tidal-check-marker-reachability: a marker means "this thread", so it may
// only be used in a kernel or in a function that a kernel calls (directly or
// not). Reports every other defined function that uses one; changes nothing.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-check-marker-reachability in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "tidal-check-marker-reachability"

using namespace llvm;

namespace tidal {

bool checkMarkerReachability(Module &M) {
  // 1. Everything the kernels reach through direct calls.
  SmallPtrSet<const Function *, 32> Reachable;
  SmallVector<const Function *, 32> Worklist;
  for (Function *K : getKernels(M))
    if (Reachable.insert(K).second)
      Worklist.push_back(K);
  while (!Worklist.empty()) {
    const Function *F = Worklist.pop_back_val();
    for (const Instruction &I : instructions(*F))
      if (const auto *Call = dyn_cast<CallBase>(&I))
        if (const Function *Callee = Call->getCalledFunction())
          if (!Callee->isDeclaration() && Reachable.insert(Callee).second)
            Worklist.push_back(Callee);
  }
  // 2. A marker call anywhere else is an error, once per function.
  bool Clean = true;
  for (Function &F : M) {
    if (F.isDeclaration() || Reachable.count(&F))
      continue;
    for (Instruction &I : instructions(F)) {
      const auto *Call = dyn_cast<CallInst>(&I);
      const Function *Callee = Call ? Call->getCalledFunction() : nullptr;
      if (!Callee || !isMarker(*Callee))
        continue;
      std::string Where = describeLocation(I);
      reportError(M.getContext(), "marker '" + Callee->getName() + "' in function '" +
                                      F.getName() + "'" + (Where.empty() ? "" : " at " + Where) +
                                      ", which is neither a kernel (!tidal.kernels) nor "
                                      "called from one");
      Clean = false;
      break;
    }
  }
  return Clean;
}


} // namespace tidal
