// Warp collectives: shuffles, votes, matches and lane masks.
#include "IntrinsicTable.h"

#include "llvm/IR/Intrinsics.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace tidal::frontend {

using frontend::Type;

namespace {

// The shuffles: the record's marker (shfl.<kind>) with the carrier's
// suffix; the name of the third parameter differs.
const char *shuffleThirdParameter(const std::string &Python) {
  return Python == "cuda.shfl_sync"        ? "src_lane"
         : Python == "cuda.shfl_xor_sync" ? "lane_mask"
                                          : "delta";
}

// 32-bit and 64-bit values; narrower integers travel as 32 bits. Float16
// (no carrier) for the rest.
Scalar shuffleCarrier(Scalar S) {
  return S == Scalar::Float32 || S == Scalar::Float64 ? S
         : (isInteger(S) && bitWidth(S) == 64)        ? Scalar::Int64
         : isInteger(S) || S == Scalar::Bool           ? Scalar::Int32
                                                       : Scalar::Float16;
}

TypedValue typeShuffle(IntrinsicCall &Call) {
  std::string Python = Call.Record->PythonPath;
  const char *Third = shuffleThirdParameter(Python);
  bindArguments(Call, Python, {"mask", "value", Third}, 3);
  expectMask(Call, 0);
  const TypedValue &V = Call.Args[1];
  if (!V.T.isScalar() || shuffleCarrier(V.T.Dtype) == Scalar::Float16)
    Call.C.typingError(Call.ArgNodes[1], Python +
                                             "() shuffles integers, float32 and float64, not " +
                                             V.T.str());
  if (!Call.Args[2].T.isIntegerScalar())
    Call.C.typingError(Call.ArgNodes[2], std::string("the ") + Third + " of " + Python +
                                             "() must be an integer");
  return TypedValue(V.T);
}
TypedValue emitShuffle(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  Value *Mask = unsigned32Value(Call, 0);
  const TypedValue &V = Call.Args[1];
  Scalar S = V.T.Dtype;
  Scalar Carrier = shuffleCarrier(S);
  Value *Shuffled = Call.C.convert(V, Type::scalar(Carrier), Call.ArgNodes[1]).scalar();
  if (S == Scalar::Bool || (isInteger(S) && !isSigned(S) && bitWidth(S) < 32))
    Shuffled = B.CreateZExt(Call.C.convert(V, Type::scalar(Scalar::UInt32), Call.ArgNodes[1]).scalar(),
                         B.getInt32Ty());
  Value *Lane = B.CreateIntCast(Call.Args[2].scalar(), B.getInt32Ty(), true);
  llvm::Value *Shuffle = Call.C.callMarker(std::string(Call.Record->Marker) + "." + suffixOf(Carrier),
                                           Shuffled->getType(), {Mask, Shuffled, Lane});
  return Call.C.convert(Call.C.makeScalar(Carrier, Shuffle), Result, Call.Node);
}

// The votes: the record's marker (vote.<kind>); ballot gives the lanes.
bool isBallot(IntrinsicCall &Call) {
  return std::string(Call.Record->PythonPath) == "cuda.ballot_sync";
}
TypedValue typeVote(IntrinsicCall &Call) {
  bindArguments(Call, Call.Record->PythonPath, {"mask", "predicate"}, 2);
  expectMask(Call, 0);
  Call.C.checkCondition(Call.Args[1].T, Call.ArgNodes[1]);
  return TypedValue(Type::scalar(isBallot(Call) ? Scalar::UInt32 : Scalar::Bool));
}
TypedValue emitVote(IntrinsicCall &Call, const Type &Result) {
  IRBuilder<> &B = Call.C.builder();
  Value *Mask = unsigned32Value(Call, 0);
  Value *Predicate = Call.C.truth(Call.Args[1], Call.ArgNodes[1]);
  return Call.C.makeScalar(Result.Dtype,
                           Call.C.callMarker(Call.Record->Marker,
                                             isBallot(Call) ? B.getInt32Ty() : B.getInt1Ty(),
                                             {Mask, Predicate}));
}

// match_any_sync gives the lanes with the same value; match_all_sync the
// pair (mask if all equal else 0, all equal).
bool isMatchAll(IntrinsicCall &Call) {
  return std::string(Call.Record->PythonPath) == "cuda.match_all_sync";
}
TypedValue typeMatch(IntrinsicCall &Call) {
  std::string Python = Call.Record->PythonPath;
  bindArguments(Call, Python, {"mask", "value"}, 2);
  expectMask(Call, 0);
  const TypedValue &V = Call.Args[1];
  if (!V.T.isIntegerScalar())
    Call.C.typingError(Call.ArgNodes[1], Python + "() matches integers, not " + V.T.str());
  Type MaskType = Type::scalar(Scalar::UInt32);
  return isMatchAll(Call) ? TypedValue(Type::tuple({MaskType, Type::scalar(Scalar::Bool)}))
                          : TypedValue(MaskType);
}
TypedValue emitMatch(IntrinsicCall &Call, const Type &) {
  IRBuilder<> &B = Call.C.builder();
  Value *Mask = unsigned32Value(Call, 0);
  const TypedValue &V = Call.Args[1];
  Scalar Carrier = bitWidth(V.T.Dtype) == 64 ? Scalar::Int64 : Scalar::Int32;
  Value *X = Call.C.convert(V, Type::scalar(Carrier), Call.ArgNodes[1]).scalar();
  std::string Marker = std::string(Call.Record->Marker) + "." + suffixOf(Carrier);
  if (!isMatchAll(Call))
    return Call.C.makeScalar(Scalar::UInt32, Call.C.callMarker(Marker, B.getInt32Ty(), {Mask, X}));
  llvm::Type *Pair = StructType::get(B.getContext(), {B.getInt32Ty(), B.getInt1Ty()});
  Value *R = Call.C.callMarker(Marker, Pair, {Mask, X});
  return Call.C.makeTuple({Call.C.makeScalar(Scalar::UInt32, B.CreateExtractValue(R, 0)),
                           Call.C.makeScalar(Scalar::Bool, B.CreateExtractValue(R, 1))});
}

// activemask() and lanemask_lt(): the record's marker, a uint32.
TypedValue typeLaneMask(IntrinsicCall &Call) {
  bindArguments(Call, Call.Record->PythonPath, {}, 0);
  return TypedValue(Type::scalar(Scalar::UInt32));
}
TypedValue emitLaneMask(IntrinsicCall &Call, const Type &) {
  return Call.C.makeScalar(Scalar::UInt32, Call.C.callMarker(Call.Record->Marker,
                                                             Call.C.builder().getInt32Ty(), {}));
}

} // namespace

llvm::ArrayRef<IntrinsicRecord> warpIntrinsics() {
  static const IntrinsicRecord Records[] = {
      {"cuda.shfl_sync", IntrinsicKind::Function, typeShuffle, emitShuffle, "shfl.idx",
       "shfl_sync(mask, value, src_lane): value of lane src_lane."},
      {"cuda.shfl_up_sync", IntrinsicKind::Function, typeShuffle, emitShuffle, "shfl.up",
       "shfl_up_sync(mask, value, delta): value of lane laneid - delta."},
      {"cuda.shfl_down_sync", IntrinsicKind::Function, typeShuffle, emitShuffle, "shfl.down",
       "shfl_down_sync(mask, value, delta): value of lane laneid + delta."},
      {"cuda.shfl_xor_sync", IntrinsicKind::Function, typeShuffle, emitShuffle, "shfl.xor",
       "shfl_xor_sync(mask, value, lane_mask): value of lane laneid ^ lane_mask."},
      {"cuda.all_sync", IntrinsicKind::Function, typeVote, emitVote, "vote.all",
       "all_sync(mask, predicate): true if it holds on every lane of mask."},
      {"cuda.any_sync", IntrinsicKind::Function, typeVote, emitVote, "vote.any",
       "any_sync(mask, predicate): true if it holds on any lane of mask."},
      {"cuda.eq_sync", IntrinsicKind::Function, typeVote, emitVote, "vote.uni",
       "eq_sync(mask, predicate): true if it is the same on every lane of mask."},
      {"cuda.ballot_sync", IntrinsicKind::Function, typeVote, emitVote, "vote.ballot",
       "ballot_sync(mask, predicate): the lanes of mask where it holds."},
      {"cuda.match_any_sync", IntrinsicKind::Function, typeMatch, emitMatch, "match.any",
       "match_any_sync(mask, value): the lanes of mask with the same value."},
      {"cuda.match_all_sync", IntrinsicKind::Function, typeMatch, emitMatch, "match.all",
       "match_all_sync(mask, value): (mask if all equal else 0, all equal)."},
      {"cuda.activemask", IntrinsicKind::Function, typeLaneMask, emitLaneMask, "activemask",
       "activemask(): the lanes executing this call."},
      {"cuda.lanemask_lt", IntrinsicKind::Function, typeLaneMask, emitLaneMask, "lanemask.lt",
       "lanemask_lt(): the lanes below this one."},
  };
  return Records;
}

} // namespace tidal::frontend
