// The researcher's view of tidal's in-process pipelines: their named points
// and stages (tidal/Pipeline.def), extra passes at the points, pass plugins
// loaded into them, LLVM's own switches, and the exact pipeline text each
// target runs (docs/research.md).
#ifndef TIDAL_PIPELINE_H
#define TIDAL_PIPELINE_H

#include "tidal/Passes.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace tidal {

enum class PipelinePoint : unsigned {
#define TIDAL_POINT(Id, Name, Stage, Description) Id,
#include "tidal/Pipeline.def"
};

inline constexpr unsigned PipelinePointCount = 0
#define TIDAL_POINT(Id, Name, Stage, Description) +1
#include "tidal/Pipeline.def"
    ;

enum class PipelineTarget { NVPTX, Host };

// One row of Pipeline.def's points.
struct PipelinePointInfo {
  const char *Name, *Stage, *Description;
};
const PipelinePointInfo &pipelinePointInfo(PipelinePoint Point);
// The point called Name ("after-lowering"), if there is one.
std::optional<PipelinePoint> parsePipelinePoint(llvm::StringRef Name);
// The point whose stage is called Stage ("lowered").
std::optional<PipelinePoint> parsePipelineStage(llvm::StringRef Stage);
// "after-frontend, after-lowering, ..." for messages.
std::string pipelinePointNames();

// Pipeline text to run at each point ("" where none), e.g. "instcount" at
// AfterLowering.
struct ExtraPasses {
  std::array<std::string, PipelinePointCount> Text;
  bool empty() const;
  // Text at Point, then Pipeline after a ','.
  void append(PipelinePoint Point, llvm::StringRef Pipeline);
  // "point=text;point=text" in the points' order.
  std::string str() const;
};

// TIDAL_PASSES' syntax: entries "point=pipeline text", separated by ';', or
// by a ',' that is followed by "point=" (so 'after-lowering=a,b,
// before-codegen=c' is two entries); separators inside <...> or (...)
// belong to the pipeline text. Errors name the unknown point.
llvm::Expected<ExtraPasses> parseExtraPasses(llvm::StringRef Spec);

// The process's extra passes: TIDAL_PASSES, read at first use. Errors in it
// are reported by runTidalPipeline.
const ExtraPasses &processExtraPasses();

// Loads a pass plugin (as opt -load-pass-plugin) into every in-process
// pipeline run after this call; loading the same path again does nothing.
// Errors name the plugin and say why.
llvm::Error loadPassPlugin(llvm::StringRef Path);
// Registers the loaded plugins' callbacks with PB (pipeline parsing,
// extension points), as opt does with each -load-pass-plugin.
void registerLoadedPassPlugins(llvm::PassBuilder &PB);
// The paths loaded so far (TIDAL_PASS_PLUGINS' first, in order).
std::vector<std::string> loadedPassPlugins();

// Loads the plugins of TIDAL_PASS_PLUGINS (a ':'-separated list), then
// parses TIDAL_LLVM_ARGS (split at spaces) with cl::ParseCommandLineOptions,
// once per process (a process-wide mark in libLLVM's option registry keeps a
// second copy of this library from parsing them again). Called by every
// pipeline run; returns the error of the first call each time.
llvm::Error prepareProcessPipelines();

// The exact pipeline text of a target, for `opt -passes=`: its steps
// (Pipeline.def) with the process's extra passes, then Kernel's, at each
// point; each extra part is wrapped as opt would nest it (a function pass
// in function(...)).
// TM is the target's machine (its passes, such as nvvm-reflect, are names
// too). Errors name the pipeline text that does not parse, its point and
// where it came from.
llvm::Expected<std::string> pipelineText(llvm::TargetMachine &TM, PipelineTarget Target,
                                         const NVPTXOptions &Options,
                                         const ExtraPasses *Kernel = nullptr);

// The IR at each stage (Pipeline.def), filled by a run that is given one.
using PipelineStages = std::array<std::string, PipelinePointCount>;

struct PipelineRun {
  PipelineTarget Target = PipelineTarget::NVPTX;
  NVPTXOptions NVPTX;
  const ExtraPasses *Kernel = nullptr; // the kernel's own passes (cuda.jit(passes=))
  PipelineStages *Stages = nullptr;
  PipelineTimings *Timings = nullptr;
};

// Runs pipelineText(...) on M as its parts, with a PassBuilder that knows
// TM, the loaded plugins and LLVM's standard instrumentation
// (-print-after-all, -time-passes, ...). Sets M's triple and data layout
// from TM first. Returns false with the error in Error (as
// runNVPTXPipeline: DS_Error diagnostics, a pipeline text that does not
// parse, named with its point and origin, or a module that fails the
// verifier after extra passes, named with the kernel).
bool runTidalPipeline(llvm::Module &M, llvm::TargetMachine &TM,
                      const PipelineRun &Run, std::string &Error);

} // namespace tidal

#endif
