// libtidal_mock_cuda.so, continued (MockCudaDriver.cpp has the overview and
// the environment variables): loading PTX into modules (cuModuleLoadData,
// cuModuleLoadDataEx), with ptxas's check of undefined .extern functions,
// and the JIT linker (cuLinkCreate_v2, cuLinkAddData_v2, cuLinkComplete,
// cuLinkDestroy).
#include "MockCudaState.h"

using namespace tidal_mock;

namespace tidal_mock {

// A kernel's most threads per block, as the driver derives it: the
// product of its PTX `.maxntid X, Y, Z` (launch_bounds), else the device's.
uint64_t maxThreadsOf(const MockFunction &F) {
  uint64_t Device = envNumber("TIDAL_MOCK_CUDA_FUNC_MAX_THREADS", 1024);
  if (!F.Module)
    return Device;
  const std::string &PTX = F.Module->PTX;
  size_t Entry = PTX.find(".entry " + F.Name + "(");
  if (Entry == std::string::npos)
    return Device;
  size_t Body = PTX.find('{', Entry);
  size_t Bound = PTX.find(".maxntid", Entry);
  if (Bound == std::string::npos || Bound > Body)
    return Device;
  uint64_t Product = 1;
  const char *Cursor = PTX.c_str() + Bound + 8;
  for (int Axis = 0; Axis < 3; ++Axis) {
    char *End = nullptr;
    unsigned long long Size = std::strtoull(Cursor, &End, 10);
    if (End == Cursor)
      break;
    Product *= Size;
    Cursor = End;
    while (*Cursor == ',' || *Cursor == ' ')
      ++Cursor;
  }
  return std::min(Product, Device);
}

} // namespace tidal_mock

extern "C" {

namespace {

// The mock's "cubin": what cuLinkComplete makes of its inputs, the PTX of
// each after a marker line, which cuModuleLoadData(Ex) reads back.
constexpr const char *MockCubinMarker = "// tidal mock cubin: linked PTX\n";

void writeLog(char *Buffer, size_t Size, void **SizeSlot, const std::string &Log) {
  if (!Buffer || !Size)
    return;
  std::snprintf(Buffer, Size, "%s", Log.c_str());
  // The driver writes back the length of the log it wrote.
  if (SizeSlot)
    *SizeSlot = reinterpret_cast<void *>(std::min(Log.size(), Size - 1));
}

void appendPtxOut(const std::string &Text) {
  if (const char *Path = std::getenv("TIDAL_MOCK_CUDA_PTX_OUT"); Path && *Path)
    if (FILE *F = std::fopen(Path, "a")) {
      std::fputs(Text.c_str(), F);
      std::fputs("\n// ---- end of image ----\n", F);
      std::fclose(F);
    }
}

// What ptxas says of one PTX input (empty when it takes it): the JIT fail
// marker, or no .version/.target.
std::string rejectPtx(const std::string &PTX, const std::string &Name) {
  const char *Marker = std::getenv("TIDAL_MOCK_CUDA_JIT_FAIL_MARKER");
  if (Marker && *Marker && PTX.find(Marker) != std::string::npos)
    return "ptxas application ptx input, line 1; error   : mock JIT rejects PTX containing '" +
           std::string(Marker) + "'" + (Name.empty() ? "" : " (" + Name + ")");
  if (PTX.find(".version") == std::string::npos || PTX.find(".target") == std::string::npos)
    return "ptxas application ptx input, line 1; fatal   : " +
           std::string(Name.empty() ? "" : Name + ": ") +
           "not PTX: no .version and .target directives";
  return "";
}

// The `.extern .func`s the inputs refer to that no input defines visibly
// (nor the driver provides), as "'symbol' in 'input'" for the log (nvlink's
// "Undefined reference to 'symbol' in 'input'").
std::vector<std::string> unresolvedExterns(
    const std::vector<std::pair<std::string, std::string>> &Inputs,
    const std::vector<std::string> &BinarySymbols = {}) {
  std::vector<std::string> Defined = BinarySymbols, Missing;
  std::vector<std::pair<std::string, std::string>> Externs; // (symbol, input)
  for (const auto &[Name, PTX] : Inputs)
    for (const PtxFunction &F : ptxFunctions(PTX)) {
      // An extern nothing refers to is dropped, as ptxas and nvlink do.
      if (F.Linkage == "extern" && ptxMentions(PTX, F.Name, F.Start, F.End))
        Externs.push_back({F.Name, Name});
      else if (F.Defined && (F.Linkage == "visible" || F.Linkage == "weak"))
        Defined.push_back(F.Name);
    }
  for (const auto &[Symbol, Input] : Externs)
    if (!isPtxSystemCall(Symbol) &&
        std::find(Defined.begin(), Defined.end(), Symbol) == Defined.end())
      Missing.push_back("'" + Symbol + "' in '" + Input + "'");
  return Missing;
}

// A module from PTX or from the mock's cubin, in the current context.
CUresult loadModule(MockState &S, const char *Call, void **Module, const void *Image,
                    char *ErrorLog, size_t ErrorLogSize, void **ErrorLogSizeSlot) {
  if (!CurrentContext) {
    record(S, Call, "\"result\": 201");
    return InvalidContext;
  }
  if (!Image) {
    record(S, Call, "\"result\": 1");
    return InvalidValue;
  }
  std::string PTX = static_cast<const char *>(Image);
  appendPtxOut(PTX);
  bool Linked = PTX.rfind(MockCubinMarker, 0) == 0;
  if (!Linked) {
    // One PTX text: compiled whole, so a function it declares .extern and
    // does not define is an error (cuLinkComplete resolves those).
    std::string Log = rejectPtx(PTX, "");
    CUresult Result = InvalidPtx;
    if (Log.empty()) {
      std::vector<std::string> Missing = unresolvedExterns({{"", PTX}});
      if (!Missing.empty()) {
        std::string Symbol = Missing.front().substr(0, Missing.front().find(" in "));
        Log = "ptxas fatal   : Unresolved extern function " + Symbol;
      }
    }
    if (!Log.empty()) {
      writeLog(ErrorLog, ErrorLogSize, ErrorLogSizeSlot, Log);
      record(S, Call, "\"result\": " + std::to_string(Result));
      return Result;
    }
  }
  auto Owned = std::make_unique<MockModule>();
  Owned->PTX = PTX;
  Owned->Device = currentDevice();
  MockModule *Handle = Owned.get();
  S.Modules[Handle] = std::move(Owned);
  *Module = Handle;
  size_t Target = PTX.find(".target ");
  std::string TargetText = PTX.substr(Target + 8, PTX.find_first_of("\n,", Target) - Target - 8);
  record(S, Call, "\"result\": 0, \"target\": " + jsonString(TargetText) + ", \"linked\": " +
                      (Linked ? "true" : "false") + ", " + deviceJson(Handle->Device));
  return Success;
}

// The error-log options of a JIT call: the buffer, its size, and the slot
// the written length goes back to.
void errorLogOptions(unsigned Options, int *OptionIds, void **OptionValues, char *&Buffer,
                     size_t &Size, void **&SizeSlot) {
  for (unsigned I = 0; I < Options; ++I) {
    if (OptionIds[I] == 5) {
      Buffer = static_cast<char *>(OptionValues[I]);
    } else if (OptionIds[I] == 6) {
      Size = reinterpret_cast<uintptr_t>(OptionValues[I]);
      SizeSlot = &OptionValues[I];
    }
  }
}

} // namespace

CUresult cuModuleLoadDataEx(void **Module, const void *Image, unsigned Options, int *OptionIds,
                            void **OptionValues) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  char *ErrorLog = nullptr;
  size_t ErrorLogSize = 0;
  void **SizeSlot = nullptr;
  errorLogOptions(Options, OptionIds, OptionValues, ErrorLog, ErrorLogSize, SizeSlot);
  return loadModule(S, "cuModuleLoadDataEx", Module, Image, ErrorLog, ErrorLogSize, SizeSlot);
}

CUresult cuModuleLoadData(void **Module, const void *Image) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  return loadModule(S, "cuModuleLoadData", Module, Image, nullptr, 0, nullptr);
}

// --- the JIT linker: cuLinkCreate_v2, cuLinkAddData_v2, cuLinkComplete,
// cuLinkDestroy. PTX inputs (CU_JIT_INPUT_PTX) are checked as ptxas would
// (TIDAL_MOCK_CUDA_JIT_FAIL_MARKER, .version/.target); binary inputs
// (CUBIN, FATBINARY, OBJECT, LIBRARY) by their magic, and the names in
// their string tables count as defined. cuLinkComplete fails with
// CUDA_ERROR_NOT_FOUND and nvlink's log when an input calls an `.extern
// .func` that no input defines (.visible/.weak, or a binary's name).

CUresult cuLinkCreate_v2(unsigned Options, int *OptionIds, void **OptionValues, void **State) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  if (!State || (Options && (!OptionIds || !OptionValues))) {
    record(S, "cuLinkCreate_v2", "\"result\": 1");
    return InvalidValue;
  }
  if (!CurrentContext) {
    record(S, "cuLinkCreate_v2", "\"result\": 201");
    return InvalidContext;
  }
  auto Link = std::make_unique<MockLink>();
  errorLogOptions(Options, OptionIds, OptionValues, Link->ErrorLog, Link->ErrorLogSize,
                  Link->ErrorLogSizeSlot);
  MockLink *Handle = Link.get();
  S.Links[Handle] = std::move(Link);
  *State = Handle;
  record(S, "cuLinkCreate_v2", "\"result\": 0, \"options\": " + std::to_string(Options));
  return Success;
}

// What the driver's linker says of a binary input that does not start as
// its CUjitInputType's files do (empty when it does): a cubin and an
// object are ELF, a fatbin starts with its magic 0xBA55ED50, an archive
// with "!<arch>\n".
std::string rejectBinary(int Type, const std::string &Bytes, const std::string &Name) {
  static const char *Kinds[] = {"cubin", "", "fatbin", "object", "archive"};
  std::string Magic = Type == 2 ? std::string("\x50\xed\x55\xba", 4)
                      : Type == 4 ? std::string("!<arch>\n")
                                  : std::string("\x7f" "ELF");
  if (Bytes.compare(0, Magic.size(), Magic) == 0)
    return "";
  return "error   : " + Name + " is not a " + Kinds[Type] + " (mock driver: no " +
         (Type == 2 ? "fatbin magic" : Type == 4 ? "archive header" : "ELF header") + ")";
}

// The names a binary's string tables hold: its runs of identifier
// characters between NULs, which the mock takes as the symbols it defines.
std::vector<std::string> binarySymbols(const std::string &Bytes) {
  std::vector<std::string> Names;
  size_t Start = 0;
  for (size_t I = 0; I <= Bytes.size(); ++I) {
    if (I < Bytes.size() && Bytes[I] != '\0')
      continue;
    std::string Run = Bytes.substr(Start, I - Start);
    bool Identifier = !Run.empty() && !std::isdigit(static_cast<unsigned char>(Run[0]));
    for (char C : Run)
      Identifier &= std::isalnum(static_cast<unsigned char>(C)) || C == '_' || C == '$';
    if (Identifier)
      Names.push_back(Run);
    Start = I + 1;
  }
  return Names;
}

CUresult cuLinkAddData_v2(void *State, int Type, void *Data, size_t Bytes, const char *Name,
                          unsigned, int *, void **) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  std::string Shown = Name ? Name : "";
  auto It = S.Links.find(static_cast<MockLink *>(State));
  if (It == S.Links.end()) {
    record(S, "cuLinkAddData_v2", "\"result\": 400");
    return InvalidHandle;
  }
  MockLink &Link = *It->second;
  // CU_JIT_INPUT_CUBIN 0, PTX 1, FATBINARY 2, OBJECT 3, LIBRARY 4 (NVVM, 5,
  // needs nvJitLink's LTO: refused, as the driver refuses it).
  if (Type < 0 || Type > 4 || !Data || !Bytes) {
    record(S, "cuLinkAddData_v2", "\"result\": 1, \"type\": " + std::to_string(Type));
    return InvalidValue;
  }
  if (Type != 1) {
    std::string Binary(static_cast<const char *>(Data), Bytes);
    std::string Log = rejectBinary(Type, Binary, Shown);
    if (!Log.empty()) {
      writeLog(Link.ErrorLog, Link.ErrorLogSize, Link.ErrorLogSizeSlot, Log);
      record(S, "cuLinkAddData_v2", "\"result\": 200, \"type\": " + std::to_string(Type) +
                                        ", \"name\": " + jsonString(Shown));
      return InvalidImage;
    }
    Link.Binaries.push_back({Shown, Type});
    for (std::string &Symbol : binarySymbols(Binary))
      Link.BinarySymbols.push_back(std::move(Symbol));
    record(S, "cuLinkAddData_v2", "\"result\": 0, \"type\": " + std::to_string(Type) +
                                      ", \"name\": " + jsonString(Shown) +
                                      ", \"bytes\": " + std::to_string(Bytes));
    return Success;
  }
  // PTX is text; the size may count the terminating NUL.
  std::string PTX(static_cast<const char *>(Data), Bytes);
  while (!PTX.empty() && PTX.back() == '\0')
    PTX.pop_back();
  std::string Log = rejectPtx(PTX, Shown);
  if (!Log.empty()) {
    writeLog(Link.ErrorLog, Link.ErrorLogSize, Link.ErrorLogSizeSlot, Log);
    record(S, "cuLinkAddData_v2", "\"result\": 218, \"name\": " + jsonString(Shown));
    return InvalidPtx;
  }
  Link.Inputs.push_back({Shown, PTX});
  record(S, "cuLinkAddData_v2", "\"result\": 0, \"type\": 1, \"name\": " + jsonString(Shown) +
                                    ", \"bytes\": " + std::to_string(PTX.size()));
  return Success;
}

CUresult cuLinkComplete(void *State, void **Image, size_t *Bytes) {
  MOCK_ENTER(S);
  MOCK_REQUIRE_INIT(S);
  auto It = S.Links.find(static_cast<MockLink *>(State));
  if (It == S.Links.end() || !Image || !Bytes) {
    record(S, "cuLinkComplete", "\"result\": 400");
    return InvalidHandle;
  }
  MockLink &Link = *It->second;
  std::vector<std::string> Missing = unresolvedExterns(Link.Inputs, Link.BinarySymbols);
  if (Link.Inputs.empty() || !Missing.empty()) {
    std::string Log;
    for (const std::string &M : Missing)
      Log += (Log.empty() ? "" : "\n") + std::string("error   : Undefined reference to ") + M;
    if (Link.Inputs.empty())
      Log = "error   : no input to link";
    writeLog(Link.ErrorLog, Link.ErrorLogSize, Link.ErrorLogSizeSlot, Log);
    record(S, "cuLinkComplete", "\"result\": 500");
    return NotFound;
  }
  Link.Image = MockCubinMarker;
  std::string Names;
  for (const auto &[Name, PTX] : Link.Inputs) {
    Link.Image += "// ---- input " + Name + "\n" + PTX + "\n";
    Names += (Names.empty() ? "" : ", ") + jsonString(Name);
  }
  for (const auto &[Name, Type] : Link.Binaries) {
    Link.Image += "// ---- input " + Name + " (binary, CUjitInputType " + std::to_string(Type) +
                  ")\n";
    Names += (Names.empty() ? "" : ", ") + jsonString(Name);
  }
  *Image = Link.Image.data();
  *Bytes = Link.Image.size() + 1;
  record(S, "cuLinkComplete", "\"result\": 0, \"inputs\": [" + Names + "]");
  return Success;
}

CUresult cuLinkDestroy(void *State) {
  MOCK_ENTER(S);
  bool Known = S.Links.erase(static_cast<MockLink *>(State)) != 0;
  record(S, "cuLinkDestroy", std::string("\"result\": ") + (Known ? "0" : "400"));
  return Known ? Success : InvalidHandle;
}

} // extern "C"
