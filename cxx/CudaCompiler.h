// CUDA C++ to LLVM IR in process, with Clang's libraries: the device side
// only (nvptx64-nvidia-cuda), no CUDA toolkit (tidal's prelude,
// cxx/include/tidal_cuda.h, stands in for cuda_runtime.h). The result is
// clang's NVVM IR, which tidal-raise-nvvm turns into marker IR.
#ifndef TIDAL_CXX_CUDACOMPILER_H
#define TIDAL_CXX_CUDACOMPILER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tidal::cxx {

// Compiles `Source` (named `FileName` in diagnostics) at -O1 for sm_70 with
// `Options` (clang command-line options such as -DNAME=VALUE, -I DIR,
// -std=c++20) after the prelude. Returns the module in `Context`, or null
// with `Error` holding clang's diagnostics as clang prints them
// ("file:line:col: error: ...", the source line, a caret). Warnings alone
// do not fail; they are dropped. A compile of the same file name, options
// and source is answered from an in-memory cache (bitcode, for the process).
//
// The module's named metadata KernelParametersMetadata has one node per
// __global__ function defined in the source, read from Clang's AST:
// !{!"symbol", !"name as written", !"type", !"parameter name", ...} with
// each parameter's type as tidal's scalar name ("int32", "uint64",
// "float32", "bool"), a pointer to one ("float32*", "const float64*"), a
// struct of numbers by value or through a pointer, as DeviceBinding.h
// spells it ("struct Pair{a:int32@0,b:int32@4;8}", "... ;8}*"), or "?" and
// the C++ spelling for anything else ("?Node (field 'next' of 'Node' is
// not a number ...)").
inline constexpr const char *KernelParametersMetadata = "tidal.cxx.kernels";

std::unique_ptr<llvm::Module> compileCuda(llvm::LLVMContext &Context, llvm::StringRef Source,
                                          llvm::StringRef FileName,
                                          llvm::ArrayRef<std::string> Options, std::string &Error);

// The compiles of this process by where their module came from: the
// in-memory cache, the on-disk cache (an earlier process's compile of the
// same source, options and headers: TIDAL_CACHE_DIR/cxx or
// ~/.cache/tidal/cxx; TIDAL_CXX_CACHE=0 turns it off), or clang; and the
// entries written to disk.
struct CacheCounts {
  uint64_t MemoryHits, DiskHits, DiskWrites, Compiles;
};
CacheCounts cacheCounts();

// Entries of the on-disk cache are code: one is loaded only when every
// folder from the cache's root (TIDAL_CACHE_DIR, or the user's cache
// folder's tidal/) down to it, and it, are owned by this user and not
// writable by group or others (as ssh checks its files); otherwise the
// source is compiled, nothing is written there, and the reason is given,
// once per folder and reason, by takeCacheWarnings(), which the caller
// turns into a warning (tidal.errors.UntrustedCacheWarning).
std::vector<std::string> takeCacheWarnings();

} // namespace tidal::cxx

#endif
