// The kernel type of a launch argument, as Numba's typeof gives it, and the
// attributes through which tidal's array classes describe their memory
// (_tidal_host, _tidal_device, _tidal_array, _tidal_direction, _tidal_memory).
#ifndef TIDAL_BINDING_ARGUMENTTYPING_H
#define TIDAL_BINDING_ARGUMENTTYPING_H

#include "NumPy.h"
#include "PyRef.h"
#include "Types.h"

#include <cstdint>
#include <string>

namespace tidal::runtime {
class CudaAllocation;
}

namespace tidal::binding {

// The scalar type of NumPy's kind character ('b', 'i', 'u', 'f', 'c') and
// item size; false when kernels can't take it.
bool scalarOfKind(char Kind, int Size, frontend::Scalar &Out);
bool scalarOfDescr(PyArray_Descr *Descr, frontend::Scalar &Out);
// A datetime64/timedelta64 dtype as its scalar type with its unit; false
// for other dtypes (and for multiples of a unit, datetime64[2D]).
bool datetimeOfDescr(PyArray_Descr *Descr, frontend::Type &Out);

// The NumPy array over a cpu-target device array's memory (_tidal_host),
// borrowed; null, with no error set, for any other object.
PyObject *hostArrayOf(PyObject *O);
// The NumPy array that describes a cuda-target device array's device memory
// (_tidal_device), borrowed; null, with no error set, for any other object.
PyObject *deviceLayoutOf(PyObject *O);
// The NumPy array of cuda.In / Out / InOut (_tidal_array), borrowed; null,
// with no error set, for any other object.
PyObject *directedArrayOf(PyObject *O);

// The copies cuda.In / Out / InOut ask of the cuda target, as bits.
constexpr uint8_t CopyIn = 1, CopyOut = 2;
uint8_t directionOf(PyObject *O);

// The allocation a cuda-target device array holds (_tidal_memory), or null.
runtime::CudaAllocation *deviceAllocationOf(PyObject *O);

// The type Numba gives a launch argument; false (and Why) when kernels
// can't take it, or false with a Python error set when its
// __cuda_array_interface__ or DLPack tensor is not a valid description.
bool typeofArgument(PyObject *O, frontend::Type &Out, std::string &Why);
// An address that is not an int: a cffi pointer (ffi.from_buffer(a),
// ffi.cast('int *', p)) or a ctypes c_void_p. Typed voidptr; its value
// (false with a Python error set when it has none).
bool isAddressObject(PyObject *O);
bool addressOf(PyObject *O, uint64_t &Address);

// A type that python/tidal/cuda/signatures.py describes: tidal's type text
// or a description tuple (records, read-only arrays). Throws
// std::invalid_argument (a TypeError) for anything else.
frontend::Type typeFromDescription(PyObject *Description);

// typeof(value); 0, or -1 with a Python error set.
int addArgumentTypingFunctions(PyObject *Module);

} // namespace tidal::binding

#endif
