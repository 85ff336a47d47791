// The cuda target: a device's primary context, modules loaded from PTX, their
// kernels, device memory and launching, over the Driver API that CudaDriver
// opened with dlopen. Every handle is owned by one object (RAII); every failed
// call throws CudaDriverError naming the call and the driver's error.
#ifndef TIDAL_RUNTIME_CUDATARGET_H
#define TIDAL_RUNTIME_CUDATARGET_H

#include "tidal/runtime/CpuTarget.h" // Dim3, RuntimeError
#include "tidal/runtime/CudaDevice.h"
#include "tidal/runtime/CudaDriver.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tidal::runtime {

// The primary context of one device, retained while the object lives.
class CudaContext {
public:
  // Reads the facts of device Ordinal (InvalidDeviceError for an ordinal
  // the driver does not have), retains its primary context and makes it
  // current on this thread. Driver must outlive the context.
  CudaContext(const CudaDriver &Driver, int Ordinal);
  ~CudaContext();
  CudaContext(const CudaContext &) = delete;
  CudaContext &operator=(const CudaContext &) = delete;

  // The process-wide context of a device of CudaDriver::get(), created on
  // first use and never released (code at exit may still use it). Throws
  // RuntimeError with the driver's reason when the driver is not usable,
  // InvalidDeviceError for an ordinal it does not have.
  static CudaContext &forDevice(int Ordinal);
  // That context if it has been created, else null (nothing is created).
  static CudaContext *existing(int Ordinal);

  // cuCtxSetCurrent on the calling thread.
  void makeCurrent() const;
  // cuCtxSynchronize (the driver synchronises the thread's current context:
  // make this one current first); a failure throws CudaDriverError, a
  // kernel fault the fault report (below).
  void synchronize() const;

  // (free, total) bytes of the device's memory: cuMemGetInfo with this
  // context current (the thread's current context is restored after).
  void memoryInfo(size_t &Free, size_t &Total) const;

  const CudaDriver &driver() const { return Driver; }
  const CudaDevice &device() const { return Device; }
  int ordinal() const { return Device.ordinal(); }
  const std::string &name() const { return Device.name(); }
  const CudaDeviceLimits &limits() const { return Device.limits(); }
  cu::Context handle() const { return Context; }
  // "device 0 (NVIDIA H100 80GB HBM3)"
  std::string describe() const { return Device.describe(); }

  // Checks a call made in this context: Driver.check, except that a sticky
  // error is reported as this context's fault (reportFault). For calls on
  // the context's own objects (its streams, events, memory), which may run
  // while the thread has another context current; a plain Driver.check
  // attributes a sticky error to the thread's current context.
  void check(cu::Result Result, const char *Call, const std::string &Detail = {}) const {
    if (Result != cu::Success)
      fail(Result, Call, Detail);
  }
  [[noreturn]] void fail(cu::Result Result, const char *Call,
                         const std::string &Detail = {}) const;

  // --- kernel faults ---------------------------------------------------------------
  // A kernel that faults (an illegal address, ...) makes the context unusable
  // (CudaDriver::isStickyError), and the error surfaces in whichever call
  // comes next: a synchronisation, a copy, an allocation, the next launch.
  // Whichever it is, the CudaDriverError names the kernels launched since the
  // context's last successful synchronisation and says that the context is
  // no longer usable, and every later call raises the same at once.

  // Records a launch (CudaFunction::launch); the last RecentLaunchCapacity
  // are kept, and how many there were. No allocation once the kernel's name
  // fits the slot's buffer.
  void noteLaunch(const std::string &Kernel, Dim3 Grid, Dim3 Block, cu::Stream Stream) const;
  // The launches recorded so far, a mark for forgetLaunches.
  uint64_t launchesSoFar() const;
  // A cuCtxSynchronize that began at Mark succeeded: none of the launches
  // before it faulted (launches another thread made meanwhile are kept).
  void forgetLaunches(uint64_t Mark) const;
  // Whether a launch was recorded since the last successful synchronisation
  // (a kernel may still run): ~CudaModule waits before unloading.
  bool hasUnsynchronisedLaunches() const;
  // Marks the context faulted by sticky error Result, which Call reported,
  // and throws CudaDriverError with the report: the kernel(s) that may have
  // caused it, the device, the call and the error. A context that has
  // faulted already throws its first report again. OwnLaunch: Call is the
  // synchronisation of a launch that waits for its kernel (a launch with
  // NumPy arguments), so a lone kernel is not said to be asynchronous.
  [[noreturn]] void reportFault(cu::Result Result, const char *Call,
                                bool OwnLaunch = false) const;
  bool faulted() const { return Faulted.load(std::memory_order_acquire); }
  // Throws the fault report again when the context has faulted, and the
  // fork error in a child forked after the driver was initialised.
  void requireUsable() const {
    if (faulted())
      throwFault();
    if (CudaDriver::forkedAfterInit())
      CudaDriver::requireNotForked();
  }

  static constexpr size_t RecentLaunchCapacity = 8;

private:
  [[noreturn]] void throwFault() const;

  const CudaDriver &Driver;
  CudaDevice Device;
  cu::Context Context = nullptr;

  // The fault state is the driver's, not the object's value: const methods
  // update it, under FaultLock (launches and faults may come from any thread).
  struct RecordedLaunch {
    std::string Kernel;
    Dim3 Grid{}, Block{};
    cu::Stream Stream = nullptr;
  };
  mutable std::mutex FaultLock;
  mutable std::array<RecordedLaunch, RecentLaunchCapacity> RecentLaunches; // a ring
  mutable uint64_t Launches = 0;             // recorded so far; the next slot
  mutable uint64_t SynchronisedLaunches = 0; // of those, known not to have faulted
  mutable std::atomic<bool> Faulted{false};
  // Set once, before Faulted.
  mutable std::string FaultMessage;
  mutable std::string FaultCall;
  mutable int FaultResult = 0;
};

// Makes Context current on this thread while the guard lives, then makes
// current again the context that was (nothing is switched when it already
// is). For work bound to one device's context, such as freeing its memory,
// done while the thread may have selected another device. Errors are
// ignored: destructors and noexcept paths use it.
class ScopedCurrentContext {
public:
  explicit ScopedCurrentContext(const CudaContext &Context) noexcept;
  ~ScopedCurrentContext();
  ScopedCurrentContext(const ScopedCurrentContext &) = delete;
  ScopedCurrentContext &operator=(const ScopedCurrentContext &) = delete;

private:
  const CudaDriver &Driver;
  cu::Context Previous = nullptr;
  bool Switched = false;
};

// --- the current device of each thread ------------------------------------------
// Launches, allocations, streams and events of the cuda target use the
// calling thread's current device: the one selectDevice() chose last on this
// thread, else device 0 (as CUDA's runtime API and numba-cuda do).

// The calling thread's current device ordinal (0 until one is selected).
// Cheap: a thread-local read, for the launch path.
int currentDeviceOrdinal();
// The ordinal selectDevice() chose on this thread, or -1 when none is
// selected (at thread start and after deselectDevice()).
int selectedDeviceOrdinal();
// Makes device Ordinal current on this thread: validates it
// (InvalidDeviceError naming the device count), creates its primary context
// if needed and makes that context current.
void selectDevice(int Ordinal);
// Forgets the thread's selection (the current device goes back to 0) and
// leaves no context current on the thread.
void deselectDevice();
// CudaContext::forDevice(currentDeviceOrdinal()), made current on the thread.
CudaContext &currentContext();

class CudaFunction;

// How many CudaModules are loaded now, over every context: a debug counter,
// which tests read to see that dropped kernels unload their modules.
uint64_t liveCudaModuleCount();

// One input of the driver's JIT linker beside a kernel's PTX: its name in
// the logs, its bytes (PTX text, or a cubin, fatbin, object or archive) and
// its CUjitInputType (cu::JitInputPtx, JitInputCubin, ...).
struct CudaLinkInput {
  std::string Name;
  std::string Data;
  int Type = cu::JitInputPtx;
};

// A module loaded from PTX, unloaded when destroyed (after the context's
// launches, when one may still run).
class CudaModule {
public:
  // Loads null-terminated PTX into Context with cuModuleLoadDataEx; a
  // failure throws CudaDriverError whose message ends with the JIT's log.
  CudaModule(CudaContext &Context, const std::string &PTX);
  // PTX (named PTXName in the JIT's logs) linked with the inputs of
  // Linked (PTX, cubins, fatbins, objects, archives), as the driver links:
  // cuLinkCreate, cuLinkAddData of each with its CUjitInputType,
  // cuLinkComplete, then cuModuleLoadData of the image. A failure throws
  // CudaDriverError whose message names the input the JIT rejected, or the
  // files linked, and ends with the JIT's log.
  CudaModule(CudaContext &Context, const std::string &PTX, const std::string &PTXName,
             const std::vector<CudaLinkInput> &Linked);
  ~CudaModule();
  CudaModule(const CudaModule &) = delete;
  CudaModule &operator=(const CudaModule &) = delete;

  // The kernel Name (cuModuleGetFunction); valid while the module lives.
  CudaFunction function(const std::string &Name) const;
  // The device address of the module's global Name and its size in bytes
  // (cuModuleGetGlobal); CudaDriverError when the module has none.
  std::pair<cu::DevicePointer, size_t> global(const std::string &Name) const;

private:
  CudaContext &Context;
  cu::Module Module = nullptr;
};

// A kernel of a loaded module, with the facts a launch checks.
class CudaFunction {
public:
  CudaFunction(CudaContext &Context, cu::Function Function, std::string Name);

  // cuFuncGetAttribute.
  int attribute(int Attribute) const;
  // cuFuncSetAttribute (such as the preferred shared memory carveout).
  void setAttribute(int Attribute, int Value);
  int registersPerThread() const { return attribute(cu::FunctionNumRegs); }
  int staticSharedBytes() const { return StaticSharedBytes; }
  int localBytesPerThread() const { return attribute(cu::FunctionLocalSizeBytes); }
  int maxThreadsPerBlock() const { return MaxThreadsPerBlock; }
  // The block size that gives the most resident threads on the device with
  // SharedBytes of dynamic shared memory per block
  // (cuOccupancyMaxPotentialBlockSize): what kernel.forall launches with.
  int potentialBlockSize(size_t SharedBytes) const;
  // The most blocks of Threads threads with SharedBytes of dynamic shared
  // memory that can be resident on the device at once
  // (cuOccupancyMaxActiveBlocksPerMultiprocessor x the SM count): the
  // largest grid of a cooperative launch (kernel.max_cooperative_grid_blocks).
  int maxCooperativeBlocks(unsigned Threads, size_t SharedBytes) const;
  const std::string &name() const { return Name; }
  CudaContext &context() const { return Context; }

  // Throws LaunchConfigError when the device cannot run this configuration;
  // raises the kernel's dynamic shared memory limit above 48 KB when asked.
  void checkLaunch(Dim3 Grid, Dim3 Block, size_t SharedBytes);
  // checkLaunch, then cuLaunchKernel (cuLaunchCooperativeKernel when
  // Cooperative: a kernel that uses the grid group) with Params as
  // kernelParams (one pointer per flattened parameter value). Asynchronous:
  // the context records the launch, which a fault reported later names.
  void launch(Dim3 Grid, Dim3 Block, size_t SharedBytes, cu::Stream Stream, void **Params,
              bool Cooperative = false);
  // cuCtxSynchronize after a launch of this kernel: a fault (an illegal
  // address, ...) throws CudaDriverError naming the kernel and saying that
  // the context is no longer usable, and marks the context faulted.
  void synchronize() const;

private:
  CudaContext &Context;
  cu::Function Function;
  std::string Name;
  int MaxThreadsPerBlock = 0;
  int StaticSharedBytes = 0;
  int DynamicSharedLimit = 0; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES now
};

// Device memory (cuMemAlloc in the current context), freed when destroyed.
class CudaDeviceBuffer {
public:
  CudaDeviceBuffer() = default;
  // Bytes may be 0: nothing is allocated and pointer() is 0.
  CudaDeviceBuffer(const CudaDriver &Driver, size_t Bytes);
  ~CudaDeviceBuffer() { reset(); }
  CudaDeviceBuffer(CudaDeviceBuffer &&Other) noexcept { *this = std::move(Other); }
  CudaDeviceBuffer &operator=(CudaDeviceBuffer &&Other) noexcept;
  CudaDeviceBuffer(const CudaDeviceBuffer &) = delete;
  CudaDeviceBuffer &operator=(const CudaDeviceBuffer &) = delete;

  cu::DevicePointer pointer() const { return Pointer; }
  size_t size() const { return Bytes; }
  void copyFromHost(const void *Source, size_t Count) const;
  void copyToHost(void *Destination, size_t Count) const;
  // Frees the memory now (errors ignored: after a fault every call fails).
  void reset();

private:
  const CudaDriver *Driver = nullptr;
  cu::DevicePointer Pointer = 0;
  size_t Bytes = 0;
};

} // namespace tidal::runtime

#endif
