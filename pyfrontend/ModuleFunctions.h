// Functions of the _tidal module defined outside PythonModule.cpp. Each file
// adds its functions to the module from PyInit__tidal with one call, and turns
// C++ errors into Python exceptions with raisePythonError, so that the
// binding keeps one translation of errors.
#ifndef TIDAL_FRONTEND_MODULEFUNCTIONS_H
#define TIDAL_FRONTEND_MODULEFUNCTIONS_H

#include "PyRef.h"

namespace tidal::frontend {

// Call in a catch block: sets the Python exception for the C++ exception
// being handled (CudaDriverError -> tidal.cuda.CudaDriverError, ...) and
// returns null, for the caller to return.
PyObject *raisePythonError();

// HostMemoryModule.cpp: page-locked, mapped and managed memory of the cuda
// target. Returns 0, or -1 with a Python exception set.
int addHostMemoryFunctions(PyObject *Module);

} // namespace tidal::frontend

#endif
