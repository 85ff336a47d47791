// tidal-lower-barriers: replaces the barrier and fence markers
// (tidal.syncthreads[.count|.and|.or], tidal.syncwarp, tidal.threadfence*)
// by the NVVM intrinsics that become bar.sync / bar.red / bar.warp.sync / membar.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-barriers in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "tidal-lower-barriers"

using namespace llvm;

namespace tidal {
namespace {

Intrinsic::ID getBarrierIntrinsic(StringRef Name) {
  return StringSwitch<Intrinsic::ID>(Name)
      // block barrier: bar.sync 0, and its reductions bar.red.{popc,and,or}
      .Case("syncthreads", Intrinsic::nvvm_barrier0)
      .Case("syncthreads.count", Intrinsic::nvvm_barrier0_popc)
      .Case("syncthreads.and", Intrinsic::nvvm_barrier0_and)
      .Case("syncthreads.or", Intrinsic::nvvm_barrier0_or)
      // warp barrier: bar.warp.sync mask
      .Case("syncwarp", Intrinsic::nvvm_bar_warp_sync)
      // fences: membar.cta / membar.gl / membar.sys
      .Case("threadfence.block", Intrinsic::nvvm_membar_cta)
      .Case("threadfence", Intrinsic::nvvm_membar_gl)
      .Case("threadfence.system", Intrinsic::nvvm_membar_sys)
      .Default(Intrinsic::not_intrinsic);
}

} // namespace

bool lowerBarriers(Module &M) {
  return lowerMarkerCalls(M, [](CallInst &Call, StringRef Name) {
    Intrinsic::ID ID = getBarrierIntrinsic(Name);
    if (ID == Intrinsic::not_intrinsic)
      return false;
    // The markers' signatures are the intrinsics' (i32 or no argument).
    IRBuilder<> Builder(&Call);
    SmallVector<Value *, 1> Arguments(Call.args());
    CallInst *Barrier = Builder.CreateIntrinsic(ID, {}, Arguments);
    Barrier->takeName(&Call);
    Call.replaceAllUsesWith(Barrier);
    Call.eraseFromParent();
    return true;
  });
}

PreservedAnalyses LowerBarriersPass::run(Module &M, ModuleAnalysisManager &) {
  return lowerBarriers(M) ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace tidal
