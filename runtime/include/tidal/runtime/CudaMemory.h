// Device memory that stays on the GPU, streams and events of the cuda target
// (issue 5): a caching allocator with size classes, the allocations it hands
// out (RAII), and CUstream / CUevent owners. Every failed call throws
// CudaDriverError; destructors ignore errors (after a fault every call fails).
#ifndef TIDAL_RUNTIME_CUDAMEMORY_H
#define TIDAL_RUNTIME_CUDAMEMORY_H

#include "tidal/runtime/CudaTarget.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tidal::runtime {

// A CUstream (cuStreamCreate), destroyed with the object.
class CudaStream {
public:
  explicit CudaStream(CudaContext &Context, unsigned Flags = 0);
  ~CudaStream();
  CudaStream(const CudaStream &) = delete;
  CudaStream &operator=(const CudaStream &) = delete;

  cu::Stream handle() const { return Stream; }
  CudaContext &context() const { return Context; }
  // cuStreamSynchronize.
  void synchronize() const;

private:
  CudaContext &Context;
  cu::Stream Stream = nullptr;
};

// A CUevent (cuEventCreate), destroyed with the object.
class CudaEvent {
public:
  explicit CudaEvent(CudaContext &Context, bool Timing = true);
  ~CudaEvent();
  CudaEvent(const CudaEvent &) = delete;
  CudaEvent &operator=(const CudaEvent &) = delete;

  cu::Event handle() const { return Event; }
  bool timing() const { return Timing; }
  void record(cu::Stream Stream);
  // True when the work before the last record() is done (cuEventQuery).
  bool query() const;
  void synchronize() const;
  // cuStreamWaitEvent: later work on Stream waits for this event.
  void waitOn(cu::Stream Stream) const;
  // Milliseconds from Start to End (cuEventElapsedTime).
  static float elapsed(const CudaEvent &Start, const CudaEvent &End);

private:
  CudaContext &Context;
  cu::Event Event = nullptr;
  bool Timing;
};

// What the allocator has done, for cuda.current_context().memory_stats().
struct CudaMemoryStats {
  size_t BytesInUse = 0;       // size-class bytes of live allocations
  size_t BytesRequested = 0;   // bytes asked for by live allocations
  size_t BytesCached = 0;      // freed blocks kept for reuse (ready or pending)
  size_t BytesPending = 0;     // of those, blocks a stream may still use
  size_t DriverAllocations = 0;     // cuMemAlloc calls made
  size_t DriverFrees = 0;           // cuMemFree calls made
  size_t LiveDriverAllocations = 0; // blocks held from the driver now
  size_t Reuses = 0;                // allocations served from the cache
  size_t ExportedAllocations = 0;   // live blocks exported to other processes (IPC)
};

// The caching allocator of one context. Requests are rounded up to a size
// class (512-byte granularity up to 1 MiB in powers of two, then 2 MiB
// multiples); a freed block is kept and reused for the same class. A block
// freed while a stream may still use it gets a cuEventRecord on that stream
// and is reused at once only on that stream (stream order makes it safe),
// on another stream only once cuEventQuery says the event is done, as
// Numba's deferred deallocation does. Cached blocks go back to the driver on
// releaseCached() (deallocations.clear()), when cuMemAlloc runs out of
// memory (then the allocation is retried once), and never otherwise (the
// process-wide allocators live until exit). A block exported to other
// processes (CUDA IPC, noteExported) is never cached: when freed it goes back
// to the driver once its last stream's work is done. It allocates and frees with its
// own context current and then restores the thread's, so memory of one
// device can be freed while the thread has selected another.
class CudaAllocator {
public:
  explicit CudaAllocator(CudaContext &Context) : Context(Context) {}
  ~CudaAllocator();
  CudaAllocator(const CudaAllocator &) = delete;
  CudaAllocator &operator=(const CudaAllocator &) = delete;

  // The allocator of CudaContext::forDevice(Ordinal) (one per device),
  // never destroyed.
  static CudaAllocator &forDevice(int Ordinal);

  static size_t sizeClass(size_t Bytes);

  struct Block {
    cu::DevicePointer Pointer = 0;
    size_t ClassBytes = 0;
  };
  // A block of at least Bytes (> 0) for use on Stream.
  Block allocate(size_t Bytes, cu::Stream Stream);
  // Gives a block back; LastStream is the stream that used it last.
  void free(Block B, cu::Stream LastStream) noexcept;
  // Returns every cached block to the driver (waiting for pending ones).
  void releaseCached() noexcept;
  CudaMemoryStats stats() const;
  CudaContext &context() const { return Context; }
  // Accounting of the bytes asked for, for stats.
  void noteRequested(ptrdiff_t Delta);
  // The driver allocation at Base was exported to other processes
  // (cuIpcGetMemHandle). If it is a block of this allocator, freeing it
  // gives it back to the driver (cuMemFree) instead of caching it: another
  // process may still map the handle, which must never come to name memory
  // that this process reuses for another array (the driver gives a new
  // allocation at the same address a new handle). A mark on an address this
  // allocator does not hand out (a plugin's memory) is dropped when the
  // driver gives the address to this allocator.
  void noteExported(cu::DevicePointer Base);

private:
  struct Cached {
    Block B;
    cu::Stream Stream = nullptr;
    cu::Event Done = nullptr; // null: nothing pending
  };
  bool takeCached(size_t ClassBytes, cu::Stream Stream, Block &Out);
  void releaseLocked() noexcept;
  cu::Event takeEvent() noexcept;

  CudaContext &Context;
  mutable std::mutex Lock;
  std::vector<Cached> Free;
  std::vector<cu::Event> SpareEvents;
  std::vector<cu::DevicePointer> Exported; // bases marked by noteExported, few
  CudaMemoryStats Stats;
};

// Device memory from a CudaAllocator, given back when destroyed. Views of a
// device array share one allocation (the binding holds it in a capsule).
class CudaAllocation {
public:
  CudaAllocation(CudaAllocator &Allocator, size_t Bytes, cu::Stream Stream);
  ~CudaAllocation();
  CudaAllocation(const CudaAllocation &) = delete;
  CudaAllocation &operator=(const CudaAllocation &) = delete;

  cu::DevicePointer pointer() const { return B.Pointer; }
  size_t size() const { return Bytes; }
  // The stream that used the memory last (launches and copies set it): the
  // free is deferred until that stream's work is done.
  void usedOn(cu::Stream Stream) { LastStream = Stream; }
  CudaAllocator &allocator() const { return Allocator; }
  // The context (device) the memory belongs to.
  CudaContext &context() const { return Allocator.context(); }
  // Throws LaunchConfigError unless the memory belongs to Context: kernel
  // KernelName launched there could not use it as argument Argument (no
  // peer access is enabled between devices). Compares two pointers.
  void requireContext(const CudaContext &Context, const std::string &KernelName,
                      size_t Argument) const {
    if (&context() != &Context)
      failContext(Context, KernelName, Argument);
  }

private:
  [[noreturn]] void failContext(const CudaContext &Context, const std::string &KernelName,
                                size_t Argument) const;

  CudaAllocator &Allocator;
  CudaAllocator::Block B;
  size_t Bytes;
  cu::Stream LastStream;
};

// Copies between host and device memory: asynchronous on Stream when it is
// not null, else synchronous (cuMemcpy*).
void cudaCopyToDevice(const CudaDriver &Driver, cu::DevicePointer Destination,
                      const void *Source, size_t Bytes, cu::Stream Stream);
void cudaCopyToHost(const CudaDriver &Driver, void *Destination, cu::DevicePointer Source,
                    size_t Bytes, cu::Stream Stream);
void cudaCopyDeviceToDevice(const CudaDriver &Driver, cu::DevicePointer Destination,
                            cu::DevicePointer Source, size_t Bytes, cu::Stream Stream);

// --- host memory: page-locked, mapped and managed (issue 5) --------------------------
// cuda.pinned_array, mapped_array, managed_array and the cuda.pinned / cuda.mapped
// context managers. Each object owns its memory (or registration) and gives it
// back when destroyed, ignoring errors as the owners above do; constructors and
// release() throw CudaDriverError naming the failed call. Bytes may be 0:
// nothing is allocated or registered and every pointer is null.

// Page-locked host memory from cuMemHostAlloc, freed with cuMemFreeHost.
// Mapped memory (CU_MEMHOSTALLOC_DEVICEMAP) also has a device pointer
// (cuMemHostGetDevicePointer) through which kernels use it in place; it need
// not equal the host address (it does not for write-combined memory).
class CudaHostAllocation {
public:
  struct Options {
    bool Mapped = false;        // CU_MEMHOSTALLOC_DEVICEMAP
    bool Portable = false;      // CU_MEMHOSTALLOC_PORTABLE: page-locked for every context
    bool WriteCombined = false; // CU_MEMHOSTALLOC_WRITECOMBINED
  };
  CudaHostAllocation(CudaContext &Context, size_t Bytes, Options Opts);
  ~CudaHostAllocation();
  CudaHostAllocation(const CudaHostAllocation &) = delete;
  CudaHostAllocation &operator=(const CudaHostAllocation &) = delete;

  // The cuMemHostAlloc flags of Opts.
  static unsigned flagsOf(Options Opts);

  void *host() const { return Host; }
  // 0 unless the memory is mapped.
  cu::DevicePointer device() const { return Device; }
  size_t size() const { return Bytes; }
  unsigned flags() const { return Flags; }

private:
  CudaContext &Context;
  void *Host = nullptr;
  cu::DevicePointer Device = 0;
  size_t Bytes;
  unsigned Flags;
};

// Host memory the caller owns (a NumPy array's), page-locked with
// cuMemHostRegister until release() or destruction (cuMemHostUnregister).
// A mapped registration (CU_MEMHOSTREGISTER_DEVICEMAP) has a device pointer.
class CudaHostRegistration {
public:
  CudaHostRegistration(CudaContext &Context, void *Host, size_t Bytes, bool Mapped);
  ~CudaHostRegistration();
  CudaHostRegistration(const CudaHostRegistration &) = delete;
  CudaHostRegistration &operator=(const CudaHostRegistration &) = delete;

  // Unregisters now (the end of a with-block), checked; then the pointers
  // are null and later calls, and the destructor, do nothing.
  void release();
  bool registered() const { return Host != nullptr; }

  void *host() const { return Host; }
  // 0 unless the registration is mapped.
  cu::DevicePointer device() const { return Device; }
  size_t size() const { return Bytes; }

private:
  CudaContext &Context;
  void *Host = nullptr;
  cu::DevicePointer Device = 0;
  size_t Bytes;
};

// Managed (unified) memory from cuMemAllocManaged: one address for the host
// and for kernels; freed with cuMemFree. AttachGlobal: any stream on any
// device may use it (CU_MEM_ATTACH_GLOBAL), else the host only until a stream
// attaches it (CU_MEM_ATTACH_HOST).
class CudaManagedAllocation {
public:
  CudaManagedAllocation(CudaContext &Context, size_t Bytes, bool AttachGlobal);
  ~CudaManagedAllocation();
  CudaManagedAllocation(const CudaManagedAllocation &) = delete;
  CudaManagedAllocation &operator=(const CudaManagedAllocation &) = delete;

  cu::DevicePointer pointer() const { return Pointer; }
  void *host() const { return reinterpret_cast<void *>(static_cast<uintptr_t>(Pointer)); }
  size_t size() const { return Bytes; }

private:
  CudaContext &Context;
  cu::DevicePointer Pointer = 0;
  size_t Bytes;
};

} // namespace tidal::runtime

#endif
