// How tidal._tidal turns C++ errors into Python exceptions, in one place:
// every function of the module runs its body through translateErrors.
#ifndef TIDAL_BINDING_ERRORS_H
#define TIDAL_BINDING_ERRORS_H

#include "PyRef.h"

#include <exception>

namespace tidal::binding {

// Call in a catch block: sets the Python exception for the C++ exception
// being handled (CompileError -> tidal.errors.<its kind>, CudaDriverError ->
// tidal.cuda.CudaDriverError, KernelError -> IndexError / AssertionError,
// std::invalid_argument -> TypeError, ...) and returns null, for the caller
// to return. A PythonErrorSet leaves the Python exception that is set.
PyObject *raisePythonError();

// Runs Body, which returns a new reference (or null with a Python error
// set), and turns what it throws into the Python exception.
template <typename Body> PyObject *translateErrors(Body &&Run) {
  try {
    return Run();
  } catch (...) {
    return raisePythonError();
  }
}

// Runs Work with the GIL released; what it throws is rethrown once the GIL
// is held again (an exception must not cross Py_END_ALLOW_THREADS). Work
// must not touch Python objects.
template <typename Work> void withoutGIL(Work &&Run) {
  std::exception_ptr Failure;
  Py_BEGIN_ALLOW_THREADS try { Run(); } catch (...) {
    Failure = std::current_exception();
  }
  Py_END_ALLOW_THREADS if (Failure) std::rethrow_exception(Failure);
}

} // namespace tidal::binding

#endif
