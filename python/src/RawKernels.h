// CUDA C++ kernels launched from Python (tidal.cuda.RawKernel / RawModule,
// python/tidal/cuda/raw.py): the source compiled in process (cxx/,
// tidal::cxx::compileCuda), its kernels listed with their C++ parameter
// types, and, per list of launch-argument types, a marker-IR module whose
// kernel takes the arguments as tidal's Python kernels do (arrays
// flattened) and calls the C++ kernel with data pointers and converted
// scalars. The dispatcher (Dispatcher.cpp) compiles and launches it like a
// Python kernel's specialisation.
#ifndef TIDAL_BINDING_RAWKERNELS_H
#define TIDAL_BINDING_RAWKERNELS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ForeignFunctions.h"
#include "Frontend.h"
#include "PyRef.h"
#include "Types.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tidal::binding {

// CUDA C++ source compiled to clang's NVVM IR in Context by tidal._cxx
// (which must be imported), or CompileError with clang's first error at
// its file:line:col.
std::unique_ptr<llvm::Module> compileOrThrow(llvm::LLVMContext &Context, const std::string &Code,
                                             const std::string &FileName,
                                             const std::vector<std::string> &Options);

// One kernel of a CUDA C++ source.
struct RawKernelSource {
  std::string Code, FileName;
  std::vector<std::string> Options; // clang options
  std::string Symbol;               // the kernel's symbol in the module
  std::string Name;                 // as written in the source
  std::vector<std::string> ParameterTypes; // KernelParametersMetadata's text
  // The tidal.cuda.RawModule the kernel belongs to: its _global_address(symbol)
  // gives the one storage of each __device__/__constant__ variable that all
  // its kernels share (None for none: each specialisation keeps its own).
  frontend::PyRef Module;
  // RawModule(link=[...]): CUDA C++, LLVM IR and tidal's LTO-IR that define
  // what the module declares (linkIntoRawModule, ForeignLinking.h).
  std::vector<frontend::ForeignLink> Links;
};

// The marker-IR module of Raw's kernel for launch arguments of types Types
// (one per C++ parameter, checked: ParamNames name them in errors). Throws
// std::invalid_argument (TypeError) for an argument the parameter cannot
// take, CompileError for what clang or tidal-raise-nvvm refuse.
frontend::KernelModule emitRawKernel(const RawKernelSource &Raw,
                                     const std::vector<std::string> &ParamNames,
                                     const std::vector<frontend::Type> &Types);

// _raw_kernels(code, file_name, options): [(symbol, name, [parameter types],
// [parameter names]), ...] of each __global__ function, or CompileError with
// clang's first error at its file:line:col.
// _raw_globals(code, file_name, options): [(symbol, name, size, align,
// initial bytes or None, constant)] of each __device__ and __constant__
// variable the source defines (None: an initializer tidal cannot copy).
// 0, or -1 with a Python error set.
int addRawKernelFunctions(PyObject *Module);

} // namespace tidal::binding

#endif
