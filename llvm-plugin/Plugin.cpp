// Every pass and pipeline name of TidalPasses, registered in one place
// (registerTidalPasses), and the entry point of the loadable plugin:
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-nvptx in.ll

#include "PassClasses.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <optional>

using namespace llvm;

namespace tidal {
namespace {

// "sm=90;ftz;libdevice=PATH" (parameters are separated by ';', as in LLVM's
// own passes).
Expected<NVPTXOptions> parseNVPTXOptions(StringRef Parameters) {
  NVPTXOptions Options;
  while (!Parameters.empty()) {
    StringRef Parameter;
    std::tie(Parameter, Parameters) = Parameters.split(';');
    StringRef Value = Parameter;
    if (Value.consume_front("sm=") && !Value.getAsInteger(10, Options.SM) &&
        Options.SM > 0)
      continue;
    if (Parameter == "ftz") {
      Options.FTZ = true;
      continue;
    }
    Value = Parameter;
    if (Value.consume_front("libdevice=")) {
      Options.Libdevice = Value.str();
      continue;
    }
    return createStringError(inconvertibleErrorCode(),
                             "invalid parameter '%s' (expected sm=N, e.g. "
                             "sm=90); the others are ftz and "
                             "libdevice=PATH|none",
                             Parameter.str().c_str());
  }
  return Options;
}

// The options of `Name` if it is `PassName` or `PassName<sm=N>`.
std::optional<NVPTXOptions> matchNVPTXPass(StringRef Name, StringRef PassName) {
  if (!PassBuilder::checkParametrizedPassName(Name, PassName))
    return std::nullopt;
  Expected<NVPTXOptions> Options =
      PassBuilder::parsePassParameters(parseNVPTXOptions, Name, PassName);
  if (!Options) {
    errs() << "tidal: " << PassName << ": " << toString(Options.takeError())
           << "\n";
    return std::nullopt;
  }
  return *Options;
}

bool addModulePasses(PassBuilder &PB, StringRef Name, ModulePassManager &MPM) {
  // single passes
  if (Name == "tidal-lower-special-registers") {
    MPM.addPass(LowerSpecialRegistersPass());
    return true;
  }
  if (auto Options = matchNVPTXPass(Name, "tidal-annotate-kernels")) {
    MPM.addPass(AnnotateKernelsPass(*Options));
    return true;
  }
  if (Name == "tidal-lower-barriers") {
    MPM.addPass(LowerBarriersPass());
    return true;
  }
  if (Name == "tidal-lower-memory-spaces") {
    MPM.addPass(LowerMemorySpacesPass());
    return true;
  }
  if (Name == "tidal-lower-atomics") {
    MPM.addPass(LowerAtomicsPass());
    return true;
  }
  if (Name == "tidal-lower-warp-collectives") {
    MPM.addPass(LowerWarpCollectivesPass());
    return true;
  }
  if (Name == "tidal-lower-print") {
    MPM.addPass(LowerPrintPass());
    return true;
  }
  if (auto Options = matchNVPTXPass(Name, "tidal-lower-math")) {
    MPM.addPass(LowerMathPass(*Options));
    return true;
  }
  if (Name == "tidal-mark-readonly-arguments") {
    MPM.addPass(MarkReadOnlyArgumentsPass());
    return true;
  }
  if (Name == "tidal-check-marker-reachability") {
    MPM.addPass(CheckMarkerReachabilityPass());
    return true;
  }
  if (Name == "tidal-verify-markers") {
    MPM.addPass(VerifyMarkersPass());
    return true;
  }
  // NVPTX pipelines
  if (auto Options = matchNVPTXPass(Name, "tidal-lower-nvptx")) {
    addLowerNVPTXPasses(MPM, *Options);
    return true;
  }
  if (auto Options = matchNVPTXPass(Name, "tidal-nvptx")) {
    addNVPTXPipeline(PB, MPM, *Options);
    return true;
  }
  // host pipelines (the pass tidal-lower-host is only run with its verifier)
  if (Name == "tidal-lower-host") {
    addLowerHostPasses(MPM);
    return true;
  }
  if (Name == "tidal-host") {
    addHostPipeline(PB, MPM);
    return true;
  }
  return false;
}

} // namespace

void registerTidalPasses(PassBuilder &PB) {
  PB.registerPipelineParsingCallback(
      [&PB](StringRef Name, ModulePassManager &MPM,
            ArrayRef<PassBuilder::PipelineElement>) {
        return addModulePasses(PB, Name, MPM);
      });
}

} // namespace tidal

#ifdef TIDAL_PASS_PLUGIN_ENTRY
extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "TidalPasses", "1",
          tidal::registerTidalPasses};
}
#endif
