// Warp collectives: shuffles, votes, matches and lane masks.
#include "IntrinsicTable.h"

#include "llvm/IR/Intrinsics.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

TypedValue shuffle(IntrinsicCall &Call, const std::string &Python, const std::string &Kind,
               const char *Third) {
  bindArguments(Call, "cuda." + Python, {"mask", "value", Third}, 3);
  Value *Mask = maskValue(Call, 0);
  const TypedValue &V = Call.Args[1];
  Scalar S = V.T.isScalar() ? V.T.Dtype : Scalar::Bool;
  // 32-bit and 64-bit values; narrower integers travel as 32 bits.
  Scalar Carrier = S == Scalar::Float32 || S == Scalar::Float64 ? S
                   : (isInteger(S) && bitWidth(S) == 64)        ? Scalar::Int64
                   : isInteger(S) || S == Scalar::Bool           ? Scalar::Int32
                                                                 : Scalar::Float16;
  if (!V.T.isScalar() || Carrier == Scalar::Float16)
    Call.C.typingError(Call.ArgNodes[1], "cuda." + Python +
                                             "() shuffles integers, float32 and float64, not " +
                                             V.T.str());
  if (!Call.Args[2].T.isIntegerScalar())
    Call.C.typingError(Call.ArgNodes[2], std::string("the ") + Third + " of cuda." + Python +
                                             "() must be an integer");
  if (!Call.C.emitting())
    return TypedValue(V.T);
  IRBuilder<> &B = Call.C.builder();
  Value *Shuffled = Call.C.convert(V, Type::scalar(Carrier), Call.ArgNodes[1]).scalar();
  if (S == Scalar::Bool || (isInteger(S) && !isSigned(S) && bitWidth(S) < 32))
    Shuffled = B.CreateZExt(Call.C.convert(V, Type::scalar(Scalar::UInt32), Call.ArgNodes[1]).scalar(),
                         B.getInt32Ty());
  Value *Lane = B.CreateIntCast(Call.Args[2].scalar(), B.getInt32Ty(), true);
  llvm::Value *Result = Call.C.callMarker("shfl." + Kind + "." + suffixOf(Carrier),
                                          Shuffled->getType(), {Mask, Shuffled, Lane});
  return Call.C.convert(Call.C.makeScalar(Carrier, Result), V.T, Call.Node);
}
TypedValue cudaShflSync(IntrinsicCall &Call) { return shuffle(Call, "shfl_sync", "idx", "src_lane"); }
TypedValue cudaShflUpSync(IntrinsicCall &Call) { return shuffle(Call, "shfl_up_sync", "up", "delta"); }
TypedValue cudaShflDownSync(IntrinsicCall &Call) {
  return shuffle(Call, "shfl_down_sync", "down", "delta");
}
TypedValue cudaShflXorSync(IntrinsicCall &Call) {
  return shuffle(Call, "shfl_xor_sync", "xor", "lane_mask");
}

TypedValue vote(IntrinsicCall &Call, const std::string &Python, const std::string &Kind) {
  bindArguments(Call, "cuda." + Python, {"mask", "predicate"}, 2);
  Value *Mask = maskValue(Call, 0);
  Value *Predicate = Call.C.truth(Call.Args[1], Call.ArgNodes[1]);
  bool Ballot = Kind == "ballot";
  Scalar Result = Ballot ? Scalar::UInt32 : Scalar::Bool;
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(Result));
  IRBuilder<> &B = Call.C.builder();
  return Call.C.makeScalar(Result, Call.C.callMarker("vote." + Kind,
                                                     Ballot ? B.getInt32Ty() : B.getInt1Ty(),
                                                     {Mask, Predicate}));
}
TypedValue cudaAllSync(IntrinsicCall &Call) { return vote(Call, "all_sync", "all"); }
TypedValue cudaAnySync(IntrinsicCall &Call) { return vote(Call, "any_sync", "any"); }
TypedValue cudaEqSync(IntrinsicCall &Call) { return vote(Call, "eq_sync", "uni"); }
TypedValue cudaBallotSync(IntrinsicCall &Call) { return vote(Call, "ballot_sync", "ballot"); }

TypedValue match(IntrinsicCall &Call, bool All) {
  std::string Python = All ? "match_all_sync" : "match_any_sync";
  bindArguments(Call, "cuda." + Python, {"mask", "value"}, 2);
  Value *Mask = maskValue(Call, 0);
  const TypedValue &V = Call.Args[1];
  if (!V.T.isIntegerScalar())
    Call.C.typingError(Call.ArgNodes[1], "cuda." + Python + "() matches integers, not " + V.T.str());
  Scalar Carrier = bitWidth(V.T.Dtype) == 64 ? Scalar::Int64 : Scalar::Int32;
  Type MaskType = Type::scalar(Scalar::UInt32);
  if (!Call.C.emitting())
    return All ? TypedValue(Type::tuple({MaskType, Type::scalar(Scalar::Bool)})) : TypedValue(MaskType);
  IRBuilder<> &B = Call.C.builder();
  Value *X = Call.C.convert(V, Type::scalar(Carrier), Call.ArgNodes[1]).scalar();
  std::string Marker = std::string(All ? "match.all." : "match.any.") + suffixOf(Carrier);
  if (!All)
    return Call.C.makeScalar(Scalar::UInt32, Call.C.callMarker(Marker, B.getInt32Ty(), {Mask, X}));
  llvm::Type *Pair = StructType::get(B.getContext(), {B.getInt32Ty(), B.getInt1Ty()});
  Value *R = Call.C.callMarker(Marker, Pair, {Mask, X});
  return Call.C.makeTuple({Call.C.makeScalar(Scalar::UInt32, B.CreateExtractValue(R, 0)),
                           Call.C.makeScalar(Scalar::Bool, B.CreateExtractValue(R, 1))});
}
TypedValue cudaMatchAnySync(IntrinsicCall &Call) { return match(Call, false); }
TypedValue cudaMatchAllSync(IntrinsicCall &Call) { return match(Call, true); }

TypedValue laneMask(IntrinsicCall &Call, const std::string &Python, const std::string &Marker) {
  bindArguments(Call, "cuda." + Python, {}, 0);
  if (!Call.C.emitting())
    return TypedValue(Type::scalar(Scalar::UInt32));
  return Call.C.makeScalar(Scalar::UInt32,
                           Call.C.callMarker(Marker, Call.C.builder().getInt32Ty(), {}));
}
TypedValue cudaActivemask(IntrinsicCall &Call) { return laneMask(Call, "activemask", "activemask"); }
TypedValue cudaLanemaskLt(IntrinsicCall &Call) { return laneMask(Call, "lanemask_lt", "lanemask.lt"); }

} // namespace

llvm::ArrayRef<IntrinsicRecord> warpIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.shfl_sync", IntrinsicKind::Function, cudaShflSync, "shfl.idx",
       "shfl_sync(mask, value, src_lane): value of lane src_lane."},
      {"cuda.shfl_up_sync", IntrinsicKind::Function, cudaShflUpSync, "shfl.up",
       "shfl_up_sync(mask, value, delta): value of lane laneid - delta."},
      {"cuda.shfl_down_sync", IntrinsicKind::Function, cudaShflDownSync, "shfl.down",
       "shfl_down_sync(mask, value, delta): value of lane laneid + delta."},
      {"cuda.shfl_xor_sync", IntrinsicKind::Function, cudaShflXorSync, "shfl.xor",
       "shfl_xor_sync(mask, value, lane_mask): value of lane laneid ^ lane_mask."},
      {"cuda.all_sync", IntrinsicKind::Function, cudaAllSync, "vote.all",
       "all_sync(mask, predicate): true if it holds on every lane of mask."},
      {"cuda.any_sync", IntrinsicKind::Function, cudaAnySync, "vote.any",
       "any_sync(mask, predicate): true if it holds on any lane of mask."},
      {"cuda.eq_sync", IntrinsicKind::Function, cudaEqSync, "vote.uni",
       "eq_sync(mask, predicate): true if it is the same on every lane of mask."},
      {"cuda.ballot_sync", IntrinsicKind::Function, cudaBallotSync, "vote.ballot",
       "ballot_sync(mask, predicate): the lanes of mask where it holds."},
      {"cuda.match_any_sync", IntrinsicKind::Function, cudaMatchAnySync, "match.any",
       "match_any_sync(mask, value): the lanes of mask with the same value."},
      {"cuda.match_all_sync", IntrinsicKind::Function, cudaMatchAllSync, "match.all",
       "match_all_sync(mask, value): (mask if all equal else 0, all equal)."},
      {"cuda.activemask", IntrinsicKind::Function, cudaActivemask, "activemask",
       "activemask(): the lanes executing this call."},
      {"cuda.lanemask_lt", IntrinsicKind::Function, cudaLanemaskLt, "lanemask.lt",
       "lanemask_lt(): the lanes below this one."},
  };
  return Records;
}

} // namespace tidal::frontend
