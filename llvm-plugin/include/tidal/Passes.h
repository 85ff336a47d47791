// Public C++ interface of TidalPasses, for code that links the static
// library (the frontend, tidalc, tests). `opt` users go through Plugin.cpp.
#ifndef TIDAL_PASSES_H
#define TIDAL_PASSES_H

#include "llvm/IR/PassManager.h"
#include <string>

namespace llvm {
class Module;
class PassBuilder;
class TargetMachine;
} // namespace llvm

namespace tidal {

// Registers every pass and pipeline name of the plugin with a PassBuilder,
// exactly as `opt -load-pass-plugin=TidalPasses.so` sees them.
void registerTidalPasses(llvm::PassBuilder &PB);

// Options of the NVPTX lowering (also spelled as pass parameters,
// e.g. tidal-lower-nvptx<sm=90>). SM is recorded as "target-cpu"="sm_<SM>"
// on every defined function; the PTX target itself comes from the
// TargetMachine (or llc's -mcpu).
struct NVPTXOptions {
  unsigned SM = 75;
};

// In-process pipelines, the same pass lists as the named pipelines:
//   runNVPTXPipeline: tidal-nvptx<sm=Options.SM> (tidal-lower-nvptx,
//                     internalize non-kernels, O3 for TM).
//   runHostPipeline:  tidal-host (tidal-lower-host, O3 for TM, the host).
// Both first set M's triple and data layout from TM. They throw nothing and
// never exit: while they run, M's LLVMContext has a diagnostic handler that
// collects every DS_Error ("tidal: unknown marker 'tidal.foo' in function
// 'k' at k.py:3:5", one per line) into `Error`, and they return false if
// there was one (M is then valid IR, but not fully lowered). The previous
// handler is put back, and receives the non-error diagnostics meanwhile.
bool runNVPTXPipeline(llvm::Module &M, llvm::TargetMachine &TM,
                      const NVPTXOptions &Options, std::string &Error);
bool runHostPipeline(llvm::Module &M, llvm::TargetMachine &TM,
                     std::string &Error);

// Metadata names of the marker contract (docs/markers.md).
inline constexpr const char *KernelsMetadataName = "tidal.kernels";
inline constexpr const char *MarkerPrefix = "tidal.";

} // namespace tidal

#endif
