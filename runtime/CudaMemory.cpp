// The cuda target's streams, events, caching allocator, copies and host memory
// (page-locked, mapped and managed).
#include "tidal/runtime/CudaMemory.h"

#include <algorithm>
#include <string>
#include <utility>

namespace tidal::runtime {

// --- streams and events ---------------------------------------------------------

CudaStream::CudaStream(CudaContext &Ctx, unsigned Flags) : Context(Ctx) {
  Context.requireUsable();
  Context.makeCurrent();
  Context.check(Context.driver().api().StreamCreate(&Stream, Flags), "cuStreamCreate");
}

CudaStream::~CudaStream() {
  if (Stream)
    Context.driver().api().StreamDestroy(Stream);
}

void CudaStream::synchronize() const {
  Context.requireUsable();
  Context.check(Context.driver().api().StreamSynchronize(Stream), "cuStreamSynchronize");
}

CudaEvent::CudaEvent(CudaContext &Ctx, bool WithTiming) : Context(Ctx), Timing(WithTiming) {
  Context.requireUsable();
  Context.makeCurrent();
  Context.check(Context.driver().api().EventCreate(&Event, Timing ? 0u : cu::EventDisableTiming),
                "cuEventCreate");
}

CudaEvent::~CudaEvent() {
  if (Event)
    Context.driver().api().EventDestroy(Event);
}

void CudaEvent::record(cu::Stream Stream) {
  Context.requireUsable();
  Context.check(Context.driver().api().EventRecord(Event, Stream), "cuEventRecord");
}

bool CudaEvent::query() const {
  Context.requireUsable();
  cu::Result Result = Context.driver().api().EventQuery(Event);
  if (Result == cu::ErrorNotReady)
    return false;
  Context.check(Result, "cuEventQuery");
  return true;
}

void CudaEvent::synchronize() const {
  Context.requireUsable();
  Context.check(Context.driver().api().EventSynchronize(Event), "cuEventSynchronize");
}

void CudaEvent::waitOn(cu::Stream Stream) const {
  Context.requireUsable();
  Context.check(Context.driver().api().StreamWaitEvent(Stream, Event, 0), "cuStreamWaitEvent");
}

float CudaEvent::elapsed(const CudaEvent &Start, const CudaEvent &End) {
  float Milliseconds = 0;
  Start.Context.requireUsable();
  Start.Context.check(
      Start.Context.driver().api().EventElapsedTime(&Milliseconds, Start.Event, End.Event),
      "cuEventElapsedTime");
  return Milliseconds;
}

// --- the caching allocator ---------------------------------------------------------

size_t CudaAllocator::sizeClass(size_t Bytes) {
  constexpr size_t Small = 512, Large = size_t(1) << 20, Step = size_t(2) << 20;
  if (Bytes <= Small)
    return Small;
  if (Bytes <= Large) {
    size_t Class = Small;
    while (Class < Bytes)
      Class <<= 1;
    return Class;
  }
  return (Bytes + Step - 1) / Step * Step;
}

CudaAllocator &CudaAllocator::forDevice(int Ordinal) {
  static std::mutex Guard;
  static std::vector<CudaAllocator *> *Allocators = new std::vector<CudaAllocator *>();
  CudaContext &Context = CudaContext::forDevice(Ordinal);
  std::lock_guard<std::mutex> Held(Guard);
  if (Allocators->size() <= static_cast<size_t>(Ordinal))
    Allocators->resize(static_cast<size_t>(Ordinal) + 1, nullptr);
  CudaAllocator *&Slot = (*Allocators)[static_cast<size_t>(Ordinal)];
  if (!Slot)
    Slot = new CudaAllocator(Context); // never destroyed, as the context
  return *Slot;
}

CudaAllocator::~CudaAllocator() {
  std::lock_guard<std::mutex> Held(Lock);
  releaseLocked();
  for (cu::Event E : SpareEvents)
    Context.driver().api().EventDestroy(E);
}

bool CudaAllocator::takeCached(size_t ClassBytes, cu::Stream Stream, Block &Out) {
  const CudaDriverApi &Api = Context.driver().api();
  // The same stream first (stream order protects the block), then a block
  // whose last use is done.
  for (int Pass = 0; Pass < 2; ++Pass)
    for (size_t I = 0; I < Free.size(); ++I) {
      Cached &C = Free[I];
      if (C.B.ClassBytes != ClassBytes)
        continue;
      if (Pass == 0 ? C.Stream != Stream
                    : (C.Done && Api.EventQuery(C.Done) != cu::Success))
        continue;
      Out = C.B;
      if (C.Done)
        SpareEvents.push_back(C.Done);
      Stats.BytesCached -= C.B.ClassBytes;
      if (C.Done)
        Stats.BytesPending -= C.B.ClassBytes;
      Free[I] = Free.back();
      Free.pop_back();
      return true;
    }
  return false;
}

CudaAllocator::Block CudaAllocator::allocate(size_t Bytes, cu::Stream Stream) {
  Context.requireUsable();
  size_t ClassBytes = sizeClass(Bytes);
  std::lock_guard<std::mutex> Held(Lock);
  Block B;
  if (takeCached(ClassBytes, Stream, B)) {
    ++Stats.Reuses;
  } else {
    B.ClassBytes = ClassBytes;
    const CudaDriverApi &Api = Context.driver().api();
    ScopedCurrentContext Current(Context);
    cu::Result Result = Api.MemAlloc(&B.Pointer, ClassBytes);
    if (Result == cu::ErrorOutOfMemory && !Free.empty()) { // memory pressure
      releaseLocked();
      Result = Api.MemAlloc(&B.Pointer, ClassBytes);
    }
    if (Result != cu::Success)
      Context.fail(Result, "cuMemAlloc",
                   std::to_string(Bytes) + " bytes (size class " + std::to_string(ClassBytes) +
                       ")");
    ++Stats.DriverAllocations;
    ++Stats.LiveDriverAllocations;
    if (!Exported.empty()) { // a stale mark (a plugin's memory, since freed)
      auto It = std::find(Exported.begin(), Exported.end(), B.Pointer);
      if (It != Exported.end()) {
        Exported.erase(It);
        --Stats.ExportedAllocations;
      }
    }
  }
  Stats.BytesInUse += ClassBytes;
  return B;
}

cu::Event CudaAllocator::takeEvent() noexcept {
  if (!SpareEvents.empty()) {
    cu::Event E = SpareEvents.back();
    SpareEvents.pop_back();
    return E;
  }
  cu::Event E = nullptr;
  if (Context.driver().api().EventCreate(&E, cu::EventDisableTiming) != cu::Success)
    return nullptr;
  return E;
}

void CudaAllocator::free(Block B, cu::Stream LastStream) noexcept {
  if (!B.Pointer)
    return;
  std::lock_guard<std::mutex> Held(Lock);
  Stats.BytesInUse -= B.ClassBytes;
  if (!Exported.empty()) {
    auto It = std::find(Exported.begin(), Exported.end(), B.Pointer);
    if (It != Exported.end()) { // never cached: back to the driver when its work is done
      Exported.erase(It);
      --Stats.ExportedAllocations;
      const CudaDriverApi &Api = Context.driver().api();
      ScopedCurrentContext Current(Context);
      if (!Context.faulted())
        Api.StreamSynchronize(LastStream);
      Api.MemFree(B.Pointer);
      ++Stats.DriverFrees;
      --Stats.LiveDriverAllocations;
      return;
    }
  }
  Cached C{B, LastStream, nullptr};
  if (!Context.faulted()) {
    // The event is made in, and a null LastStream is the default stream of,
    // the current context: this allocator's, whichever device the thread
    // has selected now.
    ScopedCurrentContext Current(Context);
    C.Done = takeEvent();
    if (C.Done && Context.driver().api().EventRecord(C.Done, LastStream) != cu::Success) {
      SpareEvents.push_back(C.Done);
      C.Done = nullptr;
    }
    if (!C.Done) { // no event: wait here rather than reuse too early
      Context.driver().api().StreamSynchronize(LastStream);
    }
  }
  Stats.BytesCached += B.ClassBytes;
  if (C.Done)
    Stats.BytesPending += B.ClassBytes;
  Free.push_back(C);
}

void CudaAllocator::releaseLocked() noexcept {
  const CudaDriverApi &Api = Context.driver().api();
  ScopedCurrentContext Current(Context);
  for (Cached &C : Free) {
    if (C.Done) {
      Api.EventSynchronize(C.Done);
      SpareEvents.push_back(C.Done);
    }
    Api.MemFree(C.B.Pointer);
    ++Stats.DriverFrees;
    --Stats.LiveDriverAllocations;
  }
  Free.clear();
  Stats.BytesCached = 0;
  Stats.BytesPending = 0;
}

void CudaAllocator::releaseCached() noexcept {
  std::lock_guard<std::mutex> Held(Lock);
  releaseLocked();
}

CudaMemoryStats CudaAllocator::stats() const {
  std::lock_guard<std::mutex> Held(Lock);
  CudaMemoryStats S = Stats;
  // Pending blocks whose event has completed are no longer pending.
  const CudaDriverApi &Api = Context.driver().api();
  for (const Cached &C : Free)
    if (C.Done && Api.EventQuery(C.Done) == cu::Success)
      S.BytesPending -= C.B.ClassBytes;
  return S;
}

void CudaAllocator::noteExported(cu::DevicePointer Base) {
  std::lock_guard<std::mutex> Held(Lock);
  if (std::find(Exported.begin(), Exported.end(), Base) != Exported.end())
    return;
  Exported.push_back(Base);
  ++Stats.ExportedAllocations;
}

void CudaAllocator::noteRequested(ptrdiff_t Delta) {
  std::lock_guard<std::mutex> Held(Lock);
  Stats.BytesRequested = static_cast<size_t>(static_cast<ptrdiff_t>(Stats.BytesRequested) + Delta);
}

CudaAllocation::CudaAllocation(CudaAllocator &A, size_t Count, cu::Stream Stream)
    : Allocator(A), Bytes(Count), LastStream(Stream) {
  if (Bytes) {
    B = Allocator.allocate(Bytes, Stream);
    Allocator.noteRequested(static_cast<ptrdiff_t>(Bytes));
  }
}

CudaAllocation::~CudaAllocation() {
  if (B.Pointer) {
    Allocator.noteRequested(-static_cast<ptrdiff_t>(Bytes));
    Allocator.free(B, LastStream);
  }
}

void CudaAllocation::failContext(const CudaContext &Context, const std::string &KernelName,
                                 size_t Argument) const {
  const CudaContext &Owner = context();
  throw LaunchConfigError(
      "cannot launch kernel '" + KernelName + "' on " + Context.describe() + ": argument " +
      std::to_string(Argument) + " is device memory of " + Owner.describe() +
      "; launch it under `with cuda.gpus[" + std::to_string(Owner.ordinal()) +
      "]:` or copy the array to device " + std::to_string(Context.ordinal()));
}

// --- copies -------------------------------------------------------------------------

void cudaCopyToDevice(const CudaDriver &Driver, cu::DevicePointer Destination, const void *Source,
                      size_t Bytes, cu::Stream Stream) {
  if (!Bytes)
    return;
  if (Stream)
    Driver.check(Driver.api().MemcpyHtoDAsync(Destination, Source, Bytes, Stream),
                 "cuMemcpyHtoDAsync", std::to_string(Bytes) + " bytes");
  else
    Driver.check(Driver.api().MemcpyHtoD(Destination, Source, Bytes), "cuMemcpyHtoD",
                 std::to_string(Bytes) + " bytes");
}

void cudaCopyToHost(const CudaDriver &Driver, void *Destination, cu::DevicePointer Source,
                    size_t Bytes, cu::Stream Stream) {
  if (!Bytes)
    return;
  if (Stream)
    Driver.check(Driver.api().MemcpyDtoHAsync(Destination, Source, Bytes, Stream),
                 "cuMemcpyDtoHAsync", std::to_string(Bytes) + " bytes");
  else
    Driver.check(Driver.api().MemcpyDtoH(Destination, Source, Bytes), "cuMemcpyDtoH",
                 std::to_string(Bytes) + " bytes");
}

void cudaCopyDeviceToDevice(const CudaDriver &Driver, cu::DevicePointer Destination,
                            cu::DevicePointer Source, size_t Bytes, cu::Stream Stream) {
  if (!Bytes)
    return;
  if (Stream)
    Driver.check(Driver.api().MemcpyDtoDAsync(Destination, Source, Bytes, Stream),
                 "cuMemcpyDtoDAsync", std::to_string(Bytes) + " bytes");
  else
    Driver.check(Driver.api().MemcpyDtoD(Destination, Source, Bytes), "cuMemcpyDtoD",
                 std::to_string(Bytes) + " bytes");
}

// --- host memory: page-locked, mapped and managed -----------------------------------

namespace {

// Destructors run wherever Python drops the last array (any thread): make the
// context current for the call, and ignore failures as the owners above do.
template <typename Call> void releaseQuietly(CudaContext &Context, Call &&Release) {
  try {
    Context.makeCurrent();
  } catch (const CudaDriverError &) {
  }
  Release(Context.driver().api());
}

} // namespace

unsigned CudaHostAllocation::flagsOf(Options Opts) {
  return (Opts.Mapped ? cu::HostAllocDeviceMap : 0u) |
         (Opts.Portable ? cu::HostAllocPortable : 0u) |
         (Opts.WriteCombined ? cu::HostAllocWriteCombined : 0u);
}

CudaHostAllocation::CudaHostAllocation(CudaContext &Ctx, size_t Count, Options Opts)
    : Context(Ctx), Bytes(Count), Flags(flagsOf(Opts)) {
  if (!Bytes)
    return;
  Context.requireUsable();
  Context.makeCurrent();
  const CudaDriver &Driver = Context.driver();
  Context.check(Driver.api().MemHostAlloc(&Host, Bytes, Flags), "cuMemHostAlloc",
                std::to_string(Bytes) + " bytes, flags " + std::to_string(Flags));
  if (!Opts.Mapped)
    return;
  if (cu::Result Result = Driver.api().MemHostGetDevicePointer(&Device, Host, 0)) {
    Driver.api().MemFreeHost(Host);
    Host = nullptr;
    Context.fail(Result, "cuMemHostGetDevicePointer");
  }
}

CudaHostAllocation::~CudaHostAllocation() {
  if (Host)
    releaseQuietly(Context, [&](const CudaDriverApi &Api) { Api.MemFreeHost(Host); });
}

CudaHostRegistration::CudaHostRegistration(CudaContext &Ctx, void *Memory, size_t Count,
                                           bool Mapped)
    : Context(Ctx), Bytes(Count) {
  if (!Bytes)
    return;
  Context.requireUsable();
  Context.makeCurrent();
  const CudaDriver &Driver = Context.driver();
  Context.check(Driver.api().MemHostRegister(Memory, Bytes, Mapped ? cu::HostRegisterDeviceMap : 0u),
                "cuMemHostRegister", std::to_string(Bytes) + " bytes");
  Host = Memory;
  if (!Mapped)
    return;
  if (cu::Result Result = Driver.api().MemHostGetDevicePointer(&Device, Host, 0)) {
    Driver.api().MemHostUnregister(Host);
    Host = nullptr;
    Context.fail(Result, "cuMemHostGetDevicePointer");
  }
}

CudaHostRegistration::~CudaHostRegistration() {
  if (Host)
    releaseQuietly(Context, [&](const CudaDriverApi &Api) { Api.MemHostUnregister(Host); });
}

void CudaHostRegistration::release() {
  if (!Host)
    return;
  void *Memory = std::exchange(Host, nullptr);
  Device = 0;
  Context.makeCurrent();
  Context.check(Context.driver().api().MemHostUnregister(Memory), "cuMemHostUnregister");
}

CudaManagedAllocation::CudaManagedAllocation(CudaContext &Ctx, size_t Count, bool AttachGlobal)
    : Context(Ctx), Bytes(Count) {
  if (!Bytes)
    return;
  Context.requireUsable();
  Context.makeCurrent();
  unsigned Flags = AttachGlobal ? cu::MemAttachGlobal : cu::MemAttachHost;
  Context.check(Context.driver().api().MemAllocManaged(&Pointer, Bytes, Flags),
                "cuMemAllocManaged",
                std::to_string(Bytes) + " bytes, flags " + std::to_string(Flags));
}

CudaManagedAllocation::~CudaManagedAllocation() {
  if (Pointer)
    releaseQuietly(Context, [&](const CudaDriverApi &Api) { Api.MemFree(Pointer); });
}

} // namespace tidal::runtime
