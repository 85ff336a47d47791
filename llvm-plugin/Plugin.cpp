// Every pass and pipeline name of TidalPasses (Passes.def), registered in one
// place (registerTidalPasses), and the entry point of the loadable plugin:
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-nvptx in.ll

#include "PassClasses.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/ErrorHandling.h"
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

// Adds the pass or pipeline `Name` of Passes.def to MPM; false if there is
// none of that name. Pipelines first: a pipeline may share its main pass's
// name (tidal-lower-host).
bool addModulePasses(PassBuilder &PB, StringRef Name, ModulePassManager &MPM) {
#define TIDAL_PIPELINE(PipelineName, Function)                                 \
  if (Name == PipelineName) {                                                  \
    Function(PB, MPM);                                                         \
    return true;                                                               \
  }
#define TIDAL_NVPTX_PIPELINE(PipelineName, Function)                           \
  if (auto Options = matchNVPTXPass(Name, PipelineName)) {                     \
    Function(PB, MPM, *Options);                                               \
    return true;                                                               \
  }
#include "Passes.def"

#define TIDAL_MODULE_PASS(Class, PassName, Function)                           \
  if (Name == PassName) {                                                      \
    MPM.addPass(Class());                                                      \
    return true;                                                               \
  }
#define TIDAL_CHECK_PASS(Class, PassName, Function)                            \
  TIDAL_MODULE_PASS(Class, PassName, Function)
#define TIDAL_NVPTX_PASS(Class, PassName, Function)                            \
  if (auto Options = matchNVPTXPass(Name, PassName)) {                         \
    MPM.addPass(Class(*Options));                                              \
    return true;                                                               \
  }
#include "Passes.def"
#undef TIDAL_MODULE_PASS
  return false;
}

} // namespace

void registerTidalPasses(PassBuilder &PB) {
  // Names for LLVM's instrumentation (-print-after=tidal-lower-barriers,
  // -filter-passes=...), as PassBuilder gives its own passes.
  if (PassInstrumentationCallbacks *PIC = PB.getPassInstrumentationCallbacks()) {
#define TIDAL_MODULE_PASS(Class, PassName, Function) PIC->addClassToPassName(PassName, PassName);
#define TIDAL_CHECK_PASS(Class, PassName, Function) PIC->addClassToPassName(PassName, PassName);
#define TIDAL_NVPTX_PASS(Class, PassName, Function) PIC->addClassToPassName(PassName, PassName);
#include "Passes.def"
  }
  PB.registerPipelineParsingCallback(
      [&PB](StringRef Name, ModulePassManager &MPM,
            ArrayRef<PassBuilder::PipelineElement>) {
        return addModulePasses(PB, Name, MPM);
      });
  // The block functions' thread loops bounded before O3 vectorises them.
  if (PassInstrumentationCallbacks *PIC = PB.getPassInstrumentationCallbacks())
    PIC->addClassToPassName(BoundThreadLoopsPass::name(), BoundThreadLoopsPass::name());
  if (PassInstrumentationCallbacks *PIC = PB.getPassInstrumentationCallbacks()) {
    PIC->addClassToPassName(VectoriseThreadNestsPass::name(), VectoriseThreadNestsPass::name());
    PIC->addClassToPassName(ScalariseSplatInductionsPass::name(),
                            ScalariseSplatInductionsPass::name());
  }
  PB.registerPipelineParsingCallback(
      [](StringRef Name, FunctionPassManager &FPM, ArrayRef<PassBuilder::PipelineElement>) {
        if (Name == BoundThreadLoopsPass::name()) {
          FPM.addPass(BoundThreadLoopsPass());
          return true;
        }
        if (Name == VectoriseThreadNestsPass::name()) {
          FPM.addPass(VectoriseThreadNestsPass());
          return true;
        }
        if (Name == ScalariseSplatInductionsPass::name()) {
          FPM.addPass(ScalariseSplatInductionsPass());
          return true;
        }
        return false;
      });
  PB.registerVectorizerStartEPCallback(
      [](FunctionPassManager &FPM, OptimizationLevel Level) {
        if (Level != OptimizationLevel::O0) {
          FPM.addPass(BoundThreadLoopsPass());
          FPM.addPass(VectoriseThreadNestsPass());
        }
      });
  // The lanes of a thread nest's inner counter made one scalar again after
  // the vectorisers, and what is computed from it scalarised.
  PB.registerOptimizerLastEPCallback([](ModulePassManager &MPM, OptimizationLevel Level) {
    if (Level == OptimizationLevel::O0)
      return;
    MPM.addPass(createModuleToFunctionPassAdaptor(ScalariseSplatInductionsPass()));
  });
}

} // namespace tidal

#ifdef TIDAL_PASS_PLUGIN_ENTRY
// The plugin's copy only (the static library's users have their own
// pipelines): passes at the extension points of LLVM's default pipelines,
// so that clang runs tidal's passes on CUDA C++ device code:
//   clang-19 -x cuda --cuda-device-only ... -fplugin=TidalPasses.so \
//     -fpass-plugin=TidalPasses.so -mllvm -tidal-at=optimizer-last:tidal-raise-nvvm
// (-fplugin loads the library before -mllvm is parsed, so that the option
// exists; opt-19 -load-pass-plugin=TidalPasses.so takes -tidal-at= as is.)
namespace tidal {
namespace {

cl::list<std::string> ExtensionPointPasses(
    "tidal-at", cl::value_desc("point:pipeline"),
    cl::desc("Run a pass pipeline at an extension point of LLVM's default pipelines "
             "(pipeline-start, pipeline-early-simplification, optimizer-early, "
             "optimizer-last, peephole, scalar-optimizer-late, vectorizer-start); "
             "may be given more than once"));

[[noreturn]] void extensionPointError(const Twine &Message) {
  report_fatal_error("tidal-at: " + Message, /*gen_crash_diag=*/false);
}

template <typename PassManager>
void addParsed(PassBuilder &PB, PassManager &PM, StringRef Point, StringRef Pipeline) {
  if (Error E = PB.parsePassPipeline(PM, Pipeline))
    extensionPointError("'" + Pipeline + "' at " + Point + ": " + toString(std::move(E)));
}

void registerExtensionPointPasses(PassBuilder &PB) {
  for (const std::string &Entry : ExtensionPointPasses) {
    auto [Point, Pipeline] = StringRef(Entry).split(':');
    if (Pipeline.empty())
      extensionPointError("'" + Entry + "' is not point:pipeline");
    std::string Text = Pipeline.str(), Name = Point.str();
    auto Module = [&PB, Text, Name](ModulePassManager &MPM, OptimizationLevel) {
      addParsed(PB, MPM, Name, Text);
    };
    auto Function = [&PB, Text, Name](FunctionPassManager &FPM, OptimizationLevel) {
      addParsed(PB, FPM, Name, Text);
    };
    if (Point == "pipeline-start")
      PB.registerPipelineStartEPCallback(Module);
    else if (Point == "pipeline-early-simplification")
      PB.registerPipelineEarlySimplificationEPCallback(Module);
    else if (Point == "optimizer-early")
      PB.registerOptimizerEarlyEPCallback(Module);
    else if (Point == "optimizer-last")
      PB.registerOptimizerLastEPCallback(Module);
    else if (Point == "peephole")
      PB.registerPeepholeEPCallback(Function);
    else if (Point == "scalar-optimizer-late")
      PB.registerScalarOptimizerLateEPCallback(Function);
    else if (Point == "vectorizer-start")
      PB.registerVectorizerStartEPCallback(Function);
    else
      extensionPointError("unknown extension point '" + Point +
                          "' (expected pipeline-start, pipeline-early-simplification, "
                          "optimizer-early, optimizer-last, peephole, "
                          "scalar-optimizer-late or vectorizer-start)");
  }
}

} // namespace
} // namespace tidal

extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "TidalPasses", "1", [](PassBuilder &PB) {
            tidal::registerTidalPasses(PB);
            tidal::registerExtensionPointPasses(PB);
          }};
}
#endif
