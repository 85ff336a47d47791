// NumPy's C API in the binding: every file shares the one table of NumPy
// functions that Module.cpp imports (import_array) when the module loads.
#ifndef TIDAL_BINDING_NUMPY_H
#define TIDAL_BINDING_NUMPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tidal_ARRAY_API
#ifndef TIDAL_BINDING_IMPORTS_NUMPY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

#endif
