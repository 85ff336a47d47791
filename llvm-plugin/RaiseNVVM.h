// The two halves of tidal-raise-nvvm (RaiseNVVM.cpp): the module-level part
// (kernel annotations, address spaces, attributes) and the per-call part
// (RaiseNVVMCalls.cpp: NVVM intrinsics, atomics, vprintf, libdevice calls
// to markers).
#ifndef TIDAL_RAISENVVM_H
#define TIDAL_RAISENVVM_H

#include <string>

namespace llvm {
class FunctionType;
class Instruction;
class StringRef;
class Module;
class Twine;
} // namespace llvm

namespace tidal {

// Replaces every NVVM call (llvm.nvvm.*, vprintf, __nv_*), atomicrmw and
// cmpxchg of M by its marker; reports each it cannot raise. Returns whether
// M changed.
bool raiseNVVMCalls(llvm::Module &M);

// Reports "tidal-raise-nvvm: <What> in function 'f' at file:line:col cannot
// run on the cpu target: <Why>".
void reportUnraisable(const llvm::Instruction &I, const llvm::Twine &What,
                      const llvm::Twine &Why);

// Whether tidal's host libdevice (LinkHostLibdevice.cpp) defines the
// function `Name` with a signature of the shape of `Type`.
enum class HostLibdeviceMatch { Found, Missing, WrongType };
HostLibdeviceMatch matchHostLibdevice(llvm::StringRef Name, llvm::FunctionType *Type);

} // namespace tidal

#endif
