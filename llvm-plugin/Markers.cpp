// The marker table (tidal/Markers.def) as data, and the helpers the passes
// share (Markers.h). Adding a marker: one row in Markers.def, one lowering
// case per target, its printed line in docs/markers.md.

#include "Markers.h"
#include "tidal/Passes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <initializer_list>

using namespace llvm;

namespace tidal {
namespace {

// The tokens of Markers.def's signature and suffix columns.
namespace table_tokens {
enum SignatureType : uint8_t {
  Void, Bool, Int32, Int64, Pointer, Value, MatchResult, VarArgs
};
enum SuffixSet : uint8_t {
  NoSuffix = 0,
  SuffixI32 = 1 << 0, SuffixI64 = 1 << 1, SuffixU32 = 1 << 2,
  SuffixU64 = 1 << 3, SuffixF32 = 1 << 4, SuffixF64 = 1 << 5,
  SuffixF16 = 1 << 6,
  SignedInteger = SuffixI32 | SuffixI64,
  UnsignedInteger = SuffixU32 | SuffixU64,
  AnyInteger = SignedInteger | UnsignedInteger,
  AnyFloat = SuffixF32 | SuffixF64,
  SignedOrFloat = SignedInteger | AnyFloat,
  AnyValue = AnyInteger | AnyFloat,
};
} // namespace table_tokens
using namespace table_tokens;

constexpr unsigned MaxParameters = 4;

struct MarkerRow {
  const char *Name;
  uint8_t Suffixes;
  SignatureType Result;
  SignatureType Parameters[MaxParameters];
  unsigned ParameterCount;
  SyncPointKind Sync;
};

constexpr MarkerRow makeRow(const char *Name, uint8_t Suffixes,
                            SignatureType Result,
                            std::initializer_list<SignatureType> Parameters,
                            SyncPointKind Sync) {
  MarkerRow Row{Name, Suffixes, Result, {}, 0, Sync};
  for (SignatureType Parameter : Parameters)
    Row.Parameters[Row.ParameterCount++] = Parameter;
  return Row;
}

#define TIDAL_PARAMETER_LIST(...) {__VA_ARGS__}
constexpr MarkerRow MarkerTable[] = {
#define TIDAL_MARKER(Kind, Name, Suffixes, Result, Parameters, Sync)           \
  makeRow(Name, Suffixes, Result, TIDAL_PARAMETER_LIST Parameters,           \
          SyncPointKind::Sync),
#include "tidal/Markers.def"
};
#undef TIDAL_PARAMETER_LIST

const MarkerRow &getRow(MarkerKind Kind) {
  return MarkerTable[static_cast<unsigned>(Kind)];
}

// Suffix names in MarkerSuffix order (None first).
constexpr const char *SuffixNames[] = {"", "i32", "i64", "u32", "u64", "f32", "f64", "f16"};

uint8_t suffixBit(MarkerSuffix Suffix) {
  return Suffix == MarkerSuffix::None
             ? 0
             : uint8_t(1u << (static_cast<unsigned>(Suffix) - 1));
}

// Base name -> kind, built once.
const StringMap<MarkerKind> &getKindsByName() {
  static const StringMap<MarkerKind> Kinds = [] {
    StringMap<MarkerKind> Map;
    for (unsigned Index = 0; Index < std::size(MarkerTable); ++Index)
      Map[MarkerTable[Index].Name] = static_cast<MarkerKind>(Index);
    return Map;
  }();
  return Kinds;
}

Type *getSuffixType(MarkerSuffix Suffix, LLVMContext &Context) {
  switch (Suffix) {
  case MarkerSuffix::I32:
  case MarkerSuffix::U32:
    return Type::getInt32Ty(Context);
  case MarkerSuffix::I64:
  case MarkerSuffix::U64:
    return Type::getInt64Ty(Context);
  case MarkerSuffix::F32:
    return Type::getFloatTy(Context);
  case MarkerSuffix::F64:
    return Type::getDoubleTy(Context);
  case MarkerSuffix::F16:
    return Type::getHalfTy(Context);
  case MarkerSuffix::None:
    break;
  }
  return nullptr;
}

Type *getSignatureType(SignatureType Token, Type *ValueType,
                       LLVMContext &Context) {
  switch (Token) {
  case Void:
    return Type::getVoidTy(Context);
  case Bool:
    return Type::getInt1Ty(Context);
  case Int32:
    return Type::getInt32Ty(Context);
  case Int64:
    return Type::getInt64Ty(Context);
  case Pointer:
    return PointerType::getUnqual(Context);
  case Value:
    return ValueType;
  case MatchResult:
    return StructType::get(Context,
                           {Type::getInt32Ty(Context), Type::getInt1Ty(Context)});
  case VarArgs:
    break;
  }
  return nullptr;
}

// How docs/markers.md writes a signature type (T: the suffix's type).
StringRef getSignatureTypeText(SignatureType Token) {
  switch (Token) {
  case Void: return "void";
  case Bool: return "i1";
  case Int32: return "i32";
  case Int64: return "i64";
  case Pointer: return "ptr";
  case Value: return "T";
  case MatchResult: return "{i32, i1}";
  case VarArgs: return "...";
  }
  return "";
}

} // namespace

std::optional<MarkerName> parseMarkerName(StringRef Name) {
  if (!Name.consume_front(MarkerPrefix))
    return std::nullopt;
  const StringMap<MarkerKind> &Kinds = getKindsByName();
  auto Whole = Kinds.find(Name);
  if (Whole != Kinds.end() && getRow(Whole->second).Suffixes == NoSuffix)
    return MarkerName{Whole->second, MarkerSuffix::None};
  auto [Base, SuffixName] = Name.rsplit('.');
  auto Found = Kinds.find(Base);
  if (Found == Kinds.end())
    return std::nullopt;
  for (unsigned Index = 1; Index < std::size(SuffixNames); ++Index)
    if (SuffixName == SuffixNames[Index]) {
      auto Suffix = static_cast<MarkerSuffix>(Index);
      if (getRow(Found->second).Suffixes & suffixBit(Suffix))
        return MarkerName{Found->second, Suffix};
    }
  return std::nullopt;
}

StringRef getMarkerBaseName(MarkerKind Kind) { return getRow(Kind).Name; }

MarkerValueKind getValueKind(MarkerSuffix Suffix) {
  switch (Suffix) {
  case MarkerSuffix::U32:
  case MarkerSuffix::U64:
    return MarkerValueKind::Unsigned;
  case MarkerSuffix::F32:
  case MarkerSuffix::F64:
  case MarkerSuffix::F16:
    return MarkerValueKind::Float;
  default:
    return MarkerValueKind::Signed;
  }
}

void printMarkerTable(raw_ostream &Out) {
  for (const MarkerRow &Row : MarkerTable) {
    Out << getSignatureTypeText(Row.Result) << " @tidal." << Row.Name;
    if (Row.Suffixes != NoSuffix) {
      Out << ".{";
      bool First = true;
      for (unsigned Index = 1; Index < std::size(SuffixNames); ++Index)
        if (Row.Suffixes & suffixBit(static_cast<MarkerSuffix>(Index))) {
          Out << (First ? "" : ",") << SuffixNames[Index];
          First = false;
        }
      Out << "}";
    }
    Out << "(";
    for (unsigned Index = 0; Index < Row.ParameterCount; ++Index)
      Out << (Index ? ", " : "") << getSignatureTypeText(Row.Parameters[Index]);
    Out << ")\n";
  }
}

SyncPointKind getSyncPointKind(MarkerKind Kind) { return getRow(Kind).Sync; }

bool isWarpSyncPoint(SyncPointKind Kind) {
  return Kind == SyncPointKind::WarpBarrier ||
         Kind == SyncPointKind::WarpActiveMask ||
         Kind == SyncPointKind::WarpExchange;
}

StringRef getSyncPointKindName(SyncPointKind Kind) {
  switch (Kind) {
  case SyncPointKind::NoSync:
    return "no sync point";
  case SyncPointKind::BlockBarrier:
    return "block barrier";
  case SyncPointKind::BlockReduction:
    return "block barrier with a count";
  case SyncPointKind::GridBarrier:
    return "grid barrier";
  case SyncPointKind::WarpBarrier:
    return "warp barrier";
  case SyncPointKind::WarpActiveMask:
    return "warp active mask";
  case SyncPointKind::WarpExchange:
    return "warp exchange";
  }
  llvm_unreachable("a SyncPointKind without a name");
}

std::optional<SpecialRegisterMarker> getSpecialRegister(MarkerKind Kind) {
  auto First = static_cast<unsigned>(MarkerKind::ThreadIndexX);
  auto Index = static_cast<unsigned>(Kind);
  if (Index < First || Index > static_cast<unsigned>(MarkerKind::GridDimZ))
    return std::nullopt;
  static_assert(unsigned(MarkerKind::GridDimZ) - unsigned(MarkerKind::ThreadIndexX) == 11,
                "Markers.def: the 12 special registers are consecutive");
  return SpecialRegisterMarker{SpecialRegister((Index - First) / 3),
                               (Index - First) % 3};
}

std::optional<SpecialRegisterMarker>
parseSpecialRegisterMarker(StringRef Name) {
  if (std::optional<MarkerName> Marker = parseMarkerName(Name))
    return getSpecialRegister(Marker->Kind);
  return std::nullopt;
}

bool isMarker(const Function &F) { return F.getName().starts_with(MarkerPrefix); }

FunctionType *getMarkerType(StringRef Name, LLVMContext &Context) {
  std::optional<MarkerName> Marker = parseMarkerName(Name);
  if (!Marker)
    return nullptr;
  const MarkerRow &Row = getRow(Marker->Kind);
  Type *ValueType = getSuffixType(Marker->Suffix, Context);
  SmallVector<Type *, MaxParameters> Parameters;
  bool IsVarArg = false;
  for (unsigned Index = 0; Index < Row.ParameterCount; ++Index) {
    if (Row.Parameters[Index] == VarArgs)
      IsVarArg = true;
    else
      Parameters.push_back(
          getSignatureType(Row.Parameters[Index], ValueType, Context));
  }
  return FunctionType::get(getSignatureType(Row.Result, ValueType, Context),
                           Parameters, IsVarArg);
}

const Function *getCalledMarker(const CallInst &Call) {
  const auto *Callee = dyn_cast<Function>(Call.getCalledOperand());
  if (!Callee || !isMarker(*Callee) || !Callee->isDeclaration())
    return nullptr;
  FunctionType *Expected = getMarkerType(Callee->getName(), Call.getContext());
  if (!Expected || Callee->getFunctionType() != Expected ||
      Call.getFunctionType() != Expected)
    return nullptr;
  return Callee;
}

std::optional<MarkerName> getMarkerCall(const CallInst &Call) {
  if (const Function *Marker = getCalledMarker(Call))
    return parseMarkerName(Marker->getName());
  return std::nullopt;
}

std::optional<SpecialRegisterMarker>
getSpecialRegisterCall(const CallInst &Call) {
  if (std::optional<MarkerName> Marker = getMarkerCall(Call))
    return getSpecialRegister(Marker->Kind);
  return std::nullopt;
}

bool lowerMarkerCalls(Module &M,
                      function_ref<bool(CallInst &, MarkerName)> Lower) {
  bool Changed = false;
  for (Function &Marker : make_early_inc_range(M)) {
    if (!isMarker(Marker))
      continue;
    std::optional<MarkerName> Name = parseMarkerName(Marker.getName());
    SmallVector<CallInst *, 16> Calls;
    for (User *U : Marker.users())
      if (auto *Call = dyn_cast<CallInst>(U))
        if (Call->getCalledOperand() == &Marker && getCalledMarker(*Call))
          Calls.push_back(Call);
    std::reverse(Calls.begin(), Calls.end()); // users are listed newest first
    for (CallInst *Call : Calls)
      Changed |= Lower(*Call, *Name);
    if (Marker.use_empty() && Marker.isDeclaration()) {
      Marker.eraseFromParent();
      Changed = true;
    }
  }
  return Changed;
}

SmallVector<Function *, 8> getKernels(const Module &M) {
  SmallVector<Function *, 8> Kernels;
  const NamedMDNode *List = M.getNamedMetadata(KernelsMetadataName);
  if (!List)
    return Kernels;
  for (const MDNode *Entry : List->operands())
    if (Entry->getNumOperands() > 0)
      if (auto *F = mdconst::dyn_extract_or_null<Function>(Entry->getOperand(0)))
        if (!is_contained(Kernels, F))
          Kernels.push_back(F);
  return Kernels;
}

bool isKernel(const Function &F) {
  return is_contained(getKernels(*F.getParent()), &F);
}

std::string describeLocation(const Instruction &I) {
  const DILocation *Location = I.getDebugLoc().get();
  if (!Location) { // the frontend's !tidal.where, without debug locations
    const MDNode *Where = I.getMetadata(WhereMetadataName);
    const auto *Text = Where && Where->getNumOperands() == 1
                           ? dyn_cast<MDString>(Where->getOperand(0))
                           : nullptr;
    return Text ? Text->getString().str() : "";
  }
  return (Location->getFilename() + ":" + Twine(Location->getLine()) + ":" +
          Twine(Location->getColumn()))
      .str();
}

namespace {
class MarkerDiagnostic : public DiagnosticInfo {
  std::string Message;

public:
  explicit MarkerDiagnostic(const Twine &Message)
      : DiagnosticInfo(kind(), DS_Error), Message(Message.str()) {}
  void print(DiagnosticPrinter &Printer) const override {
    Printer << "tidal: " << Message;
  }
  static int kind() {
    static const int Kind = getNextAvailablePluginDiagnosticKind();
    return Kind;
  }
};
} // namespace

void reportError(LLVMContext &Context, const Twine &Message) {
  Context.diagnose(MarkerDiagnostic(Message));
}

bool hasReportedErrors(const LLVMContext &Context) {
  const DiagnosticHandler *Handler = Context.getDiagHandlerPtr();
  return Handler && Handler->HasErrors;
}

} // namespace tidal
