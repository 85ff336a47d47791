// The passes of TidalPasses (Passes.def): each pass's function, and its
// new-PM class, made from the registry (no wrapper written by hand); the
// pipeline builders of Pipelines.cpp. Registered by name in Plugin.cpp.
#ifndef TIDAL_PASSCLASSES_H
#define TIDAL_PASSCLASSES_H

#include "tidal/Passes.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"

namespace tidal {

// The functions of the passes, one per file (the file is named after the
// class without "Pass"; AnnotateKernels.cpp also holds the two helpers below).
#define TIDAL_MODULE_PASS(Class, Name, Function) bool Function(llvm::Module &M);
#define TIDAL_CHECK_PASS(Class, Name, Function) bool Function(llvm::Module &M);
#define TIDAL_NVPTX_PASS(Class, Name, Function)                                \
  bool Function(llvm::Module &M, const NVPTXOptions &Options);
#include "Passes.def"

// The nvptx64 triple and data layout if M has none; whether f32 denormals
// are flushed ("tidal.ftz" or Options.FTZ).
void setNVPTXTargetIfUnset(llvm::Module &M);
bool isFTZ(const llvm::Module &M, const NVPTXOptions &Options);

// A transformation (Required = false: "changed" decides what is preserved)
// or a check (Required = true: runs even under optnone, preserves all).
template <const char *PassName, bool (*Run)(llvm::Module &), bool Required>
struct TidalModulePass
    : llvm::PassInfoMixin<TidalModulePass<PassName, Run, Required>> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    bool Result = Run(M);
    return Required || !Result ? llvm::PreservedAnalyses::all()
                               : llvm::PreservedAnalyses::none();
  }
  static llvm::StringRef name() { return PassName; }
  static bool isRequired() { return Required; }
};

// A transformation with the NVPTX options.
template <const char *PassName,
          bool (*Run)(llvm::Module &, const NVPTXOptions &)>
struct TidalNVPTXPass : llvm::PassInfoMixin<TidalNVPTXPass<PassName, Run>> {
  NVPTXOptions Options;
  explicit TidalNVPTXPass(NVPTXOptions Options = {}) : Options(Options) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    return Run(M, Options) ? llvm::PreservedAnalyses::none()
                           : llvm::PreservedAnalyses::all();
  }
  static llvm::StringRef name() { return PassName; }
};

// The pass names (the template arguments need objects), then the classes.
namespace pass_names {
#define TIDAL_MODULE_PASS(Class, Name, Function) inline constexpr char Class[] = Name;
#define TIDAL_CHECK_PASS(Class, Name, Function) inline constexpr char Class[] = Name;
#define TIDAL_NVPTX_PASS(Class, Name, Function) inline constexpr char Class[] = Name;
#include "Passes.def"
} // namespace pass_names

#define TIDAL_MODULE_PASS(Class, Name, Function)                               \
  using Class = TidalModulePass<pass_names::Class, Function, false>;
#define TIDAL_CHECK_PASS(Class, Name, Function)                                \
  using Class = TidalModulePass<pass_names::Class, Function, true>;
#define TIDAL_NVPTX_PASS(Class, Name, Function)                                \
  using Class = TidalNVPTXPass<pass_names::Class, Function>;
#include "Passes.def"

// Pipelines.cpp: the named pipelines, as pass lists.
//   tidal-lower-nvptx = tidal-check-marker-arguments,
//                       tidal-check-marker-reachability,
//                       tidal-lower-exceptions,
//                       tidal-lower-special-registers, tidal-lower-barriers,
//                       tidal-lower-memory-spaces, tidal-lower-atomics,
//                       tidal-lower-warp-collectives, tidal-lower-print,
//                       tidal-lower-math, tidal-annotate-kernels,
//                       function(infer-address-spaces),
//                       tidal-mark-readonly-arguments, globaldce,
//                       tidal-verify-markers
//   tidal-nvptx       = tidal-lower-nvptx, then addNVPTXOptimisation:
//                       internalize non-kernels, O3
//   tidal-lower-host  = tidal-check-marker-arguments, tidal-lower-host (the
//                       pass), tidal-verify-markers
//   tidal-host        = tidal-lower-host, O3
#define TIDAL_PIPELINE(Name, Function)                                         \
  void Function(llvm::PassBuilder &PB, llvm::ModulePassManager &MPM);
#define TIDAL_NVPTX_PIPELINE(Name, Function)                                   \
  void Function(llvm::PassBuilder &PB, llvm::ModulePassManager &MPM,           \
                const NVPTXOptions &Options);
#include "Passes.def"
void addNVPTXOptimisation(llvm::PassBuilder &PB, llvm::ModulePassManager &MPM);

// tidal-bound-thread-loops (LowerHostLoopBounds.cpp): a function pass that
// O3 runs at the vectoriser's start (registerTidalPasses): the thread loops
// of the block functions end at their body's block-uniform bound.
struct BoundThreadLoopsPass : llvm::PassInfoMixin<BoundThreadLoopsPass> {
  llvm::PreservedAnalyses run(llvm::Function &F, llvm::FunctionAnalysisManager &FAM);
  static llvm::StringRef name() { return "tidal-bound-thread-loops"; }
};

// tidal-vectorise-thread-nests (LowerHostThreadNests.cpp): a function pass
// that O3 runs at the vectoriser's start after tidal-bound-thread-loops: a
// thread loop whose body is a loop is marked for the outer-loop vectoriser.
struct VectoriseThreadNestsPass : llvm::PassInfoMixin<VectoriseThreadNestsPass> {
  llvm::PreservedAnalyses run(llvm::Function &F, llvm::FunctionAnalysisManager &FAM);
  static llvm::StringRef name() { return "tidal-vectorise-thread-nests"; }
};

// tidal-scalarise-splat-inductions (LowerHostThreadNests.cpp): after the
// vectorisers (O3's last extension point), a vector
// phi whose lanes are all equal (an inner loop's counter widened by the
// outer-loop vectoriser) becomes a scalar phi and its splat.
struct ScalariseSplatInductionsPass : llvm::PassInfoMixin<ScalariseSplatInductionsPass> {
  llvm::PreservedAnalyses run(llvm::Function &F, llvm::FunctionAnalysisManager &FAM);
  static llvm::StringRef name() { return "tidal-scalarise-splat-inductions"; }
};

} // namespace tidal

#endif
