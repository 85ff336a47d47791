// The cuda target over the Driver API: primary contexts, PTX modules,
// kernels, device memory, launch checks and fault reporting.
#include "tidal/runtime/CudaTarget.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <vector>

namespace tidal::runtime {

namespace {

std::string dimsText(Dim3 D) {
  return "(" + std::to_string(D[0]) + ", " + std::to_string(D[1]) + ", " +
         std::to_string(D[2]) + ")";
}

} // namespace

// --- kernel faults: one report, whichever call observes the fault ----------------
//
// A kernel that faults asynchronously makes CUDA fail the next call in its
// context, whatever that call is: cuCtxSynchronize, cuStreamSynchronize, a
// copy, cuMemAlloc, the next cuLaunchKernel, cuModuleLoadDataEx... Every
// failed call of the runtime (and of the binding) already goes through
// CudaDriver::fail, so that is where sticky errors are caught: fail() hands
// them to the handler below, which finds the context and throws its fault
// report. A call site cannot forget it, and the driver layer knows nothing
// of contexts and launches. Calls on an object that belongs to a context
// which may not be current (a stream's, an event's) use CudaContext::check,
// which reports the fault of that context directly.

namespace {

// Every CudaContext alive, to find the one a driver call ran in.
std::mutex LiveContextsLock;
std::vector<const CudaContext *> &liveContexts() {
  static auto *Contexts = new std::vector<const CudaContext *>(); // never destroyed
  return *Contexts;
}

// The context of Driver whose handle is Handle, the newest if several
// objects hold the same primary context; null when tidal made none.
const CudaContext *liveContext(const CudaDriver &Driver, cu::Context Handle) {
  std::lock_guard<std::mutex> Guard(LiveContextsLock);
  const std::vector<const CudaContext *> &Contexts = liveContexts();
  for (auto It = Contexts.rbegin(); It != Contexts.rend(); ++It)
    if (&(*It)->driver() == &Driver && (*It)->handle() == Handle)
      return *It;
  return nullptr;
}

const char *const UnusableContext =
    ". The CUDA context is no longer usable: every later CUDA call in this process fails; "
    "restart the process";

// CudaDriver's sticky-error handler: the fault of the thread's current
// context (the one the failed call ran in).
void reportStickyError(const CudaDriver &Driver, cu::Result Result, const char *Call) {
  cu::Context Current = nullptr;
  if (Driver.api().CtxGetCurrent && Driver.api().CtxGetCurrent(&Current) != cu::Success)
    Current = nullptr;
  if (const CudaContext *Context = Current ? liveContext(Driver, Current) : nullptr)
    Context->reportFault(Result, Call);
  // A context tidal did not make (or none current): no launch to name.
  throw CudaDriverError(std::string("a kernel failed: reported by ") + Call + ": " +
                            Driver.describeError(Result) + UnusableContext,
                        Call, Result, Driver.errorName(Result));
}

} // namespace

void CudaContext::fail(cu::Result Result, const char *Call, const std::string &Detail) const {
  if (CudaDriver::isStickyError(Result))
    reportFault(Result, Call);
  Driver.fail(Result, Call, Detail);
}

void CudaContext::noteLaunch(const std::string &Kernel, Dim3 Grid, Dim3 Block,
                             cu::Stream Stream) const {
  std::lock_guard<std::mutex> Guard(FaultLock);
  RecordedLaunch &Slot = RecentLaunches[Launches % RecentLaunchCapacity];
  Slot.Kernel.assign(Kernel); // reuses the slot's buffer
  Slot.Grid = Grid;
  Slot.Block = Block;
  Slot.Stream = Stream;
  ++Launches;
}

uint64_t CudaContext::launchesSoFar() const {
  std::lock_guard<std::mutex> Guard(FaultLock);
  return Launches;
}

bool CudaContext::hasUnsynchronisedLaunches() const {
  std::lock_guard<std::mutex> Guard(FaultLock);
  return Launches != SynchronisedLaunches;
}

void CudaContext::forgetLaunches(uint64_t Mark) const {
  std::lock_guard<std::mutex> Guard(FaultLock);
  SynchronisedLaunches = std::max(SynchronisedLaunches, Mark);
}

void CudaContext::reportFault(cu::Result Result, const char *Call, bool OwnLaunch) const {
  {
    std::lock_guard<std::mutex> Guard(FaultLock);
    if (!faulted()) {
      auto configuration = [](const RecordedLaunch &L) {
        std::string Text = "griddim " + dimsText(L.Grid) + ", blockdim " + dimsText(L.Block);
        if (L.Stream) {
          char Handle[32];
          std::snprintf(Handle, sizeof Handle, "%#llx",
                        static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(L.Stream)));
          Text += std::string(", stream ") + Handle;
        }
        return Text;
      };
      // 1. Who: the launches since the last successful synchronisation,
      // oldest first (the ring keeps the newest RecentLaunchCapacity).
      uint64_t Candidates = Launches - SynchronisedLaunches;
      uint64_t First = Launches - std::min<uint64_t>(Candidates, RecentLaunchCapacity);
      std::string Message;
      if (Candidates == 0) {
        Message = "a kernel failed on " + describe() +
                  " (tidal launched none there since the last synchronisation)";
      } else if (Candidates == 1) {
        const RecordedLaunch &L = RecentLaunches[First % RecentLaunchCapacity];
        Message = "kernel '" + L.Kernel + "' (" +
                  (OwnLaunch ? "" : "launched asynchronously, ") + configuration(L) +
                  ") failed on " + describe();
      } else {
        Message = "a kernel failed on " + describe() +
                  ", one of the kernels launched since the last synchronisation: ";
        for (uint64_t I = First; I < Launches; ++I) {
          const RecordedLaunch &L = RecentLaunches[I % RecentLaunchCapacity];
          Message += (I == First ? "'" : ", '") + L.Kernel + "' (" + configuration(L) + ")";
        }
        if (First > SynchronisedLaunches)
          Message += ", and " + std::to_string(First - SynchronisedLaunches) +
                     " launched before them";
      }
      // 2. What: the call that observed it and the error; then the context
      // is unusable, for this process.
      Message += std::string(": reported by ") + Call + ": " + Driver.describeError(Result) +
                 UnusableContext;
      FaultMessage = std::move(Message);
      FaultCall = Call;
      FaultResult = Result;
      Faulted.store(true, std::memory_order_release);
    }
  }
  throwFault();
}

void CudaContext::throwFault() const {
  throw CudaDriverError(FaultMessage, FaultCall, FaultResult, Driver.errorName(FaultResult));
}

// --- context ---------------------------------------------------------------------

CudaContext::CudaContext(const CudaDriver &D, int DeviceOrdinal)
    : Driver(D), Device(D, DeviceOrdinal) {
  const CudaDriverApi &Api = Driver.api();
  Driver.check(Api.DevicePrimaryCtxRetain(&Context, Device.handle()), "cuDevicePrimaryCtxRetain",
               describe());
  try {
    makeCurrent();
  } catch (...) {
    Api.DevicePrimaryCtxRelease(Device.handle());
    throw;
  }
  CudaDriver::setStickyErrorHandler(reportStickyError);
  std::lock_guard<std::mutex> Guard(LiveContextsLock);
  liveContexts().push_back(this);
}

CudaContext::~CudaContext() {
  {
    std::lock_guard<std::mutex> Guard(LiveContextsLock);
    std::vector<const CudaContext *> &Contexts = liveContexts();
    Contexts.erase(std::find(Contexts.begin(), Contexts.end(), this));
  }
  // Errors ignored: a destructor cannot report them, and after a fault
  // every call fails.
  cu::Context Current = nullptr;
  if (Driver.api().CtxGetCurrent(&Current) == cu::Success && Current == Context)
    Driver.api().CtxSetCurrent(nullptr);
  Driver.api().DevicePrimaryCtxRelease(Device.handle());
}

namespace {
std::mutex ContextsLock;
// The process-wide contexts by ordinal (see forDevice).
std::vector<CudaContext *> &processContexts() {
  static std::vector<CudaContext *> *Contexts = new std::vector<CudaContext *>();
  return *Contexts;
}
} // namespace

CudaContext &CudaContext::forDevice(int Ordinal) {
  CudaDriver::requireNotForked(); // before ContextsLock, which a fork may leave held
  std::lock_guard<std::mutex> Guard(ContextsLock);
  const CudaDriver &Driver = CudaDriver::get();
  requireDeviceOrdinal(Driver, Ordinal);
  std::vector<CudaContext *> &Contexts = processContexts();
  if (Contexts.size() < static_cast<size_t>(Driver.deviceCount()))
    Contexts.resize(static_cast<size_t>(Driver.deviceCount()), nullptr);
  CudaContext *&Slot = Contexts[static_cast<size_t>(Ordinal)];
  if (!Slot)
    Slot = new CudaContext(Driver, Ordinal); // never destroyed (see above)
  return *Slot;
}

CudaContext *CudaContext::existing(int Ordinal) {
  std::lock_guard<std::mutex> Guard(ContextsLock);
  std::vector<CudaContext *> &Contexts = processContexts();
  return Ordinal >= 0 && static_cast<size_t>(Ordinal) < Contexts.size()
             ? Contexts[static_cast<size_t>(Ordinal)]
             : nullptr;
}

// The launch path (makeCurrent, launch, buffers) builds its error text only
// on failure: a successful launch allocates nothing (the launch record
// reuses its slots' buffers).
void CudaContext::makeCurrent() const {
  if (cu::Result Result = Driver.api().CtxSetCurrent(Context))
    Driver.fail(Result, "cuCtxSetCurrent", describe());
}

void CudaContext::synchronize() const {
  requireUsable();
  uint64_t Mark = launchesSoFar();
  check(Driver.api().CtxSynchronize(), "cuCtxSynchronize", describe());
  forgetLaunches(Mark);
}

void CudaContext::memoryInfo(size_t &Free, size_t &Total) const {
  requireUsable();
  ScopedCurrentContext Current(*this);
  check(Driver.api().MemGetInfo(&Free, &Total), "cuMemGetInfo", describe());
}

ScopedCurrentContext::ScopedCurrentContext(const CudaContext &Context) noexcept
    : Driver(Context.driver()) {
  const CudaDriverApi &Api = Driver.api();
  if (Api.CtxGetCurrent(&Previous) != cu::Success || Previous == Context.handle())
    return;
  Switched = Api.CtxSetCurrent(Context.handle()) == cu::Success;
}

ScopedCurrentContext::~ScopedCurrentContext() {
  if (Switched)
    Driver.api().CtxSetCurrent(Previous);
}

// --- the current device of each thread ---------------------------------------------

namespace {
// -1: none selected on this thread, which means device 0. Read at every
// launch: initial-exec, one load rather than a call of __tls_get_addr.
__attribute__((tls_model("initial-exec"))) thread_local int SelectedOrdinal = -1;
} // namespace

int currentDeviceOrdinal() { return SelectedOrdinal < 0 ? 0 : SelectedOrdinal; }

int selectedDeviceOrdinal() { return SelectedOrdinal; }

void selectDevice(int Ordinal) {
  CudaContext &Context = CudaContext::forDevice(Ordinal); // validates Ordinal
  Context.makeCurrent();
  SelectedOrdinal = Ordinal;
}

void deselectDevice() {
  SelectedOrdinal = -1;
  const CudaDriver &Driver = CudaDriver::get();
  if (Driver.usable())
    Driver.api().CtxSetCurrent(nullptr); // errors ignored: nothing depends on it
}

CudaContext &currentContext() {
  CudaContext &Context = CudaContext::forDevice(currentDeviceOrdinal());
  Context.makeCurrent();
  return Context;
}

// --- module ------------------------------------------------------------------------

namespace {
std::atomic<uint64_t> LiveCudaModules{0};
} // namespace

uint64_t liveCudaModuleCount() { return LiveCudaModules.load(std::memory_order_relaxed); }

CudaModule::CudaModule(CudaContext &Ctx, const std::string &PTX) : Context(Ctx) {
  Context.requireUsable();
  Context.makeCurrent();
  const CudaDriver &Driver = Context.driver();
  // The JIT writes its errors here; the size option is read back as the
  // length it wrote.
  char ErrorLog[8192] = {};
  int OptionIds[] = {cu::JitErrorLogBuffer, cu::JitErrorLogBufferSizeBytes};
  void *OptionValues[] = {ErrorLog, reinterpret_cast<void *>(sizeof ErrorLog - 1)};
  cu::Result Result = Driver.api().ModuleLoadDataEx(&Module, PTX.c_str(), 2, OptionIds,
                                                    OptionValues);
  if (Result != cu::Success) {
    Module = nullptr;
    std::string Log(ErrorLog);
    while (!Log.empty() && (Log.back() == '\n' || Log.back() == ' '))
      Log.pop_back();
    Context.fail(Result, "cuModuleLoadDataEx",
                 "the JIT rejected the PTX for " + Context.describe() +
                     (Log.empty() ? std::string(" (it wrote no log)") : ":\n" + Log));
  }
  LiveCudaModules.fetch_add(1, std::memory_order_relaxed);
}

namespace {

std::string trimmedLog(const char *Buffer) {
  std::string Log(Buffer);
  while (!Log.empty() && (Log.back() == '\n' || Log.back() == ' '))
    Log.pop_back();
  return Log.empty() ? std::string(" (it wrote no log)") : ":\n" + Log;
}

} // namespace

CudaModule::CudaModule(CudaContext &Ctx, const std::string &PTX, const std::string &PTXName,
                       const std::vector<CudaLinkInput> &Linked)
    : Context(Ctx) {
  Context.requireUsable();
  Context.makeCurrent();
  const CudaDriverApi &Api = Context.driver().api();
  // The linker writes its errors here for every later call of the link;
  // the options stay alive until cuLinkDestroy, as the driver requires.
  char ErrorLog[8192] = {};
  int OptionIds[] = {cu::JitErrorLogBuffer, cu::JitErrorLogBufferSizeBytes};
  void *OptionValues[] = {ErrorLog, reinterpret_cast<void *>(sizeof ErrorLog - 1)};
  cu::LinkState State = nullptr;
  Context.check(Api.LinkCreate(2, OptionIds, OptionValues, &State), "cuLinkCreate",
                Context.describe());
  struct Destroy {
    const CudaDriverApi &Api;
    cu::LinkState State;
    ~Destroy() { Api.LinkDestroy(State); } // errors ignored: nothing depends on it
  } Guard{Api, State};
  std::string Names = PTXName;
  auto add = [&](const std::string &Name, const std::string &Data, int Type) {
    // PTX's size counts the terminating NUL, as for a C string; a binary's
    // is its bytes.
    size_t Bytes = Type == cu::JitInputPtx ? Data.size() + 1 : Data.size();
    cu::Result Result = Api.LinkAddData(State, Type, const_cast<char *>(Data.c_str()), Bytes,
                                        Name.c_str(), 0, nullptr, nullptr);
    if (Result != cu::Success)
      Context.fail(Result, "cuLinkAddData",
                   "the JIT rejected " + Name + " for " + Context.describe() +
                       trimmedLog(ErrorLog));
  };
  add(PTXName, PTX, cu::JitInputPtx);
  for (const CudaLinkInput &Input : Linked) {
    add(Input.Name, Input.Data, Input.Type);
    Names += ", " + Input.Name;
  }
  void *Image = nullptr;
  size_t Bytes = 0;
  if (cu::Result Result = Api.LinkComplete(State, &Image, &Bytes))
    Context.fail(Result, "cuLinkComplete",
                 "linking " + Names + " for " + Context.describe() + trimmedLog(ErrorLog));
  // The image belongs to the link: loaded before cuLinkDestroy.
  if (cu::Result Result = Api.ModuleLoadData(&Module, Image)) {
    Module = nullptr;
    Context.fail(Result, "cuModuleLoadData",
                 "the image linked from " + Names + " for " + Context.describe());
  }
  LiveCudaModules.fetch_add(1, std::memory_order_relaxed);
}

CudaModule::~CudaModule() {
  if (!Module)
    return;
  // Launches are asynchronous: a kernel of the module may still run (its
  // dispatcher was dropped right after launching it). Unless the context has
  // synchronised since its last launch, wait for them first. Errors are
  // ignored, as ~CudaContext: a fault surfaces at the context's next call.
  if (Context.hasUnsynchronisedLaunches() && !Context.faulted() &&
      !CudaDriver::forkedAfterInit()) {
    ScopedCurrentContext Current(Context);
    uint64_t Mark = Context.launchesSoFar();
    if (Context.driver().api().CtxSynchronize() == cu::Success)
      Context.forgetLaunches(Mark);
  }
  Context.driver().api().ModuleUnload(Module);
  LiveCudaModules.fetch_sub(1, std::memory_order_relaxed);
}

CudaFunction CudaModule::function(const std::string &Name) const {
  cu::Function Function = nullptr;
  Context.check(Context.driver().api().ModuleGetFunction(&Function, Module, Name.c_str()),
                "cuModuleGetFunction", "kernel '" + Name + "'");
  return CudaFunction(Context, Function, Name);
}

std::pair<cu::DevicePointer, size_t> CudaModule::global(const std::string &Name) const {
  cu::DevicePointer Pointer = 0;
  size_t Bytes = 0;
  Context.check(Context.driver().api().ModuleGetGlobal(&Pointer, &Bytes, Module, Name.c_str()),
                "cuModuleGetGlobal", "global '" + Name + "'");
  return {Pointer, Bytes};
}

// --- function -----------------------------------------------------------------------

CudaFunction::CudaFunction(CudaContext &Ctx, cu::Function F, std::string KernelName)
    : Context(Ctx), Function(F), Name(std::move(KernelName)) {
  MaxThreadsPerBlock = attribute(cu::FunctionMaxThreadsPerBlock);
  StaticSharedBytes = attribute(cu::FunctionSharedSizeBytes);
  DynamicSharedLimit = attribute(cu::FunctionMaxDynamicSharedSizeBytes);
}

int CudaFunction::attribute(int Attribute) const {
  int Value = 0;
  Context.check(Context.driver().api().FuncGetAttribute(&Value, Attribute, Function),
                "cuFuncGetAttribute",
                "attribute " + std::to_string(Attribute) + " of kernel '" + Name + "'");
  return Value;
}

void CudaFunction::setAttribute(int Attribute, int Value) {
  Context.requireUsable();
  Context.makeCurrent();
  Context.check(Context.driver().api().FuncSetAttribute(Function, Attribute, Value),
                "cuFuncSetAttribute",
                "attribute " + std::to_string(Attribute) + " of kernel '" + Name + "' to " +
                    std::to_string(Value));
}

int CudaFunction::potentialBlockSize(size_t SharedBytes) const {
  Context.requireUsable();
  Context.makeCurrent();
  int MinGridSize = 0, BlockSize = 0;
  Context.driver().check(Context.driver().api().OccupancyMaxPotentialBlockSize(
                             &MinGridSize, &BlockSize, Function, nullptr, SharedBytes,
                             MaxThreadsPerBlock),
                         "cuOccupancyMaxPotentialBlockSize",
                         "kernel '" + Name + "' with " + std::to_string(SharedBytes) +
                             " bytes of dynamic shared memory");
  return BlockSize;
}

void CudaFunction::checkLaunch(Dim3 Grid, Dim3 Block, size_t SharedBytes) {
  const CudaDeviceLimits &Limits = Context.limits();
  auto fail = [&](const std::string &What) {
    throw LaunchConfigError("cannot launch kernel '" + Name + "' on " + Context.describe() +
                            ": " + What);
  };
  static const char Axes[] = "xyz";
  for (int Axis = 0; Axis < 3; ++Axis) {
    if (Block[Axis] > Limits.MaxBlockDim[Axis])
      fail("blockdim " + dimsText(Block) + " is " + std::to_string(Block[Axis]) + " along " +
           Axes[Axis] + ", the device allows at most " + std::to_string(Limits.MaxBlockDim[Axis]));
    if (Grid[Axis] > Limits.MaxGridDim[Axis])
      fail("griddim " + dimsText(Grid) + " is " + std::to_string(Grid[Axis]) + " along " +
           Axes[Axis] + ", the device allows at most " + std::to_string(Limits.MaxGridDim[Axis]));
  }
  uint64_t Threads = uint64_t(Block[0]) * Block[1] * Block[2];
  if (Threads > static_cast<uint64_t>(Limits.MaxThreadsPerBlock))
    fail("blockdim " + dimsText(Block) + " has " + std::to_string(Threads) +
         " threads, the device allows at most " + std::to_string(Limits.MaxThreadsPerBlock) +
         " per block");
  if (Threads > static_cast<uint64_t>(MaxThreadsPerBlock))
    fail("blockdim " + dimsText(Block) + " has " + std::to_string(Threads) +
         " threads, the compiled kernel can run at most " + std::to_string(MaxThreadsPerBlock) +
         " per block (its registers per thread or launch_bounds limit it; the driver's "
         "launch fails with CUDA_ERROR_INVALID_VALUE)");
  if (SharedBytes > static_cast<size_t>(DynamicSharedLimit)) {
    // Above 48 KB a kernel must opt in, up to the device's opt-in limit
    // less its static shared memory (the check the cpu target makes too).
    checkDynamicSharedMemory(Name, Context.describe(), static_cast<uint64_t>(StaticSharedBytes),
                             SharedBytes,
                             static_cast<uint64_t>(std::max(0, Limits.MaxSharedPerBlockOptin)));
    Context.check(Context.driver().api().FuncSetAttribute(
                      Function, cu::FunctionMaxDynamicSharedSizeBytes,
                      static_cast<int>(SharedBytes)),
                  "cuFuncSetAttribute",
                  "raising the dynamic shared memory of kernel '" + Name + "' to " +
                      std::to_string(SharedBytes) + " bytes");
    DynamicSharedLimit = static_cast<int>(SharedBytes);
  }
}

int CudaFunction::maxCooperativeBlocks(unsigned Threads, size_t SharedBytes) const {
  Context.requireUsable();
  Context.makeCurrent();
  int PerMultiprocessor = 0;
  Context.driver().check(Context.driver().api().OccupancyMaxActiveBlocksPerMultiprocessor(
                             &PerMultiprocessor, Function, static_cast<int>(Threads),
                             SharedBytes),
                         "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                         "kernel '" + Name + "' with blocks of " + std::to_string(Threads) +
                             " threads and " + std::to_string(SharedBytes) +
                             " bytes of dynamic shared memory");
  return PerMultiprocessor * Context.device().multiprocessorCount();
}

void CudaFunction::launch(Dim3 Grid, Dim3 Block, size_t SharedBytes, cu::Stream Stream,
                          void **Params, bool Cooperative) {
  Context.requireUsable();
  checkLaunch(Grid, Block, SharedBytes);
  const CudaDriverApi &Api = Context.driver().api();
  cu::Result Result =
      Cooperative
          ? Api.LaunchCooperativeKernel(Function, Grid[0], Grid[1], Grid[2], Block[0], Block[1],
                                        Block[2], static_cast<unsigned>(SharedBytes), Stream,
                                        Params)
          : Api.LaunchKernel(Function, Grid[0], Grid[1], Grid[2], Block[0], Block[1], Block[2],
                             static_cast<unsigned>(SharedBytes), Stream, Params, nullptr);
  if (Result)
    Context.fail(Result, Cooperative ? "cuLaunchCooperativeKernel" : "cuLaunchKernel",
                 "kernel '" + Name + "', griddim " + dimsText(Grid) + ", blockdim " +
                     dimsText(Block));
  Context.noteLaunch(Name, Grid, Block, Stream);
}

void CudaFunction::synchronize() const {
  Context.requireUsable();
  uint64_t Mark = Context.launchesSoFar();
  cu::Result Result = Context.driver().api().CtxSynchronize();
  if (Result == cu::Success) {
    Context.forgetLaunches(Mark);
    return;
  }
  if (CudaDriver::isStickyError(Result))
    Context.reportFault(Result, "cuCtxSynchronize", /*OwnLaunch=*/true);
  Context.driver().fail(Result, "cuCtxSynchronize", "after kernel '" + Name + "'");
}

// --- memory -------------------------------------------------------------------------

CudaDeviceBuffer::CudaDeviceBuffer(const CudaDriver &D, size_t Count) : Driver(&D), Bytes(Count) {
  if (Bytes)
    if (cu::Result Result = Driver->api().MemAlloc(&Pointer, Bytes))
      Driver->fail(Result, "cuMemAlloc", std::to_string(Bytes) + " bytes");
}

CudaDeviceBuffer &CudaDeviceBuffer::operator=(CudaDeviceBuffer &&Other) noexcept {
  if (this != &Other) {
    reset();
    Driver = Other.Driver;
    Pointer = Other.Pointer;
    Bytes = Other.Bytes;
    Other.Pointer = 0;
    Other.Bytes = 0;
  }
  return *this;
}

void CudaDeviceBuffer::reset() {
  if (Pointer)
    Driver->api().MemFree(Pointer);
  Pointer = 0;
  Bytes = 0;
}

void CudaDeviceBuffer::copyFromHost(const void *Source, size_t Count) const {
  if (Count > Bytes)
    throw RuntimeError("internal error: copying " + std::to_string(Count) + " bytes into a " +
                       std::to_string(Bytes) + "-byte device buffer");
  if (Count)
    if (cu::Result Result = Driver->api().MemcpyHtoD(Pointer, Source, Count))
      Driver->fail(Result, "cuMemcpyHtoD", std::to_string(Count) + " bytes");
}

void CudaDeviceBuffer::copyToHost(void *Destination, size_t Count) const {
  if (Count > Bytes)
    throw RuntimeError("internal error: copying " + std::to_string(Count) + " bytes out of a " +
                       std::to_string(Bytes) + "-byte device buffer");
  if (Count)
    if (cu::Result Result = Driver->api().MemcpyDtoH(Destination, Pointer, Count))
      Driver->fail(Result, "cuMemcpyDtoH", std::to_string(Count) + " bytes");
}

} // namespace tidal::runtime
