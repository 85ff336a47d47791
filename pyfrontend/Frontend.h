// The frontend: reads a Python function through the CPython API (its AST,
// globals and closure), types it for given argument types with Numba's
// rules, and emits LLVM IR whose CUDA-specific parts are tidal.* markers
// (docs/markers.md). The caller holds the GIL.
#ifndef TIDAL_FRONTEND_FRONTEND_H
#define TIDAL_FRONTEND_FRONTEND_H

#include "Types.h"

#include <memory>
#include <string>
#include <vector>

typedef struct _object PyObject;

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tidal::frontend {

struct FrontendOptions {
  // debug=True: bounds checks, asserts compiled in, full debug locations
  // (the "tidal.debug" module flag tells the lowering).
  bool Debug = false;
  bool LineInfo = false; // lineinfo=True: debug locations from the .py file
  bool FastMath = false; // fastmath=True: fast-math flags, ftz, approximate div/sqrt
  unsigned MaxRegisters = 0;        // max_registers (0: none)
  unsigned MaxThreadsPerBlock = 0;  // launch_bounds[0] (0: none)
  unsigned MinBlocksPerSM = 0;      // launch_bounds[1] (0: none)
};

struct KernelModule {
  std::unique_ptr<llvm::LLVMContext> Context;
  std::unique_ptr<llvm::Module> Module;
  std::string KernelName;   // the kernel's symbol in Module
  std::vector<Type> ParamTypes;
  std::string SourceFile;
  // For inspect_types(): the kernel's source lines (from FirstLine) and the
  // type of each local variable, as typing settled them.
  int FirstLine = 1;
  std::vector<std::string> SourceLines;
  std::vector<std::pair<std::string, std::string>> VariableTypes;
};

// Emits marker IR for the kernel `Function` (a Python function object)
// specialised for `ArgTypes`. Throws CompileError for a program tidal
// rejects, PythonErrorSet when a Python call failed.
KernelModule emitKernel(PyObject *Function, const std::vector<Type> &ArgTypes,
                        const FrontendOptions &Options);

// The names of the function's parameters, in order.
std::vector<std::string> parameterNames(PyObject *Function);

// The flattened kernel-parameter types of one argument (arrays: data
// pointer, then shape and strides as i64), as the launch packs them.
// Each entry is the size in bytes of one parameter value.
std::vector<unsigned> flattenedParameterSizes(const Type &T);

} // namespace tidal::frontend

#endif
