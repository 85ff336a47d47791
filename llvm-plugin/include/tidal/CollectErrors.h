// Running LLVM code whose errors are diagnostics: LLVMContext's default
// handler ends the process (exit(1)) on a DS_Error diagnostic, which the
// backends emit for what they cannot compile ("no libcall available for
// fexp10", a dynamic alloca before sm_52).
#ifndef TIDAL_COLLECTERRORS_H
#define TIDAL_COLLECTERRORS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include <string>

namespace llvm {
class LLVMContext;
} // namespace llvm

namespace tidal {

// Runs `Work` with the DS_Error diagnostics of `Context` appended to
// `Errors` (one per line) instead of ending the process; the other
// diagnostics go to the handler that was there, which is put back after.
// True when no error was reported.
bool runCollectingErrors(llvm::LLVMContext &Context, std::string &Errors,
                         llvm::function_ref<void()> Work);

} // namespace tidal

#endif
