// libtidal_mock_cuda.so: a stand-in for libcuda.so.1 on machines without a GPU,
// loaded through TIDAL_CUDA_DRIVER. It checks the CALL SEQUENCE and the
// argument packing of the cuda target, not PTX execution: device memory is
// host memory (copies are real), a launch records its configuration and its
// parameter bytes (sized from the PTX's .entry), and runs a built-in
// behaviour for a few kernel names. Controlled by environment variables, read
// at each call:
//   TIDAL_MOCK_CUDA_LOG=FILE            one JSON object per call, appended
//   TIDAL_MOCK_CUDA_PTX_OUT=FILE        every PTX image loaded, appended
//   TIDAL_MOCK_CUDA_JIT_FAIL_MARKER=S   PTX containing S fails to load or to be
//                                       added to a link (CUDA_ERROR_INVALID_PTX,
//                                       with a log)
// Loading PTX (cuModuleLoadData, cuModuleLoadDataEx) fails as ptxas does when
// it calls an `.extern .func` it does not define (the driver's own vprintf,
// malloc, free and __assertfail aside); the JIT linker (cuLinkCreate_v2 ..
// cuLinkDestroy, see there) resolves those across its PTX inputs.
//   TIDAL_MOCK_CUDA_FAULT_KERNEL=S      launching a kernel whose name contains S
//                                       succeeds, and then the next call that
//                                       checks for errors (a synchronisation, a
//                                       copy, an allocation, a launch, ...) and
//                                       every later one fail with ILLEGAL_ADDRESS,
//                                       as a real driver reports a fault
//   TIDAL_MOCK_CUDA_OUT_OF_RESOURCES_KERNEL=S
//                                       launching a kernel whose name contains S
//                                       fails with LAUNCH_OUT_OF_RESOURCES (701, as
//                                       too many registers per thread do): an
//                                       error that is not sticky
//   TIDAL_MOCK_CUDA_NO_PROC_ADDRESS=1   cuGetProcAddress_v2 answers
//                                       CUDA_ERROR_NOT_SUPPORTED (dlsym path)
//   TIDAL_MOCK_CUDA_DEVICES=N           device count (1, at most 8)
//   TIDAL_MOCK_CUDA_CC=M.m[,M.m...]     compute capability of device 0, 1, ...
//                                       (the last one for the rest; 9.0)
//   TIDAL_MOCK_CUDA_MAX_THREADS=N       threads per block (1024)
//   TIDAL_MOCK_CUDA_MAX_GRID_X=N        grid x (2147483647)
//   TIDAL_MOCK_CUDA_MAX_SHARED_OPTIN=N  opt-in shared bytes per block (232448)
//   TIDAL_MOCK_CUDA_NOOP_LAUNCHES=1     cuLaunchKernel checks its arguments and
//                                       does nothing else (no log, no
//                                       behaviour): for timing the caller
//   TIDAL_MOCK_CUDA_EVENTS_PENDING=1    a recorded event stays not ready
//                                       (cuEventQuery: CUDA_ERROR_NOT_READY) until
//                                       its stream, the context or the event is
//                                       synchronised; otherwise work is done when
//                                       it is issued and events complete at once
// cuLaunchCooperativeKernel is logged as cuLaunchKernel is; it fails with
// CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE (720) for a grid over the device's
// SMs (132 + 2 x ordinal) x cuOccupancyMaxActiveBlocksPerMultiprocessor
// (2048 threads, at most 32 blocks, per SM).
// Streams and events are numbered from 1 in the log ("stream": 0 is the
// default stream); copies and launches are done when they are issued.
// Devices differ (see "devices" below): device i is "tidal mock GPU i", with
// 132 + 2i multiprocessors, i + 1 GiB of memory, PCI bus id 0x10 + i and a
// UUID whose last byte is i. Allocations, modules, streams and events belong
// to the context current when they are made; their log lines carry its
// "device", and mixing contexts fails as the driver does (a launch of a
// module of another context, an event recorded on another context's stream).
// Built-in behaviours, by kernel name: "fill_seven" writes int32 7 from its
// first device-pointer parameter to the end of that allocation.
// A kernel's static shared bytes (cuFuncGetAttribute) are those of its
// module's `.shared` declarations.
// Module variables (cuModuleGetGlobal_v2) are zeroed memory of the mock's;
// a test makes the next launch write one (tidalMockWriteGlobalOnNextLaunch),
// as a kernel that raises writes its module's exception slot.
// Host memory (page-locked, mapped, managed): see its section at the end.
// cuMemAlloc's memory is shareable with other processes (CUDA IPC,
// MockCudaIpc.cpp, which describes the handle and its errors).


#include "MockCudaState.h"

using namespace tidal_mock;

extern "C" {

CUresult cuInit(unsigned Flags) {
  MOCK_ENTER(S);
  record(S, "cuInit");
  if (Flags != 0)
    return InvalidValue;
  S.Initialised = true;
  return Success;
}

CUresult cuDriverGetVersion(int *Version) {
  MOCK_ENTER(S);
  record(S, "cuDriverGetVersion");
  if (!Version)
    return InvalidValue;
  *Version = 13000;
  return Success;
}

CUresult cuDeviceGetCount(int *Count) {
  MOCK_ENTER(S);
  record(S, "cuDeviceGetCount");
  MOCK_REQUIRE_INIT(S);
  *Count = deviceCount();
  return Success;
}

CUresult cuDeviceGet(int *Device, int Ordinal) {
  MOCK_ENTER(S);
  record(S, "cuDeviceGet");
  MOCK_REQUIRE_INIT(S);
  if (Ordinal < 0 || Ordinal >= deviceCount() || Ordinal >= 8)
    return InvalidDevice;
  *Device = Ordinal;
  return Success;
}

CUresult cuDeviceGetName(char *Name, int Length, int Device) {
  MOCK_ENTER(S);
  record(S, "cuDeviceGetName");
  MOCK_REQUIRE_INIT(S);
  if (Device < 0 || Device >= deviceCount())
    return InvalidDevice;
  std::snprintf(Name, static_cast<size_t>(Length), "tidal mock GPU %d", Device);
  return Success;
}

CUresult cuDeviceGetAttribute(int *Value, int Attribute, int Device) {
  MOCK_ENTER(S);
  record(S, "cuDeviceGetAttribute", "\"attribute\": " + std::to_string(Attribute));
  MOCK_REQUIRE_INIT(S);
  if (Device < 0 || Device >= deviceCount())
    return InvalidDevice;
  int Major, Minor;
  computeCapability(Device, Major, Minor);
  switch (Attribute) {
  case 1: *Value = static_cast<int>(envNumber("TIDAL_MOCK_CUDA_MAX_THREADS", 1024)); return Success;
  case 2: *Value = 1024; return Success;
  case 3: *Value = 1024; return Success;
  case 4: *Value = 64; return Success;
  case 5: *Value = static_cast<int>(envNumber("TIDAL_MOCK_CUDA_MAX_GRID_X", 2147483647)); return Success;
  case 6: *Value = 65535; return Success;
  case 7: *Value = 65535; return Success;
  case 8: *Value = 48 * 1024; return Success;
  case 75: *Value = Major; return Success;
  case 76: *Value = Minor; return Success;
  case 97: *Value = static_cast<int>(envNumber("TIDAL_MOCK_CUDA_MAX_SHARED_OPTIN", 232448)); return Success;
  default: return deviceFact(Attribute, Device, *Value) ? Success : InvalidValue;
  }
}

CUresult cuDeviceTotalMem_v2(size_t *Bytes, int Device) {
  MOCK_ENTER(S);
  record(S, "cuDeviceTotalMem_v2");
  MOCK_REQUIRE_INIT(S);
  if (Device < 0 || Device >= deviceCount())
    return InvalidDevice;
  *Bytes = (size_t(1) << 30) * static_cast<size_t>(Device + 1);
  return Success;
}

CUresult cuDeviceGetUuid_v2(unsigned char *Uuid, int Device) {
  MOCK_ENTER(S);
  record(S, "cuDeviceGetUuid_v2", deviceJson(Device));
  MOCK_REQUIRE_INIT(S);
  if (Device < 0 || Device >= deviceCount())
    return InvalidDevice;
  static const unsigned char Base[16] = {0x7a, 0x1d, 0xa1, 0x00, 0x5e, 0xed, 0x40, 0x11,
                                         0x9c, 0x0d, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x00};
  std::memcpy(Uuid, Base, 16);
  Uuid[15] = static_cast<unsigned char>(Device);
  return Success;
}

CUresult cuDevicePrimaryCtxRetain(void **Context, int Device) {
  MOCK_ENTER(S);
  record(S, "cuDevicePrimaryCtxRetain", "\"device\": " + std::to_string(Device));
  MOCK_REQUIRE_INIT(S);
  if (Device < 0 || Device >= deviceCount() || Device >= 8)
    return InvalidDevice;
  ++S.PrimaryRetains[Device];
  *Context = &ContextTags[Device];
  return Success;
}

CUresult cuDevicePrimaryCtxRelease_v2(int Device) {
  MOCK_ENTER(S);
  record(S, "cuDevicePrimaryCtxRelease_v2", "\"device\": " + std::to_string(Device));
  if (!S.Initialised)
    return NotInitialized;
  if (Device < 0 || Device >= 8 || S.PrimaryRetains[Device] == 0)
    return InvalidContext;
  --S.PrimaryRetains[Device];
  return Success;
}

CUresult cuCtxSetCurrent(void *Context) {
  MOCK_ENTER(S);
  if (!S.Initialised) {
    record(S, "cuCtxSetCurrent");
    return NotInitialized;
  }
  CurrentContext = Context;
  record(S, "cuCtxSetCurrent", deviceJson(currentDevice()));
  return Success;
}

CUresult cuCtxGetCurrent(void **Context) {
  MOCK_ENTER(S);
  record(S, "cuCtxGetCurrent");
  if (!S.Initialised)
    return NotInitialized;
  *Context = CurrentContext;
  return Success;
}

CUresult cuCtxSynchronize() {
  MOCK_ENTER(S);
  record(S, "cuCtxSynchronize", deviceJson(currentDevice()));
  MOCK_REQUIRE_INIT(S);
  if (!CurrentContext)
    return InvalidContext;
  completeEvents(S, nullptr);
  return Success;
}

// The profiler: recorded (a test checks the calls), nothing collected.
CUresult cuProfilerStart() {
  MOCK_ENTER(S);
  record(S, "cuProfilerStart", deviceJson(currentDevice()));
  MOCK_REQUIRE_INIT(S);
  return CurrentContext ? Success : InvalidContext;
}

CUresult cuProfilerStop() {
  MOCK_ENTER(S);
  record(S, "cuProfilerStop", deviceJson(currentDevice()));
  MOCK_REQUIRE_INIT(S);
  return CurrentContext ? Success : InvalidContext;
}

CUresult cuModuleUnload(void *Module) {
  MOCK_ENTER(S);
  record(S, "cuModuleUnload");
  auto It = S.Modules.find(static_cast<MockModule *>(Module));
  if (It == S.Modules.end())
    return InvalidHandle;
  freeModuleVariables(S, *It->second);
  S.Modules.erase(It);
  return observeFault(S);
}

CUresult cuModuleGetFunction(void **Function, void *Module, const char *Name) {
  MOCK_ENTER(S);
  record(S, "cuModuleGetFunction", "\"name\": " + jsonString(Name));
  MOCK_REQUIRE_INIT(S);
  auto It = S.Modules.find(static_cast<MockModule *>(Module));
  if (It == S.Modules.end())
    return InvalidHandle;
  MockModule &M = *It->second;
  auto &Slot = M.Functions[Name];
  if (!Slot) {
    auto F = std::make_unique<MockFunction>();
    F->Name = Name;
    F->Device = M.Device;
    F->Module = &M;
    if (!parseEntryParams(M.PTX, Name, F->ParamSizes)) {
      M.Functions.erase(Name);
      return NotFound;
    }
    Slot = std::move(F);
  }
  *Function = Slot.get();
  return Success;
}

// A module's .global or .const variable: memory of the mock's own, zeroed,
// the same for every call (CUDA_ERROR_NOT_FOUND when the PTX declares none).
CUresult cuModuleGetGlobal_v2(CUdeviceptr *Pointer, size_t *Bytes, void *Module,
                              const char *Name) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  auto It = S.Modules.find(static_cast<MockModule *>(Module));
  if (It == S.Modules.end() || !Name) {
    record(S, "cuModuleGetGlobal_v2", "\"result\": 400");
    return InvalidHandle;
  }
  size_t Size = 0;
  uintptr_t Address = moduleVariable(S, *It->second, Name, Size);
  record(S, "cuModuleGetGlobal_v2", "\"name\": " + jsonString(Name) + ", \"result\": " +
                                        (Address ? "0, \"bytes\": " + std::to_string(Size)
                                                 : std::string("500")));
  if (!Address)
    return NotFound;
  if (Pointer)
    *Pointer = Address;
  if (Bytes)
    *Bytes = Size;
  return Success;
}

// The static shared memory of a module's kernels: the bytes of its
// `.shared .align A .bN name[count];` declarations (not `.extern .shared`,
// the dynamic shared memory), as ptxas would count them for a module of
// one kernel.
static int staticSharedBytesOf(const std::string &PTX) {
  size_t Total = 0;
  size_t Line = 0;
  while (Line < PTX.size()) {
    size_t End = PTX.find('\n', Line);
    if (End == std::string::npos)
      End = PTX.size();
    std::string Text = PTX.substr(Line, End - Line);
    Line = End + 1;
    size_t Shared = Text.find_first_not_of(" \t");
    if (Shared == std::string::npos || Text.compare(Shared, 8, ".shared ") != 0)
      continue; // a declaration, not an instruction (ld.shared) nor .extern
    size_t Type = Text.find(" .", Shared + 7);
    while (Type != std::string::npos && Text.compare(Type, 7, " .align") == 0)
      Type = Text.find(" .", Text.find(' ', Type + 7) + 1);
    size_t Open = Text.find('[', Shared), Close = Text.find(']', Shared);
    if (Type == std::string::npos || Open == std::string::npos || Close == std::string::npos ||
        Close <= Open + 1)
      continue;
    size_t Bits = std::strtoul(Text.c_str() + Type + 3, nullptr, 10); // " .b32" -> 32
    Total += (Bits ? Bits / 8 : 1) * std::strtoull(Text.c_str() + Open + 1, nullptr, 10);
  }
  return static_cast<int>(Total);
}

CUresult cuFuncGetAttribute(int *Value, int Attribute, void *Function) {
  MOCK_ENTER(S);
  record(S, "cuFuncGetAttribute", "\"attribute\": " + std::to_string(Attribute));
  MOCK_REQUIRE_INIT(S);
  auto *F = static_cast<MockFunction *>(Function);
  switch (Attribute) {
  case 0: *Value = static_cast<int>(maxThreadsOf(*F)); return Success;
  case 1: *Value = F->Module ? staticSharedBytesOf(F->Module->PTX) : 0; return Success;
  case 2: *Value = static_cast<int>(envNumber("TIDAL_MOCK_CUDA_FUNC_CONST_BYTES", 0)); return Success;
  case 3: *Value = 16; return Success;   // local bytes per thread
  case 4: *Value = 32; return Success;   // registers per thread
  case 5: *Value = 90; return Success;   // PTX version
  case 6: *Value = 90; return Success;   // binary version
  case 8: *Value = F->MaxDynamicShared; return Success;
  default: return InvalidValue;
  }
}

CUresult cuFuncSetAttribute(void *Function, int Attribute, int Value) {
  MOCK_ENTER(S);
  record(S, "cuFuncSetAttribute",
         "\"attribute\": " + std::to_string(Attribute) + ", \"value\": " + std::to_string(Value));
  MOCK_REQUIRE_INIT(S);
  auto *F = static_cast<MockFunction *>(Function);
  if (Attribute == 9) // the preferred shared memory carveout: a percentage, or -1
    return Value < -1 || Value > 100 ? InvalidValue : Success;
  if (Attribute != 8)
    return InvalidValue;
  if (Value < 0 || Value > envNumber("TIDAL_MOCK_CUDA_MAX_SHARED_OPTIN", 232448))
    return InvalidValue;
  F->MaxDynamicShared = Value;
  return Success;
}

CUresult cuMemAlloc_v2(CUdeviceptr *Pointer, size_t Bytes) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  if (!CurrentContext)
    return InvalidContext;
  if (Bytes == 0)
    return InvalidValue;
  long long FileOffset = -1;
  void *Memory = mapDeviceMemory(Bytes, FileOffset); // zeroed, shareable (IPC)
  if (!Memory)
    return OutOfMemory;
  int Id = S.NextAllocationId++;
  Allocation &Made = S.Allocations[reinterpret_cast<uintptr_t>(Memory)];
  Made = {Bytes, Id, currentDevice()};
  Made.FileOffset = FileOffset;
  *Pointer = reinterpret_cast<uintptr_t>(Memory);
  record(S, "cuMemAlloc_v2", "\"bytes\": " + std::to_string(Bytes) + ", \"alloc\": " +
                                 std::to_string(Id) + ", " + deviceJson(currentDevice()));
  return Success;
}

CUresult cuMemFree_v2(CUdeviceptr Pointer) {
  MOCK_ENTER(S);
  auto It = S.Allocations.find(static_cast<uintptr_t>(Pointer));
  if (It == S.Allocations.end() || It->second.IpcOpens) { // IPC: cuIpcCloseMemHandle's
    record(S, "cuMemFree_v2", "\"alloc\": null");
    return InvalidValue;
  }
  record(S, "cuMemFree_v2", "\"alloc\": " + std::to_string(It->second.Id));
  if (It->second.FileOffset >= 0)
    releaseDeviceMemory(reinterpret_cast<void *>(It->first), It->second.Bytes,
                        It->second.FileOffset);
  else
    std::free(reinterpret_cast<void *>(It->first));
  S.Allocations.erase(It);
  return observeFault(S);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr Destination, const void *Source, size_t Bytes) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  auto *A = findAllocation(S, static_cast<uintptr_t>(Destination), Bytes);
  if (!A)
    return InvalidValue;
  std::memcpy(reinterpret_cast<void *>(Destination), Source, Bytes);
  record(S, "cuMemcpyHtoD_v2",
         "\"bytes\": " + std::to_string(Bytes) + ", \"alloc\": " + std::to_string(A->second.Id));
  return Success;
}

CUresult cuMemcpyDtoH_v2(void *Destination, CUdeviceptr Source, size_t Bytes) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  auto *A = findAllocation(S, static_cast<uintptr_t>(Source), Bytes);
  if (!A)
    return InvalidValue;
  std::memcpy(Destination, reinterpret_cast<const void *>(Source), Bytes);
  record(S, "cuMemcpyDtoH_v2",
         "\"bytes\": " + std::to_string(Bytes) + ", \"alloc\": " + std::to_string(A->second.Id));
  return Success;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr Destination, const void *Source, size_t Bytes,
                              void *Stream) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  auto *A = findAllocation(S, static_cast<uintptr_t>(Destination), Bytes);
  if (!A || streamId(S, Stream) < 0)
    return InvalidValue;
  std::memcpy(reinterpret_cast<void *>(Destination), Source, Bytes);
  record(S, "cuMemcpyHtoDAsync_v2",
         "\"bytes\": " + std::to_string(Bytes) + ", \"alloc\": " + std::to_string(A->second.Id) +
             ", \"offset\": " + std::to_string(Destination - A->first) +
             ", \"stream\": " + std::to_string(streamId(S, Stream)));
  return Success;
}

CUresult cuMemcpyDtoHAsync_v2(void *Destination, CUdeviceptr Source, size_t Bytes, void *Stream) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  auto *A = findAllocation(S, static_cast<uintptr_t>(Source), Bytes);
  if (!A || streamId(S, Stream) < 0)
    return InvalidValue;
  std::memcpy(Destination, reinterpret_cast<const void *>(Source), Bytes);
  record(S, "cuMemcpyDtoHAsync_v2",
         "\"bytes\": " + std::to_string(Bytes) + ", \"alloc\": " + std::to_string(A->second.Id) +
             ", \"offset\": " + std::to_string(Source - A->first) +
             ", \"stream\": " + std::to_string(streamId(S, Stream)));
  return Success;
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr Destination, CUdeviceptr Source, size_t Bytes) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  auto *To = findAllocation(S, static_cast<uintptr_t>(Destination), Bytes);
  auto *From = findAllocation(S, static_cast<uintptr_t>(Source), Bytes);
  if (!To || !From)
    return InvalidValue;
  std::memmove(reinterpret_cast<void *>(Destination), reinterpret_cast<const void *>(Source), Bytes);
  record(S, "cuMemcpyDtoD_v2", "\"bytes\": " + std::to_string(Bytes));
  return Success;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr Destination, CUdeviceptr Source, size_t Bytes,
                              void *Stream) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  auto *To = findAllocation(S, static_cast<uintptr_t>(Destination), Bytes);
  auto *From = findAllocation(S, static_cast<uintptr_t>(Source), Bytes);
  if (!To || !From || streamId(S, Stream) < 0)
    return InvalidValue;
  std::memmove(reinterpret_cast<void *>(Destination), reinterpret_cast<const void *>(Source), Bytes);
  record(S, "cuMemcpyDtoDAsync_v2", "\"bytes\": " + std::to_string(Bytes) +
                                        ", \"stream\": " + std::to_string(streamId(S, Stream)));
  return Success;
}

CUresult cuMemGetInfo_v2(size_t *Free, size_t *Total) {
  MOCK_ENTER(S);
  record(S, "cuMemGetInfo_v2", deviceJson(currentDevice()));
  MOCK_REQUIRE_INIT(S);
  if (!CurrentContext)
    return InvalidContext;
  // The current context's device: its memory less its allocations.
  size_t Used = 0;
  for (auto &[Pointer, A] : S.Allocations)
    if (A.Device == currentDevice() && !A.IpcOpens) // another process's memory aside
      Used += A.Bytes;
  *Total = (size_t(1) << 30) * static_cast<size_t>(currentDevice() + 1);
  *Free = *Total > Used ? *Total - Used : 0;
  return Success;
}

CUresult cuStreamCreate(void **Stream, unsigned Flags) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  if (!CurrentContext)
    return InvalidContext;
  auto Owned = std::make_unique<MockStream>(MockStream{S.NextStreamId++, currentDevice()});
  *Stream = Owned.get();
  record(S, "cuStreamCreate", "\"stream\": " + std::to_string(Owned->Id) + ", \"flags\": " +
                                  std::to_string(Flags) + ", " + deviceJson(Owned->Device));
  S.Streams[Owned.get()] = std::move(Owned);
  return Success;
}

CUresult cuStreamDestroy_v2(void *Stream) {
  MOCK_ENTER(S);
  int Id = streamId(S, Stream);
  record(S, "cuStreamDestroy_v2", "\"stream\": " + std::to_string(Id));
  if (Id <= 0)
    return InvalidHandle;
  for (auto &[Handle, E] : S.Events)
    if (E->Stream == Stream)
      E->Stream = nullptr, E->Done = true;
  S.Streams.erase(static_cast<MockStream *>(Stream));
  return observeFault(S);
}

CUresult cuStreamSynchronize(void *Stream) {
  MOCK_ENTER(S);
  record(S, "cuStreamSynchronize", "\"stream\": " + std::to_string(streamId(S, Stream)));
  MOCK_REQUIRE_INIT(S);
  if (streamId(S, Stream) < 0)
    return InvalidHandle;
  completeEvents(S, Stream);
  return Success;
}

CUresult cuEventCreate(void **Event, unsigned Flags) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  if (!CurrentContext)
    return InvalidContext;
  auto Owned = std::make_unique<MockEvent>();
  Owned->Id = S.NextEventId++;
  Owned->Flags = Flags;
  Owned->Device = currentDevice();
  *Event = Owned.get();
  record(S, "cuEventCreate", "\"event\": " + std::to_string(Owned->Id) + ", \"flags\": " +
                                 std::to_string(Flags) + ", " + deviceJson(Owned->Device));
  S.Events[Owned.get()] = std::move(Owned);
  return Success;
}

static MockEvent *findEvent(MockState &S, void *Event) {
  auto It = S.Events.find(static_cast<MockEvent *>(Event));
  return It == S.Events.end() ? nullptr : It->second.get();
}

CUresult cuEventRecord(void *Event, void *Stream) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  MockEvent *E = findEvent(S, Event);
  int Id = streamId(S, Stream);
  if (!E || Id < 0)
    return InvalidHandle;
  // The event and the stream (a default stream: the current context's) must
  // belong to one context.
  int StreamDevice = Id == 0 ? currentDevice() : static_cast<MockStream *>(Stream)->Device;
  if (StreamDevice != E->Device) {
    record(S, "cuEventRecord", "\"event\": " + std::to_string(E->Id) +
                                   ", \"result\": 400, \"event_device\": " +
                                   std::to_string(E->Device) +
                                   ", \"stream_device\": " + std::to_string(StreamDevice));
    return InvalidHandle;
  }
  record(S, "cuEventRecord", "\"event\": " + std::to_string(E->Id) + ", \"stream\": " +
                                 std::to_string(Id));
  E->Recorded = true;
  E->Stream = static_cast<MockStream *>(Stream);
  E->Done = envNumber("TIDAL_MOCK_CUDA_EVENTS_PENDING", 0) == 0;
  E->Tick = ++S.Ticks;
  return Success;
}

CUresult cuEventQuery(void *Event) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  MockEvent *E = findEvent(S, Event);
  if (!E)
    return InvalidHandle;
  record(S, "cuEventQuery", "\"event\": " + std::to_string(E->Id) + ", \"done\": " +
                                (E->Done ? "true" : "false"));
  return E->Done ? Success : NotReady;
}

CUresult cuEventSynchronize(void *Event) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  MockEvent *E = findEvent(S, Event);
  if (!E)
    return InvalidHandle;
  record(S, "cuEventSynchronize", "\"event\": " + std::to_string(E->Id));
  E->Done = true;
  return Success;
}

CUresult cuEventElapsedTime(float *Milliseconds, void *Start, void *End) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  MockEvent *A = findEvent(S, Start), *B = findEvent(S, End);
  record(S, "cuEventElapsedTime");
  if (!A || !B)
    return InvalidHandle;
  if ((A->Flags & 2) || (B->Flags & 2) || !A->Recorded || !B->Recorded)
    return InvalidHandle; // CUDA_ERROR_INVALID_HANDLE, as the driver
  if (!A->Done || !B->Done)
    return NotReady;
  *Milliseconds = static_cast<float>(B->Tick - A->Tick) * 0.5f; // half a millisecond per tick
  return Success;
}

CUresult cuStreamWaitEvent(void *Stream, void *Event, unsigned Flags) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  MockEvent *E = findEvent(S, Event);
  if (!E || streamId(S, Stream) < 0)
    return InvalidHandle;
  record(S, "cuStreamWaitEvent", "\"stream\": " + std::to_string(streamId(S, Stream)) +
                                     ", \"event\": " + std::to_string(E->Id));
  return Success;
}

CUresult cuEventDestroy_v2(void *Event) {
  MOCK_ENTER(S);
  MockEvent *E = findEvent(S, Event);
  record(S, "cuEventDestroy_v2", "\"event\": " + std::to_string(E ? E->Id : -1));
  if (!E)
    return InvalidHandle;
  S.Events.erase(E);
  return observeFault(S);
}

// cuLaunchKernel and cuLaunchCooperativeKernel (Call): the checks, the log.
static CUresult launchAs(MockState &S, const char *Call, void *Function, unsigned GridX,
                         unsigned GridY, unsigned GridZ, unsigned BlockX, unsigned BlockY,
                         unsigned BlockZ, unsigned Shared, void *Stream, void **Params,
                         void **Extra) {
  auto *F = static_cast<MockFunction *>(Function);
  if (F->Device != currentDevice()) { // a kernel of another context
    record(S, Call, "\"kernel\": " + jsonString(F->Name) +
                                    ", \"result\": 201, \"module_device\": " +
                                    std::to_string(F->Device) + ", " + deviceJson(currentDevice()));
    return InvalidContext;
  }
  // The checks the real driver makes, so that a missing check of ours shows.
  if (uint64_t(BlockX) * BlockY * BlockZ > uint64_t(envNumber("TIDAL_MOCK_CUDA_MAX_THREADS", 1024)) ||
      GridX > uint64_t(envNumber("TIDAL_MOCK_CUDA_MAX_GRID_X", 2147483647)) || GridY > 65535 ||
      GridZ > 65535 || BlockZ > 64 || !GridX || !GridY || !GridZ || !BlockX || !BlockY || !BlockZ)
    return InvalidValue;
  if (Shared > static_cast<unsigned>(F->MaxDynamicShared))
    return InvalidValue;
  // A block over the kernel's .maxntid (launch_bounds): CUDA_ERROR_INVALID_VALUE.
  if (uint64_t(BlockX) * BlockY * BlockZ > maxThreadsOf(*F)) {
    record(S, Call, "\"kernel\": " + jsonString(F->Name) + ", \"result\": 1, \"over\": "
                    "\"maxntid\"");
    return InvalidValue;
  }
  if (Extra || (!Params && !F->ParamSizes.empty()))
    return InvalidValue;
  // For the launch benchmark: a launch the driver does nothing for, so that
  // what is timed is the caller's share.
  static const bool NoOpLaunches = envNumber("TIDAL_MOCK_CUDA_NOOP_LAUNCHES", 0) != 0;
  if (NoOpLaunches) {
    ++S.Calls[Call];
    return Success;
  }
  const char *TooBig = std::getenv("TIDAL_MOCK_CUDA_OUT_OF_RESOURCES_KERNEL");
  if (TooBig && *TooBig && F->Name.find(TooBig) != std::string::npos) {
    record(S, Call, "\"kernel\": " + jsonString(F->Name) + ", \"result\": 701");
    return LaunchOutOfResources;
  }
  Launch L{F->Name, {GridX, GridY, GridZ, BlockX, BlockY, BlockZ}, Shared, {}};
  std::string Json = "\"kernel\": " + jsonString(F->Name) + ", \"grid\": [" +
                     std::to_string(GridX) + ", " + std::to_string(GridY) + ", " +
                     std::to_string(GridZ) + "], \"block\": [" + std::to_string(BlockX) + ", " +
                     std::to_string(BlockY) + ", " + std::to_string(BlockZ) +
                     "], \"shared\": " + std::to_string(Shared) +
                     ", \"stream\": " + std::to_string(streamId(S, Stream)) + ", " +
                     deviceJson(currentDevice()) + ", \"params\": [";
  uintptr_t FirstDevicePointer = 0;
  for (size_t I = 0; I < F->ParamSizes.size(); ++I) {
    const auto *Bytes = static_cast<const uint8_t *>(Params[I]);
    L.Params.emplace_back(Bytes, Bytes + F->ParamSizes[I]);
    Json += std::string(I ? ", " : "") + "{\"hex\": \"" + hexOf(Bytes, F->ParamSizes[I]) + "\"";
    if (F->ParamSizes[I] == 8) {
      uint64_t Value;
      std::memcpy(&Value, Bytes, 8);
      if (auto *A = findAllocation(S, static_cast<uintptr_t>(Value))) {
        Json += ", \"alloc\": " + std::to_string(A->second.Id) +
                ", \"offset\": " + std::to_string(Value - A->first) +
                ", \"alloc_device\": " + std::to_string(A->second.Device);
        if (!FirstDevicePointer)
          FirstDevicePointer = static_cast<uintptr_t>(Value);
      }
    }
    Json += "}";
  }
  Json += "]";
  S.Launches.push_back(std::move(L));
  // A variable the test asked this launch to write (the exception slot a
  // raising kernel writes): it must be one of the kernel's module.
  if (S.PendingGlobalWrite) {
    S.PendingGlobalWrite = false;
    size_t Size = 0;
    uintptr_t Address =
        F->Module ? moduleVariable(S, *F->Module, S.PendingGlobalName, Size) : 0;
    if (!Address || S.PendingGlobalBytes.size() > Size) {
      record(S, Call, "\"kernel\": " + jsonString(F->Name) + ", \"result\": 500, " +
                          "\"missing_global\": " + jsonString(S.PendingGlobalName));
      return NotFound;
    }
    std::memcpy(reinterpret_cast<void *>(Address), S.PendingGlobalBytes.data(),
                S.PendingGlobalBytes.size());
    Json += ", \"wrote_global\": " + jsonString(S.PendingGlobalName);
  }
  record(S, Call, Json);

  if (F->Name.find("fill_seven") != std::string::npos && FirstDevicePointer) {
    auto *A = findAllocation(S, FirstDevicePointer);
    for (uintptr_t P = FirstDevicePointer; P + 4 <= A->first + A->second.Bytes; P += 4) {
      int32_t Seven = 7;
      std::memcpy(reinterpret_cast<void *>(P), &Seven, 4);
    }
  }
  const char *Fault = std::getenv("TIDAL_MOCK_CUDA_FAULT_KERNEL");
  if (Fault && *Fault && F->Name.find(Fault) != std::string::npos)
    S.FaultPending = true;
  return Success;
}

CUresult cuGetErrorName(CUresult Result, const char **Name) {
  for (const ErrorText &E : Errors)
    if (E.Result == Result) {
      *Name = E.Name;
      return Success;
    }
  *Name = nullptr;
  return InvalidValue;
}

CUresult cuGetErrorString(CUresult Result, const char **Description) {
  for (const ErrorText &E : Errors)
    if (E.Result == Result) {
      *Description = E.Description;
      return Success;
    }
  *Description = nullptr;
  return InvalidValue;
}

CUresult cuGetProcAddress_v2(const char *Symbol, void **Function, int Version, uint64_t Flags,
                             int *Status);

// --- for the tests: what the mock saw ----------------------------------------------

int tidalMockCallCount(const char *Call) {
  MOCK_ENTER(S);
  auto It = S.Calls.find(Call);
  return It == S.Calls.end() ? 0 : It->second;
}
int tidalMockLiveAllocations() {
  MOCK_ENTER(S);
  return static_cast<int>(std::count_if(S.Allocations.begin(), S.Allocations.end(),
                                        [](const auto &A) { return !A.second.ModuleGlobal; }));
}
// The next launch writes Size bytes into the variable Name of the kernel's
// module (from offset 0), as a kernel that writes it would; that launch fails
// with CUDA_ERROR_NOT_FOUND (logged with "missing_global") when the module's
// PTX declares no such variable or a smaller one. For the exception slot
// (tidal/Contract.h): the mock runs no kernel, so a test plays its raise.
void tidalMockWriteGlobalOnNextLaunch(const char *Name, const void *Bytes, size_t Size) {
  MOCK_ENTER(S);
  S.PendingGlobalName = Name ? Name : "";
  const auto *Data = static_cast<const uint8_t *>(Bytes);
  S.PendingGlobalBytes.assign(Data, Data + (Data ? Size : 0));
  S.PendingGlobalWrite = true;
}
int tidalMockLiveModules() {
  MOCK_ENTER(S);
  return static_cast<int>(S.Modules.size());
}
int tidalMockLiveLinks() {
  MOCK_ENTER(S);
  return static_cast<int>(S.Links.size());
}
int tidalMockPrimaryRetains(int Device) {
  MOCK_ENTER(S);
  return Device >= 0 && Device < 8 ? S.PrimaryRetains[Device] : -1;
}
// The device of the calling thread's current context, -1 for none.
int tidalMockCurrentDevice() {
  MOCK_ENTER(S);
  return currentDevice();
}
// The device whose context allocated Pointer, -1 when it is no allocation.
int tidalMockAllocationDevice(unsigned long long Pointer) {
  MOCK_ENTER(S);
  auto *A = findAllocation(S, static_cast<uintptr_t>(Pointer));
  return A ? A->second.Device : -1;
}
int tidalMockLaunchCount() {
  MOCK_ENTER(S);
  return static_cast<int>(S.Launches.size());
}
// The last launch: its grid and block (6 values) and shared bytes; returns
// its parameter count, -1 when nothing was launched.
int tidalMockLastLaunch(unsigned *Dims, unsigned *Shared) {
  MOCK_ENTER(S);
  if (S.Launches.empty())
    return -1;
  const Launch &L = S.Launches.back();
  std::memcpy(Dims, L.Dims, sizeof L.Dims);
  *Shared = L.Shared;
  return static_cast<int>(L.Params.size());
}
// Copies parameter Index of the last launch (at most Capacity bytes);
// returns its size.
int tidalMockLastLaunchParam(int Index, void *Out, int Capacity) {
  MOCK_ENTER(S);
  if (S.Launches.empty() || Index < 0 || static_cast<size_t>(Index) >= S.Launches.back().Params.size())
    return -1;
  const auto &Bytes = S.Launches.back().Params[static_cast<size_t>(Index)];
  std::memcpy(Out, Bytes.data(), std::min(Bytes.size(), static_cast<size_t>(Capacity)));
  return static_cast<int>(Bytes.size());
}
// How many calls a fault made fail (those a caller that knows the context is
// unusable does not make).
int tidalMockFaultReturns() {
  MOCK_ENTER(S);
  return S.FaultReturns;
}
// Forgets a fault and the records (the mock is shared by the tests of one process).
void tidalMockReset() {
  MOCK_ENTER(S);
  S.Sticky = Success;
  S.FaultPending = false;
  S.FaultReturns = 0;
  S.Calls.clear();
  S.Launches.clear();
  S.PendingGlobalWrite = false;
}

} // extern "C"

// Modules and the JIT linker: MockCudaModules.cpp.
extern "C" {
CUresult cuModuleLoadDataEx(void **Module, const void *Image, unsigned Options, int *OptionIds,
                            void **OptionValues);
CUresult cuModuleLoadData(void **Module, const void *Image);
CUresult cuLinkCreate_v2(unsigned Options, int *OptionIds, void **OptionValues, void **State);
CUresult cuLinkAddData_v2(void *State, int Type, void *Data, size_t Bytes, const char *Name,
                          unsigned Options, int *OptionIds, void **OptionValues);
CUresult cuLinkComplete(void *State, void **Image, size_t *Bytes);
CUresult cuLinkDestroy(void *State);
}

// Host memory, defined in its section at the end of the file.
extern "C" {
CUresult cuMemHostAlloc(void **Host, size_t Bytes, unsigned Flags);
CUresult cuLaunchKernel(void *Function, unsigned GridX, unsigned GridY, unsigned GridZ,
                        unsigned BlockX, unsigned BlockY, unsigned BlockZ, unsigned Shared,
                        void *Stream, void **Params, void **Extra) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  if (!CurrentContext)
    return InvalidContext;
  return launchAs(S, "cuLaunchKernel", Function, GridX, GridY, GridZ, BlockX, BlockY, BlockZ,
                  Shared, Stream, Params, Extra);
}

// Resident blocks per multiprocessor: 2048 threads and 32 blocks at most.
static int mockActiveBlocksPerMultiprocessor(int BlockSize) {
  return BlockSize < 1 || BlockSize > 1024 ? 0 : std::min(2048 / BlockSize, 32);
}

// A cooperative launch: as cuLaunchKernel, and the grid must fit on the
// device at once (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, 720, else).
CUresult cuLaunchCooperativeKernel(void *Function, unsigned GridX, unsigned GridY,
                                   unsigned GridZ, unsigned BlockX, unsigned BlockY,
                                   unsigned BlockZ, unsigned Shared, void *Stream,
                                   void **Params) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  if (!CurrentContext)
    return InvalidContext;
  auto *F = static_cast<MockFunction *>(Function);
  const uint64_t Threads = uint64_t(BlockX) * BlockY * BlockZ;
  const uint64_t Resident = uint64_t(mockActiveBlocksPerMultiprocessor(
                                static_cast<int>(std::min<uint64_t>(Threads, 1 << 20)))) *
                            uint64_t(132 + 2 * F->Device);
  if (uint64_t(GridX) * GridY * GridZ > Resident) {
    record(S, "cuLaunchCooperativeKernel",
           "\"kernel\": " + jsonString(F->Name) + ", \"result\": 720");
    return static_cast<CUresult>(720);
  }
  return launchAs(S, "cuLaunchCooperativeKernel", Function, GridX, GridY, GridZ, BlockX, BlockY,
                  BlockZ, Shared, Stream, Params, nullptr);
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *Blocks, void *Function, int BlockSize,
                                                     size_t DynamicSMemSize) {
  MOCK_ENTER(S);
  record(S, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
         "\"block\": " + std::to_string(BlockSize) +
             ", \"dynamic_shared\": " + std::to_string(DynamicSMemSize));
  MOCK_REQUIRE_INIT(S);
  auto *F = static_cast<MockFunction *>(Function);
  if (!F || !Blocks || BlockSize < 1 || BlockSize > 1024 ||
      DynamicSMemSize > static_cast<size_t>(F->MaxDynamicShared))
  {
    record(S, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
           "\"result\": " + std::to_string(InvalidValue));
    return InvalidValue;
  }
  *Blocks = mockActiveBlocksPerMultiprocessor(BlockSize);
  return Success;
}

CUresult cuMemFreeHost(void *Host);
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *Pointer, void *Host, unsigned Flags);
CUresult cuMemHostRegister_v2(void *Host, size_t Bytes, unsigned Flags);
CUresult cuMemHostUnregister(void *Host);
CUresult cuMemAllocManaged(CUdeviceptr *Pointer, size_t Bytes, unsigned Flags);
CUresult cuOccupancyMaxPotentialBlockSize(int *MinGridSize, int *BlockSize, void *Function,
                                          void *BlockSizeToDynamicSMemSize,
                                          size_t DynamicSMemSize, int BlockSizeLimit);
// CUDA IPC: MockCudaIpc.cpp.
CUresult cuIpcGetMemHandle(MockIpcMemHandle *Handle, CUdeviceptr Pointer);
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *Pointer, MockIpcMemHandle Handle, unsigned Flags);
CUresult cuIpcCloseMemHandle(CUdeviceptr Pointer);
CUresult cuMemGetAddressRange_v2(CUdeviceptr *Base, size_t *Bytes, CUdeviceptr Pointer);
}

namespace {

struct ProcEntry {
  const char *Name;
  void *Function;
};

} // namespace

extern "C" CUresult cuGetProcAddress_v2(const char *Symbol, void **Function, int Version,
                                        uint64_t Flags, int *Status) {
  {
    MOCK_ENTER(S);
    record(S, "cuGetProcAddress_v2", "\"symbol\": " + jsonString(Symbol));
  }
  const char *Off = std::getenv("TIDAL_MOCK_CUDA_NO_PROC_ADDRESS");
  if (Off && *Off && std::strcmp(Off, "0") != 0)
    return NotSupported;
  if (!Symbol || !Function || Flags != 0)
    return InvalidValue;
  // Base names, answered with the version a CUDA 12 caller gets.
  static const ProcEntry Entries[] = {
      {"cuInit", reinterpret_cast<void *>(&cuInit)},
      {"cuDriverGetVersion", reinterpret_cast<void *>(&cuDriverGetVersion)},
      {"cuDeviceGetCount", reinterpret_cast<void *>(&cuDeviceGetCount)},
      {"cuDeviceGet", reinterpret_cast<void *>(&cuDeviceGet)},
      {"cuDeviceGetName", reinterpret_cast<void *>(&cuDeviceGetName)},
      {"cuDeviceGetAttribute", reinterpret_cast<void *>(&cuDeviceGetAttribute)},
      {"cuDeviceTotalMem", reinterpret_cast<void *>(&cuDeviceTotalMem_v2)},
      {"cuDeviceGetUuid", reinterpret_cast<void *>(&cuDeviceGetUuid_v2)},
      {"cuDevicePrimaryCtxRetain", reinterpret_cast<void *>(&cuDevicePrimaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease", reinterpret_cast<void *>(&cuDevicePrimaryCtxRelease_v2)},
      {"cuCtxSetCurrent", reinterpret_cast<void *>(&cuCtxSetCurrent)},
      {"cuCtxGetCurrent", reinterpret_cast<void *>(&cuCtxGetCurrent)},
      {"cuCtxSynchronize", reinterpret_cast<void *>(&cuCtxSynchronize)},
      {"cuProfilerStart", reinterpret_cast<void *>(&cuProfilerStart)},
      {"cuProfilerStop", reinterpret_cast<void *>(&cuProfilerStop)},
      {"cuModuleLoadDataEx", reinterpret_cast<void *>(&cuModuleLoadDataEx)},
      {"cuModuleLoadData", reinterpret_cast<void *>(&cuModuleLoadData)},
      {"cuModuleUnload", reinterpret_cast<void *>(&cuModuleUnload)},
      {"cuLinkCreate", reinterpret_cast<void *>(&cuLinkCreate_v2)},
      {"cuLinkAddData", reinterpret_cast<void *>(&cuLinkAddData_v2)},
      {"cuLinkComplete", reinterpret_cast<void *>(&cuLinkComplete)},
      {"cuLinkDestroy", reinterpret_cast<void *>(&cuLinkDestroy)},
      {"cuModuleGetFunction", reinterpret_cast<void *>(&cuModuleGetFunction)},
      {"cuModuleGetGlobal", reinterpret_cast<void *>(&cuModuleGetGlobal_v2)},
      {"cuFuncGetAttribute", reinterpret_cast<void *>(&cuFuncGetAttribute)},
      {"cuFuncSetAttribute", reinterpret_cast<void *>(&cuFuncSetAttribute)},
      {"cuMemAlloc", reinterpret_cast<void *>(&cuMemAlloc_v2)},
      {"cuMemFree", reinterpret_cast<void *>(&cuMemFree_v2)},
      {"cuMemcpyHtoD", reinterpret_cast<void *>(&cuMemcpyHtoD_v2)},
      {"cuMemcpyDtoH", reinterpret_cast<void *>(&cuMemcpyDtoH_v2)},
      {"cuLaunchKernel", reinterpret_cast<void *>(&cuLaunchKernel)},
      {"cuLaunchCooperativeKernel", reinterpret_cast<void *>(&cuLaunchCooperativeKernel)},
      {"cuOccupancyMaxActiveBlocksPerMultiprocessor",
       reinterpret_cast<void *>(&cuOccupancyMaxActiveBlocksPerMultiprocessor)},
      {"cuMemcpyHtoDAsync", reinterpret_cast<void *>(&cuMemcpyHtoDAsync_v2)},
      {"cuMemcpyDtoHAsync", reinterpret_cast<void *>(&cuMemcpyDtoHAsync_v2)},
      {"cuMemcpyDtoD", reinterpret_cast<void *>(&cuMemcpyDtoD_v2)},
      {"cuMemcpyDtoDAsync", reinterpret_cast<void *>(&cuMemcpyDtoDAsync_v2)},
      {"cuMemGetInfo", reinterpret_cast<void *>(&cuMemGetInfo_v2)},
      {"cuStreamCreate", reinterpret_cast<void *>(&cuStreamCreate)},
      {"cuStreamDestroy", reinterpret_cast<void *>(&cuStreamDestroy_v2)},
      {"cuStreamSynchronize", reinterpret_cast<void *>(&cuStreamSynchronize)},
      {"cuStreamWaitEvent", reinterpret_cast<void *>(&cuStreamWaitEvent)},
      {"cuEventCreate", reinterpret_cast<void *>(&cuEventCreate)},
      {"cuEventRecord", reinterpret_cast<void *>(&cuEventRecord)},
      {"cuEventQuery", reinterpret_cast<void *>(&cuEventQuery)},
      {"cuEventSynchronize", reinterpret_cast<void *>(&cuEventSynchronize)},
      {"cuEventElapsedTime", reinterpret_cast<void *>(&cuEventElapsedTime)},
      {"cuEventDestroy", reinterpret_cast<void *>(&cuEventDestroy_v2)},
      // host memory
      {"cuMemHostAlloc", reinterpret_cast<void *>(&cuMemHostAlloc)},
      {"cuMemFreeHost", reinterpret_cast<void *>(&cuMemFreeHost)},
      {"cuMemHostGetDevicePointer", reinterpret_cast<void *>(&cuMemHostGetDevicePointer_v2)},
      {"cuMemHostRegister", reinterpret_cast<void *>(&cuMemHostRegister_v2)},
      {"cuMemHostUnregister", reinterpret_cast<void *>(&cuMemHostUnregister)},
      {"cuMemAllocManaged", reinterpret_cast<void *>(&cuMemAllocManaged)},
      {"cuOccupancyMaxPotentialBlockSize",
       reinterpret_cast<void *>(&cuOccupancyMaxPotentialBlockSize)},
      // CUDA IPC (MockCudaIpc.cpp)
      {"cuIpcGetMemHandle", reinterpret_cast<void *>(&cuIpcGetMemHandle)},
      {"cuIpcOpenMemHandle", reinterpret_cast<void *>(&cuIpcOpenMemHandle_v2)},
      {"cuIpcCloseMemHandle", reinterpret_cast<void *>(&cuIpcCloseMemHandle)},
      {"cuMemGetAddressRange", reinterpret_cast<void *>(&cuMemGetAddressRange_v2)},
      {"cuGetErrorName", reinterpret_cast<void *>(&cuGetErrorName)},
      {"cuGetErrorString", reinterpret_cast<void *>(&cuGetErrorString)},
  };
  for (const ProcEntry &E : Entries)
    if (std::strcmp(E.Name, Symbol) == 0) {
      if (Version < 12000) {
        if (Status)
          *Status = 2; // CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
        *Function = nullptr;
        return NotFound;
      }
      *Function = E.Function;
      if (Status)
        *Status = 0;
      return Success;
    }
  *Function = nullptr;
  if (Status)
    *Status = 1; // CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
  return NotFound;
}
