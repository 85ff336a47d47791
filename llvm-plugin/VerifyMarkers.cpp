// tidal-verify-markers: reports every use of a tidal.* function still in the
// module (unknown markers, wrong types, markers no pass lowered), naming the
// marker and the function using it. Last pass of every tidal pipeline.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-verify-markers in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include <unordered_set>
#include <vector>

#define DEBUG_TYPE "tidal-verify-markers"

using namespace llvm;

namespace tidal {
namespace {

std::string describeUser(const User *U) {
  const auto *I = dyn_cast<Instruction>(U);
  if (!I)
    return " in a constant expression or global initializer";
  std::string Where = (" in function '" + I->getFunction()->getName() + "'").str();
  std::string Location = describeLocation(*I);
  return Location.empty() ? Where : Where + " at " + Location;
}

std::string printType(const Type *T) {
  std::string Text;
  raw_string_ostream(Text) << *T;
  return Text;
}

} // namespace

bool verifyMarkers(Module &M) {
  // Malformed uses are mistakes of the producer of the IR; an unlowered
  // well-formed marker is usually the consequence of one, so it is reported
  // only when nothing else is.
  using MessageSet = SetVector<std::string, std::vector<std::string>,
                               std::unordered_set<std::string>>;
  MessageSet Malformed, Unlowered;
  for (Function &Marker : M) {
    if (!isMarker(Marker))
      continue;
    std::string Name = ("'" + Marker.getName() + "'").str();
    if (!Marker.isDeclaration())
      Malformed.insert("marker " + Name +
                       " is defined in the module; markers are only declared");
    FunctionType *Expected = getMarkerType(Marker.getName(), M.getContext());
    for (const Use &U : Marker.uses()) {
      std::string Subject = "marker " + Name + describeUser(U.getUser());
      const auto *Call = dyn_cast<CallInst>(U.getUser());
      if (!Expected)
        Malformed.insert("unknown " + Subject);
      else if (Marker.getFunctionType() != Expected)
        Malformed.insert(Subject + ": declared as '" +
                         printType(Marker.getFunctionType()) + "', expected '" +
                         printType(Expected) + "'");
      else if (!Call || !Call->isCallee(&U))
        Malformed.insert(Subject + ": used other than as the callee of a call");
      else if (Call->getFunctionType() != Expected)
        Malformed.insert(Subject + ": called as '" +
                         printType(Call->getFunctionType()) + "', expected '" +
                         printType(Expected) + "'");
      else
        Unlowered.insert(Subject + " was not lowered: markers can only be used "
                                   "in kernels (!" +
                         KernelsMetadataName +
                         ") and in the non-recursive functions they call");
    }
  }

  for (const std::string &Message : Malformed)
    reportError(M.getContext(), Message);
  if (Malformed.empty() && !hasReportedErrors(M.getContext()))
    for (const std::string &Message : Unlowered)
      reportError(M.getContext(), Message);
  return Malformed.empty() && Unlowered.empty();
}


} // namespace tidal
