// tidal._tidal: the extension module that binds the frontend, the plugin's
// pipelines and the runtime to Python. C++ errors become Python exceptions
// here and nowhere else.
#include "CompileError.h"
#include "Compiler.h"
#include "DLPack.h"
#include "DLPack.h"
#include "Frontend.h"
#include "ModuleFunctions.h"
#include "PyRef.h"
#include "Types.h"

#include "tidal/Passes.h"
#include "tidal/runtime/CpuTarget.h"
#include "tidal/runtime/CudaDriver.h"
#include "tidal/runtime/CudaTarget.h"
#include "tidal/runtime/CudaMemory.h"

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tidal_ARRAY_API
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"

#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>
#include <string>
#include <vector>

using namespace tidal;
using namespace tidal::frontend;

namespace {

// --- errors ------------------------------------------------------------------

// Raises the Python twin of a C++ error; returns null for the caller to return.
PyObject *raiseFromCurrentException() {
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
    PyRef Instance = PyRef::steal(PyObject_CallFunction(
        Class.get(), "ssiiis", E.what(), E.Where.File.c_str(), E.Where.Line, E.Where.Column,
        E.Where.EndColumn, E.Message.c_str()));
    if (Instance)
      PyErr_SetObject(Class.get(), Instance.get());
  } catch (const std::invalid_argument &E) {
    PyErr_SetString(PyExc_TypeError, E.what());
  } catch (const runtime::KernelError &E) {
    // Ctrl-C during a cpu launch: Python's own SIGINT handler raises
    // KeyboardInterrupt (or whatever the user's handler does).
    if (E.kind() == runtime::KernelError::Kind::Interrupted && PyErr_CheckSignals() < 0)
      return nullptr;
    // What a failed check in a kernel raises, as Numba's simulator does.
    PyObject *Type = E.kind() == runtime::KernelError::Kind::Bounds   ? PyExc_IndexError
                     : E.kind() == runtime::KernelError::Kind::Assert ? PyExc_AssertionError
                                                                      : PyExc_RuntimeError;
    PyErr_SetString(Type, E.what());
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

// Runs Work with the GIL released; what it throws is rethrown once the GIL
// is held again (an exception must not cross Py_END_ALLOW_THREADS). Work
// must not touch Python objects.
template <typename F> void withoutGIL(F &&Work) {
  std::exception_ptr Failure;
  Py_BEGIN_ALLOW_THREADS
  try {
    Work();
  } catch (...) {
    Failure = std::current_exception();
  }
  Py_END_ALLOW_THREADS
  if (Failure)
    std::rethrow_exception(Failure);
}

#define TIDAL_TRY try {
#define TIDAL_CATCH                                                                  \
  }                                                                                  \
  catch (...) {                                                                      \
    return raiseFromCurrentException();                                              \
  }

// --- typing of launch arguments --------------------------------------------------

// The scalar type of NumPy's kind character ('b', 'i', 'u', 'f', 'c') and
// item size; false when kernels can't take it.
bool scalarOfKind(char Kind, int Size, Scalar &Out) {
  switch (Kind) {
  case 'b':
    Out = Scalar::Bool;
    return Size == 1;
  case 'i':
  case 'u': {
    static const Scalar Signed[] = {Scalar::Int8, Scalar::Int16, Scalar::Int32, Scalar::Int64};
    static const Scalar Unsigned[] = {Scalar::UInt8, Scalar::UInt16, Scalar::UInt32,
                                      Scalar::UInt64};
    int Log = Size == 1 ? 0 : Size == 2 ? 1 : Size == 4 ? 2 : Size == 8 ? 3 : -1;
    if (Log < 0)
      return false;
    Out = Kind == 'i' ? Signed[Log] : Unsigned[Log];
    return true;
  }
  case 'c':
    if (Size != 8 && Size != 16)
      return false;
    Out = Size == 8 ? Scalar::Complex64 : Scalar::Complex128;
    return true;
  case 'f':
    if (Size == 2)
      Out = Scalar::Float16;
    else if (Size == 4)
      Out = Scalar::Float32;
    else if (Size == 8)
      Out = Scalar::Float64;
    else
      return false;
    return true;
  default:
    return false;
  }
}

bool scalarOfDescr(PyArray_Descr *D, Scalar &Out) { return scalarOfKind(D->kind, D->elsize, Out); }

// The NumPy array over a device array's memory (tidal.cuda.DeviceNDArray's
// _tidal_host: on the cpu target device memory is host memory), borrowed:
// the device array owns it and never rebinds it. Null, with no error set,
// for any other object.
PyObject *hostArrayOf(PyObject *O) {
  static PyObject *Name = PyUnicode_InternFromString("_tidal_host");
  PyObject *Host = PyObject_GetAttr(O, Name);
  if (!Host) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(Host);
  return PyArray_Check(Host) ? Host : nullptr;
}

// The NumPy array over a cuda-target device array's device memory
// (tidal.cuda.DeviceNDArray's _tidal_device: its data pointer is the device
// pointer of element 0; never read through), borrowed as hostArrayOf's. Null,
// with no error set, for any other object.
PyObject *deviceLayoutOf(PyObject *O) {
  static PyObject *Name = PyUnicode_InternFromString("_tidal_device");
  PyObject *Layout = PyObject_GetAttr(O, Name);
  if (!Layout) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(Layout);
  return PyArray_Check(Layout) ? Layout : nullptr;
}

// The NumPy array of cuda.In / Out / InOut (its _tidal_array), borrowed: the
// wrapper holds it. Null, with no error set, for any other object.
PyObject *directedArrayOf(PyObject *O) {
  static PyObject *Name = PyUnicode_InternFromString("_tidal_array");
  if (PyArray_Check(O))
    return nullptr;
  PyObject *Array = PyObject_GetAttr(O, Name);
  if (!Array) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(Array);
  return PyArray_Check(Array) ? Array : nullptr;
}

// The copies cuda.In / Out / InOut ask of the cuda target (their
// _tidal_direction), as bits; a NumPy array is copied in, and back when
// it is writable.
constexpr uint8_t CopyIn = 1, CopyOut = 2;

uint8_t directionOf(PyObject *O) {
  static PyObject *Name = PyUnicode_InternFromString("_tidal_direction");
  PyRef Direction = PyRef::steal(PyObject_GetAttr(O, Name));
  long Bits = Direction ? PyLong_AsLong(Direction.get()) : -1;
  PyErr_Clear();
  return Bits >= 1 && Bits <= 3 ? static_cast<uint8_t>(Bits) : CopyIn | CopyOut;
}

constexpr const char *AllocationCapsule = "tidal.CudaAllocation";
constexpr const char *StreamCapsule = "tidal.CudaStream";
constexpr const char *EventCapsule = "tidal.CudaEvent";

// The allocation a cuda-target device array holds (_tidal_memory), or null.
runtime::CudaAllocation *deviceAllocationOf(PyObject *O) {
  static PyObject *Name = PyUnicode_InternFromString("_tidal_memory");
  PyRef Capsule = PyRef::steal(PyObject_GetAttr(O, Name));
  if (!Capsule || !PyCapsule_IsValid(Capsule.get(), AllocationCapsule)) {
    PyErr_Clear();
    return nullptr;
  }
  return static_cast<runtime::CudaAllocation *>(
      PyCapsule_GetPointer(Capsule.get(), AllocationCapsule));
}

// The fields of a structured dtype; null (and Why) when one is not a
// supported scalar (nested records and sub-arrays are not).
std::shared_ptr<const RecordLayout> recordLayoutOf(PyArray_Descr *D, std::string &Why) {
  auto Layout = std::make_shared<RecordLayout>();
  Layout->Size = static_cast<unsigned>(D->elsize);
  Layout->Align = static_cast<unsigned>(D->alignment);
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(D->names); ++I) {
    PyObject *Name = PyTuple_GET_ITEM(D->names, I);
    PyObject *Info = PyDict_GetItem(D->fields, Name); // (dtype, offset[, title])
    if (!Info || !PyTuple_Check(Info) || PyTuple_GET_SIZE(Info) < 2)
      return nullptr;
    auto *FieldType = reinterpret_cast<PyArray_Descr *>(PyTuple_GET_ITEM(Info, 0));
    Scalar S;
    if (FieldType->names || FieldType->subarray || !scalarOfDescr(FieldType, S)) {
      Why = "a record whose field '" + PyRef::borrow(Name).str() +
            "' is not a number (nested records and sub-arrays are not supported)";
      return nullptr;
    }
    Layout->Fields.push_back({PyRef::borrow(Name).str(), S,
                              static_cast<unsigned>(PyLong_AsLong(PyTuple_GET_ITEM(Info, 1)))});
  }
  return Layout;
}

// --- arrays of other libraries: __cuda_array_interface__ ------------------------

// The memory and shape of an array argument, read without allocating: from a
// NumPy array (a NumPy array itself, or the one a device array describes its
// memory with) or from a __cuda_array_interface__ dict.
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
  Scalar Elem = Scalar::Float64; // when Array is null

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
// Fortran-ordered, A otherwise (C first: an array with at most one axis
// longer than 1 is both), as NumPy's flags say for memory NumPy describes.
Layout layoutOf(int NDim, const npy_intp *Shape, const npy_intp *Strides, npy_intp ItemSize) {
  auto Contiguous = [&](bool COrder) {
    npy_intp Expected = ItemSize;
    for (int I = 0; I < NDim; ++I) {
      int D = COrder ? NDim - 1 - I : I;
      if (Shape[D] == 0)
        return true;
      if (Shape[D] != 1 && Strides[D] != Expected)
        return false;
      Expected *= Shape[D];
    }
    return true;
  };
  return Contiguous(true) ? Layout::C : Contiguous(false) ? Layout::F : Layout::A;
}

// A __cuda_array_interface__ typestr ("<f4", "|b1", "<c16"): the element
// type and its size; false when kernels can't take it.
bool scalarOfTypestr(PyObject *Typestr, Scalar &Out, npy_intp &Size) {
  Py_ssize_t Length;
  const char *Text = PyUnicode_Check(Typestr) ? PyUnicode_AsUTF8AndSize(Typestr, &Length) : nullptr;
  if (!Text || Length < 3 || (Text[0] != '<' && Text[0] != '|' && Text[0] != '='))
    return false; // big-endian ('>') or not a typestr
  char *End;
  long Bytes = std::strtol(Text + 2, &End, 10);
  if (*End || Bytes <= 0)
    return false;
  if (!scalarOfKind(Text[1], static_cast<int>(Bytes), Out))
    return false;
  Size = Bytes;
  return true;
}

// The item of a __cuda_array_interface__ dict; null with KeyError naming it
// when Required and absent (a Python error is set either way on null).
// (Key is one of the specification's keys, interned once.)
PyObject *interfaceItem(PyObject *Desc, const char *Key, bool Required) {
  static std::unordered_map<const char *, PyObject *> Keys;
  PyObject *&Name = Keys[Key];
  if (!Name)
    Name = PyUnicode_InternFromString(Key);
  PyObject *Item = PyDict_GetItemWithError(Desc, Name); // borrowed
  if (!Item && Required && !PyErr_Occurred())
    PyErr_Format(PyExc_ValueError, "__cuda_array_interface__ has no '%s': %R", Key, Desc);
  return Item;
}

// Reads O.__cuda_array_interface__ (version 0 to 3) into V, as the
// specification describes it; false, with a Python error set, when O has
// none or it is not a valid description.
bool interfaceView(PyObject *O, ArrayView &V) {
  static PyObject *Name = PyUnicode_InternFromString("__cuda_array_interface__");
  PyRef Desc = PyRef::steal(PyObject_GetAttr(O, Name));
  if (!Desc)
    return false;
  if (!PyDict_Check(Desc.get())) {
    PyErr_Format(PyExc_TypeError, "__cuda_array_interface__ of '%s' is not a dict",
                 Py_TYPE(O)->tp_name);
    return false;
  }
  PyObject *Version = interfaceItem(Desc.get(), "version", true);
  PyObject *Shape = interfaceItem(Desc.get(), "shape", true);
  PyObject *Typestr = interfaceItem(Desc.get(), "typestr", true);
  PyObject *Data = interfaceItem(Desc.get(), "data", true);
  if (!Version || !Shape || !Typestr || !Data)
    return false;
  PyObject *Mask = interfaceItem(Desc.get(), "mask", false);
  if (Mask && Mask != Py_None) {
    PyErr_SetString(PyExc_NotImplementedError, "Masked arrays are not supported");
    return false;
  }
  if (!scalarOfTypestr(Typestr, V.Elem, V.ItemSize)) {
    PyErr_Format(PyExc_TypeError,
                 "__cuda_array_interface__ typestr %R: kernels take arrays of bool, ints, "
                 "floats and complex numbers in native byte order",
                 Typestr);
    return false;
  }
  if (!PyTuple_Check(Shape) || PyTuple_GET_SIZE(Shape) > NPY_MAXDIMS ||
      !PyTuple_Check(Data) || PyTuple_GET_SIZE(Data) != 2) {
    PyErr_Format(PyExc_ValueError,
                 "__cuda_array_interface__ needs 'shape' as a tuple of ints and 'data' as "
                 "(pointer, read_only): %R",
                 Desc.get());
    return false;
  }
  V.NDim = static_cast<int>(PyTuple_GET_SIZE(Shape));
  for (int D = 0; D < V.NDim; ++D) {
    PyObject *Extent = PyTuple_GET_ITEM(Shape, D);
    V.OwnShape[D] = PyLong_Check(Extent) ? PyLong_AsSsize_t(Extent) : -1;
    if (V.OwnShape[D] < 0) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError,
                   "__cuda_array_interface__ 'shape' must be a tuple of ints >= 0, not %R", Shape);
      return false;
    }
  }
  PyObject *Strides = interfaceItem(Desc.get(), "strides", false);
  if (Strides && Strides != Py_None) {
    bool Valid = PyTuple_Check(Strides) && PyTuple_GET_SIZE(Strides) == V.NDim;
    for (int D = 0; Valid && D < V.NDim; ++D) {
      PyObject *Step = PyTuple_GET_ITEM(Strides, D);
      V.OwnStrides[D] = PyLong_Check(Step) ? PyLong_AsSsize_t(Step) : 0;
      Valid = PyLong_Check(Step) && !PyErr_Occurred();
    }
    if (!Valid) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError,
                   "__cuda_array_interface__ 'strides' must be None or a tuple of %d ints: %R",
                   V.NDim, Strides);
      return false;
    }
  } else { // C-contiguous
    npy_intp Step = V.ItemSize;
    for (int D = V.NDim - 1; D >= 0; --D) {
      V.OwnStrides[D] = Step;
      Step *= V.OwnShape[D];
    }
  }
  V.Data = reinterpret_cast<char *>(PyLong_AsVoidPtr(PyTuple_GET_ITEM(Data, 0)));
  int ReadOnly = PyObject_IsTrue(PyTuple_GET_ITEM(Data, 1));
  if (PyErr_Occurred())
    return false;
  V.ReadOnly = ReadOnly == 1;
  V.Shape = V.OwnShape;
  V.Strides = V.OwnStrides;
  // Version 3: the stream the producer's work is on, which the consumer must
  // wait for; None when there is nothing to wait for, and never 0.
  PyObject *Stream = interfaceItem(Desc.get(), "stream", false);
  V.ProducerStream = 0;
  if (Stream && Stream != Py_None) {
    if (PyBool_Check(Stream) || !PyLong_Check(Stream)) {
      PyErr_Format(PyExc_TypeError,
                   "__cuda_array_interface__ 'stream' must be None or an int (a stream "
                   "handle), not %R",
                   Stream);
      return false;
    }
    long long Handle = PyLong_AsLongLong(Stream);
    if (Handle == -1 && PyErr_Occurred())
      return false;
    if (Handle == 0) {
      PyErr_SetString(PyExc_ValueError,
                      "__cuda_array_interface__ 'stream' is 0, which the CUDA Array Interface "
                      "(version 3) disallows as ambiguous: the producer must give None (no "
                      "synchronisation), 1 (the legacy default stream), 2 (the per-thread "
                      "default stream) or a stream handle");
      return false;
    }
    if (Handle < 0) {
      PyErr_Format(PyExc_ValueError,
                   "__cuda_array_interface__ 'stream' must be None or a positive stream "
                   "handle, not %lld",
                   Handle);
      return false;
    }
    V.ProducerStream = static_cast<uint64_t>(Handle);
  }
  return true;
}

// --- arrays of other libraries: DLPack -------------------------------------------

// The scalar of a DLPack data type; false when kernels can't take it.
bool scalarOfDLPack(const dlpack::DataType &T, Scalar &Out) {
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

// Which DLPack memory a launch on Target can use in place (a Python error
// naming the argument otherwise): host memory on the cpu target; the current
// device's memory, managed or page-locked memory on the cuda target.
bool dlpackDeviceUsable(PyObject *DeviceTuple, const std::string &Target) {
  int Type = -1, Id = -1;
  if (!PyTuple_Check(DeviceTuple) || !PyArg_ParseTuple(DeviceTuple, "ii", &Type, &Id)) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "__dlpack_device__() must return (device type, device id), not %R",
                 DeviceTuple);
    return false;
  }
  if (Target == "cpu" ? Type == dlpack::DeviceCPU || Type == dlpack::DeviceCUDAHost
                      : Type == dlpack::DeviceCUDAHost || Type == dlpack::DeviceCUDAManaged ||
                            (Type == dlpack::DeviceCUDA && Id == runtime::currentDeviceOrdinal()))
    return true;
  if (Target == "cuda" && Type == dlpack::DeviceCUDA)
    PyErr_Format(PyExc_ValueError,
                 "DLPack memory of CUDA device %d, and the current device is %d: launch under "
                 "`with cuda.gpus[%d]:`",
                 Id, runtime::currentDeviceOrdinal(), Id);
  else
    PyErr_Format(PyExc_ValueError,
                 "DLPack memory of device type %d (device %d): on the %s target kernels take %s",
                 Type, Id, Target.c_str(),
                 Target == "cpu" ? "host memory (kDLCPU, kDLCUDAHost)"
                                 : "CUDA memory (kDLCUDA, kDLCUDAManaged, kDLCUDAHost)");
  return false;
}

// Reads O's DLPack tensor (O.__dlpack__()) into V. With Target and Taken,
// for a launch: the device is checked for Target, the producer is asked to order
// its work before Stream (the protocol's stream argument on the cuda
// target) and the tensor is taken, to be given back by Taken. Without it,
// for typing: the capsule is left untaken and gives the tensor back itself.
// False with a Python error set when O's tensor can't be read or used.
bool dlpackView(PyObject *O, ArrayView &V, const std::string *Target, uint64_t Stream,
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
  if (Target && *Target == "cuda") {
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
  if (!scalarOfDLPack(T.Type, V.Elem) || T.NDim < 0 || T.NDim > NPY_MAXDIMS) {
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

// The type Numba gives a launch argument; false (and Why) when kernels
// can't take it, or false with a Python error set when its
// __cuda_array_interface__ is not a valid description.
bool typeofArgument(PyObject *O, Type &Out, std::string &Why) {
  if (PyBool_Check(O)) {
    Out = Type::scalar(Scalar::Bool);
    return true;
  }
  if (PyLong_Check(O)) {
    Out = Type::scalar(Scalar::Int64);
    return true;
  }
  if (PyFloat_Check(O)) {
    Out = Type::scalar(Scalar::Float64);
    return true;
  }
  if (PyComplex_Check(O)) {
    Out = Type::scalar(Scalar::Complex128);
    return true;
  }
  if (PyArray_Check(O)) {
    PyArrayObject *A = reinterpret_cast<PyArrayObject *>(O);
    Layout L = PyArray_IS_C_CONTIGUOUS(A) ? Layout::C
               : PyArray_IS_F_CONTIGUOUS(A) ? Layout::F
                                            : Layout::A;
    if (PyArray_DESCR(A)->names) { // a structured dtype: an array of records
      auto Record = recordLayoutOf(PyArray_DESCR(A), Why);
      if (!Record)
        return false;
      Out = Type::recordArray(std::move(Record), static_cast<unsigned>(PyArray_NDIM(A)), L,
                              !PyArray_ISWRITEABLE(A));
      return true;
    }
    Scalar S;
    if (!scalarOfDescr(PyArray_DESCR(A), S)) {
      Why = "a NumPy array of dtype " + PyRef::borrow(reinterpret_cast<PyObject *>(PyArray_DESCR(A))).str() +
            ", which kernels can't take yet";
      return false;
    }
    if (!PyArray_ISNOTSWAPPED(A)) {
      Why = "a NumPy array in non-native byte order";
      return false;
    }
    Out = Type::array(S, static_cast<unsigned>(PyArray_NDIM(A)), L, !PyArray_ISWRITEABLE(A));
    return true;
  }
  if (PyArray_IsScalar(O, Void)) { // a record scalar: read-only, by reference
    PyArray_Descr *D = reinterpret_cast<PyVoidScalarObject *>(O)->descr;
    if (!D || !D->names) {
      Why = "a NumPy void scalar without fields";
      return false;
    }
    auto Record = recordLayoutOf(D, Why);
    if (!Record)
      return false;
    Out = Type::record(std::move(Record), /*ReadOnly=*/true);
    return true;
  }
  if (PyArray_IsScalar(O, Generic)) {
    PyRef Descr = PyRef::steal(reinterpret_cast<PyObject *>(PyArray_DescrFromScalar(O)));
    Scalar S;
    if (!Descr || !scalarOfDescr(reinterpret_cast<PyArray_Descr *>(Descr.get()), S)) {
      PyErr_Clear();
      Why = "a NumPy scalar of type '" + typeName(O) + "', which kernels can't take yet";
      return false;
    }
    Out = Type::scalar(S);
    return true;
  }
  // cuda.In / Out / InOut: typed as its array.
  if (PyObject *Array = directedArrayOf(O))
    return typeofArgument(Array, Out, Why);
  // A device array: typed as the NumPy array over its memory.
  if (PyObject *Host = hostArrayOf(O))
    return typeofArgument(Host, Out, Why);
  if (PyObject *Layout = deviceLayoutOf(O)) // cuda target: device memory
    return typeofArgument(Layout, Out, Why);
  // Another library's array (CuPy, PyTorch, ...): __cuda_array_interface__.
  if (PyObject_HasAttrString(O, "__cuda_array_interface__")) {
    ArrayView V;
    if (!interfaceView(O, V))
      return false; // the error says what is wrong with the description
    Out = Type::array(V.Elem, static_cast<unsigned>(V.NDim),
                      layoutOf(V.NDim, V.Shape, V.Strides, V.ItemSize), V.ReadOnly);
    return true;
  }
  // Or one that speaks DLPack only.
  if (PyObject_HasAttrString(O, "__dlpack__") && PyObject_HasAttrString(O, "__dlpack_device__")) {
    ArrayView V;
    if (!dlpackView(O, V, nullptr, 0, nullptr))
      return false;
    Out = Type::array(V.Elem, static_cast<unsigned>(V.NDim),
                      layoutOf(V.NDim, V.Shape, V.Strides, V.ItemSize), V.ReadOnly);
    return true;
  }
  Why = "'" + typeName(O) + "'";
  return false;
}

// --- one compiled specialisation -------------------------------------------------

struct Specialization {
  std::vector<Type> ArgTypes;
  std::string KernelName;
  std::string MarkerIR; // the frontend's output, kept for inspection
  std::string TypesText; // inspect_types(): source and variable types
  std::unique_ptr<runtime::CpuModule> Cpu;
  TidalBlockFunction Block = nullptr;
  unsigned ParamCount = 0; // flattened
  // cuda target: the kernel loaded on each device it has run on, from PTX
  // for that device's sm.
  struct CudaLoaded {
    runtime::CudaContext *Context;
    std::unique_ptr<runtime::CudaModule> Module;
    std::unique_ptr<runtime::CudaFunction> Function;
  };
  std::vector<CudaLoaded> Cuda;
};

std::string signatureText(const std::vector<Type> &Types) {
  std::string S = "(";
  for (size_t I = 0; I < Types.size(); ++I)
    S += (I ? ", " : "") + Types[I].str();
  return S + ")";
}

// Re-reads marker IR into a fresh context (for the NVPTX views of a kernel
// that was compiled for the cpu).
std::unique_ptr<llvm::Module> parseIR(const std::string &Text, llvm::LLVMContext &Ctx) {
  llvm::SMDiagnostic Diag;
  std::unique_ptr<llvm::Module> M = llvm::parseAssemblyString(Text, Diag, Ctx);
  if (!M)
    throw std::runtime_error("internal error: cannot re-read marker IR: " +
                             Diag.getMessage().str());
  return M;
}

// What inspect_types() prints, in Numba's shape: the signature, the
// source with its line numbers, then each local variable and its type.
std::string typesText(const std::string &Name, const KernelModule &KM) {
  std::string Out = Name + " " + signatureText(KM.ParamTypes) + "\n" + std::string(80, '-') + "\n";
  Out += "# File: " + KM.SourceFile + "\n";
  for (size_t I = 0; I < KM.SourceLines.size(); ++I) {
    std::string Line = KM.SourceLines[I];
    while (!Line.empty() && (Line.back() == '\n' || Line.back() == '\r'))
      Line.pop_back();
    Out += "# --- LINE " + std::to_string(KM.FirstLine + static_cast<int>(I)) + " ---\n" + Line + "\n";
  }
  Out += "\n# variables:\n";
  for (const auto &[Variable, Type] : KM.VariableTypes)
    Out += "#   " + Variable + " = " + Type + "\n";
  return Out + std::string(80, '=') + "\n";
}

// --- launch plans ------------------------------------------------------------------

// How a launch passes one argument: decided when the argument's launch plan is
// made, and checked cheaply at every launch that reuses the plan.
enum class ArgKind : uint8_t {
  Bool,            // Python bool
  Int,             // Python int: int64
  Float,           // Python float: float64
  Complex,         // Python complex: complex128
  NumPyScalar,     // a NumPy scalar of the plan's type
  RecordScalar,    // a NumPy record (np.void), by reference
  HostArray,       // a NumPy array (the cuda target copies it in and back)
  DirectedArray,   // cuda.In / Out / InOut: a NumPy array and its copies
  HostDeviceArray, // a cpu-target device array: the NumPy array of its memory
  DeviceArray,     // device memory described by _tidal_device (cuda target)
  InterfaceArray,  // any other object with __cuda_array_interface__
  DLPackArray,     // any other object with __dlpack__
};

bool isArrayKind(ArgKind K) { return K >= ArgKind::HostArray; }

// A dispatcher's launch plan for one combination of argument classes: the
// specialisation it runs and how each argument is read. A launch whose
// arguments have these Python types, and whose arrays have the element types,
// dimensions and layouts of the specialisation, reuses the plan: no typing,
// no lookup of the specialisation, no allocation.
struct LaunchPlan {
  Specialization *Spec = nullptr;
  std::vector<PyRef> PyTypes; // of each argument (kept alive: compared by identity)
  std::vector<ArgKind> Kinds;
  std::vector<PyRef> RecordDescrs; // the dtype of record arguments (null otherwise)
  std::vector<uint8_t> ValueBytes;  // the value's size of NumPy scalar arguments
  std::vector<uint8_t> Copies;      // cuda target: CopyIn | CopyOut of host arrays
};

// --- Dispatcher: the C++ half of tidal.cuda's dispatcher ------------------------

struct DispatcherState {
  PyRef Function;
  std::string Name;
  std::vector<std::string> ParamNames;
  // The options come from the Python dispatcher (_tidal_options()) when the
  // first specialisation is made: the target is chosen then, not at import.
  bool Configured = false;
  std::string Target; // "cpu" or "cuda"
  FrontendOptions Options;
  std::vector<std::unique_ptr<Specialization>> Specializations;
  // The most recently used first. Shared: a launch holds its plan while
  // Python code it calls (an argument's __dlpack__, ...) may let another
  // thread launch the kernel and replace plans.
  std::vector<std::shared_ptr<LaunchPlan>> Plans;

  Specialization *find(const std::vector<Type> &Types) {
    for (auto &S : Specializations)
      if (S->ArgTypes == Types)
        return S.get();
    return nullptr;
  }

  Specialization &compile(const std::vector<Type> &Types) {
    if (Specialization *S = find(Types))
      return *S;
    KernelModule KM = emitKernel(Function.get(), Types, Options);
    auto Spec = std::make_unique<Specialization>();
    Spec->ArgTypes = Types;
    Spec->KernelName = KM.KernelName;
    Spec->MarkerIR = moduleText(*KM.Module);
    Spec->TypesText = typesText(Name, KM);
    for (const Type &T : Types)
      Spec->ParamCount += flattenedParameterSizes(T).size();
    if (Target == "cpu") {
      lowerForHost(*KM.Module);
      Spec->Cpu = runtime::CpuModule::compile(std::move(KM.Module), std::move(KM.Context));
      Spec->Block = Spec->Cpu->blockFunction(Spec->KernelName);
    }
    Specializations.push_back(std::move(Spec));
    return *Specializations.back();
  }
};

struct DispatcherObject {
  PyObject_HEAD DispatcherState *State;
};

// Dispatcher(function): the Python dispatcher (tidal.cuda.dispatcher.Dispatcher)
// subclasses this type and gives the options through _tidal_options().
int Dispatcher_init(PyObject *Self, PyObject *Args, PyObject *Kwargs) {
  static const char *Keywords[] = {"function", nullptr};
  PyObject *Function;
  if (!PyArg_ParseTupleAndKeywords(Args, Kwargs, "O", const_cast<char **>(Keywords), &Function))
    return -1;
  if (!PyFunction_Check(Function)) {
    PyErr_Format(PyExc_TypeError, "a kernel must be a Python function, not '%s'",
                 Py_TYPE(Function)->tp_name);
    return -1;
  }
  try {
    auto State = std::make_unique<DispatcherState>();
    State->Function = PyRef::borrow(Function);
    State->Name = PyRef::borrow(Function).attr("__name__").str();
    State->ParamNames = parameterNames(Function);
    auto *D = reinterpret_cast<DispatcherObject *>(Self);
    delete D->State;
    D->State = State.release();
  } catch (...) {
    raiseFromCurrentException();
    return -1;
  }
  return 0;
}

void Dispatcher_dealloc(PyObject *Self) {
  auto *D = reinterpret_cast<DispatcherObject *>(Self);
  delete D->State;
  Py_TYPE(Self)->tp_free(Self);
}

DispatcherState &state(PyObject *Self) {
  DispatcherState *S = reinterpret_cast<DispatcherObject *>(Self)->State;
  if (!S)
    throw std::runtime_error("tidal Dispatcher used before __init__");
  return *S;
}

// The dispatcher's state with its options read (self._tidal_options(): a dict
// of target, debug, lineinfo, fastmath, max_registers, max_threads and
// min_blocks), as everything that compiles needs it.
DispatcherState &configuredState(PyObject *Self) {
  DispatcherState &D = state(Self);
  if (D.Configured)
    return D;
  PyRef Options = PyRef::check(PyObject_CallMethod(Self, "_tidal_options", nullptr));
  auto Item = [&](const char *Key) {
    PyObject *Value = PyDict_GetItemString(Options.get(), Key);
    if (!Value)
      throw std::runtime_error(std::string("internal error: _tidal_options() has no ") + Key);
    return PyRef::borrow(Value);
  };
  auto Flag = [&](const char *Key) {
    int Value = PyObject_IsTrue(Item(Key).get());
    if (Value < 0)
      throw PythonErrorSet();
    return Value == 1;
  };
  std::string Target = Item("target").str();
  if (Target != "cpu" && Target != "cuda")
    throw std::invalid_argument("unknown target '" + Target + "': use 'cpu' or 'cuda'");
  D.Target = Target;
  D.Options.Debug = Flag("debug");
  D.Options.LineInfo = Flag("lineinfo");
  D.Options.FastMath = Flag("fastmath");
  D.Options.MaxRegisters = static_cast<unsigned>(Item("max_registers").asLong());
  D.Options.MaxThreadsPerBlock = static_cast<unsigned>(Item("max_threads").asLong());
  D.Options.MinBlocksPerSM = static_cast<unsigned>(Item("min_blocks").asLong());
  D.Configured = true;
  return D;
}

// Says that argument I of the kernel can't be taken; returns false.
bool rejectArgument(const DispatcherState &D, size_t I, const std::string &Why) {
  PyErr_Format(PyExc_TypeError,
               "argument '%s' of kernel '%s' is %s: kernels take NumPy arrays, device arrays "
               "and numbers (int, float, bool, NumPy scalars)",
               D.ParamNames[I].c_str(), D.Name.c_str(), Why.c_str());
  return false;
}

bool checkArgumentCount(const DispatcherState &D, size_t N) {
  if (N == D.ParamNames.size())
    return true;
  PyErr_Format(PyExc_TypeError, "kernel '%s' takes %zu argument%s but %zu %s given",
               D.Name.c_str(), D.ParamNames.size(), D.ParamNames.size() == 1 ? "" : "s", N,
               N == 1 ? "was" : "were");
  return false;
}

// Puts "argument 'x' of kernel 'k': " before the message of the Python
// error set now (what an argument's __cuda_array_interface__ or DLPack
// tensor said), keeping its type. Errors of other classes than Python's
// own (a library's, which may need more than a message) are left as they
// are.
void nameArgumentInError(const DispatcherState &D, size_t I) {
  PyObject *Type, *Value, *Traceback;
  PyErr_Fetch(&Type, &Value, &Traceback);
  PyErr_NormalizeException(&Type, &Value, &Traceback);
  bool Builtin = Type && PyType_Check(Type) &&
                 !(reinterpret_cast<PyTypeObject *>(Type)->tp_flags & Py_TPFLAGS_HEAPTYPE);
  PyRef Text = PyRef::steal(Value && Builtin ? PyObject_Str(Value) : nullptr);
  const char *Message = Text ? PyUnicode_AsUTF8(Text.get()) : nullptr;
  if (!Message) {
    PyErr_Clear();
    PyErr_Restore(Type, Value, Traceback);
    return;
  }
  PyErr_Format(Type, "argument '%s' of kernel '%s': %s", D.ParamNames[I].c_str(),
               D.Name.c_str(), Message);
  Py_XDECREF(Type);
  Py_XDECREF(Value);
  Py_XDECREF(Traceback);
}

// Types of the launch arguments; raises TypeError naming the parameter.
bool typeArguments(DispatcherState &D, PyObject *const *Args, size_t N, std::vector<Type> &Types) {
  if (!checkArgumentCount(D, N))
    return false;
  Types.resize(N);
  for (size_t I = 0; I < N; ++I) {
    std::string Why;
    if (typeofArgument(Args[I], Types[I], Why))
      continue;
    if (!PyErr_Occurred())
      return rejectArgument(D, I, Why);
    nameArgumentInError(D, I);
    return false;
  }
  return true;
}

// How a launch on Target passes O (a Python error may be set when O's
// __cuda_array_interface__ is broken; the caller types O afterwards).
ArgKind argumentKind(PyObject *O, const std::string &Target) {
  if (PyBool_Check(O))
    return ArgKind::Bool;
  if (PyLong_Check(O))
    return ArgKind::Int;
  if (PyFloat_Check(O))
    return ArgKind::Float;
  if (PyComplex_Check(O))
    return ArgKind::Complex;
  if (PyArray_Check(O)) // a subclass may be mapped or managed memory
    return !PyArray_CheckExact(O) && Target == "cuda" && deviceLayoutOf(O) ? ArgKind::DeviceArray
                                                                           : ArgKind::HostArray;
  if (PyArray_IsScalar(O, Void))
    return ArgKind::RecordScalar;
  if (PyArray_IsScalar(O, Generic))
    return ArgKind::NumPyScalar;
  if (directedArrayOf(O))
    return ArgKind::DirectedArray;
  if (hostArrayOf(O))
    return ArgKind::HostDeviceArray;
  if (deviceLayoutOf(O))
    return ArgKind::DeviceArray;
  return PyObject_HasAttrString(O, "__cuda_array_interface__") ? ArgKind::InterfaceArray
                                                               : ArgKind::DLPackArray;
}

bool arrayViewOf(PyObject *O, ArgKind K, ArrayView &V);

// A new plan for these arguments (typed, and compiled when new), put first.
std::shared_ptr<LaunchPlan> makePlan(DispatcherState &D, PyObject *const *Args, size_t N) {
  std::vector<Type> Types;
  if (!typeArguments(D, Args, N, Types))
    throw PythonErrorSet();
  auto Plan = std::make_shared<LaunchPlan>();
  Plan->Spec = &D.compile(Types);
  for (size_t I = 0; I < N; ++I) {
    Plan->PyTypes.push_back(PyRef::borrow(reinterpret_cast<PyObject *>(Py_TYPE(Args[I]))));
    Plan->Kinds.push_back(argumentKind(Args[I], D.Target));
    // The dtype of records (an array's elements, or a record scalar).
    PyArray_Descr *Records = nullptr;
    if (Plan->Kinds[I] == ArgKind::RecordScalar) {
      Records = reinterpret_cast<PyVoidScalarObject *>(Args[I])->descr;
    } else if (Types[I].hasRecordElements()) {
      ArrayView V;
      arrayViewOf(Args[I], Plan->Kinds[I], V);
      Records = V.Array ? PyArray_DESCR(V.Array) : nullptr;
    }
    Plan->RecordDescrs.push_back(PyRef::borrow(reinterpret_cast<PyObject *>(Records)));
    Plan->ValueBytes.push_back(
        Plan->Kinds[I] == ArgKind::NumPyScalar ? static_cast<uint8_t>(byteSize(Types[I].Elem)) : 0);
    Plan->Copies.push_back(Plan->Kinds[I] == ArgKind::DirectedArray ? directionOf(Args[I])
                                                                    : CopyIn | CopyOut);
  }
  // A few plans per kernel is the common case; a program cycling through
  // many argument classes keeps the most recent ones.
  constexpr size_t MaxPlans = 32;
  if (D.Plans.size() == MaxPlans)
    D.Plans.pop_back();
  D.Plans.insert(D.Plans.begin(), Plan);
  return Plan;
}

// One flattened parameter value: 16 bytes hold the widest scalar (complex128).
struct alignas(16) ParamSlot {
  uint64_t Words[2];
};

// A launch's flattened parameter values (cuLaunchKernel's kernelParams:
// Params[i] points at Slots[i]): on the stack up to Inline values (256
// scalars fit), on the heap beyond.
struct PackedArguments {
  static constexpr unsigned Inline = 320;
  ParamSlot InlineSlots[Inline];
  void *InlineParams[Inline];
  std::vector<ParamSlot> HeapSlots;
  std::vector<void *> HeapParams;
  ParamSlot *Slots = InlineSlots;
  void **Params = InlineParams;
  TakenTensors Tensors; // DLPack arguments, given back after the launch

  unsigned capacity() const {
    return HeapSlots.empty() ? Inline : static_cast<unsigned>(HeapSlots.size());
  }

  explicit PackedArguments(unsigned Count) {
    if (Count > Inline) {
      HeapSlots.resize(Count);
      HeapParams.resize(Count);
      Slots = HeapSlots.data();
      Params = HeapParams.data();
    }
  }
};

// The view of an array argument of kind K; false (no error set) when O does
// not have the memory its kind says, true with a Python error set when its
// __cuda_array_interface__ is invalid.
bool arrayViewOf(PyObject *O, ArgKind K, ArrayView &V) {
  PyObject *Array = K == ArgKind::HostArray         ? O
                    : K == ArgKind::DirectedArray   ? directedArrayOf(O)
                    : K == ArgKind::HostDeviceArray ? hostArrayOf(O)
                    : K == ArgKind::DeviceArray     ? deviceLayoutOf(O)
                                                    : nullptr;
  if (Array) {
    V.fromArray(reinterpret_cast<PyArrayObject *>(Array));
    return true;
  }
  if (K != ArgKind::InterfaceArray)
    return false; // (a DLPack tensor is read by packArguments, once per launch)
  interfaceView(O, V);
  return true;
}

// True when the records of dtype Descr are those of the plan (Expected).
bool sameRecords(PyArray_Descr *Descr, PyObject *Expected) {
  return Expected && (reinterpret_cast<PyObject *>(Descr) == Expected ||
                      PyArray_EquivTypes(Descr, reinterpret_cast<PyArray_Descr *>(Expected)));
}

// True when the array V matches the array type T of the specialisation
// (Records: the plan's dtype for an array of records).
bool viewMatches(const ArrayView &V, const Type &T, PyObject *Records) {
  if (V.NDim != T.NDim || V.ReadOnly != T.ReadOnly)
    return false;
  if (!V.Array)
    return !T.hasRecordElements() && V.Elem == T.Elem &&
           layoutOf(V.NDim, V.Shape, V.Strides, V.ItemSize) == T.Lay;
  PyArray_Descr *Descr = PyArray_DESCR(V.Array);
  Layout L = PyArray_IS_C_CONTIGUOUS(V.Array)   ? Layout::C
             : PyArray_IS_F_CONTIGUOUS(V.Array) ? Layout::F
                                                : Layout::A;
  if (L != T.Lay)
    return false;
  if (T.hasRecordElements())
    return Descr->names && sameRecords(Descr, Records);
  Scalar Elem;
  return !Descr->names && PyArray_ISNOTSWAPPED(V.Array) && scalarOfDescr(Descr, Elem) &&
         Elem == T.Elem;
}

// On a __cuda_array_interface__ pointer on the cpu target: a kernel reads it
// as host memory, so it must be memory this process can read (another
// library's GPU pointer would crash the process). The first and last bytes
// are read through process_vm_readv, which fails instead of faulting; the
// last range checked is remembered.
bool readableHostMemory(const char *Start, size_t Bytes) {
  static thread_local const char *LastStart = nullptr;
  static thread_local size_t LastBytes = 0;
  if (Bytes == 0 || (Start == LastStart && Bytes == LastBytes))
    return true;
  char Probe[2];
  iovec Local[2] = {{&Probe[0], 1}, {&Probe[1], 1}};
  iovec Remote[2] = {{const_cast<char *>(Start), 1}, {const_cast<char *>(Start + Bytes - 1), 1}};
  if (process_vm_readv(getpid(), Local, 2, Remote, 2, 0) != 2)
    return false;
  LastStart = Start;
  LastBytes = Bytes;
  return true;
}

// The bytes [Start, Start + Bytes) an array's elements span in memory
// (strides may be negative); Bytes is 0 for an empty array.
void arraySpan(const ArrayView &V, char *&Start, size_t &Bytes) {
  npy_intp Low = 0, High = 0;
  for (int D = 0; D < V.NDim; ++D) {
    if (V.Shape[D] == 0) {
      Start = V.Data;
      Bytes = 0;
      return;
    }
    npy_intp Reach = (V.Shape[D] - 1) * V.Strides[D];
    (Reach < 0 ? Low : High) += Reach;
  }
  Start = V.Data + Low;
  Bytes = static_cast<size_t>(High - Low + V.ItemSize);
}

// Where a NumPy scalar object keeps its value: after the object header, for
// every numeric type (NumPy's Py<Type>ScalarObject structs).
constexpr size_t NumPyScalarValueOffset = offsetof(PyDoubleScalarObject, obval);
static_assert(offsetof(PyBoolScalarObject, obval) == NumPyScalarValueOffset &&
                  offsetof(PyByteScalarObject, obval) == NumPyScalarValueOffset &&
                  offsetof(PyHalfScalarObject, obval) == NumPyScalarValueOffset &&
                  offsetof(PyFloatScalarObject, obval) == NumPyScalarValueOffset &&
                  offsetof(PyLongLongScalarObject, obval) == NumPyScalarValueOffset &&
                  offsetof(PyCDoubleScalarObject, obval) == NumPyScalarValueOffset,
              "NumPy scalars keep their values at different offsets");

enum class PackResult { Packed, Mismatch, Failed };

// The Python error set now, with "argument 'x' of kernel 'k': " before its
// message (its type kept); returns Failed.
PackResult failArgument(const DispatcherState &D, size_t I) {
  nameArgumentInError(D, I);
  return PackResult::Failed;
}

// Writes the arguments' flattened values as Plan reads them; Mismatch (no
// error set) when an argument is not of the plan's class after all, Failed
// with a Python error set. Waits for the streams of __cuda_array_interface__
// producers other than Stream, as the specification asks of a consumer.
PackResult packArguments(const DispatcherState &D, const LaunchPlan &Plan, PyObject *const *Args,
                         PackedArguments &Out, runtime::cu::Stream Stream) {
  const std::vector<Type> &Types = Plan.Spec->ArgTypes;
  unsigned K = 0;
  auto Put = [&](uint64_t Word) {
    Out.Slots[K].Words[0] = Word;
    Out.Params[K] = &Out.Slots[K];
    ++K;
  };
  for (size_t I = 0; I < Types.size(); ++I) {
    PyObject *O = Args[I];
    if (reinterpret_cast<PyObject *>(Py_TYPE(O)) != Plan.PyTypes[I].get())
      return PackResult::Mismatch;
    ArgKind Kind = Plan.Kinds[I];
    if (isArrayKind(Kind)) {
      ArrayView V;
      if (Kind == ArgKind::DLPackArray) {
        if (!dlpackView(O, V, &D.Target, reinterpret_cast<uint64_t>(Stream), &Out.Tensors))
          return failArgument(D, I);
      } else if (!arrayViewOf(O, Kind, V)) {
        return PackResult::Mismatch;
      }
      if (PyErr_Occurred()) // an invalid __cuda_array_interface__
        return failArgument(D, I);
      if (!viewMatches(V, Types[I], Plan.RecordDescrs[I].get()))
        return PackResult::Mismatch;
      if (Kind == ArgKind::InterfaceArray) {
        char *Start;
        size_t Bytes;
        arraySpan(V, Start, Bytes);
        if (D.Target == "cpu" && !readableHostMemory(Start, Bytes)) {
          PyErr_Format(PyExc_ValueError,
                       "argument '%s' of kernel '%s': its __cuda_array_interface__ pointer %p "
                       "is not host memory this process can read; on the cpu target device "
                       "arrays are in host memory",
                       D.ParamNames[I].c_str(), D.Name.c_str(), static_cast<void *>(V.Data));
          return PackResult::Failed;
        }
        // The launch's stream 0 is the legacy default stream, which the
        // interface calls 1: work there is ordered already.
        uint64_t LaunchStream = Stream ? reinterpret_cast<uint64_t>(Stream) : 1;
        if (D.Target == "cuda" && V.ProducerStream && V.ProducerStream != LaunchStream) {
          runtime::CudaContext &Context =
              runtime::CudaContext::forDevice(runtime::currentDeviceOrdinal());
          runtime::cu::Result Result;
          Py_BEGIN_ALLOW_THREADS
          Result = Context.driver().api().StreamSynchronize(
              reinterpret_cast<runtime::cu::Stream>(V.ProducerStream));
          Py_END_ALLOW_THREADS
          Context.driver().check(Result, "cuStreamSynchronize");
        }
      }
      Put(reinterpret_cast<uint64_t>(V.Data));
      for (int Dim = 0; Dim < V.NDim; ++Dim)
        Put(static_cast<uint64_t>(V.Shape[Dim]));
      for (int Dim = 0; Dim < V.NDim; ++Dim)
        Put(static_cast<uint64_t>(V.Strides[Dim]));
      continue;
    }
    ParamSlot &Slot = Out.Slots[K];
    Slot = ParamSlot{};
    switch (Kind) {
    case ArgKind::Bool:
      Slot.Words[0] = O == Py_True;
      break;
    case ArgKind::Int: {
      long long V = PyLong_AsLongLong(O);
      if (V == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError, "argument '%s' of kernel '%s' does not fit in int64",
                     D.ParamNames[I].c_str(), D.Name.c_str());
        return PackResult::Failed;
      }
      std::memcpy(&Slot, &V, sizeof V);
      break;
    }
    case ArgKind::Float: {
      double V = PyFloat_AS_DOUBLE(O);
      std::memcpy(&Slot, &V, sizeof V);
      break;
    }
    case ArgKind::Complex: {
      Py_complex V = PyComplex_AsCComplex(O);
      std::memcpy(&Slot, &V, sizeof V);
      break;
    }
    case ArgKind::RecordScalar: { // by reference to the record's bytes
      auto *Record = reinterpret_cast<PyVoidScalarObject *>(O);
      if (!sameRecords(Record->descr, Plan.RecordDescrs[I].get()))
        return PackResult::Mismatch;
      Slot.Words[0] = reinterpret_cast<uint64_t>(Record->obval);
      break;
    }
    default: { // a NumPy scalar, of exactly the plan's type: its value, in place
      const char *Value = reinterpret_cast<const char *>(O) + NumPyScalarValueOffset;
      switch (Plan.ValueBytes[I]) { // sizes the compiler knows: plain loads
      case 1:
        std::memcpy(&Slot, Value, 1);
        break;
      case 2:
        std::memcpy(&Slot, Value, 2);
        break;
      case 4:
        std::memcpy(&Slot, Value, 4);
        break;
      case 8:
        std::memcpy(&Slot, Value, 8);
        break;
      default:
        std::memcpy(&Slot, Value, 16);
        break;
      }
      break;
    }
    }
    Out.Params[K] = &Slot;
    ++K;
  }
  return PackResult::Packed;
}

// The plan for these arguments, and their values packed into Out: the most
// recently used plan that fits them, or a new one (typing the arguments and
// compiling them when needed).
std::shared_ptr<LaunchPlan> planAndPack(DispatcherState &D, PyObject *const *Args, size_t N,
                                        PackedArguments *&Out,
                                        std::optional<PackedArguments> &Storage,
                                        runtime::cu::Stream Stream) {
  for (size_t P = 0; P < D.Plans.size(); ++P) {
    std::shared_ptr<LaunchPlan> Plan = D.Plans[P];
    if (Plan->Kinds.size() != N)
      continue;
    if (!Storage || Storage->capacity() < Plan->Spec->ParamCount)
      Storage.emplace(Plan->Spec->ParamCount);
    switch (packArguments(D, *Plan, Args, *Storage, Stream)) {
    case PackResult::Packed:
      if (P != 0 && P < D.Plans.size() && D.Plans[P] == Plan) // most recently used first
        std::swap(D.Plans[0], D.Plans[P]);
      Out = &*Storage;
      return Plan;
    case PackResult::Failed:
      throw PythonErrorSet();
    case PackResult::Mismatch:
      break;
    }
  }
  std::shared_ptr<LaunchPlan> Plan = makePlan(D, Args, N);
  Storage.emplace(Plan->Spec->ParamCount);
  PackResult Result = packArguments(D, *Plan, Args, *Storage, Stream);
  if (Result == PackResult::Failed)
    throw PythonErrorSet();
  if (Result == PackResult::Mismatch)
    throw std::runtime_error("internal error: kernel '" + D.Name +
                             "': the arguments do not fit the launch plan made for them");
  Out = &*Storage;
  return Plan;
}

// --- the cuda target ------------------------------------------------------------

// The kernel of S loaded on device Ordinal: compiled to PTX for the device's
// sm (capped to what LLVM 19 knows) and loaded on first use.
runtime::CudaFunction &cudaFunctionOf(const DispatcherState &D, Specialization &S, int Ordinal) {
  for (auto &Loaded : S.Cuda)
    if (Loaded.Context->ordinal() == Ordinal)
      return *Loaded.Function;
  const runtime::CudaDriver &Driver = runtime::CudaDriver::get();
  if (!Driver.usable())
    throw runtime::RuntimeError("kernel '" + D.Name +
                                "' cannot run on the cuda target: the CUDA driver is not usable: " +
                                Driver.reason() + " (TIDAL_TARGET=cpu runs kernels on the cpu)");
  runtime::CudaContext &Context = runtime::CudaContext::forDevice(Ordinal);
  unsigned SM = Context.limits().ptxSM();
  llvm::LLVMContext Ctx;
  std::unique_ptr<llvm::Module> M = parseIR(S.MarkerIR, Ctx);
  lowerForNVPTX(*M, SM);
  auto Module = std::make_unique<runtime::CudaModule>(Context, emitPTX(*M, SM));
  auto Function = std::make_unique<runtime::CudaFunction>(Module->function(S.KernelName));
  S.Cuda.push_back({&Context, std::move(Module), std::move(Function)});
  return *S.Cuda.back().Function;
}

// One host buffer a launch copies to the device (and back, unless read-only).
struct DeviceCopy {
  char *Host = nullptr;
  size_t Bytes = 0;
  bool CopyBack = false;
  runtime::CudaDeviceBuffer Device;
};

// Launches on the GPU as Numba does: device memory (device arrays, mapped and
// managed arrays, other libraries' arrays) is passed by its device pointer,
// with no copy; each NumPy array (and record) is copied to fresh device
// memory, and then the context is synchronised and the writable arrays are
// copied back (cuda.In: copied in only; cuda.Out: copied back only). A
// launch with no host memory is asynchronous on Stream.
void launchOnCudaTarget(const DispatcherState &D, const LaunchPlan &Plan, runtime::Dim3 Grid,
                        runtime::Dim3 Block, size_t SharedBytes, PyObject *const *Args,
                        PackedArguments &Packed, runtime::cu::Stream Stream, bool Execute) {
  Specialization &S = *Plan.Spec;
  runtime::CudaFunction &Kernel = cudaFunctionOf(D, S, runtime::currentDeviceOrdinal());
  runtime::CudaContext &Context = Kernel.context();
  Context.requireUsable();
  if (!Execute) {
    Kernel.checkLaunch(Grid, Block, SharedBytes);
    return;
  }
  Context.makeCurrent();
  const runtime::CudaDriver &Driver = Context.driver();

  constexpr size_t InlineCopies = 16;
  DeviceCopy InlineStorage[InlineCopies];
  std::vector<DeviceCopy> HeapStorage;
  DeviceCopy *Copies = InlineStorage;
  size_t CopyCount = 0;
  size_t Needed = 0;
  for (ArgKind Kind : Plan.Kinds)
    Needed += Kind == ArgKind::HostArray || Kind == ArgKind::DirectedArray ||
              Kind == ArgKind::HostDeviceArray || Kind == ArgKind::RecordScalar;
  if (Needed > InlineCopies) {
    HeapStorage.resize(Needed);
    Copies = HeapStorage.data();
  }
  // Host memory to the device: the data-pointer slots packArguments wrote
  // (host pointers) now point at the device copies.
  unsigned K = 0;
  for (size_t I = 0; I < S.ArgTypes.size(); ++I) {
    PyObject *O = Args[I];
    ArgKind Kind = Plan.Kinds[I];
    if (isArrayKind(Kind)) {
      // Device memory (packArguments wrote its pointer): tidal's allocations
      // are checked and marked used; host memory is copied.
      if (Kind == ArgKind::DeviceArray) {
        if (runtime::CudaAllocation *Allocation = deviceAllocationOf(O)) {
          Allocation->requireContext(Context, Kernel.name(), I);
          Allocation->usedOn(Stream);
        }
      } else if (Kind != ArgKind::InterfaceArray && Kind != ArgKind::DLPackArray) {
        ArrayView V;
        arrayViewOf(O, Kind, V); // packArguments read it already
        DeviceCopy &Copy = Copies[CopyCount++];
        arraySpan(V, Copy.Host, Copy.Bytes);
        Copy.CopyBack = !V.ReadOnly && (Plan.Copies[I] & CopyOut);
        Copy.Device = runtime::CudaDeviceBuffer(Driver, Copy.Bytes);
        if (Plan.Copies[I] & CopyIn)
          Copy.Device.copyFromHost(Copy.Host, Copy.Bytes);
        Packed.Slots[K].Words[0] =
            Copy.Bytes ? Copy.Device.pointer() + static_cast<uint64_t>(V.Data - Copy.Host) : 0;
      }
      K += 1 + 2 * static_cast<unsigned>(S.ArgTypes[I].NDim);
      continue;
    }
    if (Kind == ArgKind::RecordScalar) { // read-only, by reference
      auto *Record = reinterpret_cast<PyVoidScalarObject *>(O);
      DeviceCopy &Copy = Copies[CopyCount++];
      Copy.Host = Record->obval;
      Copy.Bytes = static_cast<size_t>(Record->descr->elsize);
      Copy.Device = runtime::CudaDeviceBuffer(Driver, Copy.Bytes);
      Copy.Device.copyFromHost(Copy.Host, Copy.Bytes);
      Packed.Slots[K].Words[0] = Copy.Device.pointer();
    }
    ++K;
  }
  // Launch, wait, copy back: without the GIL (only array memory is touched,
  // and the caller's references keep the arrays alive).
  withoutGIL([&] {
    Kernel.launch(Grid, Block, SharedBytes, Stream, Packed.Params);
    if (CopyCount)
      Kernel.synchronize();
    for (size_t C = 0; C < CopyCount; ++C)
      if (Copies[C].CopyBack)
        Copies[C].Device.copyToHost(Copies[C].Host, Copies[C].Bytes);
  });
}

// --- launch configurations: kernel[griddim, blockdim, stream, sharedmem] ----------

// What kernel[...] returns: the configuration, called with the arguments.
struct LaunchConfigObject {
  PyObject_HEAD PyObject *Dispatcher; // strong
  runtime::Dim3 Grid, Block;
  unsigned long long Stream; // the CUstream handle (0: the default stream)
  unsigned long long SharedBytes;
  PyObject *StreamObject; // strong: what was given (None for the default)
  vectorcallfunc Vectorcall;
};

PyTypeObject LaunchConfigType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// Runs the kernel of Config on Args (Execute false: everything but running
// it, for the dispatch benchmark: typing or plan lookup, packing, the
// device's checks).
PyObject *launch(LaunchConfigObject *Config, PyObject *const *Args, size_t N, bool Execute) {
  TIDAL_TRY
  DispatcherState &D = configuredState(Config->Dispatcher);
  auto Stream = reinterpret_cast<runtime::cu::Stream>(Config->Stream);
  std::optional<PackedArguments> Storage;
  PackedArguments *Packed = nullptr;
  std::shared_ptr<LaunchPlan> Held = planAndPack(D, Args, N, Packed, Storage, Stream);
  const LaunchPlan &Plan = *Held;
  if (D.Target == "cuda") {
    launchOnCudaTarget(D, Plan, Config->Grid, Config->Block, Config->SharedBytes, Args, *Packed,
                       Stream, Execute);
    Py_RETURN_NONE;
  }
  // A Ctrl-C that came while the kernel compiled is raised now: once the
  // launch runs, only a new SIGINT interrupts it.
  if (Execute && PyErr_CheckSignals() < 0)
    return nullptr;
  if (Execute) // a failed check in the kernel is a KernelError, rethrown with the GIL
    withoutGIL([&] {
      runtime::launchOnCpu(Plan.Spec->Block, Config->Grid, Config->Block, Packed->Params,
                           static_cast<size_t>(Config->SharedBytes));
    });
  Py_RETURN_NONE;
  TIDAL_CATCH
}

PyObject *LaunchConfig_vectorcall(PyObject *Self, PyObject *const *Args, size_t NArgsF,
                                  PyObject *KwNames) {
  auto *Config = reinterpret_cast<LaunchConfigObject *>(Self);
  if (KwNames && PyTuple_GET_SIZE(KwNames)) {
    PyErr_Format(PyExc_TypeError, "a kernel takes its arguments by position, not by keyword (%R)",
                 KwNames);
    return nullptr;
  }
  return launch(Config, Args, PyVectorcall_NARGS(NArgsF), /*Execute=*/true);
}

PyObject *LaunchConfig_dispatch(PyObject *Self, PyObject *const *Args, Py_ssize_t N) {
  return launch(reinterpret_cast<LaunchConfigObject *>(Self), Args, static_cast<size_t>(N),
                /*Execute=*/false);
}

void LaunchConfig_dealloc(PyObject *Self) {
  auto *Config = reinterpret_cast<LaunchConfigObject *>(Self);
  Py_XDECREF(Config->Dispatcher);
  Py_XDECREF(Config->StreamObject);
  PyObject_Free(Self);
}

PyObject *dimsTuple(const runtime::Dim3 &Dims) {
  return Py_BuildValue("(III)", Dims[0], Dims[1], Dims[2]);
}

PyObject *LaunchConfig_get(PyObject *Self, void *What) {
  auto *Config = reinterpret_cast<LaunchConfigObject *>(Self);
  switch (reinterpret_cast<intptr_t>(What)) {
  case 0:
    return Py_NewRef(Config->Dispatcher);
  case 1:
    return dimsTuple(Config->Grid);
  case 2:
    return dimsTuple(Config->Block);
  case 3:
    return Py_NewRef(Config->StreamObject);
  default:
    return PyLong_FromUnsignedLongLong(Config->SharedBytes);
  }
}

PyObject *LaunchConfig_repr(PyObject *Self) {
  auto *Config = reinterpret_cast<LaunchConfigObject *>(Self);
  PyRef Name = PyRef::steal(PyObject_GetAttrString(Config->Dispatcher, "__name__"));
  if (!Name)
    return nullptr;
  return PyUnicode_FromFormat("<launch of %S griddim=(%u, %u, %u) blockdim=(%u, %u, %u) "
                              "stream=%R sharedmem=%llu>",
                              Name.get(), Config->Grid[0], Config->Grid[1], Config->Grid[2],
                              Config->Block[0], Config->Block[1], Config->Block[2],
                              Config->StreamObject, Config->SharedBytes);
}

PyMethodDef LaunchConfigMethods[] = {
    {"_dispatch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(LaunchConfig_dispatch)),
     METH_FASTCALL,
     "_dispatch(*args): everything a launch does (typing or the launch plan, packing the "
     "arguments, the device's checks) but running the kernel; for benchmarks."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef LaunchConfigGetSet[] = {
    {"dispatcher", LaunchConfig_get, nullptr, "the kernel", reinterpret_cast<void *>(0)},
    {"griddim", LaunchConfig_get, nullptr, "blocks per grid (x, y, z)", reinterpret_cast<void *>(1)},
    {"blockdim", LaunchConfig_get, nullptr, "threads per block (x, y, z)",
     reinterpret_cast<void *>(2)},
    {"stream", LaunchConfig_get, nullptr, "the stream (0 or None: the default)",
     reinterpret_cast<void *>(3)},
    {"sharedmem", LaunchConfig_get, nullptr, "dynamic shared memory, bytes",
     reinterpret_cast<void *>(4)},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// One launch dimension given as a small positive int or a tuple of 1 to 3 of
// them, within CUDA's limits; false (no error set) for anything else, which
// the Python dispatcher then checks and explains.
bool quickDims(PyObject *Value, const uint32_t (&Limits)[3], runtime::Dim3 &Out) {
  PyObject *Single[1] = {Value};
  PyObject *const *Items = Single;
  Py_ssize_t Count = 1;
  if (PyTuple_CheckExact(Value)) {
    Count = PyTuple_GET_SIZE(Value);
    Items = &PyTuple_GET_ITEM(Value, 0);
    if (Count < 1 || Count > 3)
      return false;
  }
  for (int I = 0; I < 3; ++I) {
    long N = 1;
    if (I < Count) {
      if (!PyLong_CheckExact(Items[I]))
        return false;
      int Overflow;
      N = PyLong_AsLongAndOverflow(Items[I], &Overflow);
      if (Overflow || N < 1 || static_cast<unsigned long>(N) > Limits[I])
        return false;
    }
    Out[I] = static_cast<uint32_t>(N);
  }
  return true;
}

constexpr uint32_t MaxGridDims[3] = {TIDAL_MAX_GRID_DIM_X, TIDAL_MAX_GRID_DIM_Y,
                                     TIDAL_MAX_GRID_DIM_Z};
constexpr uint32_t MaxBlockDims[3] = {TIDAL_MAX_BLOCK_DIM_X, TIDAL_MAX_BLOCK_DIM_Y,
                                      TIDAL_MAX_BLOCK_DIM_Z};

// kernel[griddim, blockdim(, stream(, sharedmem))]: a launch configuration.
// The common forms (ints, tuples of ints, a stream object or 0, a byte count)
// are read here; anything else goes through the Python dispatcher's
// _launch_config(config), which accepts what Numba does (objects with
// __index__, ...) or raises the error that says what is wrong.
PyObject *Dispatcher_subscript(PyObject *Self, PyObject *Key) {
  runtime::Dim3 Grid, Block;
  unsigned long long Stream = 0, SharedBytes = 0;
  PyObject *StreamObject = Py_None;
  bool Quick = PyTuple_CheckExact(Key) && PyTuple_GET_SIZE(Key) >= 2 &&
               PyTuple_GET_SIZE(Key) <= 4 &&
               quickDims(PyTuple_GET_ITEM(Key, 0), MaxGridDims, Grid) &&
               quickDims(PyTuple_GET_ITEM(Key, 1), MaxBlockDims, Block) &&
               static_cast<uint64_t>(Block[0]) * Block[1] * Block[2] <= TIDAL_MAX_THREADS_PER_BLOCK;
  if (Quick && PyTuple_GET_SIZE(Key) > 2) {
    StreamObject = PyTuple_GET_ITEM(Key, 2);
    if (StreamObject == Py_None || (PyLong_CheckExact(StreamObject) &&
                                    PyLong_AsLong(StreamObject) == 0 && !PyErr_Occurred())) {
      Stream = 0;
    } else { // a tidal Stream: its handle
      static PyObject *Handle = PyUnicode_InternFromString("handle");
      PyRef Value = PyRef::steal(PyObject_GetAttr(StreamObject, Handle));
      Quick = Value && PyLong_CheckExact(Value.get());
      if (Quick)
        Stream = PyLong_AsUnsignedLongLong(Value.get());
      Quick = Quick && !PyErr_Occurred();
      PyErr_Clear();
    }
  }
  if (Quick && PyTuple_GET_SIZE(Key) > 3) {
    PyObject *Bytes = PyTuple_GET_ITEM(Key, 3);
    Quick = PyLong_CheckExact(Bytes);
    if (Quick) {
      SharedBytes = PyLong_AsUnsignedLongLong(Bytes);
      Quick = !PyErr_Occurred();
      PyErr_Clear();
    }
  }
  if (!Quick) {
    // (griddim, blockdim, stream handle, sharedmem, stream): normalised, or raises.
    static PyObject *Method = PyUnicode_InternFromString("_launch_config");
    PyRef Checked = PyRef::steal(PyObject_CallMethodOneArg(Self, Method, Key));
    if (!Checked)
      return nullptr;
    PyObject *StreamGiven;
    unsigned int GX, GY, GZ, BX, BY, BZ;
    if (!PyArg_ParseTuple(Checked.get(), "(III)(III)KKO", &GX, &GY, &GZ, &BX, &BY, &BZ, &Stream,
                          &SharedBytes, &StreamGiven))
      return nullptr;
    Grid = {GX, GY, GZ};
    Block = {BX, BY, BZ};
    StreamObject = StreamGiven;
  }
  auto *Config = PyObject_New(LaunchConfigObject, &LaunchConfigType);
  if (!Config)
    return nullptr;
  Config->Dispatcher = Py_NewRef(Self);
  Config->Grid = Grid;
  Config->Block = Block;
  Config->Stream = Stream;
  Config->SharedBytes = SharedBytes;
  Config->StreamObject = Py_NewRef(StreamObject);
  Config->Vectorcall = LaunchConfig_vectorcall;
  return reinterpret_cast<PyObject *>(Config);
}

PyMappingMethods DispatcherMapping = {nullptr, Dispatcher_subscript, nullptr};

// Types from a signature: a string ("void(float32, float32[::1])") or a
// sequence of type strings.
std::vector<Type> typesFromPython(PyObject *Signature) {
  if (PyUnicode_Check(Signature)) {
    frontend::Signature Sig = parseSignature(PyUnicode_AsUTF8(Signature));
    if (Sig.HasReturn && Sig.Return.K != Type::Kind::None)
      throw std::invalid_argument("a kernel's signature must return void, not " +
                                  Sig.Return.str());
    return Sig.Params;
  }
  PyRef Seq = PyRef::check(PySequence_Fast(Signature, "a signature must be a str or a sequence of type names"));
  std::vector<Type> Types;
  for (Py_ssize_t I = 0; I < PySequence_Fast_GET_SIZE(Seq.get()); ++I)
    Types.push_back(parseType(PyRef::borrow(PySequence_Fast_GET_ITEM(Seq.get(), I)).str()));
  return Types;
}

PyObject *Dispatcher_compile(PyObject *Self, PyObject *Signature) {
  TIDAL_TRY
  DispatcherState &D = configuredState(Self);
  Specialization &S = D.compile(typesFromPython(Signature));
  return PyUnicode_FromString(signatureText(S.ArgTypes).c_str());
  TIDAL_CATCH
}

PyObject *Dispatcher_specialize(PyObject *Self, PyObject *Args) {
  TIDAL_TRY
  DispatcherState &D = configuredState(Self);
  std::vector<Type> Types;
  if (!typeArguments(D, &PyTuple_GET_ITEM(Args, 0), static_cast<size_t>(PyTuple_GET_SIZE(Args)),
                     Types))
    return nullptr;
  Specialization &S = D.compile(Types);
  return PyUnicode_FromString(signatureText(S.ArgTypes).c_str());
  TIDAL_CATCH
}

// inspect(signature_text, what, sm): what is "markers", "llvm" (after
// tidal-nvptx) or "ptx" of an existing specialisation.
PyObject *Dispatcher_inspect(PyObject *Self, PyObject *Args) {
  const char *Signature, *What;
  unsigned SM = DefaultSM;
  if (!PyArg_ParseTuple(Args, "ss|I", &Signature, &What, &SM))
    return nullptr;
  TIDAL_TRY
  DispatcherState &D = state(Self);
  for (auto &S : D.Specializations) {
    if (signatureText(S->ArgTypes) != Signature)
      continue;
    std::string Kind = What;
    if (Kind == "markers")
      return PyUnicode_FromString(S->MarkerIR.c_str());
    if (Kind == "types")
      return PyUnicode_FromString(S->TypesText.c_str());
    llvm::LLVMContext Ctx;
    std::unique_ptr<llvm::Module> M = parseIR(S->MarkerIR, Ctx);
    lowerForNVPTX(*M, SM);
    if (Kind == "llvm")
      return PyUnicode_FromString(moduleText(*M).c_str());
    if (Kind == "ptx")
      return PyUnicode_FromString(emitPTX(*M, SM).c_str());
    PyErr_Format(PyExc_ValueError, "unknown view '%s': use markers, llvm or ptx", What);
    return nullptr;
  }
  PyErr_Format(PyExc_KeyError, "kernel '%s' has no specialisation %s", D.Name.c_str(), Signature);
  return nullptr;
  TIDAL_CATCH
}

// _kernel_attribute(signature_text, what, shared_bytes=0): a fact of the
// kernel loaded on the current GPU: "regs", "shared", "local" or
// "max_threads" (cuFuncGetAttribute), or "potential_block", the block size of
// the best occupancy with shared_bytes of dynamic shared memory.
PyObject *Dispatcher_kernel_attribute(PyObject *Self, PyObject *Args) {
  const char *Signature, *What;
  unsigned long long SharedBytes = 0; // "potential_block": dynamic shared memory
  if (!PyArg_ParseTuple(Args, "ss|K", &Signature, &What, &SharedBytes))
    return nullptr;
  TIDAL_TRY
  DispatcherState &D = configuredState(Self);
  if (D.Target != "cuda") {
    PyErr_Format(PyExc_RuntimeError,
                 "the facts of kernel '%s' come from the CUDA driver and need a GPU: kernels "
                 "run on the %s target here",
                 D.Name.c_str(), D.Target.c_str());
    return nullptr;
  }
  for (auto &S : D.Specializations) {
    if (signatureText(S->ArgTypes) != Signature)
      continue;
    runtime::CudaFunction &Kernel = cudaFunctionOf(D, *S, runtime::currentDeviceOrdinal());
    std::string Kind = What;
    if (Kind == "regs")
      return PyLong_FromLong(Kernel.registersPerThread());
    if (Kind == "shared")
      return PyLong_FromLong(Kernel.staticSharedBytes());
    if (Kind == "local")
      return PyLong_FromLong(Kernel.localBytesPerThread());
    if (Kind == "max_threads")
      return PyLong_FromLong(Kernel.maxThreadsPerBlock());
    if (Kind == "potential_block")
      return PyLong_FromLong(Kernel.potentialBlockSize(static_cast<size_t>(SharedBytes)));
    PyErr_Format(PyExc_ValueError, "unknown kernel attribute '%s'", What);
    return nullptr;
  }
  PyErr_Format(PyExc_KeyError, "kernel '%s' has no specialisation %s", D.Name.c_str(), Signature);
  return nullptr;
  TIDAL_CATCH
}

PyObject *Dispatcher_signatures(PyObject *Self, void *) {
  TIDAL_TRY
  DispatcherState &D = state(Self);
  PyRef List = PyRef::check(PyList_New(0));
  for (auto &S : D.Specializations) {
    PyRef Text = PyRef::check(PyUnicode_FromString(signatureText(S->ArgTypes).c_str()));
    if (PyList_Append(List.get(), Text.get()) < 0)
      return nullptr;
  }
  return List.release();
  TIDAL_CATCH
}

PyMethodDef DispatcherMethods[] = {
    {"_compile", Dispatcher_compile, METH_O,
     "_compile(signature): compile eagerly; returns the signature's text."},
    {"specialize", Dispatcher_specialize, METH_VARARGS,
     "specialize(*args): compiles for the types of these arguments; returns the signature's "
     "text."},
    {"_inspect", Dispatcher_inspect, METH_VARARGS,
     "_inspect(signature_text, what, sm=75): 'markers', 'llvm', 'ptx' or 'types'."},
    {"_kernel_attribute", Dispatcher_kernel_attribute, METH_VARARGS,
     "_kernel_attribute(signature_text, what, shared_bytes=0): 'regs', 'shared', 'local', "
     "'max_threads' or 'potential_block' of the kernel loaded on the GPU (cuda target "
     "only)."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef DispatcherGetSet[] = {
    {"signatures", Dispatcher_signatures, nullptr, "compiled signatures", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject DispatcherType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// --- module functions --------------------------------------------------------------

PyObject *module_typeof(PyObject *, PyObject *O) {
  Type T;
  std::string Why;
  if (!typeofArgument(O, T, Why)) {
    if (!PyErr_Occurred())
      PyErr_Format(PyExc_TypeError, "kernels can't take %s", Why.c_str());
    return nullptr;
  }
  return PyUnicode_FromString(T.str().c_str());
}

PyObject *module_parse_signature(PyObject *, PyObject *Text) {
  TIDAL_TRY
  if (!PyUnicode_Check(Text)) {
    PyErr_SetString(PyExc_TypeError, "a signature must be a str");
    return nullptr;
  }
  frontend::Signature Sig = parseSignature(PyUnicode_AsUTF8(Text));
  PyRef Params = PyRef::check(PyList_New(0));
  for (const Type &T : Sig.Params) {
    PyRef S = PyRef::check(PyUnicode_FromString(T.str().c_str()));
    PyList_Append(Params.get(), S.get());
  }
  if (!Sig.HasReturn)
    return Py_BuildValue("(OO)", Py_None, Params.get());
  return Py_BuildValue("(sO)", Sig.Return.str().c_str(), Params.get());
  TIDAL_CATCH
}

PyObject *module_driver_status(PyObject *, PyObject *) {
  TIDAL_TRY
  runtime::CudaDriver &D = runtime::CudaDriver::get();
  return Py_BuildValue("(Oiss)", D.usable() ? Py_True : Py_False, D.deviceCount(),
                       D.reason().c_str(), D.libraryPath().c_str());
  TIDAL_CATCH
}

PyObject *module_cpu_worker_count(PyObject *, PyObject *) {
  return PyLong_FromUnsignedLong(runtime::cpuWorkerCount());
}

// compile_ptx_timed(function, signature, sm): PTX of a kernel compiled
// from scratch, and the seconds of each stage, for the benchmark.
PyObject *module_compile_ptx_timed(PyObject *, PyObject *Args) {
  PyObject *Function, *Signature;
  unsigned SM = DefaultSM;
  if (!PyArg_ParseTuple(Args, "OO|I", &Function, &Signature, &SM))
    return nullptr;
  TIDAL_TRY
  using Clock = std::chrono::steady_clock;
  auto Seconds = [](Clock::time_point A, Clock::time_point B) {
    return std::chrono::duration<double>(B - A).count();
  };
  std::vector<Type> Types = typesFromPython(Signature);
  Clock::time_point Start = Clock::now();
  KernelModule KM = emitKernel(Function, Types, FrontendOptions());
  Clock::time_point Emitted = Clock::now();
  PipelineTimings Timings;
  lowerForNVPTX(*KM.Module, SM, &Timings);
  Clock::time_point Lowered = Clock::now();
  std::string PTX = emitPTX(*KM.Module, SM);
  Clock::time_point Done = Clock::now();
  (void)Lowered;
  return Py_BuildValue("(s{sdsdsdsd})", PTX.c_str(), "frontend", Seconds(Start, Emitted),
                       "lowering", Timings.LoweringSeconds, "optimisation",
                       Timings.OptimisationSeconds, "codegen", Seconds(Lowered, Done));
  TIDAL_CATCH
}

// --- the cuda target's memory, streams and events (tidal.cuda.memory, streams) ----
// Allocations, streams and events are C++ objects owned by capsules: the
// Python objects hold the capsule, and the object is destroyed (the memory
// given back to the caching allocator, cuStreamDestroy, cuEventDestroy) when
// the capsule is collected. They are made in the context of the calling
// thread's current device (runtime::currentContext()).

// Hands Object to a new capsule named Name that deletes it when collected.
template <typename T> PyRef capsuleOwning(std::unique_ptr<T> Object, const char *Name) {
  PyRef Capsule = PyRef::check(PyCapsule_New(Object.get(), Name, [](PyObject *C) {
    delete static_cast<T *>(PyCapsule_GetPointer(C, PyCapsule_GetName(C)));
  }));
  Object.release();
  return Capsule;
}

template <typename T> T &capsuleObject(PyObject *Capsule, const char *Name) {
  auto *Object = static_cast<T *>(PyCapsule_GetPointer(Capsule, Name));
  if (!Object)
    throw std::invalid_argument(std::string("expected a ") + Name);
  return *Object;
}

runtime::cu::Stream streamFromHandle(unsigned long long Handle) {
  return reinterpret_cast<runtime::cu::Stream>(Handle);
}

// cuda_alloc(bytes, stream) -> (allocation capsule, device pointer)
PyObject *module_cuda_alloc(PyObject *, PyObject *Args) {
  unsigned long long Bytes, Stream;
  if (!PyArg_ParseTuple(Args, "KK", &Bytes, &Stream))
    return nullptr;
  TIDAL_TRY
  auto Allocation = std::make_unique<runtime::CudaAllocation>(
      runtime::CudaAllocator::forDevice(runtime::currentDeviceOrdinal()),
      static_cast<size_t>(Bytes), streamFromHandle(Stream));
  unsigned long long Pointer = Allocation->pointer();
  PyRef Capsule = capsuleOwning(std::move(Allocation), AllocationCapsule);
  return Py_BuildValue("(OK)", Capsule.get(), Pointer);
  TIDAL_CATCH
}

// cuda_copy(kind, destination, source, bytes, stream, allocation): kind 0 host
// to device, 1 device to host, 2 device to device; pointers as ints; the
// allocation capsule (or None) is marked as used on the stream. The copy runs
// in the allocation's context (a null stream is its device's default
// stream), else in the current device's.
PyObject *module_cuda_copy(PyObject *, PyObject *Args) {
  int Kind;
  unsigned long long Destination, Source, Bytes, Stream;
  PyObject *Allocation = Py_None;
  if (!PyArg_ParseTuple(Args, "iKKKK|O", &Kind, &Destination, &Source, &Bytes, &Stream,
                        &Allocation))
    return nullptr;
  TIDAL_TRY
  runtime::CudaAllocation *Owner =
      Allocation == Py_None
          ? nullptr
          : &capsuleObject<runtime::CudaAllocation>(Allocation, AllocationCapsule);
  runtime::CudaContext &Context = Owner ? Owner->context() : runtime::currentContext();
  Context.requireUsable();
  if (Owner)
    Owner->usedOn(streamFromHandle(Stream));
  withoutGIL([&] {
    runtime::ScopedCurrentContext Current(Context);
    const runtime::CudaDriver &Driver = Context.driver();
    if (Kind == 0)
      runtime::cudaCopyToDevice(Driver, Destination, reinterpret_cast<const void *>(Source),
                                Bytes, streamFromHandle(Stream));
    else if (Kind == 1)
      runtime::cudaCopyToHost(Driver, reinterpret_cast<void *>(Destination), Source, Bytes,
                              streamFromHandle(Stream));
    else
      runtime::cudaCopyDeviceToDevice(Driver, Destination, Source, Bytes,
                                      streamFromHandle(Stream));
  });
  Py_RETURN_NONE;
  TIDAL_CATCH
}

// The device an ordinal argument names (an int; TypeError otherwise), or the
// calling thread's current device for None. An int no device can have
// becomes -1, which the runtime rejects naming the device count.
int deviceOrdinalArgument(PyObject *Ordinal) {
  if (Ordinal == Py_None)
    return runtime::currentDeviceOrdinal();
  if (!PyLong_Check(Ordinal) || PyBool_Check(Ordinal))
    throw std::invalid_argument("a device id must be an int or None");
  int Overflow = 0;
  long Value = PyLong_AsLongAndOverflow(Ordinal, &Overflow);
  return Overflow || Value < INT_MIN || Value > INT_MAX ? -1 : static_cast<int>(Value);
}

// cuda_memory_stats(ordinal=None): the caching allocator of a device.
PyObject *module_cuda_memory_stats(PyObject *, PyObject *Args) {
  PyObject *Ordinal = Py_None;
  if (!PyArg_ParseTuple(Args, "|O", &Ordinal))
    return nullptr;
  TIDAL_TRY
  runtime::CudaMemoryStats S =
      runtime::CudaAllocator::forDevice(deviceOrdinalArgument(Ordinal)).stats();
  return Py_BuildValue("{sKsKsKsKsKsKsKsK}", "bytes_in_use", (unsigned long long)S.BytesInUse,
                       "bytes_requested", (unsigned long long)S.BytesRequested, "bytes_cached",
                       (unsigned long long)S.BytesCached, "bytes_pending",
                       (unsigned long long)S.BytesPending, "driver_allocations",
                       (unsigned long long)S.DriverAllocations, "driver_frees",
                       (unsigned long long)S.DriverFrees, "live_driver_allocations",
                       (unsigned long long)S.LiveDriverAllocations, "reuses",
                       (unsigned long long)S.Reuses);
  TIDAL_CATCH
}

// cuda_memory_clear(ordinal=None): a device's cached blocks back to the driver.
PyObject *module_cuda_memory_clear(PyObject *, PyObject *Args) {
  PyObject *Ordinal = Py_None;
  if (!PyArg_ParseTuple(Args, "|O", &Ordinal))
    return nullptr;
  TIDAL_TRY
  runtime::CudaAllocator &Allocator =
      runtime::CudaAllocator::forDevice(deviceOrdinalArgument(Ordinal));
  Py_BEGIN_ALLOW_THREADS
  Allocator.releaseCached();
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
  TIDAL_CATCH
}

// cuda_memory_info(ordinal=None): (free, total) of a device (cuMemGetInfo).
PyObject *module_cuda_memory_info(PyObject *, PyObject *Args) {
  PyObject *Ordinal = Py_None;
  if (!PyArg_ParseTuple(Args, "|O", &Ordinal))
    return nullptr;
  TIDAL_TRY
  size_t Free = 0, Total = 0;
  runtime::CudaContext::forDevice(deviceOrdinalArgument(Ordinal)).memoryInfo(Free, Total);
  return Py_BuildValue("(KK)", (unsigned long long)Free, (unsigned long long)Total);
  TIDAL_CATCH
}

// cuda_synchronize(ordinal=None): cuCtxSynchronize of a device's context.
PyObject *module_cuda_synchronize(PyObject *, PyObject *Args) {
  PyObject *Ordinal = Py_None;
  if (!PyArg_ParseTuple(Args, "|O", &Ordinal))
    return nullptr;
  TIDAL_TRY
  runtime::CudaContext &Context =
      runtime::CudaContext::forDevice(deviceOrdinalArgument(Ordinal));
  withoutGIL([&] {
    runtime::ScopedCurrentContext Current(Context);
    Context.synchronize();
  });
  Py_RETURN_NONE;
  TIDAL_CATCH
}

// cuda_stream_create() -> (stream capsule, CUstream handle)
PyObject *module_cuda_stream_create(PyObject *, PyObject *) {
  TIDAL_TRY
  auto Stream = std::make_unique<runtime::CudaStream>(runtime::currentContext());
  unsigned long long Handle = reinterpret_cast<unsigned long long>(Stream->handle());
  PyRef Capsule = capsuleOwning(std::move(Stream), StreamCapsule);
  return Py_BuildValue("(OK)", Capsule.get(), Handle);
  TIDAL_CATCH
}

// cuda_stream_synchronize(handle, stream=None): cuStreamSynchronize (0: the
// current device's default stream). A stream capsule (cuda.stream()'s) names
// the context the stream belongs to, which a kernel fault is reported for;
// without one, the current device's.
PyObject *module_cuda_stream_synchronize(PyObject *, PyObject *Args) {
  unsigned long long Handle;
  PyObject *StreamObject = Py_None;
  if (!PyArg_ParseTuple(Args, "K|O", &Handle, &StreamObject))
    return nullptr;
  TIDAL_TRY
  runtime::CudaContext &Context =
      StreamObject == Py_None
          ? runtime::currentContext()
          : capsuleObject<runtime::CudaStream>(StreamObject, StreamCapsule).context();
  Context.requireUsable();
  runtime::cu::Result Result;
  Py_BEGIN_ALLOW_THREADS
  Result = Context.driver().api().StreamSynchronize(streamFromHandle(Handle));
  Py_END_ALLOW_THREADS
  Context.check(Result, "cuStreamSynchronize");
  Py_RETURN_NONE;
  TIDAL_CATCH
}

// cuda_event_create(timing) -> event capsule
PyObject *module_cuda_event_create(PyObject *, PyObject *Args) {
  int Timing = 1;
  if (!PyArg_ParseTuple(Args, "|p", &Timing))
    return nullptr;
  TIDAL_TRY
  auto Event = std::make_unique<runtime::CudaEvent>(runtime::currentContext(), Timing);
  PyRef Capsule = capsuleOwning(std::move(Event), EventCapsule);
  return Capsule.release();
  TIDAL_CATCH
}

// cuda_event(what, event, stream_or_end): what is "record", "query",
// "synchronize", "wait" or "elapsed".
PyObject *module_cuda_event(PyObject *, PyObject *Args) {
  const char *What;
  PyObject *EventObject, *Other = Py_None;
  if (!PyArg_ParseTuple(Args, "sO|O", &What, &EventObject, &Other))
    return nullptr;
  TIDAL_TRY
  runtime::CudaEvent &Event = capsuleObject<runtime::CudaEvent>(EventObject, EventCapsule);
  std::string Op = What;
  auto streamArg = [&] {
    unsigned long long Handle = PyLong_AsUnsignedLongLong(Other);
    if (PyErr_Occurred())
      throw std::invalid_argument("a stream handle must be an int");
    return streamFromHandle(Handle);
  };
  if (Op == "record") {
    Event.record(streamArg());
    Py_RETURN_NONE;
  }
  if (Op == "query")
    return PyBool_FromLong(Event.query());
  if (Op == "wait") {
    Event.waitOn(streamArg());
    Py_RETURN_NONE;
  }
  if (Op == "elapsed")
    return PyFloat_FromDouble(runtime::CudaEvent::elapsed(
        Event, capsuleObject<runtime::CudaEvent>(Other, EventCapsule)));
  if (Op == "synchronize") {
    withoutGIL([&] {
      Event.synchronize();
    });
    Py_RETURN_NONE;
  }
  throw std::invalid_argument("unknown event operation " + Op);
  TIDAL_CATCH
}

// --- the cuda target's devices (tidal.cuda.devices) --------------------------------
// Facts of each device of the driver and the calling thread's current device,
// which allocations, streams, events and launches use.

// cuda_device_count(): the driver's devices (RuntimeError with the driver's
// reason when it is not usable).
PyObject *module_cuda_device_count(PyObject *, PyObject *) {
  TIDAL_TRY
  const runtime::CudaDriver &Driver = runtime::CudaDriver::get();
  Driver.requireUsable();
  return PyLong_FromLong(Driver.deviceCount());
  TIDAL_CATCH
}

PyObject *dim3Tuple(runtime::Dim3 D) {
  return Py_BuildValue("(III)", D[0], D[1], D[2]);
}

// cuda_device_info(ordinal): the facts read once per device, as a dict.
PyObject *module_cuda_device_info(PyObject *, PyObject *Ordinal) {
  TIDAL_TRY
  const runtime::CudaDevice &Device = runtime::CudaDevice::get(deviceOrdinalArgument(Ordinal));
  const runtime::CudaDeviceLimits &L = Device.limits();
  PyRef Block = PyRef::check(dim3Tuple(L.MaxBlockDim));
  PyRef Grid = PyRef::check(dim3Tuple(L.MaxGridDim));
  return Py_BuildValue(
      "{sisss(ii)sssKsisisisOsOsisi}", "id", Device.ordinal(), "name", Device.name().c_str(),
      "compute_capability", L.ComputeMajor, L.ComputeMinor, "uuid", Device.uuidText().c_str(),
      "total_memory", (unsigned long long)Device.totalMemory(), "multiprocessor_count",
      Device.multiprocessorCount(), "warp_size", Device.warpSize(), "max_threads_per_block",
      L.MaxThreadsPerBlock, "max_block_dim", Block.get(), "max_grid_dim", Grid.get(),
      "max_shared_memory_per_block", L.MaxSharedPerBlock, "max_shared_memory_per_block_optin",
      L.MaxSharedPerBlockOptin);
  TIDAL_CATCH
}

// cuda_device_attribute(ordinal, attribute): cuDeviceGetAttribute, the
// attribute by its CUdevice_attribute number or its name ("WARP_SIZE").
PyObject *module_cuda_device_attribute(PyObject *, PyObject *Args) {
  PyObject *Ordinal, *Attribute;
  if (!PyArg_ParseTuple(Args, "OO", &Ordinal, &Attribute))
    return nullptr;
  TIDAL_TRY
  const runtime::CudaDevice &Device = runtime::CudaDevice::get(deviceOrdinalArgument(Ordinal));
  int Number;
  if (PyUnicode_Check(Attribute)) {
    const char *Name = PyUnicode_AsUTF8(Attribute);
    if (!Name)
      return nullptr;
    Number = runtime::cudaDeviceAttributeNumber(Name);
    if (Number < 0) {
      PyErr_Format(PyExc_ValueError,
                   "unknown CUDA device attribute '%s' (expected a CUdevice_attribute name "
                   "less CU_DEVICE_ATTRIBUTE_, such as 'MULTIPROCESSOR_COUNT')",
                   Name);
      return nullptr;
    }
  } else if (PyLong_Check(Attribute) && !PyBool_Check(Attribute)) {
    int Overflow = 0;
    long Value = PyLong_AsLongAndOverflow(Attribute, &Overflow);
    // The driver rejects -1 as it rejects any number it does not know.
    Number = Overflow || Value < INT_MIN || Value > INT_MAX ? -1 : static_cast<int>(Value);
  } else {
    throw std::invalid_argument("a device attribute must be a name (str) or a "
                                "CUdevice_attribute number (int)");
  }
  return PyLong_FromLong(Device.attribute(Number));
  TIDAL_CATCH
}

// cuda_device_attributes(): {name: CUdevice_attribute number} of cuda.h.
PyObject *module_cuda_device_attributes(PyObject *, PyObject *) {
  TIDAL_TRY
  PyRef Names = PyRef::check(PyDict_New());
  for (const runtime::CudaDeviceAttributeName &A : runtime::cudaDeviceAttributeNames()) {
    PyRef Number = PyRef::check(PyLong_FromLong(A.Number));
    if (PyDict_SetItemString(Names.get(), A.Name, Number.get()) < 0)
      return nullptr;
  }
  return Names.release();
  TIDAL_CATCH
}

// cuda_select_device(ordinal): makes the device current on this thread
// (ValueError naming the device count for a bad ordinal); None forgets the
// selection (device 0 is used) and leaves no context current.
PyObject *module_cuda_select_device(PyObject *, PyObject *Ordinal) {
  TIDAL_TRY
  if (Ordinal == Py_None)
    runtime::deselectDevice();
  else
    runtime::selectDevice(deviceOrdinalArgument(Ordinal));
  Py_RETURN_NONE;
  TIDAL_CATCH
}

// cuda_current_device(): the device selected on this thread, or None when
// none is (kernels and allocations then use device 0).
PyObject *module_cuda_current_device(PyObject *, PyObject *) {
  int Ordinal = runtime::selectedDeviceOrdinal();
  if (Ordinal < 0)
    Py_RETURN_NONE;
  return PyLong_FromLong(Ordinal);
}

// cuda_allocation_device(allocation): the device whose memory it is.
PyObject *module_cuda_allocation_device(PyObject *, PyObject *Allocation) {
  TIDAL_TRY
  return PyLong_FromLong(
      capsuleObject<runtime::CudaAllocation>(Allocation, AllocationCapsule).context().ordinal());
  TIDAL_CATCH
}

// cuda_close(): waits for the work of every device used so far, returns the
// caching allocators' free blocks to the driver and forgets the thread's
// selection. The primary contexts stay retained: loaded kernels and live
// arrays remain valid.
PyObject *module_cuda_close(PyObject *, PyObject *) {
  TIDAL_TRY
  const runtime::CudaDriver &Driver = runtime::CudaDriver::get();
  if (Driver.usable()) {
    for (int Ordinal = 0; Ordinal < Driver.deviceCount(); ++Ordinal) {
      runtime::CudaContext *Context = runtime::CudaContext::existing(Ordinal);
      if (!Context || Context->faulted())
        continue;
      runtime::CudaAllocator &Allocator = runtime::CudaAllocator::forDevice(Ordinal);
      withoutGIL([&] {
        runtime::ScopedCurrentContext Current(*Context);
        Context->synchronize();
        Allocator.releaseCached();
      });
    }
  }
  runtime::deselectDevice();
  Py_RETURN_NONE;
  TIDAL_CATCH
}

PyMethodDef ModuleMethods[] = {
    {"cuda_alloc", module_cuda_alloc, METH_VARARGS,
     "cuda_alloc(bytes, stream): (allocation, device pointer) from the caching allocator."},
    {"cuda_copy", module_cuda_copy, METH_VARARGS,
     "cuda_copy(kind, dst, src, bytes, stream, allocation=None): 0 HtoD, 1 DtoH, 2 DtoD."},
    {"cuda_memory_stats", module_cuda_memory_stats, METH_VARARGS,
     "cuda_memory_stats(ordinal=None): the caching allocator's statistics (dict) of a device "
     "(None: the current one)."},
    {"cuda_memory_clear", module_cuda_memory_clear, METH_VARARGS,
     "cuda_memory_clear(ordinal=None): returns a device's cached blocks to the driver."},
    {"cuda_memory_info", module_cuda_memory_info, METH_VARARGS,
     "cuda_memory_info(ordinal=None): (free, total) bytes of a device (cuMemGetInfo)."},
    {"cuda_synchronize", module_cuda_synchronize, METH_VARARGS,
     "cuda_synchronize(ordinal=None): cuCtxSynchronize of a device's context."},
    {"cuda_stream_create", module_cuda_stream_create, METH_NOARGS,
     "cuda_stream_create(): (stream, CUstream handle)."},
    {"cuda_stream_synchronize", module_cuda_stream_synchronize, METH_VARARGS,
     "cuda_stream_synchronize(handle, stream=None): cuStreamSynchronize."},
    {"cuda_event_create", module_cuda_event_create, METH_VARARGS,
     "cuda_event_create(timing=True): an event."},
    {"cuda_event", module_cuda_event, METH_VARARGS,
     "cuda_event(what, event, stream_or_end=None)."},
    {"cuda_device_count", module_cuda_device_count, METH_NOARGS,
     "cuda_device_count(): the CUDA driver's devices."},
    {"cuda_device_info", module_cuda_device_info, METH_O,
     "cuda_device_info(ordinal): name, compute capability, uuid, memory and limits (dict)."},
    {"cuda_device_attribute", module_cuda_device_attribute, METH_VARARGS,
     "cuda_device_attribute(ordinal, name_or_number): cuDeviceGetAttribute."},
    {"cuda_device_attributes", module_cuda_device_attributes, METH_NOARGS,
     "cuda_device_attributes(): {CUdevice_attribute name: number}."},
    {"cuda_select_device", module_cuda_select_device, METH_O,
     "cuda_select_device(ordinal): the thread's current device (None: none selected)."},
    {"cuda_current_device", module_cuda_current_device, METH_NOARGS,
     "cuda_current_device(): the device selected on this thread, or None (device 0 is used)."},
    {"cuda_allocation_device", module_cuda_allocation_device, METH_O,
     "cuda_allocation_device(allocation): the id of the device the memory is on."},
    {"cuda_close", module_cuda_close, METH_NOARGS,
     "cuda_close(): synchronise every used device, free cached blocks, forget the selection."},
    {"compile_ptx_timed", module_compile_ptx_timed, METH_VARARGS,
     "compile_ptx_timed(function, signature, sm=75): (ptx, {stage: seconds})."},
    {"typeof", module_typeof, METH_O, "typeof(value): the kernel type of a launch argument."},
    {"parse_signature", module_parse_signature, METH_O,
     "parse_signature(text): (return type or None, [parameter types])."},
    {"driver_status", module_driver_status, METH_NOARGS,
     "driver_status(): (usable, device_count, reason, library)."},
    {"cpu_worker_count", module_cpu_worker_count, METH_NOARGS,
     "cpu_worker_count(): workers of the cpu target's pool."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef ModuleDef = {PyModuleDef_HEAD_INIT, "tidal._tidal",
                         "tidal's compiler and runtime (C++).", -1, ModuleMethods};

} // namespace

PyObject *tidal::frontend::raisePythonError() { return raiseFromCurrentException(); }

PyMODINIT_FUNC PyInit__tidal() {
  import_array();
  DispatcherType.tp_name = "tidal._tidal.Dispatcher";
  DispatcherType.tp_basicsize = sizeof(DispatcherObject);
  DispatcherType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  DispatcherType.tp_doc = "The compiled specialisations of one kernel, and its launcher.";
  DispatcherType.tp_new = PyType_GenericNew;
  DispatcherType.tp_init = Dispatcher_init;
  DispatcherType.tp_dealloc = Dispatcher_dealloc;
  DispatcherType.tp_methods = DispatcherMethods;
  DispatcherType.tp_getset = DispatcherGetSet;
  DispatcherType.tp_as_mapping = &DispatcherMapping;
  if (PyType_Ready(&DispatcherType) < 0)
    return nullptr;
  LaunchConfigType.tp_name = "tidal._tidal.LaunchConfiguration";
  LaunchConfigType.tp_basicsize = sizeof(LaunchConfigObject);
  LaunchConfigType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  LaunchConfigType.tp_doc = "kernel[griddim, blockdim, stream, sharedmem]: call it with the "
                            "kernel's arguments to launch it.";
  LaunchConfigType.tp_vectorcall_offset = offsetof(LaunchConfigObject, Vectorcall);
  LaunchConfigType.tp_call = PyVectorcall_Call;
  LaunchConfigType.tp_dealloc = LaunchConfig_dealloc;
  LaunchConfigType.tp_repr = LaunchConfig_repr;
  LaunchConfigType.tp_methods = LaunchConfigMethods;
  LaunchConfigType.tp_getset = LaunchConfigGetSet;
  if (PyType_Ready(&LaunchConfigType) < 0)
    return nullptr;
  PyObject *M = PyModule_Create(&ModuleDef);
  if (!M)
    return nullptr;
  Py_INCREF(&DispatcherType);
  if (PyModule_AddObject(M, "Dispatcher", reinterpret_cast<PyObject *>(&DispatcherType)) < 0) {
    Py_DECREF(&DispatcherType);
    Py_DECREF(M);
    return nullptr;
  }
  if (dlpack::addFunctions(M) < 0 || addHostMemoryFunctions(M) < 0) {
    Py_DECREF(M);
    return nullptr;
  }
  return M;
}
