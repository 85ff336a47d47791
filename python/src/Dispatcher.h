// The C++ half of tidal.cuda's dispatcher (the Dispatcher type that
// tidal.cuda.dispatcher.Dispatcher subclasses): one half per target, each
// with its options, its specialisations and its launch plans, so a kernel
// launched on both targets keeps the code of each.
#ifndef TIDAL_BINDING_DISPATCHER_H
#define TIDAL_BINDING_DISPATCHER_H

#include "ForeignFunctions.h"
#include "Frontend.h"
#include "LaunchPlan.h"
#include "PyRef.h"
#include "RawKernels.h"
#include "Targets.h"
#include "Types.h"

#include "tidal/Contract.h"
#include "tidal/HostABI.h"
#include "tidal/Pipeline.h"
#include "tidal/runtime/CpuTarget.h"
#include "tidal/runtime/CudaTarget.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tidal::binding {

// One compiled specialisation: the kernel for one list of argument types.
struct Specialization {
  std::vector<frontend::Type> ArgTypes;
  std::string KernelName;
  std::string MarkerIR;  // the frontend's output, kept for inspection
  // The kernel uses cuda.cg.this_grid(): its launches are cooperative
  // (cuLaunchCooperativeKernel; on the cpu target launchCooperativeOnCpu).
  bool Cooperative = false;
  std::string TypesText; // inspect_types(): source and variable types
  std::unique_ptr<runtime::CpuModule> Cpu;
  TidalBlockFunction Block = nullptr;
  uint64_t CpuStaticSharedBytes = 0; // a block's static shared memory (cpu target)
  // cpu target: the conditions under which its blocks pass some checks
  // (none: it has no fitted block function), and those functions once
  // launches built them, or that a build failed (FittedBlocks.h): one for
  // blocks of one row (Dim3 {0, 0, 0} here), and one per shape of the
  // blocks of more rows, specialised to it.
  std::vector<runtime::CpuBlockCondition> FitConditions;
  std::vector<std::pair<runtime::Dim3, TidalBlockFunction>> Fitted;
  bool FittedFailed = false;
  // Threads of the fitting launches so far, and how many there must be
  // before the fitted block function is built (TIDAL_CPU_FITTED_THREADS when
  // compiled; FittedBlocks.h).
  uint64_t FittingThreads = 0;
  uint64_t FittedAfterThreads = 0;
  unsigned ParamCount = 0; // flattened
  // It links foreign code (ForeignLinking.h), whose files the disk cache's
  // key does not cover: never saved to the disk cache.
  bool LinksForeignCode = false;
  // The .ptx files the driver links with the kernel's PTX (cuda target).
  std::vector<frontend::ForeignLink> PtxLinks;
  // cuda target: the kernel loaded on each device it has run on, from PTX
  // for that device's sm.
  struct CudaLoaded {
    runtime::CudaContext *Context;
    std::unique_ptr<runtime::CudaModule> Module;
    std::unique_ptr<runtime::CudaFunction> Function;
    // The module's exception slot (tidal/Contract.h), 0 when it has none.
    runtime::cu::DevicePointer ExceptionSlot = 0;
  };
  std::vector<CudaLoaded> Cuda;
  // cuda target: the table of raise sites of MarkerIR (tidal::raiseSites),
  // read when the kernel is first loaded. Empty: its module has no exception
  // slot, and its launches do not wait for the kernel.
  std::vector<RaiseSite> RaiseSites;
  bool RaiseSitesRead = false;
};

// Whether marker IR has raise sites (tidal.assert.fail, tidal.bounds.error
// calls): its NVPTX module has an exception slot.
inline bool hasRaiseSites(const std::string &MarkerIR) {
  return MarkerIR.find("@tidal.assert.fail(") != std::string::npos ||
         MarkerIR.find("@tidal.bounds.error(") != std::string::npos;
}

// Whether marker IR calls the cooperative groups' markers (tidal.grid.group,
// tidal.grid.sync): its kernel needs a cooperative launch, as Numba's
// looks for cudaCGGetIntrinsicHandle in the kernel's code.
inline bool usesGridGroup(const std::string &MarkerIR) {
  return MarkerIR.find("@tidal.grid.group(") != std::string::npos ||
         MarkerIR.find("@tidal.grid.sync(") != std::string::npos;
}

// One target's half of a dispatcher.
struct DispatcherState {
  frontend::PyRef Function;
  std::string Name;
  std::vector<std::string> ParamNames;
  // The options come from the Python dispatcher (_tidal_options(target))
  // when the first specialisation for this target is made.
  bool Configured = false;
  TargetKind Target = TargetKind::Cpu;
  frontend::FrontendOptions Options;
  // cuda.jit(passes={...}): the kernel's extra passes at the pipelines'
  // points, run after TIDAL_PASSES' (tidal/Pipeline.h).
  ExtraPasses Passes;
  // Where passes= is written: "file.py:line" of the kernel's decorator (its
  // code's first line), which errors of that text start with; empty when
  // the kernel has no passes= or no Python function.
  std::string PassesWhere;
  // cache=True: the disk cache (a tidal.cuda.caching.KernelCache, read with
  // the options) that compile() and cudaFunctionOf() read and write
  // (DispatcherCache.h); null or None without one.
  frontend::PyRef Cache;
  // Numba's extensions=[...]: the list (kept by the Python dispatcher, which
  // users append to) whose prepare_args(ty, val, stream=, retr=) each launch
  // runs its arguments through while it is not empty (LaunchConfig.cpp).
  frontend::PyRef Extensions;
  // Grid sizes (blocks) already warned about as too small (PerformanceWarnings.h).
  std::vector<uint64_t> LowOccupancyWarned;
  // The cpu target warned once about a NumPy array a GPU would copy.
  bool ImplicitCopyWarned = false;
  // False for tidal's library kernels, whose launch configuration the
  // library chooses (cuda.reduce, transposes): no performance warnings.
  bool PerformanceWarnings = true;
  // cuda.jit(shared_memory_carveout=...): the percentage (-1: the driver's
  // default) set on each loaded kernel (cuda target); none when not given.
  std::optional<int> SharedMemoryCarveout;
  // launch_bounds' third item (the most blocks per cluster; 0: none): the
  // kernel's "tidal-maxclusterrank" attribute, .maxclusterrank on sm_90.
  unsigned MaxClusterRank = 0;
  std::vector<std::unique_ptr<Specialization>> Specializations;
  // A CUDA C++ kernel (tidal.cuda.RawKernel, RawKernels.h): specialisations
  // come from its source instead of the frontend; null for Python kernels.
  std::shared_ptr<const RawKernelSource> Raw;
  // @cuda.jit(link=[...]): files linked into every specialisation
  // (ForeignLinking.h), beside those its foreign functions name.
  std::vector<frontend::ForeignLink> Links;
  // The signatures given to cuda.jit('sig') or cuda.jit(['sig', ...]): when
  // there are any, launches run one of them, converting scalar arguments to
  // its types, and nothing else is compiled for them (as Numba's dispatcher
  // after disable_compile()).
  std::vector<std::vector<frontend::Type>> DeclaredSignatures;
  // The most recently used first. Shared: a launch holds its plan while
  // Python code it calls (an argument's __dlpack__, ...) may let another
  // thread launch the kernel and replace plans.
  std::vector<std::shared_ptr<LaunchPlan>> Plans;
  // Specialisations dropped by recompile(): kept alive, since a launch on
  // another thread may still run one (its plan points at it).
  std::vector<std::unique_ptr<Specialization>> Retired;

  Specialization *find(const std::vector<frontend::Type> &Types);
  // The specialisation for Types, compiled for this target when new.
  Specialization &compile(const std::vector<frontend::Type> &Types);
  // The specialisation a launch with arguments of ArgumentTypes runs: the one
  // for exactly these types, or, when signatures were declared, the declared
  // one they convert to best. Throws std::invalid_argument (TypeError) when no
  // declared signature takes them.
  Specialization &forArguments(const std::vector<frontend::Type> &ArgumentTypes);
};

// How an argument of type From passes as a parameter of type To by Numba's
// conversion rules: 0 exactly, 1 safely (a wider scalar, an array as a
// parameter of layout A or read-only), 2 unsafely (a scalar that may lose
// range or precision), -1 not at all (arrays are never converted).
int conversionCost(const frontend::Type &From, const frontend::Type &To);

// The kernel's passes as _tidal_options gives them (TIDAL_PASSES' syntax);
// std::invalid_argument when they do not parse (PipelineFunctions.cpp).
ExtraPasses extraPassesFromText(const std::string &Spec);

// The dispatcher's half for the selected target with its options read
// (self._tidal_options(target)), as everything that compiles needs it.
DispatcherState &configuredState(PyObject *Self);

// The kernel of S loaded on device Ordinal: compiled to PTX for the device's
// sm and loaded on first use.
runtime::CudaFunction &cudaFunctionOf(const DispatcherState &D, Specialization &S, int Ordinal);
// The same, with its module and exception slot.
Specialization::CudaLoaded &cudaKernelOf(const DispatcherState &D, Specialization &S, int Ordinal);

// "(float32, array(float32, 1d, C))"
std::string signatureText(const std::vector<frontend::Type> &Types);

// Types from a signature: a string ("void(float32, float32[::1])") or a
// sequence of type strings.
std::vector<frontend::Type> typesFromPython(PyObject *Signature);

// Adds the Dispatcher type; 0, or -1 with a Python error set.
int addDispatcherType(PyObject *Module);

} // namespace tidal::binding

#endif
