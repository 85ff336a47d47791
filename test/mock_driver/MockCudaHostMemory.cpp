// libtidal_mock_cuda.so, continued (MockCudaDriver.cpp has the overview and
// the environment variables): page-locked, mapped and managed host memory,
// and occupancy.
#include "MockCudaState.h"

using namespace tidal_mock;

// --- host memory: page-locked, mapped and managed (issue 5) ---------------------------
// cuMemHostAlloc memory is a memfd mapped twice: the host address is one view
// and, with CU_MEMHOSTALLOC_DEVICEMAP, the device pointer
// (cuMemHostGetDevicePointer) is the other, a different address for the same
// bytes (as for write-combined memory on a real system), so that a host
// address passed where the device pointer belongs shows in the launch log.
// Registered memory (cuMemHostRegister) is mapped at its own address, as on
// devices that use the host pointer for it. Managed memory (cuMemAllocManaged)
// is calloc'd device memory, freed with cuMemFree. Device views of mapped
// memory and managed memory are allocations of the mock like cuMemAlloc's:
// copies and launches find them (a launch logs their "alloc" and "offset").
// Log fields: cuMemHostAlloc {bytes, flags, alloc}; cuMemHostGetDevicePointer
// {alloc, offset}; cuMemFreeHost {alloc}; cuMemHostRegister {bytes, flags,
// alloc}; cuMemHostUnregister {alloc}; cuMemAllocManaged {bytes, flags,
// alloc}; "alloc" is null for a pointer the mock does not know, and a refused
// call logs {"result": N} instead.

namespace {

struct HostRange {
  size_t Bytes;
  int Id;
  unsigned Flags;
  bool Registered;       // cuMemHostRegister, else cuMemHostAlloc
  uintptr_t Device = 0;  // the device view; 0 when not mapped
};

// Page-locked ranges by host address; guarded by the state's lock.
std::map<uintptr_t, HostRange> &hostRanges() {
  static auto *Ranges = new std::map<uintptr_t, HostRange>();
  return *Ranges;
}

// The page-locked range holding Pointer, or null.
std::pair<const uintptr_t, HostRange> *findHostRange(uintptr_t Pointer) {
  auto &Ranges = hostRanges();
  auto It = Ranges.upper_bound(Pointer);
  if (It == Ranges.begin())
    return nullptr;
  --It;
  return Pointer < It->first + It->second.Bytes ? &*It : nullptr;
}

// True when [Begin, Begin + Bytes) overlaps a range of Map (keyed by start,
// valued with .Bytes).
template <typename Map> bool overlaps(const Map &Ranges, uintptr_t Begin, size_t Bytes) {
  auto It = Ranges.lower_bound(Begin + Bytes);
  if (It == Ranges.begin())
    return false;
  --It;
  return It->first + It->second.Bytes > Begin;
}

// A shared mapping of Fd, or null.
void *mapShared(int Fd, size_t Bytes) {
  void *View = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
  return View == MAP_FAILED ? nullptr : View;
}

CUresult refuse(MockState &S, const char *Call, CUresult Result) {
  record(S, Call, "\"result\": " + std::to_string(Result));
  return Result;
}

} // namespace

extern "C" {

CUresult cuMemHostAlloc(void **Host, size_t Bytes, unsigned Flags) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  if (!CurrentContext)
    return refuse(S, "cuMemHostAlloc", InvalidContext);
  if (!Host || !Bytes || (Flags & ~7u))
    return refuse(S, "cuMemHostAlloc", InvalidValue);
  int Fd = memfd_create("tidal-mock-host-memory", MFD_CLOEXEC);
  if (Fd < 0 || ftruncate(Fd, static_cast<off_t>(Bytes)) != 0) {
    if (Fd >= 0)
      close(Fd);
    return refuse(S, "cuMemHostAlloc", 2); // CUDA_ERROR_OUT_OF_MEMORY
  }
  void *HostView = mapShared(Fd, Bytes);
  void *DeviceView = HostView && (Flags & 2) ? mapShared(Fd, Bytes) : nullptr;
  close(Fd);
  if (!HostView || ((Flags & 2) && !DeviceView)) {
    if (HostView)
      munmap(HostView, Bytes);
    return refuse(S, "cuMemHostAlloc", 2);
  }
  int Id = S.NextAllocationId++;
  auto HostAddress = reinterpret_cast<uintptr_t>(HostView);
  auto DeviceAddress = reinterpret_cast<uintptr_t>(DeviceView);
  hostRanges()[HostAddress] = {Bytes, Id, Flags, false, DeviceAddress};
  if (DeviceAddress)
    S.Allocations[DeviceAddress] = {Bytes, Id};
  *Host = HostView;
  record(S, "cuMemHostAlloc", "\"bytes\": " + std::to_string(Bytes) + ", \"flags\": " +
                                  std::to_string(Flags) + ", \"alloc\": " + std::to_string(Id));
  return Success;
}

CUresult cuMemFreeHost(void *Host) {
  MOCK_ENTER(S);
  auto It = hostRanges().find(reinterpret_cast<uintptr_t>(Host));
  if (It == hostRanges().end() || It->second.Registered) {
    record(S, "cuMemFreeHost", "\"alloc\": null");
    return InvalidValue;
  }
  const HostRange &R = It->second;
  record(S, "cuMemFreeHost", "\"alloc\": " + std::to_string(R.Id));
  munmap(Host, R.Bytes);
  if (R.Device) {
    munmap(reinterpret_cast<void *>(R.Device), R.Bytes);
    S.Allocations.erase(R.Device);
  }
  hostRanges().erase(It);
  return observeFault(S);
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *Pointer, void *Host, unsigned Flags) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  auto *R = findHostRange(reinterpret_cast<uintptr_t>(Host));
  if (!Pointer || Flags != 0 || !R || !R->second.Device)
    return refuse(S, "cuMemHostGetDevicePointer_v2", InvalidValue);
  uintptr_t Offset = reinterpret_cast<uintptr_t>(Host) - R->first;
  *Pointer = R->second.Device + Offset;
  record(S, "cuMemHostGetDevicePointer_v2", "\"alloc\": " + std::to_string(R->second.Id) +
                                                ", \"offset\": " + std::to_string(Offset));
  return Success;
}

CUresult cuMemHostRegister_v2(void *Host, size_t Bytes, unsigned Flags) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  if (!CurrentContext)
    return refuse(S, "cuMemHostRegister_v2", InvalidContext);
  auto Begin = reinterpret_cast<uintptr_t>(Host);
  if (!Host || !Bytes || (Flags & ~15u) || overlaps(S.Allocations, Begin, Bytes))
    return refuse(S, "cuMemHostRegister_v2", InvalidValue);
  if (overlaps(hostRanges(), Begin, Bytes))
    return refuse(S, "cuMemHostRegister_v2", HostMemoryAlreadyRegistered);
  int Id = S.NextAllocationId++;
  bool Mapped = Flags & 2;
  hostRanges()[Begin] = {Bytes, Id, Flags, true, Mapped ? Begin : 0};
  if (Mapped)
    S.Allocations[Begin] = {Bytes, Id};
  record(S, "cuMemHostRegister_v2", "\"bytes\": " + std::to_string(Bytes) + ", \"flags\": " +
                                        std::to_string(Flags) + ", \"alloc\": " + std::to_string(Id));
  return Success;
}

CUresult cuMemHostUnregister(void *Host) {
  MOCK_ENTER(S);
  auto It = hostRanges().find(reinterpret_cast<uintptr_t>(Host));
  if (It == hostRanges().end() || !It->second.Registered) {
    record(S, "cuMemHostUnregister", "\"alloc\": null");
    return HostMemoryNotRegistered;
  }
  record(S, "cuMemHostUnregister", "\"alloc\": " + std::to_string(It->second.Id));
  if (It->second.Device)
    S.Allocations.erase(It->first);
  hostRanges().erase(It);
  return observeFault(S);
}

CUresult cuMemAllocManaged(CUdeviceptr *Pointer, size_t Bytes, unsigned Flags) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  if (!CurrentContext)
    return refuse(S, "cuMemAllocManaged", InvalidContext);
  if (!Pointer || !Bytes || (Flags != 1 && Flags != 2))
    return refuse(S, "cuMemAllocManaged", InvalidValue);
  void *Memory = std::calloc(1, Bytes);
  int Id = S.NextAllocationId++;
  S.Allocations[reinterpret_cast<uintptr_t>(Memory)] = {Bytes, Id};
  *Pointer = reinterpret_cast<uintptr_t>(Memory);
  record(S, "cuMemAllocManaged", "\"bytes\": " + std::to_string(Bytes) + ", \"flags\": " +
                                     std::to_string(Flags) + ", \"alloc\": " + std::to_string(Id));
  return Success;
}

// For the tests: page-locked ranges (allocated or registered) alive now.
int tidalMockLiveHostRanges() {
  MOCK_ENTER(S);
  return static_cast<int>(hostRanges().size());
}

// --- occupancy (kernel.forall) ---------------------------------------------------------
// The block size of the best occupancy: TIDAL_MOCK_CUDA_OCCUPANCY_BLOCK (768,
// a value no default picks by chance), capped by the kernel's own limit and
// the caller's; minimum grid: two blocks per multiprocessor.
CUresult cuOccupancyMaxPotentialBlockSize(int *MinGridSize, int *BlockSize, void *Function,
                                          void *BlockSizeToDynamicSMemSize,
                                          size_t DynamicSMemSize, int BlockSizeLimit) {
  MOCK_ENTER(S);
  record(S, "cuOccupancyMaxPotentialBlockSize",
         "\"dynamic_shared\": " + std::to_string(DynamicSMemSize) +
             ", \"limit\": " + std::to_string(BlockSizeLimit));
  MOCK_REQUIRE_INIT(S);
  auto *F = static_cast<MockFunction *>(Function);
  if (!F || !MinGridSize || !BlockSize || BlockSizeToDynamicSMemSize)
    return refuse(S, "cuOccupancyMaxPotentialBlockSize", InvalidValue);
  if (DynamicSMemSize > static_cast<size_t>(F->MaxDynamicShared))
    return refuse(S, "cuOccupancyMaxPotentialBlockSize", InvalidValue);
  long Block = std::min<long>(envNumber("TIDAL_MOCK_CUDA_OCCUPANCY_BLOCK", 768),
                              envNumber("TIDAL_MOCK_CUDA_FUNC_MAX_THREADS", 1024));
  if (BlockSizeLimit > 0)
    Block = std::min<long>(Block, BlockSizeLimit);
  *BlockSize = static_cast<int>(Block);
  *MinGridSize = 2 * (132 + 2 * F->Device);
  return Success;
}

} // extern "C"
