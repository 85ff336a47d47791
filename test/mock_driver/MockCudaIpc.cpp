// libtidal_mock_cuda.so, continued (MockCudaDriver.cpp has the overview):
// device memory that other processes can map, CUDA IPC (issue 13).
//
// cuMemAlloc's memory is a shared mapping of one memfd per process, the
// device-memory file: each allocation at a page-aligned file offset never
// used before, its pages freed (a hole punched) by cuMemFree. The file is
// sparse, so it holds only the pages written, and it is one file descriptor
// however many allocations there are. A child forked after the file was made
// makes its own.
//
// A handle (cuIpcGetMemHandle, of an allocation's base) holds, in its 64
// bytes: "tidalIPC", the exporter's pid, the file's descriptor there, the
// device, the allocation's id, its file offset and its size.
// cuIpcOpenMemHandle_v2 opens /proc/<pid>/fd/<fd> and maps that range: an
// allocation of the current context, which copies and launches find
// (cuMemGetInfo does not count it); opening the same handle again returns the
// same pointer and counts one more open, and cuIpcCloseMemHandle unmaps at
// the last close (as cuda.h describes the driver's reference count). A
// handle of freed memory maps the hole (zeros), never another allocation's
// bytes, since offsets are not reused.
// Errors:
//   cuIpcGetMemHandle: a pointer that is no cuMemAlloc allocation's base
//     (the driver takes "a pointer to the base"): CUDA_ERROR_INVALID_VALUE
//   cuIpcOpenMemHandle_v2: no current context: CUDA_ERROR_INVALID_CONTEXT; a
//     handle exported by this process: CUDA_ERROR_INVALID_CONTEXT (the real
//     driver's answer); flags other than CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS,
//     or bytes that are no handle of the mock: CUDA_ERROR_INVALID_VALUE; an
//     exporter that is gone or whose file cannot be opened or mapped:
//     CUDA_ERROR_MAP_FAILED
//   cuIpcCloseMemHandle: a pointer cuIpcOpenMemHandle did not return:
//     CUDA_ERROR_INVALID_VALUE; cuMemFree of such a pointer: the same
//   cuMemGetAddressRange_v2: a pointer in no allocation: CUDA_ERROR_NOT_FOUND
// Log fields: cuIpcGetMemHandle {alloc}; cuIpcOpenMemHandle_v2 {pid, alloc
// (the exporter's id), device, opens} or {result}; cuIpcCloseMemHandle {alloc,
// opens}; cuMemGetAddressRange_v2 {alloc, offset}.
#include "MockCudaState.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/syscall.h>

using namespace tidal_mock;

namespace {

constexpr char HandleMagic[8] = {'t', 'i', 'd', 'a', 'l', 'I', 'P', 'C'};

struct HandleFields {
  char Magic[8];
  int32_t Pid;
  int32_t Fd;
  int32_t Device;
  int32_t Id;
  int64_t Offset;
  uint64_t Bytes;
};
static_assert(sizeof(HandleFields) <= sizeof(MockIpcMemHandle), "a handle is 64 bytes");

struct DeviceMemoryFile {
  int Fd = -1;
  pid_t Owner = 0;    // the process that made it (a forked child makes its own)
  long long Size = 0; // ftruncate'd size: grows by doubling
  long long Next = 0; // the first offset never used
};

// Guarded by the state's lock.
DeviceMemoryFile &deviceMemoryFile() {
  static auto *File = new DeviceMemoryFile();
  return *File;
}

size_t pageRound(size_t Bytes) {
  const size_t Page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (Bytes + Page - 1) / Page * Page;
}

// The mappings of other processes' memory, by (exporter pid, its allocation
// id): the address here. Guarded by the state's lock.
std::map<std::pair<int, int>, uintptr_t> &importedMappings() {
  static auto *Mappings = new std::map<std::pair<int, int>, uintptr_t>();
  return *Mappings;
}

CUresult refuse(MockState &S, const char *Call, CUresult Result) {
  record(S, Call, "\"result\": " + std::to_string(Result));
  return Result;
}

} // namespace

void *tidal_mock::mapDeviceMemory(size_t Bytes, long long &FileOffset) {
  DeviceMemoryFile &File = deviceMemoryFile();
  if (File.Fd < 0 || File.Owner != getpid()) {
    int Fd = static_cast<int>(syscall(SYS_memfd_create, "tidal-mock-cuda-device-memory",
                                      MFD_CLOEXEC));
    if (Fd < 0)
      return nullptr;
    File = DeviceMemoryFile{Fd, getpid(), 0, 0};
  }
  const size_t Mapped = pageRound(Bytes);
  const long long Offset = File.Next;
  if (Offset + static_cast<long long>(Mapped) > File.Size) {
    long long Size = std::max(File.Size * 2, Offset + static_cast<long long>(Mapped) + (1LL << 30));
    if (ftruncate(File.Fd, Size) != 0)
      return nullptr;
    File.Size = Size;
  }
  void *Memory = mmap(nullptr, Mapped, PROT_READ | PROT_WRITE, MAP_SHARED, File.Fd, Offset);
  if (Memory == MAP_FAILED)
    return nullptr;
  File.Next = Offset + static_cast<long long>(Mapped);
  FileOffset = Offset;
  return Memory;
}

void tidal_mock::releaseDeviceMemory(void *Memory, size_t Bytes, long long FileOffset) {
  const size_t Mapped = pageRound(Bytes);
  munmap(Memory, Mapped);
  fallocate(deviceMemoryFile().Fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, FileOffset,
            static_cast<off_t>(Mapped));
}

extern "C" {

CUresult cuMemGetAddressRange_v2(CUdeviceptr *Base, size_t *Bytes, CUdeviceptr Pointer) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  auto *A = findAllocation(S, static_cast<uintptr_t>(Pointer));
  if (!A)
    return refuse(S, "cuMemGetAddressRange_v2", NotFound);
  if (Base)
    *Base = A->first;
  if (Bytes)
    *Bytes = A->second.Bytes;
  record(S, "cuMemGetAddressRange_v2", "\"alloc\": " + std::to_string(A->second.Id) +
                                           ", \"offset\": " + std::to_string(Pointer - A->first));
  return Success;
}

CUresult cuIpcGetMemHandle(MockIpcMemHandle *Handle, CUdeviceptr Pointer) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  if (!CurrentContext)
    return refuse(S, "cuIpcGetMemHandle", InvalidContext);
  auto It = S.Allocations.find(static_cast<uintptr_t>(Pointer));
  if (!Handle || It == S.Allocations.end() || It->second.FileOffset < 0)
    return refuse(S, "cuIpcGetMemHandle", InvalidValue);
  const Allocation &A = It->second;
  HandleFields Fields;
  std::memcpy(Fields.Magic, HandleMagic, sizeof HandleMagic);
  Fields.Pid = static_cast<int32_t>(getpid());
  Fields.Fd = deviceMemoryFile().Fd;
  Fields.Device = A.Device;
  Fields.Id = A.Id;
  Fields.Offset = A.FileOffset;
  Fields.Bytes = A.Bytes;
  std::memset(Handle->Reserved, 0, sizeof Handle->Reserved);
  std::memcpy(Handle->Reserved, &Fields, sizeof Fields);
  record(S, "cuIpcGetMemHandle", "\"alloc\": " + std::to_string(A.Id));
  return Success;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *Pointer, MockIpcMemHandle Handle, unsigned Flags) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  const char *Call = "cuIpcOpenMemHandle_v2";
  if (!CurrentContext)
    return refuse(S, Call, InvalidContext);
  HandleFields Fields;
  std::memcpy(&Fields, Handle.Reserved, sizeof Fields);
  if (!Pointer || Flags != 1 || std::memcmp(Fields.Magic, HandleMagic, sizeof HandleMagic) != 0 ||
      Fields.Bytes == 0 || Fields.Offset < 0)
    return refuse(S, Call, InvalidValue);
  if (Fields.Pid == static_cast<int32_t>(getpid()))
    return refuse(S, Call, InvalidContext); // the exporting process's own memory
  auto Key = std::make_pair(static_cast<int>(Fields.Pid), static_cast<int>(Fields.Id));
  auto Known = importedMappings().find(Key);
  if (Known != importedMappings().end()) { // opened before: one more reference
    Allocation &A = S.Allocations.at(Known->second);
    ++A.IpcOpens;
    *Pointer = Known->second;
    record(S, Call, "\"pid\": " + std::to_string(Fields.Pid) + ", \"alloc\": " +
                        std::to_string(Fields.Id) + ", " + deviceJson(currentDevice()) +
                        ", \"opens\": " + std::to_string(A.IpcOpens));
    return Success;
  }
  std::string Path =
      "/proc/" + std::to_string(Fields.Pid) + "/fd/" + std::to_string(Fields.Fd);
  int Fd = open(Path.c_str(), O_RDWR | O_CLOEXEC);
  if (Fd < 0)
    return refuse(S, Call, MapFailed);
  const size_t Bytes = static_cast<size_t>(Fields.Bytes);
  void *Memory = mmap(nullptr, pageRound(Bytes), PROT_READ | PROT_WRITE, MAP_SHARED, Fd,
                      static_cast<off_t>(Fields.Offset));
  close(Fd);
  if (Memory == MAP_FAILED)
    return refuse(S, Call, MapFailed);
  auto Address = reinterpret_cast<uintptr_t>(Memory);
  Allocation A{Bytes, S.NextAllocationId++, currentDevice()};
  A.IpcOpens = 1;
  S.Allocations[Address] = A;
  importedMappings()[Key] = Address;
  *Pointer = Address;
  record(S, Call, "\"pid\": " + std::to_string(Fields.Pid) + ", \"alloc\": " +
                      std::to_string(Fields.Id) + ", " + deviceJson(currentDevice()) +
                      ", \"opens\": 1");
  return Success;
}

CUresult cuIpcCloseMemHandle(CUdeviceptr Pointer) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  auto It = S.Allocations.find(static_cast<uintptr_t>(Pointer));
  if (It == S.Allocations.end() || !It->second.IpcOpens)
    return refuse(S, "cuIpcCloseMemHandle", InvalidValue);
  Allocation &A = It->second;
  int Left = --A.IpcOpens;
  record(S, "cuIpcCloseMemHandle",
         "\"alloc\": " + std::to_string(A.Id) + ", \"opens\": " + std::to_string(Left));
  if (Left)
    return Success;
  munmap(reinterpret_cast<void *>(It->first), pageRound(A.Bytes));
  for (auto M = importedMappings().begin(); M != importedMappings().end(); ++M)
    if (M->second == It->first) {
      importedMappings().erase(M);
      break;
    }
  S.Allocations.erase(It);
  return Success;
}

} // extern "C"
