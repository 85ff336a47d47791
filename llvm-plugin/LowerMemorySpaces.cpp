// tidal-lower-memory-spaces: gives the memory markers their NVPTX address
// spaces: tidal.shared.array -> one addrspace(3) global per call site,
// tidal.shared.dynamic -> the module's extern addrspace(3) [0 x i8],
// tidal.local.array -> an entry-block alloca, tidal.const.array(@g) -> @g in
// addrspace(4). Each result is cast to a generic pointer. Calls whose
// arguments the contract refuses are left for tidal-check-marker-arguments.
// The cache-hinted accesses tidal.ld.<op>.<T>/tidal.st.<op>.<T> become PTX's
// ld.global.<op>/st.global.<op> (inline asm, as numba-cuda emits them) on
// the address cast to addrspace(1).
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-memory-spaces in.ll

#include "MarkerArguments.h"
#include "Markers.h"
#include "PassClasses.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "tidal-lower-memory-spaces"

using namespace llvm;

namespace tidal {
namespace {

constexpr unsigned SharedAddressSpace = 3;
constexpr unsigned ConstantAddressSpace = 4;
// The module's dynamic shared memory (PTX: .extern .shared .align 16 .b8 x[]).
constexpr const char *DynamicSharedName = "tidal_dynamic_shared";

// The (bytes, align) arguments of shared.array / local.array, or nullopt
// when the contract refuses them (tidal-check-marker-arguments, which runs
// first in tidal-lower-nvptx, reports why; the call is left in place).
std::optional<std::pair<uint64_t, Align>> getArraySize(CallInst &Call) {
  std::optional<ArrayArguments> Arguments = getArrayArguments(Call);
  if (!Arguments)
    return std::nullopt;
  return std::make_pair(Arguments->Bytes, Arguments->Alignment);
}

class MemorySpaceLowering {
  Module &M;
  LLVMContext &Context;
  GlobalVariable *DynamicShared = nullptr;
  DenseMap<GlobalVariable *, GlobalVariable *> ConstantCopies;

public:
  explicit MemorySpaceLowering(Module &M) : M(M), Context(M.getContext()) {}

  Value *lower(CallInst &Call, MarkerKind Kind) {
    switch (Kind) {
    case MarkerKind::SharedArray:
      return lowerSharedArray(Call);
    case MarkerKind::SharedDynamic:
      return toGeneric(getDynamicShared());
    case MarkerKind::SharedDynamicBytes:
      return readDynamicSharedBytes(Call);
    case MarkerKind::LocalArray:
      return lowerLocalArray(Call);
    case MarkerKind::ConstArray:
      return lowerConstArray(Call);
    case MarkerKind::LoadCacheAll:
    case MarkerKind::LoadCacheGlobal:
    case MarkerKind::LoadCacheStreaming:
    case MarkerKind::LoadLastUse:
    case MarkerKind::LoadDontCache:
    case MarkerKind::StoreCacheGlobal:
    case MarkerKind::StoreCacheStreaming:
    case MarkerKind::StoreWriteBack:
    case MarkerKind::StoreWriteThrough:
      return lowerCacheHint(Call);
    default:
      return nullptr;
    }
  }

private:
  // tidal.ld.<op>.<T>(p) -> ld.global.<op>.<type> $0, [$1];
  // tidal.st.<op>.<T>(p, v) -> st.global.<op>.<type> [$0], $1;
  // The operator is the marker's name after "ld."/"st."; the PTX type and
  // register class come from T (b32/b64 in r/l registers, f32/f64 in f/d).
  Value *lowerCacheHint(CallInst &Call) {
    StringRef Name = Call.getCalledFunction()->getName(); // tidal.ld.ca.f32
    SmallVector<StringRef, 4> Parts;
    Name.split(Parts, '.');
    if (Parts.size() != 4)
      return nullptr;
    bool Load = Parts[1] == "ld";
    Type *ValueType = Load ? Call.getType() : Call.getArgOperand(1)->getType();
    unsigned Bits = ValueType->getPrimitiveSizeInBits();
    bool Float = ValueType->isFloatingPointTy();
    std::string PtxType = (Float ? "f" : "b") + std::to_string(Bits);
    const char *Register = Float ? (Bits == 32 ? "f" : "d") : (Bits == 32 ? "r" : "l");
    std::string Instruction = (Parts[1] + ".global." + Parts[2] + "." + PtxType).str();
    IRBuilder<> B(&Call);
    Value *Global = B.CreateAddrSpaceCast(Call.getArgOperand(0), PointerType::get(Context, 1));
    if (Load) {
      // ld.cv reads memory again each time: never merged or removed.
      InlineAsm *Asm = InlineAsm::get(
          FunctionType::get(ValueType, {Global->getType()}, false),
          Instruction + " $0, [$1];", std::string("=") + Register + ",l",
          /*hasSideEffects=*/Parts[2] == "cv");
      return B.CreateCall(Asm, {Global});
    }
    InlineAsm *Asm = InlineAsm::get(
        FunctionType::get(B.getVoidTy(), {Global->getType(), ValueType}, false),
        Instruction + " [$0], $1;", std::string("l,") + Register + ",~{memory}",
        /*hasSideEffects=*/true);
    return B.CreateCall(Asm, {Global, Call.getArgOperand(1)});
  }

  // %dynamic_smem_size, the launch's dynamic shared bytes (PTX ISA 4.1; LLVM
  // has no intrinsic for it), as i64.
  Value *readDynamicSharedBytes(CallInst &Call) {
    IRBuilder<> B(&Call);
    InlineAsm *Read = InlineAsm::get(FunctionType::get(B.getInt32Ty(), false),
                                     "mov.u32 $0, %dynamic_smem_size;", "=r",
                                     /*hasSideEffects=*/false);
    return B.CreateZExt(B.CreateCall(Read, {}, "dynamic_smem_size"), B.getInt64Ty());
  }

  Constant *toGeneric(GlobalVariable *GV) {
    return ConstantExpr::getAddrSpaceCast(GV, PointerType::getUnqual(Context));
  }

  // [bytes x i8] in addrspace(3), internal, uninitialised (shared memory
  // cannot be initialised), one per call site.
  Value *lowerSharedArray(CallInst &Call) {
    auto Size = getArraySize(Call);
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
  Value *lowerLocalArray(CallInst &Call) {
    auto Size = getArraySize(Call);
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
  Value *lowerConstArray(CallInst &Call) {
    GlobalVariable *Data = getConstArrayData(Call);
    if (!Data)
      return nullptr;
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
  bool Changed = lowerMarkerCalls(M, [&](CallInst &Call, MarkerName Marker) {
    Value *Pointer = Lowering.lower(Call, Marker.Kind);
    if (!Pointer)
      return false;
    if (isa<Instruction>(Pointer) && Pointer->getName().empty() &&
        !Pointer->getType()->isVoidTy())
      Pointer->takeName(&Call);
    Call.replaceAllUsesWith(Pointer);
    Call.eraseFromParent();
    return true;
  });
  Lowering.eraseUnusedOriginals();
  return Changed;
}


} // namespace tidal
