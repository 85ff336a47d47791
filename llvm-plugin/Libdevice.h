// libdevice, the CUDA toolkit's math library in LLVM bitcode
// (nvvm/libdevice/libdevice.10.bc): where it is, and its bytes, read once per
// process and shared by every compile (each compile parses it lazily into its
// own LLVMContext; LowerMath.cpp).
#ifndef TIDAL_LIBDEVICE_H
#define TIDAL_LIBDEVICE_H

#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace tidal {

// The libdevice file to use, "" for none. In order: `Explicit` (the pass
// parameter libdevice=PATH; "none" or "" means none), the environment
// variable TIDAL_LIBDEVICE (same spelling), $CUDA_HOME/nvvm/libdevice/
// libdevice.10.bc if CUDA_HOME is set, else the same under /usr/local/cuda
// (as Numba). A found path is only returned if the file exists, except an
// explicit one (Explicit or TIDAL_LIBDEVICE), which is returned as given.
std::string findLibdevice(const std::optional<std::string> &Explicit);

// The bytes of the file at `Path`, read on first use and kept for the
// lifetime of the process (thread-safe). nullptr, with `Error` set, if the
// file cannot be read.
const llvm::MemoryBuffer *getLibdeviceBytes(llvm::StringRef Path,
                                            std::string &Error);

} // namespace tidal

#endif
