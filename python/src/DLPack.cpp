// DLPack in tidal._tidal: a device array out as a "dltensor" capsule, and
// another library's capsule in, per the Python specification of DLPack
// (https://dmlc.github.io/dlpack/latest/python_spec.html). Only the C side
// lives here (the structs, the capsules, who calls which deleter when);
// tidal.cuda.interop chooses dtypes and devices and checks arguments.
#include "DLPack.h"

#include "ArgumentTyping.h"
#include "ArrayInterface.h"

#include "tidal/runtime/CudaTarget.h"

#include <cstring>
#include <new>
#include <vector>

using namespace tidal;

namespace {

// The capsule that owns an imported tensor: its destructor gives the tensor
// back to the producer. The DeviceNDArray over the memory keeps it alive.
constexpr const char *ImportedCapsuleName = "tidal.DLPackImport";

// A capsule destructor runs wherever a reference is dropped, possibly while
// an exception is being raised: keep that exception across the deleter.
class KeepPythonError {
public:
  KeepPythonError() { PyErr_Fetch(&Type, &Value, &Traceback); }
  ~KeepPythonError() { PyErr_Restore(Type, Value, Traceback); }

private:
  PyObject *Type, *Value, *Traceback;
};

// --- export -------------------------------------------------------------------

// What tidal hands out: the tensor, the shape and strides it points into,
// and a reference to the array whose memory it is.
struct ExportedTensor {
  dlpack::ManagedTensor Managed;
  std::vector<int64_t> ShapeAndStrides;
  PyObject *Owner;
};

// The deleter of tidal's tensors. A consumer may call it from any thread,
// with or without the GIL (PyTorch, for one, frees tensors from C++).
void deleteExportedTensor(dlpack::ManagedTensor *Managed) {
  auto *Exported = static_cast<ExportedTensor *>(Managed->ManagerContext);
  if (Py_IsInitialized()) {
    PyGILState_STATE State = PyGILState_Ensure();
    {
      KeepPythonError Keep;
      Py_DECREF(Exported->Owner);
    }
    PyGILState_Release(State);
  }
  delete Exported;
}

// Destructor of an exported capsule: a capsule no consumer took still owns
// its tensor; one that was taken ("used_dltensor") belongs to the consumer.
void destroyExportCapsule(PyObject *Capsule) {
  if (!PyCapsule_IsValid(Capsule, dlpack::CapsuleName))
    return;
  auto *Managed =
      static_cast<dlpack::ManagedTensor *>(PyCapsule_GetPointer(Capsule, dlpack::CapsuleName));
  Managed->Deleter(Managed);
}

// Reads a tuple of ints; false (and a Python error) if it is not one.
bool int64Tuple(PyObject *Tuple, const char *What, int64_t *Out) {
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(Tuple); ++I) {
    long long V = PyLong_AsLongLong(PyTuple_GET_ITEM(Tuple, I));
    if (V == -1 && PyErr_Occurred()) {
      PyErr_Format(PyExc_TypeError, "dlpack_export: %s must be a tuple of ints", What);
      return false;
    }
    Out[I] = V;
  }
  return true;
}

// dlpack_export(owner, pointer, shape, strides, type_code, bits, device_type,
// device_id) -> a "dltensor" capsule. strides count elements; owner is kept
// alive until the consumer calls the deleter (or the capsule dies untaken).
PyObject *dlpack_export(PyObject *, PyObject *Args) {
  PyObject *Owner, *Shape, *Strides;
  unsigned long long Pointer;
  unsigned char Code, Bits;
  int DeviceType, DeviceId;
  if (!PyArg_ParseTuple(Args, "OKO!O!bbii:dlpack_export", &Owner, &Pointer, &PyTuple_Type, &Shape,
                        &PyTuple_Type, &Strides, &Code, &Bits, &DeviceType, &DeviceId))
    return nullptr;
  Py_ssize_t NDim = PyTuple_GET_SIZE(Shape);
  if (PyTuple_GET_SIZE(Strides) != NDim) {
    PyErr_Format(PyExc_ValueError, "dlpack_export: %zd strides for %zd dimensions",
                 PyTuple_GET_SIZE(Strides), NDim);
    return nullptr;
  }
  auto *Exported = new (std::nothrow) ExportedTensor();
  if (!Exported)
    return PyErr_NoMemory();
  try {
    Exported->ShapeAndStrides.resize(2 * NDim);
  } catch (const std::bad_alloc &) {
    delete Exported;
    return PyErr_NoMemory();
  }
  int64_t *ShapeData = Exported->ShapeAndStrides.data();
  if (!int64Tuple(Shape, "shape", ShapeData) || !int64Tuple(Strides, "strides", ShapeData + NDim)) {
    delete Exported;
    return nullptr;
  }
  dlpack::Tensor &T = Exported->Managed.DLTensor;
  T.Data = reinterpret_cast<void *>(Pointer);
  T.Where = {DeviceType, DeviceId};
  T.NDim = static_cast<int32_t>(NDim);
  T.Type = {Code, Bits, 1};
  T.Shape = NDim ? ShapeData : nullptr;
  T.Strides = NDim ? ShapeData + NDim : nullptr;
  T.ByteOffset = 0;
  Exported->Managed.ManagerContext = Exported;
  Exported->Managed.Deleter = deleteExportedTensor;
  Py_INCREF(Owner);
  Exported->Owner = Owner;
  PyObject *Capsule = PyCapsule_New(&Exported->Managed, dlpack::CapsuleName, destroyExportCapsule);
  if (!Capsule)
    deleteExportedTensor(&Exported->Managed);
  return Capsule;
}

// --- import -------------------------------------------------------------------

void destroyImportCapsule(PyObject *Capsule) {
  auto *Managed =
      static_cast<dlpack::ManagedTensor *>(PyCapsule_GetPointer(Capsule, ImportedCapsuleName));
  if (Managed && Managed->Deleter) {
    KeepPythonError Keep;
    Managed->Deleter(Managed);
  }
}

PyObject *int64TupleObject(const int64_t *Values, int32_t N) {
  PyObject *Tuple = PyTuple_New(N);
  for (int32_t I = 0; Tuple && I < N; ++I) {
    PyObject *V = PyLong_FromLongLong(Values[I]);
    if (!V) {
      Py_DECREF(Tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(Tuple, I, V);
  }
  return Tuple;
}

// dlpack_import(capsule) -> (owner, pointer, shape, strides or None,
// type_code, bits, lanes, device_type, device_id): takes the tensor out of a
// "dltensor" capsule (renaming it "used_dltensor") and hands it to owner, a
// capsule that calls the producer's deleter when it dies. pointer includes
// the byte offset; strides count elements.
PyObject *dlpack_import(PyObject *, PyObject *Capsule) {
  if (!PyCapsule_CheckExact(Capsule)) {
    PyErr_Format(PyExc_TypeError,
                 "from_dlpack takes an object with __dlpack__ or a DLPack capsule, not %s",
                 Py_TYPE(Capsule)->tp_name);
    return nullptr;
  }
  const char *Name = PyCapsule_GetName(Capsule);
  if (Name && std::strcmp(Name, dlpack::UsedCapsuleName) == 0) {
    PyErr_SetString(PyExc_ValueError,
                    "this DLPack capsule was consumed already: a capsule hands its tensor "
                    "to one consumer only (call __dlpack__ again for another)");
    return nullptr;
  }
  if (!Name || std::strcmp(Name, dlpack::CapsuleName) != 0) {
    PyErr_Format(PyExc_TypeError,
                 "from_dlpack takes a capsule named \"dltensor\", not \"%s\" (DLPack 1.x "
                 "versioned capsules are not supported)",
                 Name ? Name : "");
    return nullptr;
  }
  auto *Managed =
      static_cast<dlpack::ManagedTensor *>(PyCapsule_GetPointer(Capsule, dlpack::CapsuleName));
  if (!Managed)
    return nullptr;
  const dlpack::Tensor &T = Managed->DLTensor;
  if (T.NDim < 0 || (T.NDim > 0 && !T.Shape)) {
    PyErr_Format(PyExc_BufferError, "DLPack tensor with %d dimensions and %s shape", T.NDim,
                 T.Shape ? "a" : "no");
    return nullptr;
  }
  PyObject *Shape = int64TupleObject(T.Shape, T.NDim);
  if (!Shape)
    return nullptr;
  PyObject *Strides = T.Strides ? int64TupleObject(T.Strides, T.NDim) : Py_NewRef(Py_None);
  if (!Strides) {
    Py_DECREF(Shape);
    return nullptr;
  }
  PyObject *Owner = PyCapsule_New(Managed, ImportedCapsuleName, destroyImportCapsule);
  if (!Owner || PyCapsule_SetName(Capsule, dlpack::UsedCapsuleName) < 0) {
    if (Owner) // the tensor stays the producer capsule's
      PyCapsule_SetDestructor(Owner, nullptr);
    Py_XDECREF(Owner);
    Py_DECREF(Shape);
    Py_DECREF(Strides);
    return nullptr;
  }
  unsigned long long Pointer = reinterpret_cast<uintptr_t>(T.Data) + T.ByteOffset;
  return Py_BuildValue("(NKNNiiiii)", Owner, Pointer, Shape, Strides, int(T.Type.Code),
                       int(T.Type.Bits), int(T.Type.Lanes), int(T.Where.Type), int(T.Where.Id));
}

PyMethodDef DLPackMethods[] = {
    {"dlpack_export", dlpack_export, METH_VARARGS,
     "dlpack_export(owner, pointer, shape, strides, type_code, bits, device_type, device_id): "
     "a \"dltensor\" capsule (strides in elements) that keeps owner alive."},
    {"dlpack_import", dlpack_import, METH_O,
     "dlpack_import(capsule): (owner, pointer, shape, strides or None, type_code, bits, lanes, "
     "device_type, device_id); consumes the capsule."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int tidal::dlpack::addFunctions(PyObject *Module) {
  return PyModule_AddFunctions(Module, DLPackMethods);
}

// --- DLPack tensors as launch arguments -------------------------------------------

namespace tidal::binding {

using namespace tidal::frontend;

// The scalar of a DLPack data type; false when kernels can't take it.
static bool scalarOfDLPack(const dlpack::DataType &T, Scalar &Out) {
  if (T.Lanes != 1 || T.Bits % 8)
    return false;
  switch (T.Code) {
  case dlpack::TypeBool:
    return scalarOfKind('b', T.Bits / 8, Out);
  case dlpack::TypeInt:
    return scalarOfKind('i', T.Bits / 8, Out);
  case dlpack::TypeUInt:
    return scalarOfKind('u', T.Bits / 8, Out);
  case dlpack::TypeFloat:
    return scalarOfKind('f', T.Bits / 8, Out);
  case dlpack::TypeComplex:
    return scalarOfKind('c', T.Bits / 8, Out);
  default:
    return false;
  }
}

// Which DLPack memory a launch on Target can use in place (a Python error
// naming the argument otherwise): host memory on the cpu target; the current
// device's memory, managed or page-locked memory on the cuda target.
static bool dlpackDeviceUsable(PyObject *DeviceTuple, TargetKind Target) {
  int Type = -1, Id = -1;
  if (!PyTuple_Check(DeviceTuple) || !PyArg_ParseTuple(DeviceTuple, "ii", &Type, &Id)) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "__dlpack_device__() must return (device type, device id), not %R", DeviceTuple);
    return false;
  }
  if (Target == TargetKind::Cpu
          ? Type == dlpack::DeviceCPU || Type == dlpack::DeviceCUDAHost
          : Type == dlpack::DeviceCUDAHost || Type == dlpack::DeviceCUDAManaged ||
                (Type == dlpack::DeviceCUDA && Id == runtime::currentDeviceOrdinal()))
    return true;
  if (Target == TargetKind::Cuda && Type == dlpack::DeviceCUDA)
    PyErr_Format(PyExc_ValueError,
                 "DLPack memory of CUDA device %d, and the current device is %d: launch under "
                 "`with cuda.gpus[%d]:`",
                 Id, runtime::currentDeviceOrdinal(), Id);
  else
    PyErr_Format(PyExc_ValueError,
                 "DLPack memory of device type %d (device %d): on the %s target kernels take %s",
                 Type, Id, targetName(Target),
                 Target == TargetKind::Cpu ? "host memory (kDLCPU, kDLCUDAHost)"
                                           : "CUDA memory (kDLCUDA, kDLCUDAManaged, kDLCUDAHost)");
  return false;
}

// Reads O's DLPack tensor into V (see DLPack.h).
bool dlpackView(PyObject *O, ArrayView &V, const TargetKind *Target, uint64_t Stream,
                TakenTensors *Taken) {
  static PyObject *DeviceName = PyUnicode_InternFromString("__dlpack_device__");
  static PyObject *ExportName = PyUnicode_InternFromString("__dlpack__");
  static PyObject *StreamKeyword = Py_BuildValue("(s)", "stream");
  PyRef Capsule;
  if (Target) {
    PyRef Where = PyRef::steal(PyObject_CallMethodNoArgs(O, DeviceName));
    if (!Where || !dlpackDeviceUsable(Where.get(), *Target))
      return false;
  }
  if (Target && *Target == TargetKind::Cuda) {
    // The protocol's stream: 1 for the legacy default stream (the launch's 0).
    PyRef Handle = PyRef::steal(PyLong_FromUnsignedLongLong(Stream ? Stream : 1));
    PyRef Method = PyRef::steal(PyObject_GetAttr(O, ExportName));
    if (!Handle || !Method)
      return false;
    PyObject *CallArgs[] = {Handle.get()};
    Capsule = PyRef::steal(PyObject_Vectorcall(Method.get(), CallArgs, 0, StreamKeyword));
  } else {
    Capsule = PyRef::steal(PyObject_CallMethodNoArgs(O, ExportName));
  }
  if (!Capsule)
    return false;
  auto *Managed = static_cast<dlpack::ManagedTensor *>(
      PyCapsule_IsValid(Capsule.get(), dlpack::CapsuleName)
          ? PyCapsule_GetPointer(Capsule.get(), dlpack::CapsuleName)
          : nullptr);
  if (!Managed) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "__dlpack__() of '%s' did not return an untaken \"dltensor\" capsule",
                 Py_TYPE(O)->tp_name);
    return false;
  }
  const dlpack::Tensor &T = Managed->DLTensor;
  if (!scalarOfDLPack(T.Type, V.Dtype) || T.NDim < 0 || T.NDim > NPY_MAXDIMS) {
    PyErr_Format(PyExc_TypeError,
                 "a DLPack tensor of type code %d, %d bits, %d lanes and %d dimensions: "
                 "kernels take bool, ints, floats and complex numbers",
                 T.Type.Code, T.Type.Bits, T.Type.Lanes, T.NDim);
    return false;
  }
  V.NDim = T.NDim;
  V.ItemSize = T.Type.Bits / 8;
  V.ReadOnly = false; // DLPack's unversioned tensors do not say
  V.Data = static_cast<char *>(T.Data) + T.ByteOffset;
  npy_intp Step = V.ItemSize;
  for (int Dim = V.NDim - 1; Dim >= 0; --Dim) {
    V.OwnShape[Dim] = static_cast<npy_intp>(T.Shape[Dim]);
    V.OwnStrides[Dim] = T.Strides ? static_cast<npy_intp>(T.Strides[Dim]) * V.ItemSize : Step;
    Step *= V.OwnShape[Dim];
  }
  V.Shape = V.OwnShape;
  V.Strides = V.OwnStrides;
  if (Taken) {
    if (PyCapsule_SetName(Capsule.get(), dlpack::UsedCapsuleName) < 0)
      return false;
    Taken->add(Managed);
  }
  return true;
}

} // namespace tidal::binding
