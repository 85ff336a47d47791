// tidal-lower-memory-spaces: gives the memory markers their NVPTX address
// spaces: tidal.shared.array -> one addrspace(3) global per call site,
// tidal.shared.dynamic -> the module's extern addrspace(3) [0 x i8],
// tidal.local.array -> an entry-block alloca, tidal.const.array(@g) -> @g in
// addrspace(4). Each result is cast to a generic pointer.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-memory-spaces in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "tidal-lower-memory-spaces"

using namespace llvm;

namespace tidal {
namespace {

constexpr unsigned SharedAddressSpace = 3;
constexpr unsigned ConstantAddressSpace = 4;
// The module's dynamic shared memory (PTX: .extern .shared .align 16 .b8 x[]).
constexpr const char *DynamicSharedName = "tidal_dynamic_shared";

std::string describeCall(const CallInst &Call, StringRef Name) {
  std::string Text = ("marker 'tidal." + Name + "' in function '" +
                      Call.getFunction()->getName() + "'")
                         .str();
  std::string Location = describeLocation(Call);
  return Location.empty() ? Text : Text + " at " + Location;
}

// The (bytes, align) arguments of shared.array / local.array, or nullopt
// after reporting why they are not usable.
std::optional<std::pair<uint64_t, Align>> getArraySize(CallInst &Call,
                                                       StringRef Name) {
  auto *Bytes = dyn_cast<ConstantInt>(Call.getArgOperand(0));
  auto *Alignment = dyn_cast<ConstantInt>(Call.getArgOperand(1));
  if (!Bytes || !Alignment) {
    reportError(Call.getContext(),
                describeCall(Call, Name) +
                    ": the size and alignment must be constants");
    return std::nullopt;
  }
  uint64_t AlignValue = Alignment->getZExtValue();
  if (Bytes->isNegative() || AlignValue == 0 || !isPowerOf2_64(AlignValue) ||
      AlignValue > (1u << 16)) {
    reportError(Call.getContext(),
                describeCall(Call, Name) + ": invalid size " +
                    Twine(Bytes->getSExtValue()) + " or alignment " +
                    Twine(AlignValue) + " (a power of two up to 65536)");
    return std::nullopt;
  }
  return std::make_pair(Bytes->getZExtValue(), Align(AlignValue));
}

class MemorySpaceLowering {
  Module &M;
  LLVMContext &Context;
  GlobalVariable *DynamicShared = nullptr;
  DenseMap<GlobalVariable *, GlobalVariable *> ConstantCopies;

public:
  explicit MemorySpaceLowering(Module &M) : M(M), Context(M.getContext()) {}

  Value *lower(CallInst &Call, StringRef Name) {
    if (Name == "shared.array")
      return lowerSharedArray(Call, Name);
    if (Name == "shared.dynamic")
      return toGeneric(getDynamicShared());
    if (Name == "local.array")
      return lowerLocalArray(Call, Name);
    if (Name == "const.array")
      return lowerConstArray(Call, Name);
    return nullptr;
  }

private:
  Constant *toGeneric(GlobalVariable *GV) {
    return ConstantExpr::getAddrSpaceCast(GV, PointerType::getUnqual(Context));
  }

  // [bytes x i8] in addrspace(3), internal, uninitialised (shared memory
  // cannot be initialised), one per call site.
  Value *lowerSharedArray(CallInst &Call, StringRef Name) {
    auto Size = getArraySize(Call, Name);
    if (!Size)
      return nullptr;
    auto *Type = ArrayType::get(Type::getInt8Ty(Context), Size->first);
    auto *GV = new GlobalVariable(
        M, Type, /*isConstant=*/false, GlobalValue::InternalLinkage,
        UndefValue::get(Type), Call.getFunction()->getName() + ".shared",
        nullptr, GlobalValue::NotThreadLocal, SharedAddressSpace);
    GV->setAlignment(Size->second);
    return toGeneric(GV);
  }

  // One extern [0 x i8] for the whole module, sized at launch.
  GlobalVariable *getDynamicShared() {
    if (DynamicShared)
      return DynamicShared;
    DynamicShared = M.getGlobalVariable(DynamicSharedName);
    if (!DynamicShared) {
      auto *Type = ArrayType::get(Type::getInt8Ty(Context), 0);
      DynamicShared = new GlobalVariable(
          M, Type, /*isConstant=*/false, GlobalValue::ExternalLinkage, nullptr,
          DynamicSharedName, nullptr, GlobalValue::NotThreadLocal,
          SharedAddressSpace);
      DynamicShared->setAlignment(Align(16));
    }
    return DynamicShared;
  }

  // An alloca in the entry block of the function (private to the thread).
  Value *lowerLocalArray(CallInst &Call, StringRef Name) {
    auto Size = getArraySize(Call, Name);
    if (!Size)
      return nullptr;
    Function &F = *Call.getFunction();
    IRBuilder<> Builder(&*F.getEntryBlock().getFirstInsertionPt());
    AllocaInst *Array = Builder.CreateAlloca(
        ArrayType::get(Type::getInt8Ty(Context), Size->first));
    Array->setAlignment(Size->second);
    return Array;
  }

  // @g, a constant global with an initializer, copied into addrspace(4);
  // @g itself goes when nothing else uses it.
  Value *lowerConstArray(CallInst &Call, StringRef Name) {
    auto *Data = dyn_cast<GlobalVariable>(
        Call.getArgOperand(0)->stripPointerCasts());
    if (!Data || !Data->isConstant() || !Data->hasDefinitiveInitializer()) {
      reportError(Context, describeCall(Call, Name) +
                               ": the argument must be a constant global "
                               "variable with an initializer");
      return nullptr;
    }
    if (Data->getAddressSpace() == ConstantAddressSpace)
      return toGeneric(Data);
    GlobalVariable *&Copy = ConstantCopies[Data];
    if (!Copy) {
      Copy = new GlobalVariable(
          M, Data->getValueType(), /*isConstant=*/true,
          GlobalValue::InternalLinkage, Data->getInitializer(),
          Data->getName() + ".const", nullptr, GlobalValue::NotThreadLocal,
          ConstantAddressSpace);
      Copy->setAlignment(Data->getAlign());
      Copy->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    }
    return toGeneric(Copy);
  }

public:
  void eraseUnusedOriginals() {
    for (auto &[Original, Copy] : ConstantCopies) {
      Original->removeDeadConstantUsers();
      if (Original->use_empty() && Original->hasLocalLinkage())
        Original->eraseFromParent();
    }
  }
};

} // namespace

bool lowerMemorySpaces(Module &M) {
  MemorySpaceLowering Lowering(M);
  bool Changed = lowerMarkerCalls(M, [&](CallInst &Call, StringRef Name) {
    Value *Pointer = Lowering.lower(Call, Name);
    if (!Pointer)
      return false;
    if (isa<Instruction>(Pointer) && Pointer->getName().empty())
      Pointer->takeName(&Call);
    Call.replaceAllUsesWith(Pointer);
    Call.eraseFromParent();
    return true;
  });
  Lowering.eraseUnusedOriginals();
  return Changed;
}

PreservedAnalyses LowerMemorySpacesPass::run(Module &M, ModuleAnalysisManager &) {
  return lowerMemorySpaces(M) ? PreservedAnalyses::none()
                              : PreservedAnalyses::all();
}

} // namespace tidal
