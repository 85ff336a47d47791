// The CUDA driver, opened with dlopen so that nothing needs a GPU or the
// CUDA toolkit to build or start. TIDAL_CUDA_DRIVER overrides the library.
// The entry points are resolved with cuGetProcAddress (CUDA 12's, exported
// as cuGetProcAddress_v2) where the driver has it, else with dlsym.
#ifndef TIDAL_RUNTIME_CUDADRIVER_H
#define TIDAL_RUNTIME_CUDADRIVER_H

#include "tidal/runtime/CpuTarget.h" // RuntimeError

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tidal::runtime {

// The few types of cuda.h the runtime needs, declared here so that the
// toolkit stays optional (values checked against CUDA 13's cuda.h).
namespace cu {
using Result = int; // CUresult
using Device = int; // CUdevice
using Context = struct CUctx_st *;
using Module = struct CUmod_st *;
using Function = struct CUfunc_st *;
using Stream = struct CUstream_st *;
using Event = struct CUevent_st *;
using LinkState = struct CUlinkState_st *;
using DevicePointer = unsigned long long; // CUdeviceptr (v2)
struct Uuid { // CUuuid
  unsigned char Bytes[16];
};

constexpr Result Success = 0;
constexpr Result ErrorInvalidValue = 1;
constexpr Result ErrorOutOfMemory = 2;
constexpr Result ErrorNotReady = 600;
constexpr Result ErrorNotSupported = 801;

// cuStreamCreate / cuEventCreate flags
constexpr unsigned StreamNonBlocking = 1;
constexpr unsigned EventDisableTiming = 2;

// CUjit_option
constexpr int JitInfoLogBuffer = 3;
constexpr int JitInfoLogBufferSizeBytes = 4;
constexpr int JitErrorLogBuffer = 5;
constexpr int JitErrorLogBufferSizeBytes = 6;
constexpr int JitLogVerbose = 12;

// CUjitInputType (cuLinkAddData)
constexpr int JitInputCubin = 0;
constexpr int JitInputPtx = 1;
constexpr int JitInputFatbinary = 2;
constexpr int JitInputObject = 3;
constexpr int JitInputLibrary = 4;

// CUdevice_attribute
constexpr int AttributeMaxThreadsPerBlock = 1;
constexpr int AttributeMaxBlockDimX = 2; // Y = 3, Z = 4
constexpr int AttributeMaxGridDimX = 5;  // Y = 6, Z = 7
constexpr int AttributeMaxSharedMemoryPerBlock = 8;
constexpr int AttributeWarpSize = 10;
constexpr int AttributeMultiprocessorCount = 16;
constexpr int AttributeComputeCapabilityMajor = 75;
constexpr int AttributeComputeCapabilityMinor = 76;
constexpr int AttributeMaxSharedMemoryPerBlockOptin = 97;

// CUfunction_attribute
constexpr int FunctionMaxThreadsPerBlock = 0;
constexpr int FunctionSharedSizeBytes = 1;
constexpr int FunctionConstSizeBytes = 2;
constexpr int FunctionLocalSizeBytes = 3;
constexpr int FunctionNumRegs = 4;
constexpr int FunctionMaxDynamicSharedSizeBytes = 8;
constexpr int FunctionPreferredSharedMemoryCarveout = 9;

// The version whose signatures the declarations below follow, asked of
// cuGetProcAddress.
constexpr int ApiVersion = 12000;

// Host memory: page-locked, mapped and managed (issue 5).
constexpr unsigned HostAllocPortable = 0x1;      // CU_MEMHOSTALLOC_PORTABLE
constexpr unsigned HostAllocDeviceMap = 0x2;     // CU_MEMHOSTALLOC_DEVICEMAP
constexpr unsigned HostAllocWriteCombined = 0x4; // CU_MEMHOSTALLOC_WRITECOMBINED
constexpr unsigned HostRegisterDeviceMap = 0x2;  // CU_MEMHOSTREGISTER_DEVICEMAP
constexpr unsigned MemAttachGlobal = 0x1;        // CU_MEM_ATTACH_GLOBAL
constexpr unsigned MemAttachHost = 0x2;          // CU_MEM_ATTACH_HOST

// CUDA IPC: device memory shared with other processes (issue 13).
constexpr size_t IpcHandleBytes = 64; // CU_IPC_HANDLE_SIZE
struct IpcMemHandle {                 // CUipcMemHandle
  char Reserved[IpcHandleBytes];
};
constexpr unsigned IpcMemLazyEnablePeerAccess = 0x1; // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
} // namespace cu

// A failed driver call: what() is "<call> failed: <NAME> (<description>)"
// plus any context the caller adds (the kernel, the JIT's log).
// No usable CUDA driver (none found, or it failed to load or initialise):
// tidal.cuda.CudaSupportError, Numba's class for it.
class CudaSupportError : public RuntimeError {
public:
  using RuntimeError::RuntimeError;
};

class CudaDriverError : public RuntimeError {
public:
  CudaDriverError(const std::string &Message, std::string Call, int Result,
                  std::string ErrorName)
      : RuntimeError(Message), CallName(std::move(Call)), ResultCode(Result),
        Name(std::move(ErrorName)) {}
  const std::string &call() const { return CallName; }
  int result() const { return ResultCode; }
  const std::string &errorName() const { return Name; }

private:
  std::string CallName;
  int ResultCode;
  std::string Name;
};

// The driver's entry points, as cuda.h (12.0) declares them.
struct CudaDriverApi {
  cu::Result (*DriverGetVersion)(int *Version) = nullptr;
  cu::Result (*DeviceGet)(cu::Device *Device, int Ordinal) = nullptr;
  cu::Result (*DeviceGetName)(char *Name, int Length, cu::Device Device) = nullptr;
  cu::Result (*DeviceGetAttribute)(int *Value, int Attribute, cu::Device Device) = nullptr;
  cu::Result (*DeviceTotalMem)(size_t *Bytes, cu::Device Device) = nullptr;
  cu::Result (*DeviceGetUuid)(cu::Uuid *Uuid, cu::Device Device) = nullptr;
  cu::Result (*DevicePrimaryCtxRetain)(cu::Context *Context, cu::Device Device) = nullptr;
  cu::Result (*DevicePrimaryCtxRelease)(cu::Device Device) = nullptr;
  cu::Result (*CtxSetCurrent)(cu::Context Context) = nullptr;
  cu::Result (*CtxGetCurrent)(cu::Context *Context) = nullptr;
  cu::Result (*CtxSynchronize)() = nullptr;
  // The profiler's collection, for the current context (cuda.profile_start).
  cu::Result (*ProfilerStart)() = nullptr;
  cu::Result (*ProfilerStop)() = nullptr;
  cu::Result (*ModuleLoadDataEx)(cu::Module *Module, const void *Image, unsigned Options,
                                 int *OptionIds, void **OptionValues) = nullptr;
  // A module from a linked image (cuLinkComplete's cubin).
  cu::Result (*ModuleLoadData)(cu::Module *Module, const void *Image) = nullptr;
  cu::Result (*ModuleUnload)(cu::Module Module) = nullptr;
  // The JIT linker: PTX of a kernel and of the .ptx files it links
  // (cuda.jit(link=[...])) into one image (exported as cuLinkCreate_v2,
  // cuLinkAddData_v2).
  cu::Result (*LinkCreate)(unsigned Options, int *OptionIds, void **OptionValues,
                           cu::LinkState *State) = nullptr;
  cu::Result (*LinkAddData)(cu::LinkState State, int Type, void *Data, size_t Bytes,
                            const char *Name, unsigned Options, int *OptionIds,
                            void **OptionValues) = nullptr;
  cu::Result (*LinkComplete)(cu::LinkState State, void **Image, size_t *Bytes) = nullptr;
  cu::Result (*LinkDestroy)(cu::LinkState State) = nullptr;
  cu::Result (*ModuleGetFunction)(cu::Function *Function, cu::Module Module,
                                  const char *Name) = nullptr;
  // A module's global by name (exported as cuModuleGetGlobal_v2): the
  // exception slot of a kernel that can raise (tidal/Contract.h).
  cu::Result (*ModuleGetGlobal)(cu::DevicePointer *Pointer, size_t *Bytes, cu::Module Module,
                                const char *Name) = nullptr;
  cu::Result (*FuncGetAttribute)(int *Value, int Attribute, cu::Function Function) = nullptr;
  cu::Result (*FuncSetAttribute)(cu::Function Function, int Attribute, int Value) = nullptr;
  cu::Result (*MemAlloc)(cu::DevicePointer *Pointer, size_t Bytes) = nullptr;
  cu::Result (*MemFree)(cu::DevicePointer Pointer) = nullptr;
  cu::Result (*MemcpyHtoD)(cu::DevicePointer Destination, const void *Source,
                           size_t Bytes) = nullptr;
  cu::Result (*MemcpyDtoH)(void *Destination, cu::DevicePointer Source, size_t Bytes) = nullptr;
  cu::Result (*LaunchKernel)(cu::Function Function, unsigned GridX, unsigned GridY,
                             unsigned GridZ, unsigned BlockX, unsigned BlockY, unsigned BlockZ,
                             unsigned SharedBytes, cu::Stream Stream, void **Params,
                             void **Extra) = nullptr;
  // Kernels that use cuda.cg.this_grid(): every block resident at once.
  cu::Result (*LaunchCooperativeKernel)(cu::Function Function, unsigned GridX, unsigned GridY,
                                        unsigned GridZ, unsigned BlockX, unsigned BlockY,
                                        unsigned BlockZ, unsigned SharedBytes, cu::Stream Stream,
                                        void **Params) = nullptr;
  // Streams, events and asynchronous copies (issue 5).
  cu::Result (*StreamCreate)(cu::Stream *Stream, unsigned Flags) = nullptr;
  cu::Result (*StreamDestroy)(cu::Stream Stream) = nullptr;
  cu::Result (*StreamSynchronize)(cu::Stream Stream) = nullptr;
  cu::Result (*StreamWaitEvent)(cu::Stream Stream, cu::Event Event, unsigned Flags) = nullptr;
  cu::Result (*EventCreate)(cu::Event *Event, unsigned Flags) = nullptr;
  cu::Result (*EventRecord)(cu::Event Event, cu::Stream Stream) = nullptr;
  cu::Result (*EventQuery)(cu::Event Event) = nullptr;
  cu::Result (*EventSynchronize)(cu::Event Event) = nullptr;
  cu::Result (*EventElapsedTime)(float *Milliseconds, cu::Event Start, cu::Event End) = nullptr;
  cu::Result (*EventDestroy)(cu::Event Event) = nullptr;
  cu::Result (*MemcpyHtoDAsync)(cu::DevicePointer Destination, const void *Source, size_t Bytes,
                                cu::Stream Stream) = nullptr;
  cu::Result (*MemcpyDtoHAsync)(void *Destination, cu::DevicePointer Source, size_t Bytes,
                                cu::Stream Stream) = nullptr;
  cu::Result (*MemcpyDtoD)(cu::DevicePointer Destination, cu::DevicePointer Source,
                           size_t Bytes) = nullptr;
  cu::Result (*MemcpyDtoDAsync)(cu::DevicePointer Destination, cu::DevicePointer Source,
                                size_t Bytes, cu::Stream Stream) = nullptr;
  cu::Result (*MemGetInfo)(size_t *Free, size_t *Total) = nullptr;
  // Host memory: page-locked, mapped and managed (issue 5).
  cu::Result (*MemHostAlloc)(void **Host, size_t Bytes, unsigned Flags) = nullptr;
  cu::Result (*MemFreeHost)(void *Host) = nullptr;
  cu::Result (*MemHostGetDevicePointer)(cu::DevicePointer *Pointer, void *Host,
                                        unsigned Flags) = nullptr;
  cu::Result (*MemHostRegister)(void *Host, size_t Bytes, unsigned Flags) = nullptr;
  cu::Result (*MemHostUnregister)(void *Host) = nullptr;
  cu::Result (*MemAllocManaged)(cu::DevicePointer *Pointer, size_t Bytes,
                                unsigned Flags) = nullptr;
  // kernel.max_cooperative_grid_blocks: resident blocks per SM.
  cu::Result (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *Blocks, cu::Function Function,
                                                          int BlockSize,
                                                          size_t DynamicSMemSize) = nullptr;
  // kernel.forall's block size.
  cu::Result (*OccupancyMaxPotentialBlockSize)(int *MinGridSize, int *BlockSize,
                                               cu::Function Function,
                                               void *BlockSizeToDynamicSMemSize,
                                               size_t DynamicSMemSize,
                                               int BlockSizeLimit) = nullptr;
  // CUDA IPC (issue 13): a driver allocation exported by one process and
  // mapped by another. cuIpcOpenMemHandle takes the 64-byte handle by value
  // (exported as cuIpcOpenMemHandle_v2, cuMemGetAddressRange_v2).
  cu::Result (*IpcGetMemHandle)(cu::IpcMemHandle *Handle, cu::DevicePointer Pointer) = nullptr;
  cu::Result (*IpcOpenMemHandle)(cu::DevicePointer *Pointer, cu::IpcMemHandle Handle,
                                 unsigned Flags) = nullptr;
  cu::Result (*IpcCloseMemHandle)(cu::DevicePointer Pointer) = nullptr;
  cu::Result (*MemGetAddressRange)(cu::DevicePointer *Base, size_t *Bytes,
                                   cu::DevicePointer Pointer) = nullptr;
};

class CudaDriver {
public:
  // The process-wide driver; opened and cuInit'ed on first use, from
  // TIDAL_CUDA_DRIVER when set, else NUMBA_CUDA_DRIVER, else libcuda.so.1
  // ("0" for either: no driver). It stays loaded until the process exits.
  static CudaDriver &get();

  // A driver of its own, opened from LibraryPath (a name for the dynamic
  // loader or a path); the library is closed when it is destroyed. For
  // tests and tools: the runtime uses get().
  static CudaDriver open(const std::string &LibraryPath);

  // True when libcuda was opened, cuInit succeeded, every entry point was
  // found and there is a device.
  bool usable() const { return Usable; }
  // Why it is not usable (library path and dlerror, the cuInit error name,
  // a missing entry point), empty when usable.
  const std::string &reason() const { return Reason; }
  int deviceCount() const { return DeviceCount; }
  const std::string &libraryPath() const { return LibraryPath; }
  // True when the entry points came from cuGetProcAddress, false for dlsym.
  bool resolvedWithProcAddress() const { return UsedProcAddress; }

  // The entry points; call only when usable() (else they are null).
  const CudaDriverApi &api() const { return Api; }

  // "CUDA_ERROR_NAME (description)" for a CUresult: the driver's own words
  // when it gives them, a built-in table otherwise (the toolkit's stub
  // library answers every call, cuGetErrorName included, with
  // CUDA_ERROR_STUB_LIBRARY).
  std::string describeError(int Result) const;
  // "CUDA_ERROR_NAME" alone.
  std::string errorName(int Result) const;

  // Throws CudaDriverError "<Call> failed: <describeError>[: <Context>]"
  // unless Result is CUDA_SUCCESS. A sticky error (below) is handed to the
  // sticky-error handler instead, which throws the fault report.
  void check(cu::Result Result, const char *Call, const std::string &Context = {}) const {
    if (Result != cu::Success)
      fail(Result, Call, Context);
  }
  [[noreturn]] void fail(cu::Result Result, const char *Call,
                         const std::string &Context = {}) const;

  // The errors after which a CUDA context cannot be used again (cuda.h:
  // "any further CUDA work will return the same error"): a kernel faulted.
  // They surface in whichever call comes next in the context, not in the
  // launch. CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701) is not one of them.
  static bool isStickyError(int Result);

  // What fail() does with a sticky error: the cuda target installs one
  // (CudaTarget.cpp) that names the kernels that may have faulted, marks
  // their context unusable and throws. Process-wide; null: fail() throws
  // the plain message.
  using StickyErrorHandler = void (*)(const CudaDriver &Driver, cu::Result Result,
                                      const char *Call);
  static void setStickyErrorHandler(StickyErrorHandler Handler);

  // Throws RuntimeError with reason() unless usable(), and the fork error
  // (below) in a child forked after cuInit.
  void requireUsable() const;

  // A process forked after a driver of this process was initialised
  // (cuInit) cannot use CUDA: the child inherits the parent's driver state
  // but not its GPU contexts. A pthread_atfork handler, installed at the
  // first successful cuInit, marks the child; forkedAfterInit() is one
  // atomic load, and requireNotForked() throws CudaDriverError "CUDA
  // initialized before forking: ..." (call "fork", CUDA_ERROR_NOT_INITIALIZED)
  // naming both processes. Contexts check it wherever they check for faults.
  static bool forkedAfterInit();
  static void requireNotForked();

private:
  explicit CudaDriver(std::string LibraryPath);
  void resolveEntryPoints();

  struct LibraryCloser {
    void operator()(void *Handle) const;
  };
  // CUresult is an int-sized enum; these match cuda.h's prototypes.
  using CuInitFunction = int (*)(unsigned Flags);
  using CuDeviceGetCountFunction = int (*)(int *Count);
  using CuGetErrorTextFunction = int (*)(int Result, const char **Text);

  bool Usable = false;
  bool UsedProcAddress = false;
  int DeviceCount = 0;
  std::string Reason;
  std::string LibraryPath;
  std::unique_ptr<void, LibraryCloser> Library;
  CuInitFunction CuInit = nullptr;
  CuDeviceGetCountFunction CuDeviceGetCount = nullptr;
  CuGetErrorTextFunction CuGetErrorName = nullptr;
  CuGetErrorTextFunction CuGetErrorString = nullptr;
  CudaDriverApi Api;
};

} // namespace tidal::runtime

#endif
