// Part of tidal-lower-host, for kernels with atomics on global memory: the
// block function's variant for launches that run alone (addAloneVariant,
// at the end), and the kernels whose global atomics may go to a private
// copy of their array per host thread (docs/cpu-target.md, "Privatised
// atomics"), listed in !tidal.private.atomics, which the runtime reads to
// run such launches on every core.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-host in.ll
//
// The rule: every atomic of K.thread (atomics on shared memory are plain
// already) is an integer add/sub/and/or/xor/max/min whose old value is
// unused, on an array parameter whose every use is such an atomic, one
// operation per array. Then the array's final value does not depend on the
// order of the operations, no thread of the launch can observe the array,
// and combining per-thread copies gives what the atomics give. Inc/dec wrap
// at a bound (order matters), exch and compare-exchange return what they
// replaced, and float add rounds differently in another order: those keep
// the launch on one host thread. The runtime checks at each launch what the
// IR cannot know (the arrays' sizes and that they do not overlap).

#include "LowerHost.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"

#define DEBUG_TYPE "tidal-lower-host"

using namespace llvm;

namespace tidal::host_lowering {
namespace {

// A kernel array parameter as the frontend flattens it: `ptr %a`, then
// `i64 %a.shape.0` ... and `i64 %a.stride.0` ... (FunctionCompiler.cpp).
struct ArrayParameter {
  unsigned Data = 0, Dimensions = 0;
  unsigned Combine = 0;      // TidalCombine*, or 0: not privatised
  unsigned ElementBytes = 0; // of the atomics, when privatised
};

// Every pointer parameter of Kernel as an array, or nothing if one is not
// an array in the frontend's layout (its extent would be unknown, so the
// runtime could not tell whether it overlaps a privatised array).
std::optional<SmallVector<ArrayParameter, 4>> findArrays(const Function &Kernel) {
  SmallVector<ArrayParameter, 4> Arrays;
  const unsigned Count = Kernel.arg_size();
  for (unsigned I = 0; I < Count; ++I) {
    const Argument &Data = *Kernel.getArg(I);
    if (!Data.getType()->isPointerTy())
      continue;
    auto Named = [&](unsigned Index, const std::string &Name) {
      return Index < Count && Kernel.getArg(Index)->getType()->isIntegerTy(64) &&
             Kernel.getArg(Index)->getName() == Name;
    };
    const std::string Base = Data.getName().str();
    unsigned Dimensions = 0;
    while (Named(I + 1 + Dimensions, Base + ".shape." + std::to_string(Dimensions)))
      ++Dimensions;
    if (Base.empty() || Dimensions == 0)
      return std::nullopt;
    for (unsigned D = 0; D < Dimensions; ++D)
      if (!Named(I + 1 + Dimensions + D, Base + ".stride." + std::to_string(D)))
        return std::nullopt;
    Arrays.push_back({I, Dimensions});
  }
  return Arrays;
}

// How per-thread copies of an array updated by Operation combine into it.
unsigned combineFor(AtomicRMWInst::BinOp Operation) {
  switch (Operation) {
  // the copy holds the sum of what was added (or minus what was subtracted)
  case AtomicRMWInst::Add:
  case AtomicRMWInst::Sub:
    return TidalCombineAdd;
  // bitwise
  case AtomicRMWInst::And:
    return TidalCombineAnd;
  case AtomicRMWInst::Or:
    return TidalCombineOr;
  case AtomicRMWInst::Xor:
    return TidalCombineXor;
  // integer max/min
  case AtomicRMWInst::Max:
    return TidalCombineMax;
  case AtomicRMWInst::Min:
    return TidalCombineMin;
  case AtomicRMWInst::UMax:
    return TidalCombineUMax;
  case AtomicRMWInst::UMin:
    return TidalCombineUMin;
  default:
    return 0;
  }
}

// If every use of Data (through address arithmetic) is an eligible atomic
// of one operation: records it in Array and adds the atomics to Reached.
bool isPrivatisable(Argument &Data, ArrayParameter &Array,
                    SmallPtrSetImpl<Instruction *> &Reached) {
  SmallVector<Value *, 8> Work{&Data};
  SmallPtrSet<Value *, 16> Seen{&Data};
  while (!Work.empty()) {
    Value *Pointer = Work.pop_back_val();
    for (User *U : Pointer->users()) {
      auto *I = dyn_cast<Instruction>(U);
      if (!I)
        return false;
      if ((isa<GetElementPtrInst>(I) && cast<GetElementPtrInst>(I)->getPointerOperand() == Pointer) ||
          isa<PHINode>(I) ||
          (isa<SelectInst>(I) && cast<SelectInst>(I)->getCondition() != Pointer)) {
        if (Seen.insert(I).second)
          Work.push_back(I);
        continue;
      }
      auto *Atomic = dyn_cast<AtomicRMWInst>(I);
      if (!Atomic || Atomic->getPointerOperand() != Pointer || !Atomic->use_empty() ||
          Atomic->isVolatile() || !Atomic->getType()->isIntegerTy())
        return false;
      const unsigned Bytes = Atomic->getType()->getIntegerBitWidth() / 8;
      const unsigned Combine = combineFor(Atomic->getOperation());
      if (!Combine || (Bytes != 4 && Bytes != 8) ||
          (Array.Combine && (Array.Combine != Combine || Array.ElementBytes != Bytes)))
        return false;
      Array.Combine = Combine;
      Array.ElementBytes = Bytes;
      Reached.insert(Atomic);
    }
  }
  return Array.Combine != 0;
}

} // namespace

void recordPrivateAtomics(const LoweredKernel &Lowered, const std::string &BlockName) {
  Function &Thread = Lowered.Thread;
  Module &M = *Thread.getParent();
  // Only kernels that got a variant with plain atomics (addAloneVariant).
  Function *Dispatch = M.getFunction(BlockName);
  if (!Dispatch || !M.getFunction(BlockName + ".alone"))
    return;
  std::optional<SmallVector<ArrayParameter, 4>> Arrays = findArrays(Lowered.Kernel);
  if (!Arrays)
    return;
  SmallPtrSet<Instruction *, 16> Reached;
  for (ArrayParameter &Array : *Arrays) {
    SmallPtrSet<Instruction *, 16> Atomics;
    if (isPrivatisable(*Thread.getArg(Array.Data), Array, Atomics))
      Reached.insert(Atomics.begin(), Atomics.end());
    else
      Array.Combine = Array.ElementBytes = 0;
  }
  // Every atomic of the thread must go to a private copy: one left atomic
  // would run concurrently with plain read-modify-writes.
  for (Instruction &I : instructions(Thread))
    if (isa<AtomicRMWInst, AtomicCmpXchgInst>(I) && !Reached.contains(&I)) {
      LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Lowered.Kernel.getName()
                        << "': not privatised: " << I << "\n");
      return;
    }
  if (Reached.empty())
    return;

  // !{ptr @__tidal_block_K, i32 parameters,
  //   !{i32 data, i32 dimensions, i32 combine, i32 bytes}...}
  LLVMContext &Context = M.getContext();
  Type *I32 = Type::getInt32Ty(Context);
  SmallVector<Metadata *, 4> Operands{
      ValueAsMetadata::get(Dispatch),
      ConstantAsMetadata::get(ConstantInt::get(I32, Lowered.Kernel.arg_size()))};
  for (const ArrayParameter &Array : *Arrays) {
    SmallVector<Metadata *, 4> Fields;
    for (unsigned Field : {Array.Data, Array.Dimensions, Array.Combine, Array.ElementBytes})
      Fields.push_back(ConstantAsMetadata::get(ConstantInt::get(I32, Field)));
    Operands.push_back(MDNode::get(Context, Fields));
    LLVM_DEBUG(if (Array.Combine) dbgs()
               << DEBUG_TYPE ": '" << Lowered.Kernel.getName() << "': privatised atomics on '"
               << Lowered.Kernel.getArg(Array.Data)->getName() << "'\n");
  }
  M.getOrInsertNamedMetadata(PrivateAtomicsMetadataName)
      ->addOperand(MDNode::get(Context, Operands));
}

// For a kernel with atomics on global memory: __tidal_block_K runs
// `.atomic` (the block function as built) or, when the context says that no
// other host thread runs a block of this launch (TIDAL_CONTEXT_ALONE),
// `.alone`, the same block function over a copy of K.thread whose atomics
// are plain read-modify-writes: a locked instruction costs ~2.5 ns and the
// atomics' cache lines stay in one core either way.
void addAloneVariant(const LoweredKernel &Lowered, const std::string &BlockName) {
  Function &Thread = Lowered.Thread;
  Module &M = *Thread.getParent();
  LLVMContext &Context = M.getContext();
  if (none_of(instructions(Thread), [](Instruction &I) {
        return isa<AtomicRMWInst, AtomicCmpXchgInst>(I);
      }))
    return;
  Function *Atomic = M.getFunction(BlockName);
  Atomic->setName(BlockName + ".atomic");
  Atomic->setLinkage(GlobalValue::InternalLinkage);
  ValueToValueMapTy Map;
  Function *Plain = CloneFunction(&Thread, Map);
  Plain->setName(Thread.getName() + ".alone");
  for (Instruction &I : make_early_inc_range(instructions(*Plain)))
    if (auto *RMW = dyn_cast<AtomicRMWInst>(&I))
      lowerAtomicRMWInst(RMW);
    else if (auto *Exchange = dyn_cast<AtomicCmpXchgInst>(&I))
      lowerAtomicCmpXchgInst(Exchange);
  LoweredKernel PlainLowered{Lowered.Kernel,  *Plain,
                             Lowered.Markers, Lowered.Frame,
                             Lowered.ThreadAccesses, Lowered.Debug,
                             Lowered.SerialUnroll};
  Function *Alone = createBlockFunction(PlainLowered, BlockName + ".alone");
  LLVM_DEBUG(dbgs() << DEBUG_TYPE ": '" << Lowered.Kernel.getName()
                    << "': global atomics: " << Alone->getName()
                    << " for launches that run alone\n");
  Alone->setLinkage(GlobalValue::InternalLinkage);

  Function *Dispatch = Function::Create(Atomic->getFunctionType(),
                                        GlobalValue::ExternalLinkage, BlockName, M);
  Dispatch->copyAttributesFrom(Atomic);
  Dispatch->setLinkage(GlobalValue::ExternalLinkage);
  Argument *Params = Dispatch->getArg(0), *BlockContext = Dispatch->getArg(1);
  Params->setName("params");
  BlockContext->setName("ctx");
  IRBuilder<> B(BasicBlock::Create(Context, "entry", Dispatch));
  Value *FlagsAddress = B.CreateStructGEP(getContextType(Context), BlockContext, 3);
  LoadInst *Flags = B.CreateAlignedLoad(B.getInt32Ty(), FlagsAddress, Align(4), "flags");
  Flags->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(Context, {}));
  BasicBlock *RunAlone = BasicBlock::Create(Context, "alone", Dispatch);
  BasicBlock *RunShared = BasicBlock::Create(Context, "shared", Dispatch);
  B.CreateCondBr(B.CreateICmpNE(B.CreateAnd(Flags, TIDAL_CONTEXT_ALONE), B.getInt32(0)),
                 RunAlone, RunShared);
  for (auto [Block, Callee] : {std::pair(RunAlone, Alone), std::pair(RunShared, Atomic)}) {
    B.SetInsertPoint(Block);
    B.CreateCall(Callee, {Params, BlockContext})->setTailCall();
    B.CreateRetVoid();
  }
  // The runtime runs such kernels' launches on one host thread (docs).
  M.getOrInsertNamedMetadata(RunAloneMetadataName)
      ->addOperand(MDNode::get(Context, {ValueAsMetadata::get(Dispatch)}));
}


} // namespace tidal::host_lowering
