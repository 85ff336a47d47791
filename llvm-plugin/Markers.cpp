// The marker table of contract version 1 and the helpers the passes share
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

FunctionType *getMarkerType(StringRef Name, LLVMContext &Context) {
  // Special registers: i32 ().
  if (parseSpecialRegisterMarker(Name))
    return FunctionType::get(Type::getInt32Ty(Context), /*isVarArg=*/false);
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
