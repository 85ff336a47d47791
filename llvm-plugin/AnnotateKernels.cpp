// tidal-annotate-kernels: makes the kernels of !tidal.kernels NVPTX entry
// points (!nvvm.annotations "kernel", the nvptx64 triple and data layout when
// unset, "target-cpu"="sm_N") and casts their pointer parameters to the global
// address space, so that infer-address-spaces turns accesses into ld/st.global.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes='tidal-annotate-kernels<sm=90>' in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "tidal-annotate-kernels"

using namespace llvm;

namespace tidal {
namespace {

constexpr unsigned GlobalAddressSpace = 1;
constexpr const char *NVPTXTriple = "nvptx64-nvidia-cuda";
// NVPTXTargetMachine's layout for nvptx64 (LLVM 19).
constexpr const char *NVPTXDataLayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64";

bool hasKernelAnnotation(const NamedMDNode &Annotations, const Function &F) {
  for (const MDNode *Annotation : Annotations.operands())
    if (Annotation->getNumOperands() >= 2 &&
        mdconst::dyn_extract_or_null<Function>(Annotation->getOperand(0)) == &F)
      if (auto *Key = dyn_cast<MDString>(Annotation->getOperand(1)))
        if (Key->getString() == "kernel")
          return true;
  return false;
}

// p -> addrspacecast to ptr addrspace(1) -> addrspacecast back to ptr, which
// replaces p everywhere else: the promise that p points into global memory.
void castToGlobal(Argument &Pointer, IRBuilder<> &Builder) {
  Type *GenericPointer = Pointer.getType();
  Type *GlobalPointer =
      PointerType::get(Pointer.getContext(), GlobalAddressSpace);
  StringRef Name = Pointer.getName();
  Value *Global = Builder.CreateAddrSpaceCast(
      &Pointer, GlobalPointer, Name.empty() ? "" : Name + ".global");
  Value *Generic = Builder.CreateAddrSpaceCast(
      Global, GenericPointer, Name.empty() ? "" : Name + ".generic");
  Pointer.replaceUsesWithIf(Generic,
                            [&](Use &U) { return U.getUser() != Global; });
}

bool isCastToGlobal(const Argument &Pointer) {
  return Pointer.hasOneUse() && isa<AddrSpaceCastInst>(*Pointer.user_begin()) &&
         Pointer.user_begin()->getType()->getPointerAddressSpace() ==
             GlobalAddressSpace;
}

} // namespace

bool annotateKernels(Module &M, const NVPTXOptions &Options) {
  SmallVector<Function *, 8> Kernels = getKernels(M);
  if (Kernels.empty())
    return false;
  LLVMContext &Context = M.getContext();
  if (M.getTargetTriple().empty())
    M.setTargetTriple(NVPTXTriple);
  if (M.getDataLayoutStr().empty())
    M.setDataLayout(NVPTXDataLayout);

  // Every defined function gets the same target-cpu: kernels and the device
  // functions they call must look inline-compatible.
  std::string CPU = "sm_" + std::to_string(Options.SM);
  for (Function &F : M)
    if (!F.isDeclaration())
      F.addFnAttr("target-cpu", CPU);

  NamedMDNode *Annotations = M.getOrInsertNamedMetadata("nvvm.annotations");
  for (Function *Kernel : Kernels) {
    if (!hasKernelAnnotation(*Annotations, *Kernel))
      Annotations->addOperand(MDNode::get(
          Context, {ValueAsMetadata::get(Kernel), MDString::get(Context, "kernel"),
                    ConstantAsMetadata::get(
                        ConstantInt::get(Type::getInt32Ty(Context), 1))}));
    if (Kernel->isDeclaration())
      continue;
    IRBuilder<> Builder(&*Kernel->getEntryBlock().getFirstInsertionPt());
    for (Argument &Parameter : Kernel->args())
      if (Parameter.getType()->isPointerTy() &&
          Parameter.getType()->getPointerAddressSpace() == 0 &&
          !Parameter.use_empty() && !isCastToGlobal(Parameter))
        castToGlobal(Parameter, Builder);
  }
  return true;
}

PreservedAnalyses AnnotateKernelsPass::run(Module &M, ModuleAnalysisManager &) {
  return annotateKernels(M, Options) ? PreservedAnalyses::none()
                                     : PreservedAnalyses::all();
}

} // namespace tidal
