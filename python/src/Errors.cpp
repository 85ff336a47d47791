// The one translation of C++ errors into Python exceptions in tidal._tidal.
#include "Errors.h"

#include "CompileError.h"

#include <algorithm>

#include "tidal/runtime/CpuTarget.h"
#include "tidal/runtime/CudaDriver.h"
#include "tidal/runtime/CudaTarget.h"

namespace tidal::binding {

using namespace tidal::frontend;

// Sets the exception a kernel raised, described by E's detail; false
// (nothing set) when E is a failed assert, not a raise.
static bool raiseKernelException(const runtime::KernelError &E) {
  const std::string &Detail = E.detail();
  if (std::count(Detail.begin(), Detail.end(), '\x1f') != 5)
    return false;
  PyRef Module = PyRef::steal(PyImport_ImportModule("tidal.cuda._kernel_exceptions"));
  runtime::Dim3 Thread = E.thread(), Block = E.block();
  PyRef Instance =
      Module ? PyRef::steal(PyObject_CallMethod(
                   Module.get(), "exception_from", "s(III)(III)", Detail.c_str(), Thread[0],
                   Thread[1], Thread[2], Block[0], Block[1], Block[2]))
             : PyRef();
  if (!Instance) {
    PyErr_Clear();
    return false;
  }
  PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(Instance.get())), Instance.get());
  return true;
}

PyObject *raisePythonError() {
  try {
    throw;
  } catch (const PythonErrorSet &) {
    // already set
  } catch (const CompileError &E) {
    PyRef Errors = PyRef::steal(PyImport_ImportModule("tidal.errors"));
    PyRef Class = Errors ? Errors.attrOrNull(E.Kind.c_str()) : PyRef();
    if (!Class) {
      PyErr_Clear();
      PyErr_SetString(PyExc_RuntimeError, E.what());
      return nullptr;
    }
    PyRef Instance = PyRef::steal(
        PyObject_CallFunction(Class.get(), "ssiiis", E.what(), E.Where.File.c_str(), E.Where.Line,
                              E.Where.Column, E.Where.EndColumn, E.Message.c_str()));
    if (Instance)
      PyErr_SetObject(Class.get(), Instance.get());
  } catch (const std::invalid_argument &E) {
    PyErr_SetString(PyExc_TypeError, E.what());
  } catch (const runtime::KernelError &E) {
    // Ctrl-C during a cpu launch: Python's own SIGINT handler raises
    // KeyboardInterrupt (or whatever the user's handler does).
    if (E.kind() == runtime::KernelError::Kind::Interrupted && PyErr_CheckSignals() < 0)
      return nullptr;
    // An exception the kernel raised: its class, with its arguments
    // (pyfrontend/KernelExceptions.cpp, tidal/cuda/_kernel_exceptions.py).
    if (E.kind() == runtime::KernelError::Kind::Assert && raiseKernelException(E))
      return nullptr;
    // What a failed check in a kernel raises, as Numba's simulator does.
    PyObject *Type = E.kind() == runtime::KernelError::Kind::Bounds   ? PyExc_IndexError
                     : E.kind() == runtime::KernelError::Kind::Assert ? PyExc_AssertionError
                                                                      : PyExc_RuntimeError;
    PyErr_SetString(Type, E.what());
  } catch (const runtime::CudaSupportError &E) {
    PyRef Driver = PyRef::steal(PyImport_ImportModule("tidal.cuda.driver"));
    PyRef Class = Driver ? Driver.attrOrNull("CudaSupportError") : PyRef();
    if (!Class)
      PyErr_Clear();
    PyErr_SetString(Class ? Class.get() : PyExc_RuntimeError, E.what());
  } catch (const runtime::CudaDriverError &E) {
    // tidal.cuda.CudaDriverError(message, call, error_name, code)
    PyRef Driver = PyRef::steal(PyImport_ImportModule("tidal.cuda.driver"));
    PyRef Class = Driver ? Driver.attrOrNull("CudaDriverError") : PyRef();
    if (!Class) {
      PyErr_Clear();
      PyErr_SetString(PyExc_RuntimeError, E.what());
      return nullptr;
    }
    PyRef Instance = PyRef::steal(PyObject_CallFunction(
        Class.get(), "sssi", E.what(), E.call().c_str(), E.errorName().c_str(), E.result()));
    if (Instance)
      PyErr_SetObject(Class.get(), Instance.get());
  } catch (const runtime::LaunchConfigError &E) {
    PyErr_SetString(PyExc_ValueError, E.what());
  } catch (const runtime::InvalidDeviceError &E) {
    PyErr_SetString(PyExc_ValueError, E.what());
  } catch (const runtime::RuntimeError &E) {
    PyErr_SetString(PyExc_RuntimeError, E.what());
  } catch (const std::bad_alloc &) {
    PyErr_NoMemory();
  } catch (const std::exception &E) {
    PyErr_SetString(PyExc_RuntimeError, E.what());
  }
  return nullptr;
}

} // namespace tidal::binding
