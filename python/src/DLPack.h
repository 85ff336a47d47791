// The C ABI of a DLPack tensor as the Python exchange protocol passes it: a
// PyCapsule named "dltensor" around a ManagedTensor (DLPack's unversioned
// DLManagedTensor). Written from the specification at
// https://dmlc.github.io/dlpack/latest/ ; the field order and widths are the
// ABI, so the static_asserts below pin them.
#ifndef TIDAL_BINDING_DLPACK_H
#define TIDAL_BINDING_DLPACK_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "Targets.h"

#include <cstddef>
#include <cstdint>
#include <vector>

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

namespace tidal::binding {

struct ArrayView;

// The DLPack tensors a launch took from their producers (renamed
// "used_dltensor"): each is given back (its deleter called) when the launch
// is done with it, with the GIL held, as the producer's deleter may need it.
class TakenTensors {
public:
  TakenTensors() = default;
  TakenTensors(const TakenTensors &) = delete;
  TakenTensors &operator=(const TakenTensors &) = delete;
  ~TakenTensors() { giveBack(); }

  void add(dlpack::ManagedTensor *Tensor) {
    if (Count < Inline)
      InlineTensors[Count++] = Tensor;
    else
      More.push_back(Tensor);
  }
  void giveBack() {
    for (size_t I = 0; I < Count; ++I)
      release(InlineTensors[I]);
    for (dlpack::ManagedTensor *Tensor : More)
      release(Tensor);
    Count = 0;
    More.clear();
  }

private:
  static void release(dlpack::ManagedTensor *Tensor) {
    if (Tensor->Deleter)
      Tensor->Deleter(Tensor);
  }
  static constexpr size_t Inline = 8;
  dlpack::ManagedTensor *InlineTensors[Inline];
  size_t Count = 0;
  std::vector<dlpack::ManagedTensor *> More;
};

// Reads O's DLPack tensor (O.__dlpack__()) into V. With Target and Taken,
// for a launch: the device is checked for Target, the producer is asked to
// order its work before Stream (the protocol's stream argument on the cuda
// target) and the tensor is taken, to be given back by Taken. Without them,
// for typing: the capsule is left untaken and gives the tensor back itself.
// False with a Python error set when O's tensor can't be read or used.
bool dlpackView(PyObject *O, ArrayView &V, const TargetKind *Target, uint64_t Stream,
                TakenTensors *Taken);

} // namespace tidal::binding

#endif
