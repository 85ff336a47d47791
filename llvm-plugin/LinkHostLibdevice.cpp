// tidal-link-host-libdevice: gives the cpu target the libdevice functions
// (__nv_*) a module calls, by linking their host definitions
// (host-libdevice/HostLibdevice.cpp, compiled to bitcode at build time and
// embedded here) before the host pipeline's O3, so that they inline. Only
// the functions used are linked, and they become internal.
//   opt-19 -load-pass-plugin=build/lib/TidalPasses.so -passes=tidal-link-host-libdevice in.ll

#include "Markers.h"
#include "PassClasses.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

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

} // namespace

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
