// The named pipelines of TidalPasses as pass lists (PassClasses.h), and the
// in-process runNVPTXPipeline / runHostPipeline of tidal/Passes.h, which run
// the same lists with a PassBuilder that knows the target; raiseNVVMModule.

#include "Markers.h"
#include "PassClasses.h"
#include "tidal/CollectErrors.h"

#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include <chrono>
#include "llvm/Transforms/IPO/GlobalDCE.h"
#include "llvm/Transforms/IPO/Internalize.h"
#include "llvm/Transforms/Scalar/InferAddressSpaces.h"

using namespace llvm;

namespace tidal {

void addLowerNVPTXPipeline(PassBuilder &, ModulePassManager &MPM,
                           const NVPTXOptions &Options) {
  MPM.addPass(CheckMarkerArgumentsPass());
  MPM.addPass(CheckMarkerReachabilityPass());
  // First: it numbers the raise sites over the marker IR as the frontend
  // wrote it, as the host does (raiseSites).
  MPM.addPass(LowerExceptionsPass());
  MPM.addPass(LowerSpecialRegistersPass());
  MPM.addPass(LowerBarriersPass());
  MPM.addPass(LowerMemorySpacesPass());
  MPM.addPass(LowerAtomicsPass());
  MPM.addPass(LowerWarpCollectivesPass());
  MPM.addPass(LowerPrintPass());
  MPM.addPass(LowerMathPass(Options));
  // After every lowering: tags every defined function, libdevice's included.
  MPM.addPass(AnnotateKernelsPass(Options));
  // Flat address space 0 given explicitly: under opt the module may have
  // had no triple when the target's TTI was chosen.
  MPM.addPass(createModuleToFunctionPassAdaptor(
      InferAddressSpacesPass(/*AddressSpace=*/0)));
  MPM.addPass(MarkReadOnlyArgumentsPass());
  MPM.addPass(GlobalDCEPass()); // libdevice functions no longer called
  MPM.addPass(VerifyMarkersPass());
}

void addNVPTXOptimisation(PassBuilder &PB, ModulePassManager &MPM) {
  MPM.addPass(InternalizePass([](const GlobalValue &GV) {
    const auto *F = dyn_cast<Function>(&GV);
    return !F || isKernel(*F);
  }));
  MPM.addPass(PB.buildPerModuleDefaultPipeline(OptimizationLevel::O3));
}

void addNVPTXPipeline(PassBuilder &PB, ModulePassManager &MPM,
                      const NVPTXOptions &Options) {
  addLowerNVPTXPipeline(PB, MPM, Options);
  addNVPTXOptimisation(PB, MPM);
}

void addLowerHostPipeline(PassBuilder &, ModulePassManager &MPM) {
  MPM.addPass(CheckMarkerArgumentsPass());
  MPM.addPass(LowerHostPass());
  MPM.addPass(VerifyMarkersPass());
  // Before O3, so that libdevice's host functions inline into the kernels.
  MPM.addPass(LinkHostLibdevicePass());
}

void addHostPipeline(PassBuilder &PB, ModulePassManager &MPM) {
  addLowerHostPipeline(PB, MPM);
  MPM.addPass(PB.buildPerModuleDefaultPipeline(OptimizationLevel::O3));
}

namespace {

// For the lifetime of the object, DS_Error diagnostics of `Context` are
// appended to `Errors` (one per line) instead of ending the process; the
// others go to the handler that was there before, which is put back after.
class ErrorCollector {
  LLVMContext &Context;
  std::string &Errors;
  std::unique_ptr<DiagnosticHandler> Previous;
  bool Failed = false;

  // The handler installed in Context (owned by it); forwards to us.
  struct Forwarder : DiagnosticHandler {
    ErrorCollector &Collector;
    explicit Forwarder(ErrorCollector &Collector) : Collector(Collector) {}
    bool handleDiagnostics(const DiagnosticInfo &Info) override {
      return Collector.handle(Info);
    }
  };

  bool handle(const DiagnosticInfo &Info) {
    if (Info.getSeverity() != DS_Error)
      return Previous && Previous->handleDiagnostics(Info);
    Failed = true;
    raw_string_ostream Stream(Errors);
    if (!Errors.empty())
      Stream << "\n";
    DiagnosticPrinterRawOStream Printer(Stream);
    Info.print(Printer);
    return true;
  }

public:
  ErrorCollector(LLVMContext &Context, std::string &Errors)
      : Context(Context), Errors(Errors),
        Previous(Context.getDiagnosticHandler()) {
    Context.setDiagnosticHandler(std::make_unique<Forwarder>(*this));
  }
  ~ErrorCollector() { Context.setDiagnosticHandler(std::move(Previous)); }
  bool failed() const { return Failed; }
};

using AddPasses = function_ref<void(PassBuilder &, ModulePassManager &)>;

// Runs Lower then Optimise, as one pass manager, or as two timed ones when
// Timings is given.
bool runPipeline(Module &M, TargetMachine &TM, std::string &Error,
                 PipelineTimings *Timings, AddPasses Lower, AddPasses Optimise) {
  M.setTargetTriple(TM.getTargetTriple().str());
  M.setDataLayout(TM.createDataLayout());

  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PassBuilder PB(&TM);
  registerTidalPasses(PB);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);

  ErrorCollector Errors(M.getContext(), Error);
  if (!Timings) {
    ModulePassManager MPM;
    Lower(PB, MPM);
    Optimise(PB, MPM);
    MPM.run(M, MAM);
    return !Errors.failed();
  }
  using Clock = std::chrono::steady_clock;
  auto Seconds = [](Clock::time_point Start) {
    return std::chrono::duration<double>(Clock::now() - Start).count();
  };
  Clock::time_point Start = Clock::now();
  ModulePassManager Lowering;
  Lower(PB, Lowering);
  Lowering.run(M, MAM);
  Timings->LoweringSeconds = Seconds(Start);
  Start = Clock::now();
  ModulePassManager Optimisation;
  Optimise(PB, Optimisation);
  Optimisation.run(M, MAM);
  Timings->OptimisationSeconds = Seconds(Start);
  return !Errors.failed();
}

} // namespace

bool runCollectingErrors(LLVMContext &Context, std::string &Errors, function_ref<void()> Work) {
  ErrorCollector Collector(Context, Errors);
  Work();
  return !Collector.failed();
}

bool runNVPTXPipeline(Module &M, TargetMachine &TM, const NVPTXOptions &Options,
                      std::string &Error, PipelineTimings *Timings) {
  return runPipeline(
      M, TM, Error, Timings,
      [&](PassBuilder &PB, ModulePassManager &MPM) {
        addLowerNVPTXPipeline(PB, MPM, Options);
      },
      addNVPTXOptimisation);
}

// The two halves of addHostPipeline.
bool runHostPipeline(Module &M, TargetMachine &TM, std::string &Error,
                     PipelineTimings *Timings) {
  return runPipeline(
      M, TM, Error, Timings,
      addLowerHostPipeline,
      [](PassBuilder &PB, ModulePassManager &MPM) {
        MPM.addPass(PB.buildPerModuleDefaultPipeline(OptimizationLevel::O3));
      });
}

void forgetNVPTXAnnotations(Module &M, TargetMachine &TM) {
  // Empty M of what the printer would print: no metadata, no bodies, no
  // initialisers, no aliases; the declarations that remain print nothing.
  while (!M.named_metadata_empty())
    M.eraseNamedMetadata(&*M.named_metadata_begin());
  for (Function &F : M)
    F.deleteBody();
  for (GlobalVariable &G : M.globals())
    G.setInitializer(nullptr);
  auto Erase = [](auto &&Range) {
    for (GlobalValue &V : make_early_inc_range(Range)) {
      V.replaceAllUsesWith(PoisonValue::get(V.getType()));
      V.eraseFromParent();
    }
  };
  Erase(M.aliases());
  Erase(M.ifuncs());
  M.setTargetTriple(TM.getTargetTriple().str());
  M.setDataLayout(TM.createDataLayout());
  raw_null_ostream Null; // outlives the printer, which flushes into it
  legacy::PassManager Printer;
  if (!TM.addPassesToEmitFile(Printer, Null, nullptr, CodeGenFileType::AssemblyFile))
    Printer.run(M);
}

bool raiseNVVMModule(Module &M, std::string &Error) {
  ErrorCollector Errors(M.getContext(), Error);
  raiseNVVM(M);
  return !Errors.failed();
}

} // namespace tidal
