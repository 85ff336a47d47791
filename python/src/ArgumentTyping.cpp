// The kernel type of a launch argument (Numba's typeof), and the attributes
// through which tidal's own array classes describe their memory.
#include "ArgumentTyping.h"

#include "ArrayInterface.h"
#include "Capsules.h"
#include "DLPack.h"
#include "RecordLayouts.h"
#include "TupleTypes.h"

#include "tidal/runtime/CudaMemory.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>

namespace tidal::binding {

using namespace tidal::frontend;

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

// A datetime64/timedelta64 dtype (kind 'M' or 'm') as a scalar type with its
// unit (numpy.datetime_data); false for other dtypes, and for multiples of a
// unit (datetime64[2D]), which kernels do not take.
bool datetimeOfDescr(PyArray_Descr *D, Type &Out) {
  if (D->kind != 'M' && D->kind != 'm')
    return false;
  PyRef NumPy = PyRef::steal(PyImport_ImportModule("numpy"));
  PyRef Data = NumPy ? PyRef::steal(PyObject_CallMethod(NumPy.get(), "datetime_data", "O",
                                                        reinterpret_cast<PyObject *>(D)))
                     : PyRef();
  TimeUnit Unit;
  if (!Data || PyTuple_GET_SIZE(Data.get()) != 2 ||
      PyLong_AsLong(PyTuple_GET_ITEM(Data.get(), 1)) != 1 ||
      !timeUnitFromName(PyRef::borrow(PyTuple_GET_ITEM(Data.get(), 0)).str(), Unit)) {
    PyErr_Clear();
    if (!Data || PyRef::borrow(PyTuple_GET_ITEM(Data.get(), 0)).str() != "generic")
      return false;
    Unit = TimeUnit::Generic;
  }
  Out = Type::datetime(D->kind == 'M' ? Scalar::Datetime64 : Scalar::Timedelta64, Unit);
  return true;
}

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
uint8_t directionOf(PyObject *O) {
  static PyObject *Name = PyUnicode_InternFromString("_tidal_direction");
  PyRef Direction = PyRef::steal(PyObject_GetAttr(O, Name));
  long Bits = Direction ? PyLong_AsLong(Direction.get()) : -1;
  PyErr_Clear();
  return Bits >= 1 && Bits <= 3 ? static_cast<uint8_t>(Bits) : CopyIn | CopyOut;
}

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

// The fields of a structured dtype (RecordLayouts.h); null (and Why) when
// kernels can't take one of them.
static std::shared_ptr<const RecordLayout> recordLayoutOf(PyArray_Descr *D, std::string &Why) {
  try {
    return recordLayoutOfDtype(reinterpret_cast<PyObject *>(D), Why);
  } catch (const PythonErrorSet &) {
    PyErr_Clear();
    Why = "a structured dtype that tidal could not read";
    return nullptr;
  }
}

// A type that python/tidal/cuda/signatures.py describes (its _native()):
// tidal's type text, ("record", dtype, readonly), ("array", dtype, ndim,
// layout, readonly) or ("tuple", [descriptions]). Records and read-only
// arrays have no text that the signature parser reads.
Type typeFromDescription(PyObject *Description) {
  if (PyUnicode_Check(Description))
    return parseType(PyRef::borrow(Description).str());
  auto Bad = [&]() -> std::invalid_argument {
    return std::invalid_argument("not a type description: " + PyRef::borrow(Description).str());
  };
  if (!PyTuple_Check(Description) || PyTuple_GET_SIZE(Description) < 2 ||
      !PyUnicode_Check(PyTuple_GET_ITEM(Description, 0)))
    throw Bad();
  std::string Kind = PyRef::borrow(PyTuple_GET_ITEM(Description, 0)).str();
  Py_ssize_t Size = PyTuple_GET_SIZE(Description);
  auto Flag = [&](Py_ssize_t I) {
    int Value = PyObject_IsTrue(PyTuple_GET_ITEM(Description, I));
    if (Value < 0)
      throw PythonErrorSet();
    return Value == 1;
  };
  if (Kind == "tuple") {
    PyRef Items = PyRef::check(PySequence_Fast(PyTuple_GET_ITEM(Description, 1),
                                               "a tuple description lists its elements"));
    std::vector<Type> Elements;
    for (Py_ssize_t I = 0; I < PySequence_Fast_GET_SIZE(Items.get()); ++I)
      Elements.push_back(typeFromDescription(PySequence_Fast_GET_ITEM(Items.get(), I)));
    return Type::tuple(std::move(Elements));
  }
  PyObject *DType = PyTuple_GET_ITEM(Description, 1);
  if (!PyArray_DescrCheck(DType))
    throw Bad();
  auto *Descr = reinterpret_cast<PyArray_Descr *>(DType);
  std::string Why;
  if (Kind == "record" && Size == 3 && Descr->names) {
    auto Record = recordLayoutOf(Descr, Why);
    if (!Record)
      throw std::invalid_argument("a signature has " + Why);
    return Type::record(std::move(Record), Flag(2));
  }
  if (Kind == "array" && Size == 5) {
    long NDim = PyLong_AsLong(PyTuple_GET_ITEM(Description, 2));
    std::string LayoutName = PyRef::borrow(PyTuple_GET_ITEM(Description, 3)).str();
    if (NDim < 1 || NDim > 32 || LayoutName.size() != 1)
      throw Bad();
    Layout L = LayoutName == "C" ? Layout::C : LayoutName == "F" ? Layout::F : Layout::A;
    bool ReadOnly = Flag(4);
    if (Descr->names) {
      auto Record = recordLayoutOf(Descr, Why);
      if (!Record)
        throw std::invalid_argument("a signature has an array of " + Why);
      return Type::recordArray(std::move(Record), static_cast<unsigned>(NDim), L, ReadOnly);
    }
    Scalar S;
    if (!scalarOfDescr(Descr, S))
      throw std::invalid_argument("a signature has an array of dtype " +
                                  PyRef::borrow(DType).str() + ", which kernels can't take");
    return Type::array(S, static_cast<unsigned>(NDim), L, ReadOnly);
  }
  throw Bad();
}

// The type Numba gives a launch argument; false (and Why) when kernels
// can't take it, or false with a Python error set when its
// __cuda_array_interface__ is not a valid description.
bool isAddressObject(PyObject *O) {
  // On the launch path for every argument that reaches it: no allocation.
  llvm::StringRef Class = Py_TYPE(O)->tp_name;
  return Class.starts_with("_cffi_backend.") ? Class.contains("CData") : Class == "c_void_p";
}

bool addressOf(PyObject *O, uint64_t &Address) {
  if (PyLong_Check(O)) {
    Address = PyLong_AsUnsignedLongLongMask(O);
    return !PyErr_Occurred();
  }
  PyRef Value;
  if (std::string(Py_TYPE(O)->tp_name) == "c_void_p") {
    Value = PyRef::steal(PyObject_GetAttrString(O, "value"));
  } else { // cffi: int(ffi.cast('uintptr_t', p)), with an FFI kept for this
    static PyObject *Ffi = nullptr;
    if (!Ffi) {
      PyRef Module = PyRef::steal(PyImport_ImportModule("cffi"));
      Ffi = Module ? PyObject_CallMethod(Module.get(), "FFI", nullptr) : nullptr;
      if (!Ffi)
        return false;
    }
    PyRef Cast = PyRef::steal(PyObject_CallMethod(Ffi, "cast", "sO", "uintptr_t", O));
    Value = Cast ? PyRef::steal(PyNumber_Long(Cast.get())) : PyRef();
  }
  if (!Value)
    return false;
  Address = Value.get() == Py_None ? 0 : PyLong_AsUnsignedLongLongMask(Value.get());
  return !PyErr_Occurred();
}

bool typeofArgument(PyObject *O, Type &Out, std::string &Why) {
  if (isAddressObject(O)) { // a pointer parameter's argument (docs/language.md, "Pointers")
    Out = Type::voidPointer();
    return true;
  }
  // Tuples and namedtuples: each element typed as an argument of its own
  // (numbers, arrays, tuples); Enum members: their value, tagged with the
  // class (IntEnum members are ints too, so before the ints).
  if (PyTuple_Check(O)) {
    std::vector<Type> Elements(static_cast<size_t>(PyTuple_GET_SIZE(O)));
    for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(O); ++I)
      if (!typeofArgument(PyTuple_GET_ITEM(O, I), Elements[static_cast<size_t>(I)], Why)) {
        if (!PyErr_Occurred())
          Why = "a tuple whose element " + std::to_string(I) + " is " + Why;
        return false;
      }
    Out = Type::tuple(std::move(Elements));
    if (isNamedTupleInstance(O))
      Out.Named = namedTupleInfoOf(O);
    return true;
  }
  if (!PyLong_CheckExact(O) && !PyFloat_CheckExact(O) && !PyArray_Check(O) && isEnumMember(O)) {
    PyObject *Value = enumValueOf(O);
    if (!Value)
      return false;
    Type ValueType;
    bool Numbers = typeofArgument(Value, ValueType, Why) &&
                   (ValueType.isScalar() || ValueType.isTuple());
    for (const Type &E : ValueType.Elements)
      Numbers &= E.isScalar();
    if (!Numbers) {
      PyErr_Clear();
      Why = "the Enum member " + PyRef::borrow(O).str() + " whose value is '" + typeName(Value) +
            "' (kernels take Enum members whose values are numbers or tuples of numbers)";
      return false;
    }
    Out = ValueType;
    Out.Enum = enumInfoOf(O);
    return true;
  }
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
    Layout L = PyArray_IS_C_CONTIGUOUS(A)   ? Layout::C
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
    Type Datetime;
    if (datetimeOfDescr(PyArray_DESCR(A), Datetime)) { // int64 counts of a unit
      Out = Type::array(Datetime.Dtype, static_cast<unsigned>(PyArray_NDIM(A)), L,
                        !PyArray_ISWRITEABLE(A));
      Out.Unit = Datetime.Unit;
      return true;
    }
    if (!scalarOfDescr(PyArray_DESCR(A), S)) {
      Why = "a NumPy array of dtype " +
            PyRef::borrow(reinterpret_cast<PyObject *>(PyArray_DESCR(A))).str() +
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
  if (PyArray_IsScalar(O, Void)) { // a record scalar: by reference, written back as Numba does
    PyArray_Descr *D = reinterpret_cast<PyVoidScalarObject *>(O)->descr;
    if (!D || !D->names) {
      Why = "a NumPy void scalar without fields";
      return false;
    }
    auto Record = recordLayoutOf(D, Why);
    if (!Record)
      return false;
    // Writable unless it is a view into a read-only array.
    bool Writable = (reinterpret_cast<PyVoidScalarObject *>(O)->flags & NPY_ARRAY_WRITEABLE) != 0;
    Out = Type::record(std::move(Record), /*ReadOnly=*/!Writable);
    return true;
  }
  if (PyArray_IsScalar(O, Generic)) {
    PyRef Descr = PyRef::steal(reinterpret_cast<PyObject *>(PyArray_DescrFromScalar(O)));
    if (Descr && datetimeOfDescr(reinterpret_cast<PyArray_Descr *>(Descr.get()), Out))
      return true; // numpy.datetime64, numpy.timedelta64: its int64 count
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
    Out = Type::array(V.Dtype, static_cast<unsigned>(V.NDim),
                      layoutOf(V.NDim, V.Shape, V.Strides, V.ItemSize), V.ReadOnly);
    return true;
  }
  // Or one that speaks DLPack only.
  if (PyObject_HasAttrString(O, "__dlpack__") && PyObject_HasAttrString(O, "__dlpack_device__")) {
    ArrayView V;
    if (!dlpackView(O, V, nullptr, 0, nullptr))
      return false;
    Out = Type::array(V.Dtype, static_cast<unsigned>(V.NDim),
                      layoutOf(V.NDim, V.Shape, V.Strides, V.ItemSize), V.ReadOnly);
    return true;
  }
  Why = "'" + typeName(O) + "'";
  return false;
}

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

PyMethodDef ArgumentTypingMethods[] = {
    {"typeof", module_typeof, METH_O, "typeof(value): the kernel type of a launch argument."},
    {nullptr, nullptr, 0, nullptr}};

int addArgumentTypingFunctions(PyObject *Module) {
  return PyModule_AddFunctions(Module, ArgumentTypingMethods);
}

} // namespace tidal::binding
