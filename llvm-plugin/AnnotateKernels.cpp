// tidal-annotate-kernels: makes the kernels of !tidal.kernels NVPTX entry
// points (!nvvm.annotations "kernel", the nvptx64 triple and data layout when
// unset, "target-cpu"="sm_N"), turns their "tidal-maxntid"/"tidal-minctasm"/
// "tidal-maxnreg"/"tidal-maxclusterrank" attributes into !nvvm.annotations
// (PTX .maxntid, .minnctapersm, .maxnreg, .maxclusterrank), applies "tidal.ftz" (f32 denormals flushed), and
// casts their pointer parameters to the global address space, so that
// infer-address-spaces turns accesses into ld/st.global.
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

void addAnnotation(NamedMDNode &Annotations, Function &Kernel, StringRef Key,
                   unsigned Value) {
  LLVMContext &Context = Kernel.getContext();
  Annotations.addOperand(MDNode::get(
      Context, {ValueAsMetadata::get(&Kernel), MDString::get(Context, Key),
                ConstantAsMetadata::get(
                    ConstantInt::get(Type::getInt32Ty(Context), Value))}));
}

// "tidal-maxntid"="X[,Y[,Z]]", "tidal-minctasm"="N", "tidal-maxnreg"="N",
// "tidal-maxclusterrank"="N"
// -> maxntid{x,y,z} / minctasm / maxnreg / maxclusterrank annotations. Malformed values are
// reported and skipped.
void annotateLaunchBounds(NamedMDNode &Annotations, Function &Kernel) {
  auto Malformed = [&](StringRef Attribute, StringRef Value) {
    reportError(Kernel.getContext(),
                "attribute \"" + Attribute + "\"=\"" + Value +
                    "\" of kernel '" + Kernel.getName() +
                    "': expected positive integers" +
                    (Attribute == MaxThreadsAttribute ? " X[,Y[,Z]]" : ""));
  };
  if (Attribute A = Kernel.getFnAttribute(MaxThreadsAttribute); A.isValid()) {
    SmallVector<StringRef, 3> Parts;
    A.getValueAsString().split(Parts, ',');
    SmallVector<unsigned, 3> Sizes;
    for (StringRef Part : Parts) {
      unsigned Size;
      if (Part.trim().getAsInteger(10, Size) || Size == 0)
        break;
      Sizes.push_back(Size);
    }
    if (Sizes.size() != Parts.size() || Sizes.size() > 3)
      Malformed(MaxThreadsAttribute, A.getValueAsString());
    else
      for (auto [Index, Size] : enumerate(Sizes))
        addAnnotation(Annotations, Kernel,
                      std::string("maxntid") + "xyz"[Index], Size);
  }
  for (auto [Name, Key] : {std::pair<StringRef, StringRef>{MinBlocksAttribute, "minctasm"},
                           {MaxRegistersAttribute, "maxnreg"},
                           {MaxClusterRankAttribute, "maxclusterrank"}}) {
    Attribute A = Kernel.getFnAttribute(Name);
    if (!A.isValid())
      continue;
    unsigned Value;
    if (A.getValueAsString().trim().getAsInteger(10, Value) || Value == 0)
      Malformed(Name, A.getValueAsString());
    else
      addAnnotation(Annotations, Kernel, Key, Value);
  }
}

} // namespace

void setNVPTXTargetIfUnset(Module &M) {
  if (M.getTargetTriple().empty())
    M.setTargetTriple(NVPTXTriple);
  if (M.getDataLayoutStr().empty())
    M.setDataLayout(NVPTXDataLayout);
}

bool isFTZ(const Module &M, const NVPTXOptions &Options) {
  auto *Flag = mdconst::extract_or_null<ConstantInt>(M.getModuleFlag(FlushDenormalsFlag));
  return Options.FTZ || (Flag && !Flag->isZero());
}

bool annotateKernels(Module &M, const NVPTXOptions &Options) {
  SmallVector<Function *, 8> Kernels = getKernels(M);
  if (Kernels.empty())
    return false;
  LLVMContext &Context = M.getContext();
  setNVPTXTargetIfUnset(M);

  // Flushing f32 denormals: what NVPTX reads per function (ftz forms of
  // f32 instructions), and what nvvm-reflect answers for __CUDA_FTZ.
  bool FTZ = isFTZ(M, Options);
  if (!M.getModuleFlag("nvvm-reflect-ftz"))
    M.addModuleFlag(Module::Override, "nvvm-reflect-ftz", FTZ ? 1 : 0);
  if (FTZ)
    for (Function &F : M)
      if (!F.isDeclaration())
        F.addFnAttr("denormal-fp-math-f32", "preserve-sign,preserve-sign");

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
    annotateLaunchBounds(*Annotations, *Kernel);
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


} // namespace tidal
