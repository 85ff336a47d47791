// tidal-lower-exceptions: replaces the debug-mode markers tidal.assert.fail
// (a failed assert, a raise) and tidal.bounds.error (an index out of range)
// by a write into the module's exception slot (tidal/Contract.h), claimed by
// the first thread of the launch that raises, then PTX `exit`: no trap, so
// the CUDA context stays usable and the host raises the exception after the
// launch from the slot and the table of raise sites (raiseSites).
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-exceptions in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#define DEBUG_TYPE "tidal-lower-exceptions"

using namespace llvm;

namespace tidal {
namespace {

constexpr unsigned GlobalAddressSpace = 1;

// The calls of the raise sites of M, in raiseSites' order.
SmallVector<CallInst *, 16> raiseSiteCalls(const Module &M) {
  SmallVector<CallInst *, 16> Calls;
  for (const Function &F : M)
    for (const BasicBlock &Block : F)
      for (const Instruction &I : Block)
        if (const auto *Call = dyn_cast<CallInst>(&I))
          if (std::optional<MarkerName> Marker = getMarkerCall(*Call))
            if (Marker->Kind == MarkerKind::AssertFail ||
                Marker->Kind == MarkerKind::BoundsError)
              Calls.push_back(const_cast<CallInst *>(Call));
  return Calls;
}

// The C string a constant global holds, "" for anything else.
std::string constantText(const Value *V) {
  const auto *Global = dyn_cast<GlobalVariable>(V->stripPointerCasts());
  if (!Global || !Global->hasDefinitiveInitializer())
    return "";
  const auto *Data = dyn_cast<ConstantDataSequential>(Global->getInitializer());
  return Data && Data->isCString() ? Data->getAsCString().str() : "";
}

// { i32 code, [3 x i32] tid, [3 x i32] ctaid, i32 axis, i64 index, i64 extent }
StructType *slotType(LLVMContext &Context) {
  Type *I32 = Type::getInt32Ty(Context), *I64 = Type::getInt64Ty(Context);
  ArrayType *Dims = ArrayType::get(I32, 3);
  return StructType::get(Context, {I32, Dims, Dims, I32, I64, I64});
}

// The module's slot, made when it has none; null (an error reported) when a
// global of that name is something else.
GlobalVariable *getOrCreateSlot(Module &M) {
  StructType *Type = slotType(M.getContext());
  if (GlobalVariable *Slot = M.getNamedGlobal(ExceptionSlotName)) {
    if (Slot->getValueType() == Type && Slot->getAddressSpace() == GlobalAddressSpace)
      return Slot;
    reportError(M.getContext(), Twine("the global '") + ExceptionSlotName +
                                    "' is reserved for tidal's exception slot");
    return nullptr;
  }
  // External, so that the driver finds it (cuModuleGetGlobal) and the
  // optimiser assumes nothing of its value (the host clears it).
  auto *Slot = new GlobalVariable(M, Type, /*isConstant=*/false, GlobalValue::ExternalLinkage,
                                  Constant::getNullValue(Type), ExceptionSlotName, nullptr,
                                  GlobalValue::NotThreadLocal, GlobalAddressSpace);
  Slot->setAlignment(Align(8));
  return Slot;
}

// Raise site number Code: a compare-and-swap of the slot's code from 0 to
// Code; the winner records its thread and block (and, for a bounds error,
// the index), then every raising thread exits.
void lowerRaiseSite(CallInst &Call, bool Bounds, unsigned Code, GlobalVariable &Slot) {
  StructType *Type = cast<StructType>(Slot.getValueType());
  IRBuilder<> B(&Call);
  // 1. Claim the slot: the first raise of the launch wins.
  AtomicCmpXchgInst *Claim =
      B.CreateAtomicCmpXchg(&Slot, B.getInt32(0), B.getInt32(Code), MaybeAlign(4),
                            AtomicOrdering::Monotonic, AtomicOrdering::Monotonic);
  Value *Won = B.CreateExtractValue(Claim, 1, "raise.won");
  // 2. The winner writes where it raised.
  Instruction *Record = SplitBlockAndInsertIfThen(Won, &Call, /*Unreachable=*/false);
  Record->getParent()->setName("raise.record");
  Call.getParent()->setName("raise.exit");
  B.SetInsertPoint(Record);
  B.SetCurrentDebugLocation(Call.getDebugLoc());
  const Intrinsic::ID Registers[2][3] = {
      {Intrinsic::nvvm_read_ptx_sreg_tid_x, Intrinsic::nvvm_read_ptx_sreg_tid_y,
       Intrinsic::nvvm_read_ptx_sreg_tid_z},
      {Intrinsic::nvvm_read_ptx_sreg_ctaid_x, Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
       Intrinsic::nvvm_read_ptx_sreg_ctaid_z}};
  for (unsigned Field = 0; Field < 2; ++Field) {
    Value *Dims = B.CreateStructGEP(Type, &Slot, Field + 1);
    for (unsigned Dim = 0; Dim < 3; ++Dim)
      B.CreateAlignedStore(
          B.CreateIntrinsic(Registers[Field][Dim], {}, {}),
          B.CreateConstInBoundsGEP2_32(Type->getElementType(Field + 1), Dims, 0, Dim), Align(4));
  }
  if (Bounds) { // bounds.error(where, index, extent, axis)
    B.CreateAlignedStore(Call.getArgOperand(3), B.CreateStructGEP(Type, &Slot, 3), Align(4));
    B.CreateAlignedStore(Call.getArgOperand(1), B.CreateStructGEP(Type, &Slot, 4), Align(8));
    B.CreateAlignedStore(Call.getArgOperand(2), B.CreateStructGEP(Type, &Slot, 5), Align(8));
  }
  // 3. Every raising thread ends here: `exit` ends the thread from a device
  // function too (a return would go back to the caller).
  B.SetInsertPoint(&Call);
  B.CreateCall(InlineAsm::get(FunctionType::get(B.getVoidTy(), false), "exit;", "",
                              /*hasSideEffects=*/true));
  Call.eraseFromParent();
}

} // namespace

std::vector<RaiseSite> raiseSites(const Module &M) {
  std::vector<RaiseSite> Sites;
  for (const CallInst *Call : raiseSiteCalls(M)) {
    bool Bounds = getMarkerCall(*Call)->Kind == MarkerKind::BoundsError;
    Sites.push_back({Bounds, constantText(Call->getArgOperand(0))});
  }
  return Sites;
}

bool lowerExceptions(Module &M) {
  SmallVector<CallInst *, 16> Calls = raiseSiteCalls(M);
  if (Calls.empty())
    return false;
  GlobalVariable *Slot = getOrCreateSlot(M);
  if (!Slot)
    return false;
  SmallVector<Function *, 2> Markers;
  for (auto [Index, Call] : enumerate(Calls)) {
    bool Bounds = getMarkerCall(*Call)->Kind == MarkerKind::BoundsError;
    if (!is_contained(Markers, Call->getCalledFunction()))
      Markers.push_back(Call->getCalledFunction());
    lowerRaiseSite(*Call, Bounds, static_cast<unsigned>(Index + 1), *Slot);
  }
  for (Function *Marker : Markers)
    if (Marker->use_empty())
      Marker->eraseFromParent();
  return true;
}

} // namespace tidal
