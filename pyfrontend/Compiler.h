// From a kernel's marker IR to what each target runs, in-process: the
// TidalPasses pipelines (linked statically) and the NVPTX backend.
#ifndef TIDAL_FRONTEND_COMPILER_H
#define TIDAL_FRONTEND_COMPILER_H

#include <string>

namespace llvm {
class Module;
} // namespace llvm

#include "tidal/Pipeline.h"

namespace tidal::frontend {

// sm_75 when nothing else is asked for: the oldest that CUDA 13's ptxas takes.
constexpr unsigned DefaultSM = 75;

std::string moduleText(const llvm::Module &M);

// tidal-nvptx in place (lower, verify, internalise, O3) for sm_<SM>.
// Throws std::runtime_error with the plugin's diagnostics.
// Kernel: the kernel's own extra passes (cuda.jit(passes=)), run after the
// process's (TIDAL_PASSES); Stages, when given, receives the IR at each
// point (tidal/Pipeline.def).
void lowerForNVPTX(llvm::Module &M, unsigned SM, tidal::PipelineTimings *Timings = nullptr,
                   const tidal::ExtraPasses *Kernel = nullptr,
                   tidal::PipelineStages *Stages = nullptr);
// A module lowered by lowerForNVPTX that will not be printed by emitPTX
// must pass through this before it is destroyed (it is left empty): see
// forgetNVPTXAnnotations in tidal/Passes.h. lowerForNVPTX does it itself
// when it fails.
void forgetNVPTXModule(llvm::Module &M, unsigned SM);
// PTX of a module lowered by lowerForNVPTX.
std::string emitPTX(llvm::Module &M, unsigned SM);

// tidal-host in place (lower to block functions, O3 for this host).
void lowerForHost(llvm::Module &M, const tidal::ExtraPasses *Kernel = nullptr,
                  tidal::PipelineStages *Stages = nullptr);
// The host's assembly of a module lowered by lowerForHost (what the ORC JIT
// compiles it to), for inspection.
std::string emitHostAssembly(llvm::Module &M);

// The exact pipeline text of a target (tidal::pipelineText) with its
// machine: cuda for sm_<SM>, or the host. Throws std::runtime_error.
std::string pipelineTextFor(bool Cuda, unsigned SM, const tidal::ExtraPasses *Kernel = nullptr);

} // namespace tidal::frontend

#endif
