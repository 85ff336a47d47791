// Device arrays captured as globals or closure variables (any object with
// __cuda_array_interface__ that is not a NumPy array): read and written by
// reference, as numba-cuda does: the kernel's code holds the array's
// pointer, shape and strides as constants, so that it sees later writes to
// the array's memory (NumPy arrays and numbers stay frozen as constants).
#ifndef TIDAL_FRONTEND_CAPTUREDARRAYS_H
#define TIDAL_FRONTEND_CAPTUREDARRAYS_H

#include "Types.h"

#include <Python.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tidal::frontend {

struct CapturedArray {
  Type T; // array(dtype, ndim, layout), read-only where the interface says so
  uint64_t Address = 0;
  std::vector<int64_t> Shape, Strides; // strides in bytes
};

// The array O's interface describes; nullopt for objects without one (and
// for NumPy arrays). Throws std::runtime_error with the reason for an
// interface kernels cannot read (records, a byte order not the machine's).
std::optional<CapturedArray> capturedArray(PyObject *O);

} // namespace tidal::frontend

#endif
