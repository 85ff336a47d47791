// The memory and shape of an array argument, read without allocating, and
// arrays of other libraries described by __cuda_array_interface__.
#ifndef TIDAL_BINDING_ARRAYINTERFACE_H
#define TIDAL_BINDING_ARRAYINTERFACE_H

#include "NumPy.h"
#include "Types.h"

#include <cstdint>

namespace tidal::binding {

// An array argument's memory: from a NumPy array (a NumPy array itself, or
// the one a device array describes its memory with), from a
// __cuda_array_interface__ dict or from a DLPack tensor.
struct ArrayView {
  PyArrayObject *Array = nullptr; // the NumPy array, when one describes it (borrowed)
  char *Data = nullptr;           // element 0
  int NDim = 0;
  const npy_intp *Shape = nullptr, *Strides = nullptr; // in bytes
  npy_intp ItemSize = 0;
  bool ReadOnly = false;
  // __cuda_array_interface__: the stream the producer's work is on (0: none
  // to wait for). Shape and strides read from a dict or a DLPack tensor.
  uint64_t ProducerStream = 0;
  npy_intp OwnShape[NPY_MAXDIMS], OwnStrides[NPY_MAXDIMS];
  frontend::Scalar Dtype = frontend::Scalar::Float64; // when Array is null

  void fromArray(PyArrayObject *A) {
    Array = A;
    Data = static_cast<char *>(PyArray_DATA(A));
    NDim = PyArray_NDIM(A);
    Shape = PyArray_DIMS(A);
    Strides = PyArray_STRIDES(A);
    ItemSize = PyArray_ITEMSIZE(A);
    ReadOnly = !PyArray_ISWRITEABLE(A);
  }
};

// C when the strides are those of a C-ordered array of this shape, F when
// Fortran-ordered, A otherwise.
frontend::Layout layoutOf(int NDim, const npy_intp *Shape, const npy_intp *Strides,
                          npy_intp ItemSize);

// Reads O.__cuda_array_interface__ (version 0 to 3) into V; false, with a
// Python error set, when O has none or it is not a valid description.
bool interfaceView(PyObject *O, ArrayView &V);

} // namespace tidal::binding

#endif
