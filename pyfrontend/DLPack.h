// The C ABI of a DLPack tensor as the Python exchange protocol passes it: a
// PyCapsule named "dltensor" around a ManagedTensor (DLPack's unversioned
// DLManagedTensor). Written from the specification at
// https://dmlc.github.io/dlpack/latest/ ; the field order and widths are the
// ABI, so the static_asserts below pin them.
#ifndef TIDAL_FRONTEND_DLPACK_H
#define TIDAL_FRONTEND_DLPACK_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstddef>
#include <cstdint>

namespace tidal::dlpack {

// DLDeviceType: where the memory is (the values tidal meets; the others are
// refused by number).
enum DeviceType : int32_t {
  DeviceCPU = 1,
  DeviceCUDA = 2,
  DeviceCUDAHost = 3,     // page-locked host memory (cudaMallocHost)
  DeviceCUDAManaged = 13, // managed memory (cudaMallocManaged)
};

// DLDataTypeCode: the kind of each element; its width is DataType::Bits.
enum TypeCode : uint8_t {
  TypeInt = 0,
  TypeUInt = 1,
  TypeFloat = 2,
  TypeBfloat = 4,
  TypeComplex = 5,
  TypeBool = 6,
};

struct Device {
  int32_t Type; // a DeviceType
  int32_t Id;   // the CUDA ordinal; 0 for the host
};

struct DataType {
  uint8_t Code;   // a TypeCode
  uint8_t Bits;   // of one lane
  uint16_t Lanes; // 1 for scalars (more: vector types, which tidal refuses)
};

// DLTensor. Element i is at Data + ByteOffset + sum(i[k] * Strides[k]) *
// Bits / 8: strides count elements, not bytes. Strides may be null (a
// C-contiguous tensor) in producers older than DLPack 1.2.
struct Tensor {
  void *Data;
  Device Where;
  int32_t NDim;
  DataType Type;
  int64_t *Shape;
  int64_t *Strides;
  uint64_t ByteOffset;
};

// DLManagedTensor: the tensor and how to give it back. The consumer calls
// Deleter(this) once, when it no longer needs the memory.
struct ManagedTensor {
  Tensor DLTensor;
  void *ManagerContext;
  void (*Deleter)(ManagedTensor *Self);
};

static_assert(sizeof(Device) == 8 && sizeof(DataType) == 4, "DLDevice, DLDataType");
static_assert(offsetof(Tensor, Where) == 8 && offsetof(Tensor, NDim) == 16 &&
                  offsetof(Tensor, Type) == 20 && offsetof(Tensor, Shape) == 24 &&
                  offsetof(Tensor, Strides) == 32 && offsetof(Tensor, ByteOffset) == 40 &&
                  sizeof(Tensor) == 48,
              "DLTensor's layout on 64-bit targets");
static_assert(offsetof(ManagedTensor, ManagerContext) == 48 &&
                  offsetof(ManagedTensor, Deleter) == 56 && sizeof(ManagedTensor) == 64,
              "DLManagedTensor's layout on 64-bit targets");

// The capsule names of the protocol: a capsule is "dltensor" until a
// consumer takes the tensor, which renames it "used_dltensor" and becomes
// responsible for calling the deleter.
inline constexpr const char *CapsuleName = "dltensor";
inline constexpr const char *UsedCapsuleName = "used_dltensor";

// Adds dlpack_export and dlpack_import (DLPack.cpp) to tidal._tidal; -1 on
// failure, with the Python error set.
int addFunctions(PyObject *Module);

} // namespace tidal::dlpack

#endif
