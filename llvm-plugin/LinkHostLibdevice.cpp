// tidal-link-host-libdevice: gives the cpu target the libdevice functions
// (__nv_*) a module calls, by linking their host definitions
// (host-libdevice/HostLibdevice.cpp, compiled to bitcode at build time and
// embedded here) before the host pipeline's O3, so that they inline. Only
// the functions used are linked, and they become internal.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-link-host-libdevice in.ll

#include "Markers.h"
#include "PassClasses.h"
#include "RaiseNVVM.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <mutex>

#define DEBUG_TYPE "tidal-link-host-libdevice"

using namespace llvm;

namespace tidal {
namespace {

// The bitcode: static const unsigned char HostLibdeviceBitcode[] (generated
// by host-libdevice/EmbedBitcode.cmake).
#include "tidal/HostLibdeviceBitcode.inc"

bool callsLibdevice(const Module &M) {
  for (const Function &F : M)
    if (F.isDeclaration() && F.getName().starts_with("__nv_") && !F.use_empty())
      return true;
  return false;
}

// The host libdevice's function declarations, read once from the embedded
// bitcode (lazily: no bodies are materialized) into a context of their own.
const Module *getHostLibdeviceDeclarations() {
  static LLVMContext Context;
  static std::unique_ptr<Module> Library = [] {
    MemoryBufferRef Bytes(StringRef(reinterpret_cast<const char *>(HostLibdeviceBitcode),
                                    sizeof(HostLibdeviceBitcode)),
                          "host-libdevice.bc");
    Expected<std::unique_ptr<Module>> Lazy = getLazyBitcodeModule(Bytes, Context);
    if (!Lazy) {
      consumeError(Lazy.takeError());
      return std::unique_ptr<Module>();
    }
    return std::move(*Lazy);
  }();
  return Library.get();
}

// Types equal up to their context: the same kind and width.
bool haveSameShape(Type *A, Type *B) {
  if (A->getTypeID() != B->getTypeID())
    return false;
  if (A->isIntegerTy())
    return A->getIntegerBitWidth() == B->getIntegerBitWidth();
  if (A->isPointerTy())
    return A->getPointerAddressSpace() == B->getPointerAddressSpace();
  return true;
}

} // namespace

HostLibdeviceMatch matchHostLibdevice(StringRef Name, FunctionType *Type) {
  static std::mutex Lock;
  std::lock_guard<std::mutex> Guard(Lock);
  const Module *Library = getHostLibdeviceDeclarations();
  const Function *Defined = Library ? Library->getFunction(Name) : nullptr;
  if (!Defined)
    return HostLibdeviceMatch::Missing;
  FunctionType *Expected = Defined->getFunctionType();
  if (Expected->getNumParams() != Type->getNumParams() ||
      !haveSameShape(Expected->getReturnType(), Type->getReturnType()))
    return HostLibdeviceMatch::WrongType;
  for (unsigned I = 0; I < Type->getNumParams(); ++I)
    if (!haveSameShape(Expected->getParamType(I), Type->getParamType(I)))
      return HostLibdeviceMatch::WrongType;
  return HostLibdeviceMatch::Found;
}

bool linkHostLibdevice(Module &M) {
  if (!callsLibdevice(M))
    return false;
  LLVMContext &Context = M.getContext();
  MemoryBufferRef Bytes(
      StringRef(reinterpret_cast<const char *>(HostLibdeviceBitcode), sizeof(HostLibdeviceBitcode)),
      "host-libdevice.bc");
  Expected<std::unique_ptr<Module>> Library = getLazyBitcodeModule(Bytes, Context);
  if (!Library) {
    reportError(Context, "cannot read tidal's host libdevice: " + toString(Library.takeError()));
    return false;
  }
  (*Library)->setTargetTriple(M.getTargetTriple());
  (*Library)->setDataLayout(M.getDataLayout());
  StringSet<> DefinedBefore;
  for (GlobalValue &GV : M.global_values())
    if (!GV.isDeclaration())
      DefinedBefore.insert(GV.getName());
  if (Linker::linkModules(M, std::move(*Library), Linker::LinkOnlyNeeded)) {
    reportError(Context, "cannot link tidal's host libdevice");
    return false;
  }
  for (GlobalValue &GV : M.global_values()) {
    if (GV.isDeclaration() || DefinedBefore.contains(GV.getName()))
      continue;
    GV.setLinkage(GlobalValue::InternalLinkage);
    // The bitcode was compiled for a generic x86-64; the kernels are
    // compiled for this machine: let them inline the library's functions.
    if (auto *F = dyn_cast<Function>(&GV)) {
      F->removeFnAttr("target-cpu");
      F->removeFnAttr("target-features");
      F->removeFnAttr("tune-cpu");
    }
  }
  return true;
}

} // namespace tidal
