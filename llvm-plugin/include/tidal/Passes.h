// Public C++ interface of TidalPasses, for code that links the static
// library (the frontend, tidalc, tests). `opt` users go through Plugin.cpp.
#ifndef TIDAL_PASSES_H
#define TIDAL_PASSES_H

#include "tidal/Contract.h" // the names of the marker contract
#include "llvm/IR/PassManager.h"
#include <optional>
#include <string>
#include <vector>

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
//
// Also (contract v2): `ftz` flushes f32 denormals as the module flag
// "tidal.ftz"=1 does (either one is enough); `libdevice=PATH` is the
// libdevice to link for math (libdevice=none: none, so math that needs it is
// an error); without it TIDAL_LIBDEVICE, then $CUDA_HOME, then
// /usr/local/cuda are searched (llvm-plugin/Libdevice.h).
//   tidal-lower-nvptx<sm=90;ftz;libdevice=/opt/cuda/nvvm/libdevice/libdevice.10.bc>
struct NVPTXOptions {
  unsigned SM = 75;
  bool FTZ = false;
  std::optional<std::string> Libdevice;
};

// Wall-clock seconds of the two halves of a pipeline: the tidal lowering
// passes (with libdevice linking), and the rest (internalize, O3).
struct PipelineTimings {
  double LoweringSeconds = 0, OptimisationSeconds = 0;
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
// With `Timings`, the lowering and the optimisation run as two timed steps
// (same result) and their times are stored there.
bool runNVPTXPipeline(llvm::Module &M, llvm::TargetMachine &TM,
                      const NVPTXOptions &Options, std::string &Error,
                      PipelineTimings *Timings = nullptr);
bool runHostPipeline(llvm::Module &M, llvm::TargetMachine &TM,
                     std::string &Error, PipelineTimings *Timings = nullptr);

// LLVM 19's NVPTX backend keeps what it reads of a module's
// !nvvm.annotations (kernel, maxntid, ...) in a process-wide cache keyed by
// the Module's and each function's address (NVPTXUtilities.cpp), filled by
// the NVPTX passes of O3 and codegen and emptied for a module only when the
// PTX printer finishes it. A module that ran through them and is destroyed
// without being printed leaves its entries behind, and a later module that
// the allocator puts at the same address, with a function at the address of
// one of the old ones, reads them: its kernel is then no kernel (no .entry)
// or takes another's launch bounds. forgetNVPTXAnnotations(M, TM) empties M
// (no bodies, initialisers or metadata are left: only declarations) and
// runs TM's PTX printer over it to a null stream, which drops M's entries;
// call it on such a module before it is destroyed.
void forgetNVPTXAnnotations(llvm::Module &M, llvm::TargetMachine &TM);

// The raise sites of marker IR, in the order tidal-lower-exceptions numbers
// them (site I writes code I + 1 into the module's exception slot,
// Contract.h): every call of tidal.assert.fail and tidal.bounds.error, in the
// order of the module's functions and of their instructions. Text is the
// constant string the call passes (the assert's or raise's message, which
// carries the exception: pyfrontend/KernelExceptions.cpp; the bounds check's
// "where"), "" when it is not a constant. The host reads the same table from
// a specialisation's marker IR to turn the slot back into the exception
// (RaiseSite: tidal/Contract.h).
std::vector<RaiseSite> raiseSites(const llvm::Module &M);

// tidal-raise-nvvm in process: clang's NVVM IR for CUDA C++ to marker IR
// (docs/cpp.md), before either pipeline. Errors are collected into `Error`
// as above; false if there was one.
bool raiseNVVMModule(llvm::Module &M, std::string &Error);

} // namespace tidal

#endif
