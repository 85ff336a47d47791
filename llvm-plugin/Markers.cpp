// The marker table of contract version 2 and the helpers the passes share
// (Markers.h). Adding a marker: one entry in getMarkerType, one lowering case
// per target, one row in docs/markers.md.

#include "Markers.h"
#include "tidal/Passes.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include <algorithm>

using namespace llvm;

namespace tidal {

std::optional<SpecialRegisterMarker>
parseSpecialRegisterMarker(StringRef Name) {
  if (!Name.consume_front(MarkerPrefix))
    return std::nullopt;
  auto [RegisterName, DimensionName] = Name.rsplit('.');
  auto Register = StringSwitch<std::optional<SpecialRegister>>(RegisterName)
                      .Case("tid", SpecialRegister::ThreadIndex)
                      .Case("ntid", SpecialRegister::BlockDim)
                      .Case("ctaid", SpecialRegister::BlockIndex)
                      .Case("nctaid", SpecialRegister::GridDim)
                      .Default(std::nullopt);
  auto Dimension = StringSwitch<std::optional<unsigned>>(DimensionName)
                       .Case("x", 0)
                       .Case("y", 1)
                       .Case("z", 2)
                       .Default(std::nullopt);
  if (!Register || !Dimension)
    return std::nullopt;
  return SpecialRegisterMarker{*Register, *Dimension};
}

bool isMarker(const Function &F) { return F.getName().starts_with(MarkerPrefix); }

namespace {
// The value types a marker family is instantiated for, by suffix.
Type *typeOfSuffix(StringRef Suffix, LLVMContext &Context) {
  return StringSwitch<Type *>(Suffix)
      .Cases("i32", "u32", Type::getInt32Ty(Context))
      .Cases("i64", "u64", Type::getInt64Ty(Context))
      .Case("f32", Type::getFloatTy(Context))
      .Case("f64", Type::getDoubleTy(Context))
      .Default(nullptr);
}

// Math functions of one or two arguments (docs/markers.md, "math").
unsigned mathArity(StringRef Function) {
  return StringSwitch<unsigned>(Function)
      .Cases("sin", "cos", "tan", "asin", "acos", "atan", 1)
      .Cases("sinh", "cosh", "tanh", "asinh", "acosh", "atanh", 1)
      .Cases("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", 1)
      .Cases("sqrt", "rsqrt", "cbrt", "fabs", "floor", "ceil", "trunc", 1)
      .Cases("round", "erf", "erfc", "tgamma", "lgamma", 1)
      .Cases("atan2", "pow", "copysign", "fmod", "hypot", "fmin", "fmax", 2)
      .Default(0);
}
} // namespace

FunctionType *getMarkerType(StringRef Name, LLVMContext &Context) {
  Type *Void = Type::getVoidTy(Context), *I1 = Type::getInt1Ty(Context);
  Type *I32 = Type::getInt32Ty(Context), *I64 = Type::getInt64Ty(Context);
  Type *Ptr = PointerType::getUnqual(Context);
  auto Fn = [](Type *Result, ArrayRef<Type *> Params) {
    return FunctionType::get(Result, Params, /*isVarArg=*/false);
  };
  // Index registers: i32 ().
  if (parseSpecialRegisterMarker(Name))
    return Fn(I32, {});
  if (!Name.starts_with(MarkerPrefix))
    return nullptr;
  StringRef Rest = Name.drop_front(StringRef(MarkerPrefix).size());

  // Fixed signatures: lane, barriers, fences, memory, warp masks, debug.
  if (FunctionType *T =
          StringSwitch<FunctionType *>(Rest)
              .Cases("laneid", "warpsize", "activemask", "lanemask.lt", Fn(I32, {}))
              .Case("syncthreads", Fn(Void, {}))
              .Cases("syncthreads.count", "syncthreads.and", "syncthreads.or",
                     Fn(I32, {I32}))
              .Case("syncwarp", Fn(Void, {I32}))
              .Cases("threadfence.block", "threadfence", "threadfence.system",
                     Fn(Void, {}))
              .Cases("shared.array", "local.array", Fn(Ptr, {I64, I64}))
              .Case("shared.dynamic", Fn(Ptr, {}))
              .Case("const.array", Fn(Ptr, {Ptr}))
              .Cases("vote.all", "vote.any", "vote.uni", Fn(I1, {I32, I1}))
              .Case("vote.ballot", Fn(I32, {I32, I1}))
              .Case("bounds.error", Fn(Void, {Ptr, I64, I64, I32}))
              .Case("assert.fail", Fn(Void, {Ptr}))
              .Default(nullptr))
    return T;
  // print: C varargs after the format.
  if (Rest == "print")
    return FunctionType::get(Void, {Ptr}, /*isVarArg=*/true);

  // Families with a value-type suffix: <family>.<op>.<T>.
  auto [Head, Suffix] = Rest.rsplit('.');
  Type *T = typeOfSuffix(Suffix, Context);
  if (!T)
    return nullptr;
  bool Float = T->isFloatingPointTy();
  bool Unsigned = Suffix.starts_with("u");
  if (Head.consume_front("atomic.")) {
    bool IntegerOnly = Head == "and" || Head == "or" || Head == "xor" || Head == "cas";
    bool UnsignedOnly = Head == "inc" || Head == "dec";
    bool Known = StringSwitch<bool>(Head)
                     .Cases("add", "sub", "exch", "max", "min", true)
                     .Cases("and", "or", "xor", "inc", "dec", "cas", true)
                     .Default(false);
    if (!Known || (IntegerOnly && Float) || (UnsignedOnly && !Unsigned))
      return nullptr;
    return Head == "cas" ? Fn(T, {Ptr, T, T}) : Fn(T, {Ptr, T});
  }
  if (Head.consume_front("shfl.")) {
    if (Unsigned || !StringSwitch<bool>(Head).Cases("idx", "up", "down", "xor", true).Default(false))
      return nullptr;
    return Fn(T, {I32, T, I32});
  }
  if (Head == "match.any" && !Float && !Unsigned)
    return Fn(I32, {I32, T});
  if (Head == "match.all" && !Float && !Unsigned)
    return Fn(StructType::get(Context, {I32, I1}), {I32, T});
  if (Head.consume_front("math.") && Float) {
    unsigned Arity = mathArity(Head);
    if (Arity == 1)
      return Fn(T, {T});
    if (Arity == 2)
      return Fn(T, {T, T});
  }
  return nullptr;
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

std::optional<SpecialRegisterMarker>
getSpecialRegisterCall(const CallInst &Call) {
  if (const Function *Marker = getCalledMarker(Call))
    return parseSpecialRegisterMarker(Marker->getName());
  return std::nullopt;
}

std::optional<TypedMarkerName> parseTypedMarkerName(StringRef Name) {
  if (!Name.consume_front(MarkerPrefix))
    return std::nullopt;
  auto [Operation, Suffix] = Name.rsplit('.');
  auto Kind = StringSwitch<std::optional<MarkerValueKind>>(Suffix)
                  .Cases("i32", "i64", MarkerValueKind::Signed)
                  .Cases("u32", "u64", MarkerValueKind::Unsigned)
                  .Cases("f32", "f64", MarkerValueKind::Float)
                  .Default(std::nullopt);
  if (!Kind || Operation.empty())
    return std::nullopt;
  return TypedMarkerName{Operation, *Kind};
}

bool lowerMarkerCalls(Module &M,
                      function_ref<bool(CallInst &, StringRef)> Lower) {
  bool Changed = false;
  for (Function &Marker : make_early_inc_range(M)) {
    if (!isMarker(Marker))
      continue;
    StringRef Name = Marker.getName().drop_front(StringRef(MarkerPrefix).size());
    SmallVector<CallInst *, 16> Calls;
    for (User *U : Marker.users())
      if (auto *Call = dyn_cast<CallInst>(U))
        if (Call->getCalledOperand() == &Marker && getCalledMarker(*Call))
          Calls.push_back(Call);
    std::reverse(Calls.begin(), Calls.end()); // users are listed newest first
    for (CallInst *Call : Calls)
      Changed |= Lower(*Call, Name);
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
  if (!Location)
    return "";
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
