#include "Compiler.h"

#include "tidal/CollectErrors.h"
#include "tidal/Passes.h"
#include "tidal/runtime/CpuTarget.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

using namespace llvm;

namespace tidal::frontend {

namespace {
constexpr const char *NVPTXTriple = "nvptx64-nvidia-cuda";

// One TargetMachine per architecture, made on first use. Callers hold the
// GIL, which serialises compiles; the mutex covers callers that don't.
std::mutex MachinesMutex;

TargetMachine &nvptxMachine(unsigned SM) {
  static std::map<unsigned, std::unique_ptr<TargetMachine>> Machines;
  std::lock_guard<std::mutex> Lock(MachinesMutex);
  auto &Slot = Machines[SM];
  if (Slot)
    return *Slot;
  static std::once_flag Init;
  std::call_once(Init, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  std::string Error;
  const Target *T = TargetRegistry::lookupTarget(NVPTXTriple, Error);
  if (!T)
    throw std::runtime_error("the NVPTX target is not available in this LLVM: " + Error);
  // PTX 7.8 is what LLVM 19 emits for sm_90; sm_75 and later keep their
  // default; older sm get PTX 6.3 at least (nanosleep, the *.sync warp
  // instructions on sm_70, which LLVM otherwise cannot select there).
  std::string CPU = "sm_" + std::to_string(SM);
  std::string Features = SM < 75 ? "+ptx63" : "";
  // a * b + c becomes one fma.rn, as nvcc's default (--fmad=true) and
  // Numba's NVVM do; fastmath=True adds ftz and the approximate forms.
  TargetOptions Options;
  Options.AllowFPOpFusion = FPOpFusion::Fast;
  Slot.reset(T->createTargetMachine(NVPTXTriple, CPU, Features, Options, std::nullopt,
                                    std::nullopt, CodeGenOptLevel::Aggressive));
  if (!Slot)
    throw std::runtime_error("cannot create an NVPTX target machine for " + CPU);
  return *Slot;
}

TargetMachine &hostMachine() {
  static std::unique_ptr<TargetMachine> Machine = runtime::createHostTargetMachine();
  return *Machine;
}
} // namespace

std::string moduleText(const Module &M) {
  std::string Text;
  raw_string_ostream OS(Text);
  M.print(OS, nullptr);
  return OS.str();
}

void lowerForNVPTX(Module &M, unsigned SM, PipelineTimings *Timings, const ExtraPasses *Kernel,
                   PipelineStages *Stages) {
  TargetMachine &TM = nvptxMachine(SM);
  PipelineRun Run;
  Run.Target = PipelineTarget::NVPTX;
  Run.NVPTX.SM = SM;
  Run.Kernel = Kernel;
  Run.Stages = Stages;
  Run.Timings = Timings;
  std::string Error;
  if (!runTidalPipeline(M, TM, Run, Error)) {
    forgetNVPTXAnnotations(M, TM); // M dies unprinted (Passes.h)
    throw std::runtime_error("lowering for NVPTX failed: " + Error);
  }
}

void forgetNVPTXModule(Module &M, unsigned SM) { forgetNVPTXAnnotations(M, nvptxMachine(SM)); }

// The NVPTX backend stops the process (report_fatal_error, "Symbol name
// with unsupported characters") on a symbol it cannot print: PTX has no
// quoting. Local symbols it renames itself; the module's others (a kernel,
// a foreign function's declaration, a device function's abi_name) are
// checked here first, so that a name from a user is an error, not an abort.
static void checkSymbolNames(const Module &M) {
  auto Printable = [](StringRef Name) {
    return llvm::all_of(Name, [](char C) {
      return llvm::isAlnum(C) || C == '_' || C == '$' || C == '.' || C == '@';
    });
  };
  for (const GlobalValue &G : M.global_values()) {
    if (G.hasLocalLinkage() || !G.hasName() || G.getName().starts_with("llvm."))
      continue;
    if (const auto *F = dyn_cast<Function>(&G); F && F->isDeclaration() && F->use_empty())
      continue; // never printed
    if (!Printable(G.getName()))
      throw std::invalid_argument("cannot emit PTX: the symbol '" + G.getName().str() +
                                  "' has characters PTX names cannot hold (letters, digits, "
                                  "'_' and '$')");
  }
}

std::string emitPTX(Module &M, unsigned SM) {
  TargetMachine &TM = nvptxMachine(SM);
  try {
    checkSymbolNames(M);
  } catch (...) {
    forgetNVPTXAnnotations(M, TM); // M dies unprinted (Passes.h)
    throw;
  }
  M.setTargetTriple(NVPTXTriple);
  M.setDataLayout(TM.createDataLayout());
  SmallString<0> PTX;
  raw_svector_ostream OS(PTX);
  legacy::PassManager PM;
  if (TM.addPassesToEmitFile(PM, OS, nullptr, CodeGenFileType::AssemblyFile))
    throw std::runtime_error("the NVPTX backend cannot emit PTX for sm_" + std::to_string(SM));
  // What the backend cannot compile is a diagnostic, which would end the
  // process: an error here.
  std::string Errors;
  if (!runCollectingErrors(M.getContext(), Errors, [&] { PM.run(M); }))
    throw std::invalid_argument("the NVPTX backend cannot compile this for sm_" +
                                std::to_string(SM) + ": " + Errors);
  return std::string(PTX.str());
}

void lowerForHost(Module &M, const ExtraPasses *Kernel, PipelineStages *Stages) {
  PipelineRun Run;
  Run.Target = PipelineTarget::Host;
  Run.Kernel = Kernel;
  Run.Stages = Stages;
  std::string Error;
  if (!runTidalPipeline(M, hostMachine(), Run, Error))
    throw std::runtime_error("lowering for the host failed: " + Error);
}

std::string emitHostAssembly(Module &M) {
  TargetMachine &TM = hostMachine();
  SmallString<0> Assembly;
  raw_svector_ostream OS(Assembly);
  legacy::PassManager PM;
  if (TM.addPassesToEmitFile(PM, OS, nullptr, CodeGenFileType::AssemblyFile))
    throw std::runtime_error("the host's backend cannot emit assembly");
  PM.run(M);
  return std::string(Assembly.str());
}

std::string pipelineTextFor(bool Cuda, unsigned SM, const ExtraPasses *Kernel) {
  NVPTXOptions Options;
  Options.SM = SM;
  Expected<std::string> Text =
      Cuda ? pipelineText(nvptxMachine(SM), PipelineTarget::NVPTX, Options, Kernel)
           : pipelineText(hostMachine(), PipelineTarget::Host, Options, Kernel);
  if (!Text)
    throw std::runtime_error(toString(Text.takeError()));
  return *Text;
}

} // namespace tidal::frontend
