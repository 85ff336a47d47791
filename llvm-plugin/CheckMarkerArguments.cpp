// tidal-check-marker-arguments: the one verifier of marker arguments, run
// before either lowering (tidal-lower-nvptx and tidal-lower-host start with
// it), so that both targets refuse the same modules with the same message:
// shared.array / local.array with a size or alignment that is not a
// constant, a negative size, an alignment that is not a power of two up to
// 65536, a size over the limit of its memory (static shared memory per
// block, local memory per thread: include/tidal/HostABI.h); const.array of
// anything but a constant global with an initializer. The lowerings read
// the arguments through the same functions (MarkerArguments.h) and leave a
// call they refuse in place. Changes nothing.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-check-marker-arguments in.ll

#include "MarkerArguments.h"
#include "DebugOutput.h"
#include "PassClasses.h"
#include "tidal/Contract.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "tidal-check-marker-arguments"

using namespace llvm;

TIDAL_STATISTIC(NumRefusedCalls, "Marker calls with arguments the contract refuses");

namespace tidal {

std::string describeMarkerCall(const CallInst &Call) {
  std::string Text = ("marker '" + Call.getCalledFunction()->getName() +
                      "' in function '" + Call.getFunction()->getName() + "'")
                         .str();
  std::string Location = describeLocation(Call);
  return Location.empty() ? Text : Text + " at " + Location;
}

std::optional<ArrayArguments> getArrayArguments(const CallInst &Call,
                                                std::string *Problem) {
  std::optional<MarkerName> Marker = getMarkerCall(Call);
  bool Shared = Marker && Marker->Kind == MarkerKind::SharedArray;
  assert((Shared || (Marker && Marker->Kind == MarkerKind::LocalArray)) &&
         "getArrayArguments of a call that is not shared.array or local.array");
  auto Refuse = [&](const Twine &Why) -> std::optional<ArrayArguments> {
    if (Problem)
      *Problem = Why.str();
    return std::nullopt;
  };
  auto *Bytes = dyn_cast<ConstantInt>(Call.getArgOperand(0));
  auto *Alignment = dyn_cast<ConstantInt>(Call.getArgOperand(1));
  if (!Bytes || !Alignment)
    return Refuse("the size and alignment must be constants");
  uint64_t AlignValue = Alignment->getZExtValue();
  if (Bytes->isNegative() || AlignValue == 0 || !isPowerOf2_64(AlignValue) ||
      AlignValue > MaxArrayAlignment)
    return Refuse("invalid size " + Twine(Bytes->getSExtValue()) +
                  " or alignment " + Twine(AlignValue) +
                  " (a power of two up to " + Twine(MaxArrayAlignment) + ")");
  uint64_t Limit = Shared ? TIDAL_MAX_STATIC_SHARED_BYTES
                          : TIDAL_MAX_LOCAL_BYTES_PER_THREAD;
  if (Bytes->getZExtValue() > Limit)
    return Refuse("a size of " + Twine(Bytes->getZExtValue()) +
                  " bytes is over CUDA's limit of " + Twine(Limit) +
                  (Shared ? " bytes of static shared memory per block"
                          : " bytes of local memory per thread"));
  return ArrayArguments{Bytes->getZExtValue(), Align(AlignValue)};
}

GlobalVariable *getConstArrayData(const CallInst &Call, std::string *Problem) {
  auto *Data =
      dyn_cast<GlobalVariable>(Call.getArgOperand(0)->stripPointerCasts());
  if (!Data || !Data->isConstant() || !Data->hasDefinitiveInitializer()) {
    if (Problem)
      *Problem = "the argument must be a constant global variable with an "
                 "initializer";
    return nullptr;
  }
  return Data;
}

bool hasValidMarkerArguments(const CallInst &Call, std::string *Problem) {
  std::optional<MarkerName> Marker = getMarkerCall(Call);
  if (!Marker)
    return true; // not a well-formed marker call: tidal-verify-markers'
  switch (Marker->Kind) {
  case MarkerKind::SharedArray:
  case MarkerKind::LocalArray:
    return getArrayArguments(Call, Problem).has_value();
  case MarkerKind::ConstArray:
    return getConstArrayData(Call, Problem) != nullptr;
  default:
    return true;
  }
}

bool checkMarkerArguments(Module &M) {
  bool Valid = true;
  for (Function &Marker : M) {
    if (!isMarker(Marker))
      continue;
    for (User *U : Marker.users()) {
      auto *Call = dyn_cast<CallInst>(U);
      std::string Problem;
      if (!Call || Call->getCalledOperand() != &Marker ||
          hasValidMarkerArguments(*Call, &Problem))
        continue;
      ++NumRefusedCalls;
      printStatisticsAtShutdown();
      LLVM_DEBUG(dbgs() << DEBUG_TYPE ": refused " << *Call << "\n");
      reportError(M.getContext(), describeMarkerCall(*Call) + ": " + Problem);
      Valid = false;
    }
  }
  return Valid;
}


} // namespace tidal
