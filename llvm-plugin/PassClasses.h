// The new-PM wrappers of the passes of TidalPasses, one per file (named in
// the comment), and the pipeline builders of Pipelines.cpp. Registered by
// name in Plugin.cpp.
#ifndef TIDAL_PASSCLASSES_H
#define TIDAL_PASSCLASSES_H

#include "tidal/Passes.h"
#include "llvm/IR/PassManager.h"

namespace tidal {

// LowerSpecialRegisters.cpp: tidal-lower-special-registers.
bool lowerSpecialRegisters(llvm::Module &M);
struct LowerSpecialRegistersPass
    : llvm::PassInfoMixin<LowerSpecialRegistersPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

// AnnotateKernels.cpp: tidal-annotate-kernels.
bool annotateKernels(llvm::Module &M, const NVPTXOptions &Options);
struct AnnotateKernelsPass : llvm::PassInfoMixin<AnnotateKernelsPass> {
  NVPTXOptions Options;
  explicit AnnotateKernelsPass(NVPTXOptions Options = {}) : Options(Options) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

// LowerHost.cpp: tidal-lower-host.
bool lowerHost(llvm::Module &M);
struct LowerHostPass : llvm::PassInfoMixin<LowerHostPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

// VerifyMarkers.cpp: tidal-verify-markers. Returns true if no marker is left.
bool verifyMarkers(llvm::Module &M);
struct VerifyMarkersPass : llvm::PassInfoMixin<VerifyMarkersPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

// Pipelines.cpp: the named pipelines, as pass lists.
//   tidal-lower-nvptx = tidal-lower-special-registers, tidal-annotate-kernels,
//                       function(infer-address-spaces), tidal-verify-markers
//   tidal-nvptx       = tidal-lower-nvptx, internalize non-kernels, O3
//   tidal-lower-host  = tidal-lower-host (the pass), tidal-verify-markers
//   tidal-host        = tidal-lower-host, O3
void addLowerNVPTXPasses(llvm::ModulePassManager &MPM,
                         const NVPTXOptions &Options);
void addNVPTXPipeline(llvm::PassBuilder &PB, llvm::ModulePassManager &MPM,
                      const NVPTXOptions &Options);
void addLowerHostPasses(llvm::ModulePassManager &MPM);
void addHostPipeline(llvm::PassBuilder &PB, llvm::ModulePassManager &MPM);

} // namespace tidal

#endif
