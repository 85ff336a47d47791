// tidal-lower-print: replaces tidal.print(fmt, ...) by CUDA's
// vprintf(fmt, buffer) with the arguments packed in a local struct, and
// tidal.bounds.fault (an unchecked index out of range: undefined) by
// nothing, so that its check goes too. The debug-mode markers
// tidal.bounds.error and tidal.assert.fail are tidal-lower-exceptions'.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-lower-print in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "tidal-lower-print"

using namespace llvm;

namespace tidal {
namespace {

class PrintLowering {
  Module &M;
  LLVMContext &Context;
  Type *I32, *Ptr;

public:
  explicit PrintLowering(Module &M)
      : M(M), Context(M.getContext()), I32(Type::getInt32Ty(Context)),
        Ptr(PointerType::getUnqual(Context)) {}

  bool lower(CallInst &Call, MarkerKind Kind) {
    if (Kind == MarkerKind::BoundsFault) {
      // Without debug mode an index out of range is undefined, as CUDA has
      // it: the call goes, the `unreachable` after it stays, and LLVM
      // drops the check that led there.
      Call.eraseFromParent();
      return true;
    }
    if (Kind != MarkerKind::Print)
      return false;
    setNVPTXTargetIfUnset(M); // the argument struct has NVPTX's layout
    IRBuilder<> Builder(&Call);
    callVprintf(Builder, Call.getArgOperand(0),
                SmallVector<Value *, 8>(drop_begin(Call.args())));
    Call.eraseFromParent();
    return true;
  }

private:
  // vprintf(format, &{args...}): the arguments as the fields of a struct in
  // the thread's local memory, each aligned to its size (C's promotions
  // applied again for safety: float -> double, small integers -> i32).
  void callVprintf(IRBuilder<> &Builder, Value *Format, ArrayRef<Value *> Args) {
    FunctionCallee Vprintf = M.getOrInsertFunction(
        "vprintf", FunctionType::get(I32, {Ptr, Ptr}, /*isVarArg=*/false));
    SmallVector<Value *, 8> Promoted;
    for (Value *Arg : Args) {
      Type *T = Arg->getType();
      if (T->isFloatingPointTy() && !T->isDoubleTy())
        Arg = Builder.CreateFPExt(Arg, Builder.getDoubleTy());
      else if (T->isIntegerTy() && T->getIntegerBitWidth() < 32)
        Arg = Builder.CreateSExt(Arg, I32);
      Promoted.push_back(Arg);
    }
    Value *Buffer = ConstantPointerNull::get(cast<PointerType>(Ptr));
    if (!Promoted.empty()) {
      SmallVector<Type *, 8> Fields;
      for (Value *Arg : Promoted)
        Fields.push_back(Arg->getType());
      StructType *Layout = StructType::get(Context, Fields);
      Function &F = *Builder.GetInsertBlock()->getParent();
      IRBuilder<> Entry(&*F.getEntryBlock().getFirstInsertionPt());
      AllocaInst *Alloca = Entry.CreateAlloca(Layout, nullptr, "printf.args");
      for (auto [Index, Arg] : enumerate(Promoted))
        Builder.CreateStore(Arg, Builder.CreateStructGEP(Layout, Alloca, Index));
      Buffer = Alloca;
    }
    Builder.CreateCall(Vprintf, {Format, Buffer});
  }
};

} // namespace

bool lowerPrint(Module &M) {
  PrintLowering Lowering(M);
  return lowerMarkerCalls(M, [&](CallInst &Call, MarkerName Marker) {
    return Lowering.lower(Call, Marker.Kind);
  });
}


} // namespace tidal
