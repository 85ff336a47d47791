// The parts of tidal._tidal that add functions to the module from
// PyInit__tidal (Module.cpp), one per area of the binding. Each returns 0,
// or -1 with a Python error set.
#ifndef TIDAL_BINDING_MODULEPARTS_H
#define TIDAL_BINDING_MODULEPARTS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace tidal::binding {

// Memory.cpp: device memory of the cuda target (cuda_alloc, cuda_copy, ...).
int addMemoryFunctions(PyObject *Module);
// HostMemory.cpp: page-locked, mapped and managed memory of the cuda target.
int addHostMemoryFunctions(PyObject *Module);
// StreamsAndEvents.cpp: cuda_stream_*, cuda_event*.
int addStreamAndEventFunctions(PyObject *Module);
// Devices.cpp: the driver's state and devices, the thread's current device.
int addDeviceFunctions(PyObject *Module);
// Module.cpp: the compiler's functions (parse_signature, compile_ptx_timed,
// cpu_worker_count).
int addCompilerFunctions(PyObject *Module);
// CompileToPTX.cpp: compile_to_ptx, for cuda.compile_ptx and cuda.compile.
int addCompileToPTXFunctions(PyObject *Module);
// DispatcherCache.cpp: what the disk cache's key needs (host_description).
int addCacheFunctions(PyObject *Module);
// PerformanceWarnings.cpp: pause_performance_warnings, for the library's
// own launch sequences.
int addPerformanceWarningFunctions(PyObject *Module);
int addPipelineFunctions(PyObject *Module); // PipelineFunctions.cpp

} // namespace tidal::binding

#endif
