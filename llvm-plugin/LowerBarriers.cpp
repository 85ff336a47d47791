// tidal-lower-barriers: replaces the barrier, fence and sleep markers
// (tidal.syncthreads[.count|.and|.or], tidal.syncwarp, tidal.threadfence*,
// tidal.nanosleep) by the NVVM intrinsics that become bar.sync / bar.red /
// bar.warp.sync / membar / nanosleep.
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

Intrinsic::ID getBarrierIntrinsic(MarkerKind Kind) {
  switch (Kind) {
  // block barrier: bar.sync 0, and its reductions bar.red.{popc,and,or}
  case MarkerKind::SyncThreads: return Intrinsic::nvvm_barrier0;
  case MarkerKind::SyncThreadsCount: return Intrinsic::nvvm_barrier0_popc;
  case MarkerKind::SyncThreadsAnd: return Intrinsic::nvvm_barrier0_and;
  case MarkerKind::SyncThreadsOr: return Intrinsic::nvvm_barrier0_or;
  // warp barrier: bar.warp.sync mask
  case MarkerKind::SyncWarp: return Intrinsic::nvvm_bar_warp_sync;
  // fences: membar.cta / membar.gl / membar.sys
  case MarkerKind::ThreadFenceBlock: return Intrinsic::nvvm_membar_cta;
  case MarkerKind::ThreadFence: return Intrinsic::nvvm_membar_gl;
  case MarkerKind::ThreadFenceSystem: return Intrinsic::nvvm_membar_sys;
  // sleep: nanosleep.u32 (sm_70 and up)
  case MarkerKind::NanoSleep: return Intrinsic::nvvm_nanosleep;
  default: return Intrinsic::not_intrinsic;
  }
}

} // namespace

bool lowerBarriers(Module &M) {
  return lowerMarkerCalls(M, [](CallInst &Call, MarkerName Marker) {
    Intrinsic::ID ID = getBarrierIntrinsic(Marker.Kind);
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


} // namespace tidal
