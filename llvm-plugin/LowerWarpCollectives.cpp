// tidal-lower-warp-collectives: replaces the warp markers (tidal.shfl.*,
// tidal.vote.*, tidal.match.*, tidal.activemask) by llvm.nvvm.*.sync
// intrinsics; 64-bit shuffles are two 32-bit shuffles.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-warp-collectives in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "tidal-lower-warp-collectives"

using namespace llvm;

namespace tidal {
namespace {

struct Shuffle {
  Intrinsic::ID I32, F32;
  // shfl.sync's c operand for width 32: the clamp lane (31) for idx, down
  // and xor, the segment start (0) for up.
  unsigned Clamp;
};

std::optional<Shuffle> getShuffle(MarkerKind Kind) {
  switch (Kind) {
  case MarkerKind::ShuffleIndex:
    return Shuffle{Intrinsic::nvvm_shfl_sync_idx_i32,
                   Intrinsic::nvvm_shfl_sync_idx_f32, 0x1f};
  case MarkerKind::ShuffleUp:
    return Shuffle{Intrinsic::nvvm_shfl_sync_up_i32,
                   Intrinsic::nvvm_shfl_sync_up_f32, 0};
  case MarkerKind::ShuffleDown:
    return Shuffle{Intrinsic::nvvm_shfl_sync_down_i32,
                   Intrinsic::nvvm_shfl_sync_down_f32, 0x1f};
  case MarkerKind::ShuffleXor:
    return Shuffle{Intrinsic::nvvm_shfl_sync_bfly_i32,
                   Intrinsic::nvvm_shfl_sync_bfly_f32, 0x1f};
  default:
    return std::nullopt;
  }
}

// shfl.sync of a 32- or 64-bit value: the 64-bit value as two i32 halves.
Value *lowerShuffle(IRBuilder<> &Builder, Shuffle S, Value *Mask, Value *V,
                    Value *Lane) {
  Value *Clamp = Builder.getInt32(S.Clamp);
  Type *T = V->getType();
  if (T->isFloatTy())
    return Builder.CreateIntrinsic(S.F32, {}, {Mask, V, Lane, Clamp});
  if (T->isIntegerTy(32))
    return Builder.CreateIntrinsic(S.I32, {}, {Mask, V, Lane, Clamp});
  Type *I32 = Builder.getInt32Ty(), *I64 = Builder.getInt64Ty();
  Value *Bits = T->isIntegerTy(64) ? V : Builder.CreateBitCast(V, I64);
  Value *Low = Builder.CreateTrunc(Bits, I32);
  Value *High = Builder.CreateTrunc(Builder.CreateLShr(Bits, 32), I32);
  Low = Builder.CreateIntrinsic(S.I32, {}, {Mask, Low, Lane, Clamp});
  High = Builder.CreateIntrinsic(S.I32, {}, {Mask, High, Lane, Clamp});
  Value *LowBits = Builder.CreateZExt(Low, I64);
  Value *HighBits = Builder.CreateShl(Builder.CreateZExt(High, I64), 32);
  Value *Result = Builder.CreateOr(LowBits, HighBits);
  return T->isIntegerTy(64) ? Result : Builder.CreateBitCast(Result, T);
}

// The intrinsic of a vote/match/activemask marker whose signature is the
// marker's own.
Intrinsic::ID getDirectIntrinsic(MarkerName Marker) {
  bool Wide = Marker.Suffix == MarkerSuffix::I64;
  switch (Marker.Kind) {
  // votes: vote.sync.{all,any,uni,ballot}
  case MarkerKind::VoteAll: return Intrinsic::nvvm_vote_all_sync;
  case MarkerKind::VoteAny: return Intrinsic::nvvm_vote_any_sync;
  case MarkerKind::VoteUniform: return Intrinsic::nvvm_vote_uni_sync;
  case MarkerKind::VoteBallot: return Intrinsic::nvvm_vote_ballot_sync;
  // matches (sm_70+): match.{any,all}.sync.b32/.b64
  case MarkerKind::MatchAny:
    return Wide ? Intrinsic::nvvm_match_any_sync_i64
                : Intrinsic::nvvm_match_any_sync_i32;
  case MarkerKind::MatchAll:
    return Wide ? Intrinsic::nvvm_match_all_sync_i64p
                : Intrinsic::nvvm_match_all_sync_i32p;
  // lanes executing now
  case MarkerKind::ActiveMask: return Intrinsic::nvvm_activemask;
  default: return Intrinsic::not_intrinsic;
  }
}

} // namespace

bool lowerWarpCollectives(Module &M) {
  return lowerMarkerCalls(M, [](CallInst &Call, MarkerName Marker) {
    IRBuilder<> Builder(&Call);
    Value *Result = nullptr;
    if (Intrinsic::ID ID = getDirectIntrinsic(Marker); ID != Intrinsic::not_intrinsic) {
      SmallVector<Value *, 2> Arguments(Call.args());
      Result = Builder.CreateIntrinsic(ID, {}, Arguments);
    } else if (std::optional<Shuffle> S = getShuffle(Marker.Kind)) {
      Result = lowerShuffle(Builder, *S, Call.getArgOperand(0),
                            Call.getArgOperand(1), Call.getArgOperand(2));
    } else {
      return false;
    }
    Result->takeName(&Call);
    Call.replaceAllUsesWith(Result);
    Call.eraseFromParent();
    return true;
  });
}


} // namespace tidal
