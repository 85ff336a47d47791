// Opens libcuda with dlopen, resolves the entry points the runtime needs
// (cuGetProcAddress where the driver has it, dlsym otherwise) and records, in
// one line, why the driver cannot be used when it cannot.
#include "tidal/runtime/CudaDriver.h"

#include <atomic>
#include <cstdlib>
#include <string>
#include <type_traits>

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

namespace tidal::runtime {

namespace {

// Fork detection (CudaDriver::forkedAfterInit): the process that first
// initialised a driver, and whether this process is a child forked after it.
std::atomic<pid_t> InitialisedInProcess{0};
std::atomic<bool> ForkedAfterInit{false};

void markForkedChild() { ForkedAfterInit.store(true, std::memory_order_relaxed); }

void watchForForks() {
  pid_t Expected = 0;
  if (InitialisedInProcess.compare_exchange_strong(Expected, getpid()))
    pthread_atfork(nullptr, nullptr, markForkedChild);
}

constexpr const char *DefaultDriverLibrary = "libcuda.so.1";

// The results cuInit and cuDeviceGetCount can give, for drivers that cannot
// name them (the toolkit's stub cannot name any).
struct KnownError {
  int Result;
  const char *Name;
  const char *Description;
};
constexpr KnownError KnownErrors[] = {
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY",
     "CUDA driver is a stub library, not a real driver"},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
     "API call requires a newer CUDA driver"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE",
     "CUDA-capable device(s) busy or unavailable"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {205, "CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {218, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "too many blocks in cooperative launch"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM",
     "OS call failed or operation not supported on this OS"},
    {800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "forward compatibility was attempted on non supported HW"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

// cuGetProcAddress of CUDA 12 (exported as cuGetProcAddress_v2).
using CuGetProcAddressFunction = int (*)(const char *Symbol, void **Function,
                                         int CudaVersion, uint64_t Flags,
                                         int *SymbolStatus);

std::string lastLoaderError() {
  const char *Message = dlerror();
  return Message ? Message : "unknown dynamic loader error";
}

} // namespace

void CudaDriver::LibraryCloser::operator()(void *Handle) const {
  dlclose(Handle);
}

CudaDriver &CudaDriver::get() {
  // Never destroyed: code that runs at exit may still call the driver.
  static CudaDriver *const Driver = [] {
    // TIDAL_CUDA_DRIVER, else Numba's NUMBA_CUDA_DRIVER (programs written
    // for Numba set it), else the system's library.
    const char *Override = std::getenv("TIDAL_CUDA_DRIVER");
    if (!Override || !*Override)
      Override = std::getenv("NUMBA_CUDA_DRIVER");
    return new CudaDriver(Override && *Override ? Override
                                                : DefaultDriverLibrary);
  }();
  return *Driver;
}

CudaDriver CudaDriver::open(const std::string &LibraryPath) {
  return CudaDriver(LibraryPath);
}

CudaDriver::CudaDriver(std::string Path) : LibraryPath(std::move(Path)) {
  if (LibraryPath == "0") { // as Numba's NUMBA_CUDA_DRIVER=0: no driver
    Reason = "the CUDA driver is switched off (TIDAL_CUDA_DRIVER or "
             "NUMBA_CUDA_DRIVER is 0)";
    return;
  }
  dlerror(); // clear a stale message
  Library.reset(dlopen(LibraryPath.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!Library) {
    Reason = "cannot open " + LibraryPath + ": " + lastLoaderError();
    return;
  }

  auto resolve = [this](const char *Name, auto &Entry) {
    dlerror();
    Entry = reinterpret_cast<std::remove_reference_t<decltype(Entry)>>(
        dlsym(Library.get(), Name));
    if (!Entry && Reason.empty())
      Reason = LibraryPath + " has no " + Name + ": " + lastLoaderError();
  };
  resolve("cuInit", CuInit);
  resolve("cuDeviceGetCount", CuDeviceGetCount);
  resolve("cuGetErrorName", CuGetErrorName);
  resolve("cuGetErrorString", CuGetErrorString);
  if (!Reason.empty())
    return;

  if (int Result = CuInit(0)) {
    Reason =
        "cuInit failed: " + describeError(Result) + " [" + LibraryPath + "]";
    return;
  }
  watchForForks();
  int Count = 0;
  if (int Result = CuDeviceGetCount(&Count)) {
    Reason = "cuDeviceGetCount failed: " + describeError(Result) + " [" +
             LibraryPath + "]";
    return;
  }
  DeviceCount = Count;
  if (DeviceCount < 1) {
    Reason = "no CUDA device [" + LibraryPath + "]";
    return;
  }
  resolveEntryPoints();
  Usable = Reason.empty();
}

void CudaDriver::resolveEntryPoints() {
  // Each entry point by its base name (for cuGetProcAddress, which picks the
  // version matching cu::ApiVersion) and by its exported, versioned name.
  struct EntryPoint {
    const char *BaseName;
    const char *ExportedName;
    void **Slot;
  };
  auto slot = [](auto &Function) { return reinterpret_cast<void **>(&Function); };
  const EntryPoint EntryPoints[] = {
      {"cuDriverGetVersion", "cuDriverGetVersion", slot(Api.DriverGetVersion)},
      {"cuDeviceGet", "cuDeviceGet", slot(Api.DeviceGet)},
      {"cuDeviceGetName", "cuDeviceGetName", slot(Api.DeviceGetName)},
      {"cuDeviceGetAttribute", "cuDeviceGetAttribute", slot(Api.DeviceGetAttribute)},
      {"cuDeviceTotalMem", "cuDeviceTotalMem_v2", slot(Api.DeviceTotalMem)},
      {"cuDeviceGetUuid", "cuDeviceGetUuid_v2", slot(Api.DeviceGetUuid)},
      {"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain",
       slot(Api.DevicePrimaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2",
       slot(Api.DevicePrimaryCtxRelease)},
      {"cuCtxSetCurrent", "cuCtxSetCurrent", slot(Api.CtxSetCurrent)},
      {"cuCtxGetCurrent", "cuCtxGetCurrent", slot(Api.CtxGetCurrent)},
      {"cuCtxSynchronize", "cuCtxSynchronize", slot(Api.CtxSynchronize)},
      {"cuProfilerStart", "cuProfilerStart", slot(Api.ProfilerStart)},
      {"cuProfilerStop", "cuProfilerStop", slot(Api.ProfilerStop)},
      {"cuModuleLoadDataEx", "cuModuleLoadDataEx", slot(Api.ModuleLoadDataEx)},
      {"cuModuleLoadData", "cuModuleLoadData", slot(Api.ModuleLoadData)},
      {"cuModuleUnload", "cuModuleUnload", slot(Api.ModuleUnload)},
      {"cuLinkCreate", "cuLinkCreate_v2", slot(Api.LinkCreate)},
      {"cuLinkAddData", "cuLinkAddData_v2", slot(Api.LinkAddData)},
      {"cuLinkComplete", "cuLinkComplete", slot(Api.LinkComplete)},
      {"cuLinkDestroy", "cuLinkDestroy", slot(Api.LinkDestroy)},
      {"cuModuleGetFunction", "cuModuleGetFunction", slot(Api.ModuleGetFunction)},
      {"cuModuleGetGlobal", "cuModuleGetGlobal_v2", slot(Api.ModuleGetGlobal)},
      {"cuFuncGetAttribute", "cuFuncGetAttribute", slot(Api.FuncGetAttribute)},
      {"cuFuncSetAttribute", "cuFuncSetAttribute", slot(Api.FuncSetAttribute)},
      {"cuMemAlloc", "cuMemAlloc_v2", slot(Api.MemAlloc)},
      {"cuMemFree", "cuMemFree_v2", slot(Api.MemFree)},
      {"cuMemcpyHtoD", "cuMemcpyHtoD_v2", slot(Api.MemcpyHtoD)},
      {"cuMemcpyDtoH", "cuMemcpyDtoH_v2", slot(Api.MemcpyDtoH)},
      {"cuLaunchKernel", "cuLaunchKernel", slot(Api.LaunchKernel)},
      {"cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel",
       slot(Api.LaunchCooperativeKernel)},
      {"cuStreamCreate", "cuStreamCreate", slot(Api.StreamCreate)},
      {"cuStreamDestroy", "cuStreamDestroy_v2", slot(Api.StreamDestroy)},
      {"cuStreamSynchronize", "cuStreamSynchronize", slot(Api.StreamSynchronize)},
      {"cuStreamWaitEvent", "cuStreamWaitEvent", slot(Api.StreamWaitEvent)},
      {"cuEventCreate", "cuEventCreate", slot(Api.EventCreate)},
      {"cuEventRecord", "cuEventRecord", slot(Api.EventRecord)},
      {"cuEventQuery", "cuEventQuery", slot(Api.EventQuery)},
      {"cuEventSynchronize", "cuEventSynchronize", slot(Api.EventSynchronize)},
      {"cuEventElapsedTime", "cuEventElapsedTime", slot(Api.EventElapsedTime)},
      {"cuEventDestroy", "cuEventDestroy_v2", slot(Api.EventDestroy)},
      {"cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2", slot(Api.MemcpyHtoDAsync)},
      {"cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2", slot(Api.MemcpyDtoHAsync)},
      {"cuMemcpyDtoD", "cuMemcpyDtoD_v2", slot(Api.MemcpyDtoD)},
      {"cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2", slot(Api.MemcpyDtoDAsync)},
      {"cuMemGetInfo", "cuMemGetInfo_v2", slot(Api.MemGetInfo)},
      // Host memory: page-locked, mapped and managed (issue 5).
      {"cuMemHostAlloc", "cuMemHostAlloc", slot(Api.MemHostAlloc)},
      {"cuMemFreeHost", "cuMemFreeHost", slot(Api.MemFreeHost)},
      {"cuMemHostGetDevicePointer", "cuMemHostGetDevicePointer_v2",
       slot(Api.MemHostGetDevicePointer)},
      {"cuMemHostRegister", "cuMemHostRegister_v2", slot(Api.MemHostRegister)},
      {"cuMemHostUnregister", "cuMemHostUnregister", slot(Api.MemHostUnregister)},
      {"cuMemAllocManaged", "cuMemAllocManaged", slot(Api.MemAllocManaged)},
      {"cuOccupancyMaxPotentialBlockSize", "cuOccupancyMaxPotentialBlockSize",
       slot(Api.OccupancyMaxPotentialBlockSize)},
      {"cuOccupancyMaxActiveBlocksPerMultiprocessor",
       "cuOccupancyMaxActiveBlocksPerMultiprocessor",
       slot(Api.OccupancyMaxActiveBlocksPerMultiprocessor)},
      // CUDA IPC (issue 13).
      {"cuIpcGetMemHandle", "cuIpcGetMemHandle", slot(Api.IpcGetMemHandle)},
      {"cuIpcOpenMemHandle", "cuIpcOpenMemHandle_v2", slot(Api.IpcOpenMemHandle)},
      {"cuIpcCloseMemHandle", "cuIpcCloseMemHandle", slot(Api.IpcCloseMemHandle)},
      {"cuMemGetAddressRange", "cuMemGetAddressRange_v2", slot(Api.MemGetAddressRange)},
  };

  auto GetProcAddress = reinterpret_cast<CuGetProcAddressFunction>(
      dlsym(Library.get(), "cuGetProcAddress_v2"));
  UsedProcAddress = GetProcAddress != nullptr;
  for (const EntryPoint &Entry : EntryPoints) {
    *Entry.Slot = nullptr;
    if (GetProcAddress) {
      int Status = -1;
      if (GetProcAddress(Entry.BaseName, Entry.Slot, cu::ApiVersion, 0, &Status) !=
              cu::Success ||
          Status != 0)
        *Entry.Slot = nullptr;
    }
    if (!*Entry.Slot) {
      UsedProcAddress = false;
      dlerror();
      *Entry.Slot = dlsym(Library.get(), Entry.ExportedName);
    }
    if (!*Entry.Slot && Reason.empty())
      Reason = LibraryPath + " has no " + Entry.ExportedName + ": " + lastLoaderError();
  }
}

std::string CudaDriver::errorName(int Result) const {
  const char *Name = nullptr;
  if (CuGetErrorName && CuGetErrorName(Result, &Name) == 0 && Name)
    return Name;
  for (const KnownError &Known : KnownErrors)
    if (Known.Result == Result)
      return Known.Name;
  return "CUDA error " + std::to_string(Result);
}

namespace {
std::atomic<CudaDriver::StickyErrorHandler> InstalledStickyErrorHandler{nullptr};
} // namespace

bool CudaDriver::isStickyError(int Result) {
  switch (Result) {
  case 700: // CUDA_ERROR_ILLEGAL_ADDRESS
  case 702: // CUDA_ERROR_LAUNCH_TIMEOUT
  case 710: // CUDA_ERROR_ASSERT
  case 714: // CUDA_ERROR_HARDWARE_STACK_ERROR
  case 715: // CUDA_ERROR_ILLEGAL_INSTRUCTION
  case 716: // CUDA_ERROR_MISALIGNED_ADDRESS
  case 717: // CUDA_ERROR_INVALID_ADDRESS_SPACE
  case 718: // CUDA_ERROR_INVALID_PC
  case 719: // CUDA_ERROR_LAUNCH_FAILED
  case 721: // CUDA_ERROR_TENSOR_MEMORY_LEAK
    return true;
  default:
    return false;
  }
}

void CudaDriver::setStickyErrorHandler(StickyErrorHandler Handler) {
  InstalledStickyErrorHandler.store(Handler, std::memory_order_release);
}

void CudaDriver::fail(cu::Result Result, const char *Call,
                      const std::string &Context) const {
  // Every checked call of the runtime and of the binding ends here, so a
  // kernel fault is reported the same way whichever call observes it.
  if (isStickyError(Result))
    if (StickyErrorHandler Handler = InstalledStickyErrorHandler.load(std::memory_order_acquire))
      Handler(*this, Result, Call);
  std::string Message = std::string(Call) + " failed: " + describeError(Result);
  if (!Context.empty())
    Message += ": " + Context;
  throw CudaDriverError(Message, Call, Result, errorName(Result));
}

void CudaDriver::requireUsable() const {
  if (!Usable)
    throw CudaSupportError("the CUDA driver is not usable: " + Reason);
  requireNotForked();
}

bool CudaDriver::forkedAfterInit() { return ForkedAfterInit.load(std::memory_order_relaxed); }

void CudaDriver::requireNotForked() {
  if (!forkedAfterInit())
    return;
  constexpr int NotInitialized = 3; // CUDA_ERROR_NOT_INITIALIZED
  throw CudaDriverError(
      "CUDA initialized before forking: this process (pid " + std::to_string(getpid()) +
          ") was forked from process " + std::to_string(InitialisedInProcess.load()) +
          " after that process initialised the CUDA driver, and a forked child cannot use "
          "CUDA; start child processes with multiprocessing's 'spawn' or 'forkserver' "
          "method (or fork before the first CUDA call)",
      "fork", NotInitialized, "CUDA_ERROR_NOT_INITIALIZED");
}

std::string CudaDriver::describeError(int Result) const {
  const char *Name = nullptr;
  const char *Description = nullptr;
  if (CuGetErrorName && CuGetErrorName(Result, &Name) == 0 && Name) {
    std::string Text = Name;
    if (CuGetErrorString && CuGetErrorString(Result, &Description) == 0 &&
        Description)
      Text += std::string(" (") + Description + ")";
    return Text;
  }
  for (const KnownError &Known : KnownErrors)
    if (Known.Result == Result)
      return std::string(Known.Name) + " (" + Known.Description + ")";
  return "CUDA error " + std::to_string(Result);
}

} // namespace tidal::runtime
