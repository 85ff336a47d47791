// The named pipelines of TidalPasses as pass lists (PassClasses.h),
// forgetNVPTXAnnotations and raiseNVVMModule. The in-process pipelines are
// PipelineRunner.cpp.

#include "ErrorCollector.h"
#include "Markers.h"
#include "PassClasses.h"
#include "tidal/CollectErrors.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/GlobalDCE.h"
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
  MPM.addPass(InternalizeNonKernelsPass());
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

bool runCollectingErrors(LLVMContext &Context, std::string &Errors, function_ref<void()> Work) {
  ErrorCollector Collector(Context, Errors);
  Work();
  return !Collector.failed();
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
