// The layout of a NumPy structured dtype (Types.h's RecordLayout), read
// from the dtype object: its fields, their offsets, sub-array shapes and
// nested records. Shared by the launch's argument typing (python/src) and
// the frontend (records as globals, constants and shared/local arrays).
#ifndef TIDAL_FRONTEND_RECORDLAYOUTS_H
#define TIDAL_FRONTEND_RECORDLAYOUTS_H

#include "Types.h"

#include <Python.h>

#include <memory>
#include <string>

namespace tidal::frontend {

// The fields of a structured dtype (numpy.dtype, or anything with a .dtype
// that is one, such as Numba's Record type); null, with Why saying which
// field kernels can't take, when one is neither a number, a record, nor a
// sub-array of either. Throws PythonErrorSet when a Python call fails.
std::shared_ptr<const RecordLayout> recordLayoutOfDtype(PyObject *Dtype, std::string &Why);

// The type of a record field's value: a number, a view of a nested record,
// or a C-ordered view of a sub-array (of numbers or of records).
Type recordFieldType(const RecordField &Field, bool ReadOnly);

// The structured numpy.dtype an object names (a numpy.dtype with fields, or
// an object whose .dtype is one, such as Numba's Record type); null (no
// error set) for anything else.
PyObject *structuredDtypeOf(PyObject *Object); // a new reference

} // namespace tidal::frontend

#endif
