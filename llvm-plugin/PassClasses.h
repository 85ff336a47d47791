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

// AnnotateKernels.cpp also: the nvptx64 triple and data layout if M has
// none; whether f32 denormals are flushed ("tidal.ftz" or Options.FTZ).
void setNVPTXTargetIfUnset(llvm::Module &M);
bool isFTZ(const llvm::Module &M, const NVPTXOptions &Options);

// LowerBarriers.cpp: tidal-lower-barriers.
bool lowerBarriers(llvm::Module &M);
struct LowerBarriersPass : llvm::PassInfoMixin<LowerBarriersPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

// LowerMemorySpaces.cpp: tidal-lower-memory-spaces.
bool lowerMemorySpaces(llvm::Module &M);
struct LowerMemorySpacesPass : llvm::PassInfoMixin<LowerMemorySpacesPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

// LowerAtomics.cpp: tidal-lower-atomics.
bool lowerAtomics(llvm::Module &M);
struct LowerAtomicsPass : llvm::PassInfoMixin<LowerAtomicsPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

// LowerWarpCollectives.cpp: tidal-lower-warp-collectives.
bool lowerWarpCollectives(llvm::Module &M);
struct LowerWarpCollectivesPass
    : llvm::PassInfoMixin<LowerWarpCollectivesPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

// LowerPrint.cpp: tidal-lower-print.
bool lowerPrint(llvm::Module &M);
struct LowerPrintPass : llvm::PassInfoMixin<LowerPrintPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

// LowerMath.cpp: tidal-lower-math (libdevice: Libdevice.h).
bool lowerMath(llvm::Module &M, const NVPTXOptions &Options);
struct LowerMathPass : llvm::PassInfoMixin<LowerMathPass> {
  NVPTXOptions Options;
  explicit LowerMathPass(NVPTXOptions Options = {}) : Options(Options) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

// MarkReadOnlyArguments.cpp: tidal-mark-readonly-arguments.
bool markReadOnlyArguments(llvm::Module &M);
struct MarkReadOnlyArgumentsPass
    : llvm::PassInfoMixin<MarkReadOnlyArgumentsPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

// LowerHost.cpp: tidal-lower-host.
bool lowerHost(llvm::Module &M);
struct LowerHostPass : llvm::PassInfoMixin<LowerHostPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
};

// CheckMarkerReachability.cpp: tidal-check-marker-reachability. Returns true
// if every function that uses a marker is a kernel or reached from one.
bool checkMarkerReachability(llvm::Module &M);
struct CheckMarkerReachabilityPass : llvm::PassInfoMixin<CheckMarkerReachabilityPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

// VerifyMarkers.cpp: tidal-verify-markers. Returns true if no marker is left.
bool verifyMarkers(llvm::Module &M);
struct VerifyMarkersPass : llvm::PassInfoMixin<VerifyMarkersPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

// Pipelines.cpp: the named pipelines, as pass lists.
//   tidal-lower-nvptx = tidal-lower-special-registers, tidal-lower-barriers,
//                       tidal-lower-memory-spaces, tidal-lower-atomics,
//                       tidal-lower-warp-collectives, tidal-lower-print,
//                       tidal-lower-math, tidal-annotate-kernels,
//                       function(infer-address-spaces),
//                       tidal-mark-readonly-arguments, globaldce,
//                       tidal-verify-markers
//   tidal-nvptx       = tidal-lower-nvptx, then addNVPTXOptimisation:
//                       internalize non-kernels, O3
//   tidal-lower-host  = tidal-lower-host (the pass), tidal-verify-markers
//   tidal-host        = tidal-lower-host, O3
void addLowerNVPTXPasses(llvm::ModulePassManager &MPM,
                         const NVPTXOptions &Options);
void addNVPTXOptimisation(llvm::PassBuilder &PB, llvm::ModulePassManager &MPM);
void addNVPTXPipeline(llvm::PassBuilder &PB, llvm::ModulePassManager &MPM,
                      const NVPTXOptions &Options);
void addLowerHostPasses(llvm::ModulePassManager &MPM);
void addHostPipeline(llvm::PassBuilder &PB, llvm::ModulePassManager &MPM);

} // namespace tidal

#endif
