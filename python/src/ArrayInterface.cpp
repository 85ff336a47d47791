// Arrays of other libraries through __cuda_array_interface__ (version 0 to
// 3), read without allocating.
#include "ArrayInterface.h"

#include "ArgumentTyping.h"

#include <cstring>
#include <unordered_map>

namespace tidal::binding {

using namespace tidal::frontend;

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
static bool scalarOfTypestr(PyObject *Typestr, Scalar &Out, npy_intp &Size) {
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
static PyObject *interfaceItem(PyObject *Desc, const char *Key, bool Required) {
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
  if (!scalarOfTypestr(Typestr, V.Dtype, V.ItemSize)) {
    PyErr_Format(PyExc_TypeError,
                 "__cuda_array_interface__ typestr %R: kernels take arrays of bool, ints, "
                 "floats and complex numbers in native byte order",
                 Typestr);
    return false;
  }
  if (!PyTuple_Check(Shape) || PyTuple_GET_SIZE(Shape) > NPY_MAXDIMS || !PyTuple_Check(Data) ||
      PyTuple_GET_SIZE(Data) != 2) {
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

} // namespace tidal::binding
