// tidal-lower-barriers: replaces the barrier, fence and sleep markers
// (tidal.syncthreads[.count|.and|.or], tidal.syncwarp, tidal.threadfence*,
// tidal.nanosleep) by the NVVM intrinsics that become bar.sync / bar.red /
// bar.warp.sync / membar / nanosleep, and the cooperative groups' markers
// (tidal.grid.group: nothing; tidal.grid.sync: a grid barrier on a global
// counter, lowerGridSync below).
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-barriers in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
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

// The grid barrier's counter: one per module, zero when the module loads,
// left at a multiple of 2^31 by every completed barrier (lowerGridSync).
GlobalVariable *getGridBarrierCounter(Module &M) {
  const char *Name = "__tidal_grid_barrier";
  if (GlobalVariable *Existing = M.getNamedGlobal(Name))
    return Existing;
  Type *I32 = Type::getInt32Ty(M.getContext());
  auto *Counter = new GlobalVariable(M, I32, /*isConstant=*/false,
                                     GlobalValue::InternalLinkage,
                                     ConstantInt::get(I32, 0), Name, nullptr,
                                     GlobalValue::NotThreadLocal, /*AddressSpace=*/1);
  Counter->setAlignment(Align(4));
  return Counter;
}

// grid.sync() without libcudadevrt (Numba calls its cudaCGSynchronize): a
// block barrier; thread (0, 0, 0) of each block then arrives at the
// module's counter (after a membar.gl that publishes its block's writes)
// and spins until the counter's bit 31 flips; a block barrier lets the
// block go on. Block (0, 0, 0) adds 2^31 - (blocks - 1), every other
// block 1: when all have arrived the counter has grown by exactly 2^31,
// so bit 31 flips once per barrier, whatever the grid's size, and the
// counter needs no reset between barriers or launches. Every block must be
// resident (a cooperative launch), and two cooperative launches of one
// module must not run at the same time (they share the counter).
void lowerGridSync(CallInst &Call) {
  Module &M = *Call.getModule();
  IRBuilder<> B(&Call);
  Type *I32 = B.getInt32Ty();
  GlobalVariable *Counter = getGridBarrierCounter(M);
  auto Register = [&](Intrinsic::ID ID) { return B.CreateIntrinsic(ID, {}, {}); };
  B.CreateIntrinsic(Intrinsic::nvvm_barrier0, {}, {});
  Value *Thread = B.CreateOr(B.CreateOr(Register(Intrinsic::nvvm_read_ptx_sreg_tid_x),
                                        Register(Intrinsic::nvvm_read_ptx_sreg_tid_y)),
                             Register(Intrinsic::nvvm_read_ptx_sreg_tid_z));
  Value *Arrives = B.CreateICmpEQ(Thread, B.getInt32(0), "grid.sync.arrives");
  // Before: the barrier and the test; Arrive (thread 0): the counter; After:
  // the second barrier.
  BasicBlock *Before = Call.getParent();
  BasicBlock *After = SplitBlock(Before, &Call, static_cast<DominatorTree *>(nullptr),
                                 nullptr, nullptr, "grid.sync.after");
  Function *F = Before->getParent();
  LLVMContext &Context = M.getContext();
  BasicBlock *Arrive = BasicBlock::Create(Context, "grid.sync.arrive", F, After);
  BasicBlock *Spin = BasicBlock::Create(Context, "grid.sync.spin", F, After);
  BasicBlock *Released = BasicBlock::Create(Context, "grid.sync.released", F, After);
  Before->getTerminator()->eraseFromParent();
  B.SetInsertPoint(Before);
  B.CreateCondBr(Arrives, Arrive, After);

  B.SetInsertPoint(Arrive);
  Value *Blocks = B.CreateMul(B.CreateMul(Register(Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                                          Register(Intrinsic::nvvm_read_ptx_sreg_nctaid_y)),
                              Register(Intrinsic::nvvm_read_ptx_sreg_nctaid_z));
  Value *BlockIndex = B.CreateOr(B.CreateOr(Register(Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                            Register(Intrinsic::nvvm_read_ptx_sreg_ctaid_y)),
                                 Register(Intrinsic::nvvm_read_ptx_sreg_ctaid_z));
  Value *Increment = B.CreateSelect(
      B.CreateICmpEQ(BlockIndex, B.getInt32(0)),
      B.CreateSub(B.getInt32(0x80000000u), B.CreateSub(Blocks, B.getInt32(1))),
      B.getInt32(1), "grid.sync.increment");
  B.CreateIntrinsic(Intrinsic::nvvm_membar_gl, {}, {});
  Value *Old = B.CreateAtomicRMW(AtomicRMWInst::Add, Counter, Increment, Align(4),
                                 AtomicOrdering::Monotonic);
  B.CreateBr(Spin);

  B.SetInsertPoint(Spin);
  LoadInst *Now = B.CreateAlignedLoad(I32, Counter, Align(4), /*isVolatile=*/true,
                                      "grid.sync.counter");
  Value *Flipped = B.CreateICmpNE(
      B.CreateAnd(B.CreateXor(Old, Now), B.getInt32(0x80000000u)), B.getInt32(0));
  B.CreateCondBr(Flipped, Released, Spin);

  B.SetInsertPoint(Released);
  B.CreateIntrinsic(Intrinsic::nvvm_membar_gl, {}, {});
  B.CreateBr(After);

  B.SetInsertPoint(&Call);
  B.CreateIntrinsic(Intrinsic::nvvm_barrier0, {}, {});
  Call.eraseFromParent();
}

} // namespace

bool lowerBarriers(Module &M) {
  return lowerMarkerCalls(M, [](CallInst &Call, MarkerName Marker) {
    if (Marker.Kind == MarkerKind::GridGroup) {
      // Only says that launches must be cooperative (the dispatcher reads
      // it from the marker IR).
      Call.eraseFromParent();
      return true;
    }
    if (Marker.Kind == MarkerKind::GridSync) {
      lowerGridSync(Call);
      return true;
    }
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
