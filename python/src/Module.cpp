// tidal._tidal: the extension module that binds the frontend, the plugin's
// pipelines and the runtime to Python. Each area of the binding adds its
// functions and types here; C++ errors become Python exceptions in Errors.cpp
// and nowhere else.
#define TIDAL_BINDING_IMPORTS_NUMPY
#include "ForeignLinking.h"
#include "ArgumentTyping.h"
#include "DLPack.h"
#include "Dispatcher.h"
#include "Errors.h"
#include "LaunchConfig.h"
#include "ModuleParts.h"
#include "RawKernels.h"
#include "NumPy.h"
#include "Targets.h"

#include "Compiler.h"
#include "Types.h"

#include "tidal/Passes.h"
#include "tidal/runtime/CpuTarget.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <chrono>

namespace tidal::binding {

using namespace tidal::frontend;

namespace {

// parse_signature(text): (return type or None, [parameter types]).
PyObject *module_parse_signature(PyObject *, PyObject *Text) {
  return translateErrors([&]() -> PyObject * {
    if (!PyUnicode_Check(Text)) {
      PyErr_SetString(PyExc_TypeError, "a signature must be a str");
      return nullptr;
    }
    frontend::Signature Sig = parseSignature(PyUnicode_AsUTF8(Text));
    PyRef Params = PyRef::check(PyList_New(0));
    for (const Type &T : Sig.Params) {
      PyRef S = PyRef::check(PyUnicode_FromString(T.str().c_str()));
      PyList_Append(Params.get(), S.get());
    }
    if (!Sig.HasReturn)
      return Py_BuildValue("(OO)", Py_None, Params.get());
    return Py_BuildValue("(sO)", Sig.Return.str().c_str(), Params.get());
  });
}

PyObject *module_cpu_worker_count(PyObject *, PyObject *) {
  return PyLong_FromUnsignedLong(runtime::cpuWorkerCount());
}

// compile_ptx_timed(function, signature, sm): PTX of a kernel compiled
// from scratch, and the seconds of each stage, for the benchmark.
PyObject *module_compile_ptx_timed(PyObject *, PyObject *Args) {
  PyObject *Function, *Signature;
  unsigned SM = DefaultSM;
  if (!PyArg_ParseTuple(Args, "OO|I", &Function, &Signature, &SM))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    using Clock = std::chrono::steady_clock;
    auto Seconds = [](Clock::time_point A, Clock::time_point B) {
      return std::chrono::duration<double>(B - A).count();
    };
    std::vector<Type> Types = typesFromPython(Signature);
    Clock::time_point Start = Clock::now();
    KernelModule KM = emitKernel(Function, Types, FrontendOptions());
    Clock::time_point Emitted = Clock::now();
    PipelineTimings Timings;
    lowerForNVPTX(*KM.Module, SM, &Timings);
    Clock::time_point Lowered = Clock::now();
    std::string PTX = emitPTX(*KM.Module, SM);
    Clock::time_point Done = Clock::now();
    (void)Lowered;
    return Py_BuildValue("(s{sdsdsdsd})", PTX.c_str(), "frontend", Seconds(Start, Emitted),
                         "lowering", Timings.LoweringSeconds, "optimisation",
                         Timings.OptimisationSeconds, "codegen", Seconds(Lowered, Done));
  });
}

// live_code(): {"cpu_modules": n, "cpu_fitted_block_functions": n,
// "cuda_modules": n, "cpu_coarse_block_functions": n, "cpu_coarsened_blocks":
// n}, the compiled modules and the cpu target's fitted and coarsened block
// functions alive now (debug counters of the runtime: a dropped kernel's
// go), and the blocks the coarsened ones ran since the process started;
// and "cpu_privatised_launches": n, the launches so far that privatised
// their atomics.
PyObject *module_live_code(PyObject *, PyObject *) {
  return Py_BuildValue("{sKsKsKsKsKsK}", "cpu_privatised_launches",
                       static_cast<unsigned long long>(runtime::privatisedLaunchCount()),
                       "cpu_modules",
                       static_cast<unsigned long long>(runtime::liveCpuModuleCount()),
                       "cpu_fitted_block_functions",
                       static_cast<unsigned long long>(runtime::liveFittedBlockFunctionCount()),
                       "cuda_modules",
                       static_cast<unsigned long long>(runtime::liveCudaModuleCount()),
                       "cpu_coarse_block_functions",
                       static_cast<unsigned long long>(runtime::liveCoarseBlockFunctionCount()),
                       "cpu_coarsened_blocks",
                       static_cast<unsigned long long>(runtime::cpuCoarsenedBlockCount()));
}

PyMethodDef CompilerMethods[] = {
    {"live_code", module_live_code, METH_NOARGS,
     "live_code(): {'cpu_modules': n, 'cpu_fitted_block_functions': n, 'cuda_modules': n}, "
     "the compiled modules alive now (the JIT's on the cpu target, the driver's on the cuda "
     "target) and the cpu target's fitted block functions built by launches."},
    {"compile_ptx_timed", module_compile_ptx_timed, METH_VARARGS,
     "compile_ptx_timed(function, signature, sm=75): (ptx, {stage: seconds})."},
    {"parse_signature", module_parse_signature, METH_O,
     "parse_signature(text): (return type or None, [parameter types])."},
    {"cpu_worker_count", module_cpu_worker_count, METH_NOARGS,
     "cpu_worker_count(): workers of the cpu target's pool."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int addCompilerFunctions(PyObject *Module) {
  return PyModule_AddFunctions(Module, CompilerMethods);
}
} // namespace tidal::binding

namespace {

PyModuleDef ModuleDefinition = {PyModuleDef_HEAD_INIT, "tidal._tidal",
                                "tidal's compiler and runtime (C++).", -1, nullptr};

} // namespace

PyMODINIT_FUNC PyInit__tidal() {
  using namespace tidal::binding;
  import_array();
  PyObject *Module = PyModule_Create(&ModuleDefinition);
  if (!Module)
    return nullptr;
  int (*const Parts[])(PyObject *) = {addTargetFunctions,         addArgumentTypingFunctions,
                                      addDispatcherType,          addLaunchConfigType,
                                      addMemoryFunctions,         addHostMemoryFunctions,
                                      addStreamAndEventFunctions, addDeviceFunctions,
                                      addCompilerFunctions,       addCompileToPTXFunctions,
                                      tidal::dlpack::addFunctions, addCacheFunctions,
                                      addRawKernelFunctions,      addForeignFunctions,
                                      addPerformanceWarningFunctions, addPipelineFunctions};
  for (auto Add : Parts) {
    if (Add(Module) < 0) {
      Py_DECREF(Module);
      return nullptr;
    }
  }
  return Module;
}
