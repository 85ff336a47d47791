// The in-process pipelines (runTidalPipeline of tidal/Pipeline.h, and
// runNVPTXPipeline / runHostPipeline of tidal/Passes.h over it), built from
// their text (tidal/Pipeline.def), so that the text tidalc --print-pipeline
// prints is what runs. In the static library only: the loadable plugin's
// users (opt, clang) build their own pipelines.

#include "ErrorCollector.h"
#include "Markers.h"
#include "PassClasses.h"
#include "tidal/Pipeline.h"

#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>

using namespace llvm;

namespace tidal {

namespace {

// One part of a target's pipeline (Pipeline.def): a step of the target's
// own, or extra passes given for a point (Origin says by whom).
struct Part {
  std::string Text; // as written; wrapped when printed or parsed
  PipelinePoint Point; // a step runs just before it, extra passes at it
  const char *Origin = nullptr; // null for the target's own steps
};

std::string nvptxParameters(const NVPTXOptions &Options) {
  std::string Text = "sm=" + std::to_string(Options.SM);
  if (Options.FTZ)
    Text += ";ftz";
  if (Options.Libdevice)
    Text += ";libdevice=" + *Options.Libdevice;
  return Text;
}

std::vector<Part> pipelineParts(PipelineTarget Target, const NVPTXOptions &Options,
                                const ExtraPasses *Kernel) {
  std::vector<Part> Parts;
  auto Step = [&](PipelineTarget StepTarget, PipelinePoint Point, StringRef Text) {
    if (StepTarget != Target)
      return;
    std::string Expanded = Text.str();
    size_t At = Expanded.find("{nvptx}");
    if (At != std::string::npos)
      Expanded.replace(At, 7, nvptxParameters(Options));
    Parts.push_back({Expanded, Point, nullptr});
  };
  const ExtraPasses &Process = processExtraPasses();
  for (unsigned I = 0; I < PipelinePointCount; ++I) {
    auto Point = static_cast<PipelinePoint>(I);
#define TIDAL_STEP(StepTarget, Id, Text)                                       \
  if (PipelinePoint::Id == Point)                                              \
    Step(PipelineTarget::StepTarget, Point, Text);
#include "tidal/Pipeline.def"
    if (!Process.Text[I].empty())
      Parts.push_back({Process.Text[I], Point, "TIDAL_PASSES"});
    if (Kernel && !Kernel->Text[I].empty())
      Parts.push_back({Kernel->Text[I], Point, "the kernel's passes="});
  }
  return Parts;
}

// A user's text with LLVM's instcombine fixpoint check off: `instcombine`
// in -passes text means `instcombine<verify-fixpoint>` (a check for LLVM's
// own tests), which ends the process with "LLVM ERROR: Instruction
// Combining did not reach a fixpoint" on IR that one iteration leaves
// improvable (found by the frontend fuzzer: passes={'after-lowering':
// 'instcombine'} on a loop over range(False)). So each instcombine the
// user names gets no-verify-fixpoint first among its parameters; one that
// asks for verify-fixpoint itself is an error.
Expected<std::string> withoutFixpointCheck(const Part &P) {
  static const StringRef Name = "instcombine";
  std::string Text;
  StringRef Rest = P.Text;
  auto Delimiter = [](char C) { return C == ',' || C == '(' || C == ')' || C == '<'; };
  while (!Rest.empty()) {
    size_t At = Rest.find(Name);
    if (At == StringRef::npos)
      break;
    size_t End = At + Name.size();
    bool Token = (At == 0 || Delimiter(Rest[At - 1]) || Rest[At - 1] == ' ') &&
                 (End == Rest.size() || Delimiter(Rest[End]));
    Text += Rest.substr(0, End).str();
    Rest = Rest.substr(End);
    if (!Token)
      continue;
    if (!Rest.starts_with("<")) {
      Text += "<no-verify-fixpoint>";
      continue;
    }
    SmallVector<StringRef, 4> Parameters;
    Rest.substr(1, Rest.find('>') - 1).split(Parameters, ';');
    for (StringRef Parameter : Parameters)
      if (Parameter.trim() == "verify-fixpoint")
        return createStringError(
            inconvertibleErrorCode(),
            "pass pipeline '" + P.Text + "' at " + pipelinePointInfo(P.Point).Name + " (from " +
                P.Origin + "): instcombine<verify-fixpoint> ends the process (LLVM ERROR) "
                "when instcombine does not reach a fixpoint; leave it out");
    Text += "<no-verify-fixpoint;";
    Rest = Rest.substr(1);
  }
  return Text + Rest.str();
}

// Text as one element of a module pipeline: as it is when it is module
// passes, else nested as opt nests a pipeline that starts with a CGSCC,
// function or loop pass. The error names the point and the origin.
Expected<std::string> wrapped(PassBuilder &PB, const Part &P) {
  if (!P.Origin) // tidal's own steps are module pipelines (Pipeline.def)
    return P.Text;
  Expected<std::string> Checked = withoutFixpointCheck(P);
  if (!Checked)
    return Checked.takeError();
  std::string LastError;
  for (const char *Form : {"module(%s)", "cgscc(%s)", "function(%s)", "function(loop(%s))"}) {
    std::string Nested = Form;
    Nested.replace(Nested.find("%s"), 2, *Checked);
    // Module passes stand as they are in a module pipeline.
    std::string Text = StringRef(Form).starts_with("module(") ? *Checked : Nested;
    ModulePassManager MPM;
    if (Error E = PB.parsePassPipeline(MPM, Nested)) {
      if (LastError.empty())
        LastError = toString(std::move(E));
      else
        consumeError(std::move(E));
      continue;
    }
    return Text;
  }
  return createStringError(inconvertibleErrorCode(),
                           "pass pipeline '" + P.Text + "' at " +
                               pipelinePointInfo(P.Point).Name + " (from " + P.Origin +
                               "): " + LastError);
}

// A PassBuilder as opt's: the target machine, tidal's passes, the loaded
// plugins and, when PIC is given, its instrumentation.
struct Builder {
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PassBuilder PB;
  Builder(TargetMachine &TM, PassInstrumentationCallbacks *PIC)
      : PB(&TM, PipelineTuningOptions(), std::nullopt, PIC) {
    registerTidalPasses(PB);
    registerLoadedPassPlugins(PB);
    PB.registerModuleAnalyses(MAM);
    PB.registerCGSCCAnalyses(CGAM);
    PB.registerFunctionAnalyses(FAM);
    PB.registerLoopAnalyses(LAM);
    PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  }
};

std::string kernelNames(const Module &M) {
  std::string Names;
  for (const Function *F : getKernels(M))
    Names += (Names.empty() ? "'" : ", '") + F->getName().str() + "'";
  return Names.empty() ? "in module '" + M.getModuleIdentifier() + "'" : "kernel " + Names;
}

} // namespace

Expected<std::string> pipelineText(TargetMachine &TM, PipelineTarget Target,
                                   const NVPTXOptions &Options, const ExtraPasses *Kernel) {
  if (Error E = prepareProcessPipelines())
    return std::move(E);
  Builder B(TM, nullptr);
  std::string Text;
  for (const Part &P : pipelineParts(Target, Options, Kernel)) {
    Expected<std::string> Element = wrapped(B.PB, P);
    if (!Element)
      return Element.takeError();
    Text += (Text.empty() ? "" : ",") + *Element;
  }
  return Text;
}

bool runTidalPipeline(Module &M, TargetMachine &TM, const PipelineRun &Run,
                      std::string &Error) {
  M.setTargetTriple(TM.getTargetTriple().str());
  M.setDataLayout(TM.createDataLayout());
  if (llvm::Error E = prepareProcessPipelines()) {
    Error = toString(std::move(E));
    return false;
  }
  std::string Kernels = kernelNames(M); // before the lowering renames them

  // 1. A PassBuilder as opt's, with LLVM's standard instrumentation, so that
  // -print-after-all, -time-passes, ... of TIDAL_LLVM_ARGS apply.
  PassInstrumentationCallbacks PIC;
  StandardInstrumentations SI(M.getContext(), /*DebugLogging=*/false);
  std::optional<Builder> B;
  B.emplace(TM, &PIC);
  SI.registerCallbacks(PIC, &B->MAM);

  // 2. Every part parsed before any runs: a pipeline text that does not
  // parse is reported before the module changes.
  std::vector<Part> Parts = pipelineParts(Run.Target, Run.NVPTX, Run.Kernel);
  std::vector<ModulePassManager> Managers(Parts.size());
  for (size_t I = 0; I < Parts.size(); ++I) {
    Expected<std::string> Text = wrapped(B->PB, Parts[I]);
    llvm::Error E = Text ? B->PB.parsePassPipeline(Managers[I], *Text) : Text.takeError();
    if (E) {
      Error = Kernels + ": " + toString(std::move(E));
      return false;
    }
  }

  // 3. The parts in order; after a point's last part, its stage.
  ErrorCollector Errors(M.getContext(), Error);
  using Clock = std::chrono::steady_clock;
  size_t Next = 0;
  for (unsigned P = 0; P < PipelinePointCount; ++P) {
    auto Point = static_cast<PipelinePoint>(P);
    for (; Next < Parts.size() && Parts[Next].Point == Point; ++Next) {
      const Part &Current = Parts[Next];
      Clock::time_point Start = Clock::now();
      Managers[Next].run(M, B->MAM);
      if (Run.Timings)
        (Point < PipelinePoint::BeforeOptimisation ? Run.Timings->LoweringSeconds
                                                   : Run.Timings->OptimisationSeconds) +=
            std::chrono::duration<double>(Clock::now() - Start).count();
      if (Errors.failed())
        return false;
      if (!Current.Origin)
        continue;
      // A pass of the user's that breaks the module stops here, named.
      std::string Broken;
      raw_string_ostream Stream(Broken);
      if (verifyModule(M, &Stream)) {
        Error = Kernels + ": the IR is broken after pass pipeline '" + Current.Text + "' at " +
                pipelinePointInfo(Point).Name + " (from " + Current.Origin +
                "): " + StringRef(Stream.str()).trim().str();
        return false;
      }
    }
    if (Run.Stages) {
      raw_string_ostream Stream((*Run.Stages)[P]);
      M.print(Stream, nullptr);
    }
  }
  return true;
}

bool runNVPTXPipeline(Module &M, TargetMachine &TM, const NVPTXOptions &Options,
                      std::string &Error, PipelineTimings *Timings) {
  PipelineRun Run;
  Run.Target = PipelineTarget::NVPTX;
  Run.NVPTX = Options;
  Run.Timings = Timings;
  return runTidalPipeline(M, TM, Run, Error);
}

bool runHostPipeline(Module &M, TargetMachine &TM, std::string &Error,
                     PipelineTimings *Timings) {
  PipelineRun Run;
  Run.Target = PipelineTarget::Host;
  Run.Timings = Timings;
  return runTidalPipeline(M, TM, Run, Error);
}

} // namespace tidal
