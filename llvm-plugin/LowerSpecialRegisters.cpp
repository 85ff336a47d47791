// tidal-lower-special-registers: replaces the 12 special-register markers
// (tidal.tid/ntid/ctaid/nctaid.{x,y,z}) and the lane registers (tidal.laneid,
// tidal.warpsize, tidal.lanemask.lt) by llvm.nvvm.read.ptx.sreg.* with
// CUDA's limits as !range metadata.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-special-registers in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "tidal-lower-special-registers"

using namespace llvm;

namespace tidal {
namespace {

struct RegisterRead {
  Intrinsic::ID Intrinsic;
  uint64_t Low, High; // [Low, High), CUDA's limits
};

RegisterRead getRegisterRead(SpecialRegisterMarker Marker) {
  static const RegisterRead Reads[4][3] = {
      // index within block
      {{Intrinsic::nvvm_read_ptx_sreg_tid_x, 0, 1024},
       {Intrinsic::nvvm_read_ptx_sreg_tid_y, 0, 1024},
       {Intrinsic::nvvm_read_ptx_sreg_tid_z, 0, 64}},
      // block size
      {{Intrinsic::nvvm_read_ptx_sreg_ntid_x, 1, 1025},
       {Intrinsic::nvvm_read_ptx_sreg_ntid_y, 1, 1025},
       {Intrinsic::nvvm_read_ptx_sreg_ntid_z, 1, 65}},
      // block index within grid
      {{Intrinsic::nvvm_read_ptx_sreg_ctaid_x, 0, 0x7fffffff},
       {Intrinsic::nvvm_read_ptx_sreg_ctaid_y, 0, 0xffff},
       {Intrinsic::nvvm_read_ptx_sreg_ctaid_z, 0, 0xffff}},
      // grid size
      {{Intrinsic::nvvm_read_ptx_sreg_nctaid_x, 1, 0x80000000},
       {Intrinsic::nvvm_read_ptx_sreg_nctaid_y, 1, 0x10000},
       {Intrinsic::nvvm_read_ptx_sreg_nctaid_z, 1, 0x10000}},
  };
  return Reads[static_cast<unsigned>(Marker.Register)][Marker.Dimension];
}

// The lane registers (contract v2).
std::optional<RegisterRead> getLaneRegisterRead(MarkerKind Kind) {
  switch (Kind) {
  // lane within the warp; warp size (always 32); lanes below this one
  case MarkerKind::LaneId:
    return RegisterRead{Intrinsic::nvvm_read_ptx_sreg_laneid, 0, 32};
  case MarkerKind::WarpSize:
    return RegisterRead{Intrinsic::nvvm_read_ptx_sreg_warpsize, 32, 33};
  case MarkerKind::LaneMaskLess:
    return RegisterRead{Intrinsic::nvvm_read_ptx_sreg_lanemask_lt, 0, 0};
  default:
    return std::nullopt;
  }
}

// Replaces `Call` by a read of the register; Low == High means no !range.
void replaceByRead(CallInst *Call, RegisterRead Read) {
  IRBuilder<> Builder(Call);
  CallInst *Value = Builder.CreateIntrinsic(Read.Intrinsic, {}, {});
  if (Read.Low != Read.High)
    Value->setMetadata(LLVMContext::MD_range,
                       MDBuilder(Call->getContext())
                           .createRange(APInt(32, Read.Low), APInt(32, Read.High)));
  Value->takeName(Call);
  Call->replaceAllUsesWith(Value);
  Call->eraseFromParent();
}

} // namespace

bool lowerSpecialRegisters(Module &M) {
  bool Changed = lowerMarkerCalls(M, [](CallInst &Call, MarkerName Marker) {
    std::optional<RegisterRead> Read = getLaneRegisterRead(Marker.Kind);
    if (Read)
      replaceByRead(&Call, *Read);
    return Read.has_value();
  });
  for (Function &Marker : make_early_inc_range(M)) {
    if (!parseSpecialRegisterMarker(Marker.getName()))
      continue;
    for (User *U : make_early_inc_range(Marker.users())) {
      auto *Call = dyn_cast<CallInst>(U);
      std::optional<SpecialRegisterMarker> Register =
          Call ? getSpecialRegisterCall(*Call) : std::nullopt;
      if (!Register)
        continue; // malformed: left for tidal-verify-markers
      replaceByRead(Call, getRegisterRead(*Register));
      Changed = true;
    }
    if (Marker.use_empty() && Marker.isDeclaration()) {
      Marker.eraseFromParent();
      Changed = true;
    }
  }
  return Changed;
}


} // namespace tidal
