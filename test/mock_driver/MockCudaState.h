// The mock driver's state and helpers, shared by its files
// (MockCudaDriver.cpp: devices, contexts, modules, memory, streams, events,
// launches; MockCudaHostMemory.cpp: page-locked, mapped and managed host
// memory, occupancy). One state for the library: functions are inline, so
// state()'s static is one object.
#ifndef TIDAL_MOCK_CUDA_STATE_H
#define TIDAL_MOCK_CUDA_STATE_H

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include <sys/mman.h>
#include <unistd.h>

#include "tidal/PtxText.h"

namespace tidal_mock {


using CUresult = int;
using CUdeviceptr = unsigned long long;

inline constexpr CUresult Success = 0;
inline constexpr CUresult InvalidValue = 1;
inline constexpr CUresult OutOfMemory = 2;
inline constexpr CUresult NotInitialized = 3;
inline constexpr CUresult NoDevice = 100;
inline constexpr CUresult InvalidDevice = 101;
inline constexpr CUresult InvalidContext = 201;
inline constexpr CUresult MapFailed = 205;
inline constexpr CUresult InvalidPtx = 218;
inline constexpr CUresult InvalidImage = 200;
inline constexpr CUresult InvalidHandle = 400;
inline constexpr CUresult NotFound = 500;
inline constexpr CUresult NotReady = 600;
inline constexpr CUresult IllegalAddress = 700;
inline constexpr CUresult LaunchOutOfResources = 701;
inline constexpr CUresult NotSupported = 801;
inline constexpr CUresult HostMemoryAlreadyRegistered = 712;
inline constexpr CUresult HostMemoryNotRegistered = 713;

struct ErrorText {
  CUresult Result;
  const char *Name, *Description;
};
inline constexpr ErrorText Errors[] = {
    {Success, "CUDA_SUCCESS", "no error"},
    {InvalidValue, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {OutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {NotInitialized, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {NoDevice, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {InvalidDevice, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {InvalidContext, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {MapFailed, "CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed"},
    {InvalidPtx, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {InvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {NotFound, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {NotReady, "CUDA_ERROR_NOT_READY", "device not ready"},
    {IllegalAddress, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {LaunchOutOfResources, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {NotSupported, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {HostMemoryAlreadyRegistered, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
     "part or all of the requested memory range is already mapped"},
    {HostMemoryNotRegistered, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
     "pointer does not correspond to a registered memory region"},
};

inline long envNumber(const char *Name, long Default) {
  const char *Text = std::getenv(Name);
  return Text && *Text ? std::strtol(Text, nullptr, 0) : Default;
}

struct MockModule;

struct MockFunction {
  std::string Name;
  int Device = 0; // the context its module was loaded in
  MockModule *Module = nullptr;
  std::vector<size_t> ParamSizes;
  int MaxDynamicShared = 48 * 1024;
};

struct MockModule {
  std::string PTX;
  int Device = 0;
  std::map<std::string, std::unique_ptr<MockFunction>> Functions;
  // Its .global/.const variables that cuModuleGetGlobal was asked for (or a
  // test hook wrote), each in memory of its own (zeroed: initialisers are
  // not read), by name.
  std::map<std::string, uintptr_t> Globals;
};

// A link in progress (cuLinkCreate .. cuLinkDestroy): its PTX inputs by
// name, the error log the caller gave cuLinkCreate, and once complete the
// image, which cuModuleLoadData takes.
struct MockLink {
  std::vector<std::pair<std::string, std::string>> Inputs; // (name, PTX)
  // Binary inputs (cubin, fatbin, object, archive): (name, CUjitInputType),
  // and the names their string tables hold, which count as defined.
  std::vector<std::pair<std::string, int>> Binaries;
  std::vector<std::string> BinarySymbols;
  char *ErrorLog = nullptr;
  size_t ErrorLogSize = 0;
  void **ErrorLogSizeSlot = nullptr; // where the length written goes back
  std::string Image;
};

struct Allocation {
  size_t Bytes;
  int Id;
  int Device = 0; // the context it was allocated in
  bool ModuleGlobal = false; // a module's variable (freed with the module)
  // cuMemAlloc's memory is a mapping of the process's device-memory file
  // (MockCudaIpc.cpp): its offset there, -1 for other memory (calloc'd).
  long long FileOffset = -1;
  // Mapped by cuIpcOpenMemHandle from another process (MockCudaIpc.cpp):
  // how many opens cuIpcCloseMemHandle has yet to undo; 0 for other memory.
  int IpcOpens = 0;
};

// The device-memory file (MockCudaIpc.cpp): cuMemAlloc maps Bytes (> 0) of
// it, at an offset never used before, so that another process can map the
// same bytes; null when that fails. Release unmaps them and frees the file's
// pages. Called with the state's lock held.
void *mapDeviceMemory(size_t Bytes, long long &FileOffset);
// CUipcMemHandle, passed by value to cuIpcOpenMemHandle.
struct MockIpcMemHandle {
  char Reserved[64];
};
void releaseDeviceMemory(void *Memory, size_t Bytes, long long FileOffset);

struct Launch {
  std::string Kernel;
  unsigned Dims[6];
  unsigned Shared;
  std::vector<std::vector<uint8_t>> Params;
};

struct MockStream {
  int Id;
  int Device = 0;
};

struct MockEvent {
  int Id;
  int Device = 0;
  unsigned Flags;
  bool Recorded = false;
  bool Done = true;
  MockStream *Stream = nullptr;
  long long Tick = 0;
};

struct MockState {
  std::map<MockStream *, std::unique_ptr<MockStream>> Streams;
  std::map<MockEvent *, std::unique_ptr<MockEvent>> Events;
  int NextStreamId = 1, NextEventId = 1;
  long long Ticks = 0; // a clock: one tick per call that does work
  std::mutex Lock;
  bool Initialised = false;
  CUresult Sticky = Success; // after a fault, every call fails with it
  bool FaultPending = false;
  int FaultReturns = 0; // calls answered with Sticky
  std::map<uintptr_t, Allocation> Allocations; // host memory standing in for device memory
  int NextAllocationId = 1;
  std::map<MockModule *, std::unique_ptr<MockModule>> Modules;
  std::map<MockLink *, std::unique_ptr<MockLink>> Links;
  int PrimaryRetains[8] = {};
  std::map<std::string, int> Calls;
  std::vector<Launch> Launches;
  // tidalMockWriteGlobalOnNextLaunch: what the next launch writes, playing
  // a kernel that writes a module variable (the exception slot).
  std::string PendingGlobalName;
  std::vector<uint8_t> PendingGlobalBytes;
  bool PendingGlobalWrite = false;
};

// A kernel's most threads per block as the driver derives it: its PTX
// .maxntid (launch_bounds), else the device's (MockCudaModules.cpp).
uint64_t maxThreadsOf(const MockFunction &F);

inline MockState &state() {
  static MockState *S = new MockState();
  return *S;
}

// One opaque context handle per device.
inline char ContextTags[8];
inline thread_local void *CurrentContext = nullptr;

inline std::string jsonString(const std::string &Text) {
  std::string Out = "\"";
  for (char C : Text) {
    if (C == '"' || C == '\\')
      Out += '\\', Out += C;
    else if (C == '\n')
      Out += "\\n";
    else if (static_cast<unsigned char>(C) < 0x20)
      Out += ' ';
    else
      Out += C;
  }
  return Out + "\"";
}

// Counts the call and appends Json (the fields after "call") to the log.
inline void record(MockState &S, const char *Call, const std::string &Json = "") {
  ++S.Calls[Call];
  const char *Path = std::getenv("TIDAL_MOCK_CUDA_LOG");
  if (!Path || !*Path)
    return;
  if (FILE *F = std::fopen(Path, "a")) {
    std::fprintf(F, "{\"call\": \"%s\"%s%s}\n", Call, Json.empty() ? "" : ", ", Json.c_str());
    std::fclose(F);
  }
}

// The allocation holding Pointer, or null.
inline const std::pair<const uintptr_t, Allocation> *findAllocation(MockState &S, uintptr_t Pointer,
                                                             size_t Bytes = 1) {
  auto It = S.Allocations.upper_bound(Pointer);
  if (It == S.Allocations.begin())
    return nullptr;
  --It;
  if (Pointer + Bytes > It->first + It->second.Bytes)
    return nullptr;
  return &*It;
}

// The log's number of a stream: 0 for the default stream, -1 for an unknown one.
inline int streamId(MockState &S, void *Stream) {
  if (!Stream || Stream == reinterpret_cast<void *>(1) || Stream == reinterpret_cast<void *>(2))
    return 0; // CU_STREAM_LEGACY, CU_STREAM_PER_THREAD
  auto It = S.Streams.find(static_cast<MockStream *>(Stream));
  return It == S.Streams.end() ? -1 : It->second->Id;
}

// Synchronising a stream (null: every stream) completes its events.
inline void completeEvents(MockState &S, void *Stream) {
  for (auto &[Handle, E] : S.Events)
    if (!Stream || E->Stream == Stream)
      E->Done = true;
}

inline int deviceCount() { return static_cast<int>(envNumber("TIDAL_MOCK_CUDA_DEVICES", 1)); }

inline void computeCapability(int Device, int &Major, int &Minor) {
  const char *Text = std::getenv("TIDAL_MOCK_CUDA_CC");
  Major = 9, Minor = 0;
  if (!Text || !*Text)
    return;
  // The Device-th entry of "M.m,M.m,...", or the last one.
  for (int I = 0; I < Device; ++I) {
    const char *Comma = std::strchr(Text, ',');
    if (!Comma)
      break;
    Text = Comma + 1;
  }
  std::sscanf(Text, "%d.%d", &Major, &Minor);
}

// --- devices (issue 5): facts that differ by ordinal, the current context ---------

// The device of the context current on this thread, -1 when there is none.
inline int currentDevice() {
  return CurrentContext ? static_cast<int>(static_cast<char *>(CurrentContext) - ContextTags) : -1;
}

inline std::string deviceJson(int Device) { return "\"device\": " + std::to_string(Device); }

// The attributes besides the launch limits: some with values that depend on
// the ordinal, the rest of CUDA 13's (1 to 147) answered with 0.
inline bool deviceFact(int Attribute, int Device, int &Value) {
  switch (Attribute) {
  case 10: Value = 32; return true;                 // WARP_SIZE
  case 12: Value = 65536; return true;              // MAX_REGISTERS_PER_BLOCK
  case 13: Value = 1980000; return true;            // CLOCK_RATE (kHz)
  case 16: Value = 132 + 2 * Device; return true;   // MULTIPROCESSOR_COUNT
  case 19: Value = 1; return true;                  // CAN_MAP_HOST_MEMORY
  case 33: Value = 0x10 + Device; return true;      // PCI_BUS_ID
  case 34: Value = 0; return true;                  // PCI_DEVICE_ID
  case 39: Value = 2048; return true;               // MAX_THREADS_PER_MULTIPROCESSOR
  case 41: Value = 1; return true;                  // UNIFIED_ADDRESSING
  case 50: Value = 0; return true;                  // PCI_DOMAIN_ID
  case 83: Value = 1; return true;                  // MANAGED_MEMORY
  case 87: Value = 2; return true;                  // SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO
  default:
    Value = 0;
    return Attribute >= 1 && Attribute <= 147;
  }
}

// The sizes of the parameters of ".entry Name(...)" in PTX; false when the
// entry is not there.
inline bool parseEntryParams(const std::string &PTX, const std::string &Name, std::vector<size_t> &Sizes) {
  std::string Needle = ".entry " + Name + "(";
  size_t Start = PTX.find(Needle);
  if (Start == std::string::npos)
    return false;
  Start += Needle.size();
  size_t End = PTX.find(')', Start);
  std::string List = PTX.substr(Start, End - Start);
  size_t Position = 0;
  while (Position < List.size()) {
    size_t Comma = List.find(',', Position);
    std::string Declaration =
        List.substr(Position, Comma == std::string::npos ? std::string::npos : Comma - Position);
    Position = Comma == std::string::npos ? List.size() : Comma + 1;
    if (Declaration.find(".param") == std::string::npos)
      continue;
    size_t Size = 0;
    static const char *Types[] = {"8", "16", "32", "64"};
    for (const char *Bits : Types)
      for (const char *Kind : {".u", ".s", ".b", ".f"}) {
        std::string Token = std::string(Kind) + Bits + " ";
        if (Declaration.find(Token) != std::string::npos)
          Size = std::strtoul(Bits, nullptr, 10) / 8;
      }
    size_t Bracket = Declaration.find('[');
    if (Bracket != std::string::npos)
      Size *= std::strtoul(Declaration.c_str() + Bracket + 1, nullptr, 10);
    Sizes.push_back(Size);
  }
  return true;
}

// The size in bytes of the module variable Name that PTX declares
// (".visible .global .align 8 .b8 name[48];", ".const .u32 name;", ...);
// false when PTX declares no .global or .const variable of that name.
inline bool ptxVariableBytes(const std::string &PTX, const std::string &Name, size_t &Bytes) {
  size_t LineStart = 0;
  while (LineStart < PTX.size()) {
    size_t LineEnd = PTX.find('\n', LineStart);
    if (LineEnd == std::string::npos)
      LineEnd = PTX.size();
    std::string Line = PTX.substr(LineStart, LineEnd - LineStart);
    LineStart = LineEnd + 1;
    Line = Line.substr(0, Line.find("//"));
    if (Line.find(".global ") == std::string::npos && Line.find(".const ") == std::string::npos)
      continue;
    size_t At = Line.find(" " + Name);
    if (At == std::string::npos)
      continue;
    size_t After = At + 1 + Name.size();
    if (After < Line.size() && Line[After] != '[' && Line[After] != ';' && Line[After] != ' ' &&
        Line[After] != '=')
      continue; // a longer name
    size_t Element = 0;
    for (const char *Bits : {"8", "16", "32", "64"})
      for (const char *Kind : {".u", ".s", ".b", ".f"})
        if (Line.find(std::string(Kind) + Bits + " ") != std::string::npos)
          Element = std::strtoul(Bits, nullptr, 10) / 8;
    if (!Element)
      continue;
    size_t Count = 1;
    if (After < Line.size() && Line[After] == '[')
      Count = std::strtoul(Line.c_str() + After + 1, nullptr, 10);
    Bytes = Element * Count;
    return true;
  }
  return false;
}

// The memory of module M's variable Name, made (zeroed) on first use; 0
// when the module's PTX has no such variable.
inline uintptr_t moduleVariable(MockState &S, MockModule &M, const std::string &Name,
                                size_t &Bytes) {
  if (!ptxVariableBytes(M.PTX, Name, Bytes) || !Bytes)
    return 0;
  auto It = M.Globals.find(Name);
  if (It != M.Globals.end())
    return It->second;
  void *Memory = std::calloc(1, Bytes);
  uintptr_t Address = reinterpret_cast<uintptr_t>(Memory);
  S.Allocations[Address] = {Bytes, S.NextAllocationId++, M.Device, /*ModuleGlobal=*/true};
  M.Globals[Name] = Address;
  return Address;
}

// Frees the variables of a module being unloaded.
inline void freeModuleVariables(MockState &S, MockModule &M) {
  for (const auto &[Name, Address] : M.Globals) {
    S.Allocations.erase(Address);
    std::free(reinterpret_cast<void *>(Address));
  }
  M.Globals.clear();
}

// The functions of a PTX text (tidal/PtxText.h): each '.func' with how it
// is declared ('extern', 'visible', 'weak' or '' for a module's own),
// whether this is its definition or a prototype, and where its
// declaration lies (from its line to its ';' or '{').
using PtxFunction = tidal::ptx::FunctionHeader;
inline std::vector<PtxFunction> ptxFunctions(const std::string &PTX) {
  return tidal::ptx::readFunctionHeaders(PTX);
}

// Whether Name is used in PTX outside [Start, End) (a call, an address
// taken): a whole word, not in a comment.
inline bool ptxMentions(const std::string &PTX, const std::string &Name, size_t Start, size_t End) {
  auto word = tidal::ptx::isIdentifierChar;
  for (size_t At = PTX.find(Name); At != std::string::npos; At = PTX.find(Name, At + 1)) {
    if (At >= Start && At < End)
      continue;
    if ((At > 0 && word(PTX[At - 1])) ||
        (At + Name.size() < PTX.size() && word(PTX[At + Name.size()])))
      continue;
    size_t LineStart = PTX.rfind('\n', At);
    LineStart = LineStart == std::string::npos ? 0 : LineStart + 1;
    if (PTX.substr(LineStart, At - LineStart).find("//") != std::string::npos)
      continue;
    return true;
  }
  return false;
}

// The functions the driver itself provides to PTX (its system calls).
inline bool isPtxSystemCall(const std::string &Name) {
  return Name == "vprintf" || Name == "malloc" || Name == "free" || Name == "__assertfail";
}

inline std::string hexOf(const uint8_t *Bytes, size_t Count) {
  static const char Digits[] = "0123456789abcdef";
  std::string Out;
  for (size_t I = 0; I < Count; ++I)
    Out += Digits[Bytes[I] >> 4], Out += Digits[Bytes[I] & 15];
  return Out;
}

#define MOCK_ENTER(S)                                                                    \
  MockState &S = state();                                                                \
  std::lock_guard<std::mutex> Guard(S.Lock)

// A faulting kernel's error becomes sticky at the first call after its
// launch that looks (every call but the context and error-name queries):
// returns the sticky error, Success when there is none.
inline CUresult observeFault(MockState &S) {
  if (S.FaultPending) {
    S.FaultPending = false;
    S.Sticky = IllegalAddress;
  }
  if (S.Sticky)
    ++S.FaultReturns;
  return S.Sticky;
}

#define MOCK_REQUIRE_INIT(S)                                                             \
  do {                                                                                   \
    if (!S.Initialised)                                                                  \
      return NotInitialized;                                                             \
    if (CUresult Fault = observeFault(S))                                                \
      return Fault;                                                                      \
  } while (0)


} // namespace tidal_mock

#endif
