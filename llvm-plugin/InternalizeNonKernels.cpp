// tidal-internalize-non-kernels: every defined function but the kernels
// becomes internal, so that O3 may inline, specialise and delete them
// (libdevice's included); variables keep their linkage. tidal-nvptx runs it
// just before default<O3>.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-internalize-non-kernels in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/IR/Module.h"
#include "llvm/Transforms/IPO/Internalize.h"

using namespace llvm;

namespace tidal {

bool internalizeNonKernels(Module &M) {
  return internalizeModule(M, [](const GlobalValue &GV) {
    const auto *F = dyn_cast<Function>(&GV);
    return !F || isKernel(*F);
  });
}

} // namespace tidal
