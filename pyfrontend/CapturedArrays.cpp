// Device arrays captured by reference (CapturedArrays.h): their
// __cuda_array_interface__ read once per use, at compile time.
#include "CapturedArrays.h"
#include "PyRef.h"

#include <stdexcept>

namespace tidal::frontend {

std::optional<CapturedArray> capturedArray(PyObject *O) {
  if (PyType_Check(O) || PyModule_Check(O) ||
      std::string(Py_TYPE(O)->tp_name) == "numpy.ndarray")
    return std::nullopt;
  PyRef Interface = PyRef::borrow(O).attrOrNull("__cuda_array_interface__");
  if (!Interface || !PyDict_Check(Interface.get()))
    return std::nullopt;
  PyObject *TypeString = PyDict_GetItemString(Interface.get(), "typestr");
  PyObject *ShapeTuple = PyDict_GetItemString(Interface.get(), "shape");
  PyObject *StridesTuple = PyDict_GetItemString(Interface.get(), "strides");
  PyObject *Data = PyDict_GetItemString(Interface.get(), "data");
  if (!TypeString || !ShapeTuple || !Data || !PyTuple_Check(ShapeTuple) || !PyTuple_Check(Data) ||
      PyTuple_GET_SIZE(Data) != 2)
    throw std::runtime_error("its __cuda_array_interface__ lacks typestr, shape or data");
  if (PyDict_GetItemString(Interface.get(), "descr") &&
      PyList_Check(PyDict_GetItemString(Interface.get(), "descr")) &&
      PyList_GET_SIZE(PyDict_GetItemString(Interface.get(), "descr")) > 1)
    throw std::runtime_error("captured device arrays of records are not supported: pass the "
                             "array as an argument");
  PyRef NumPy = importModule("numpy");
  PyRef DType = PyRef::check(PyObject_CallMethod(NumPy.get(), "dtype", "O", TypeString));
  if (!PyObject_RichCompareBool(DType.attr("isnative").get(), Py_True, Py_EQ))
    throw std::runtime_error("its dtype " + DType.attr("str").str() +
                             " is not in the machine's byte order");
  Scalar Element;
  if (DType.attr("names").get() != Py_None || !scalarFromName(DType.attr("name").str(), Element))
    throw std::runtime_error("captured device arrays of dtype " + DType.attr("name").str() +
                             " are not supported: pass the array as an argument");
  CapturedArray A;
  unsigned N = static_cast<unsigned>(PyTuple_GET_SIZE(ShapeTuple));
  for (unsigned I = 0; I < N; ++I)
    A.Shape.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(ShapeTuple, I)));
  std::vector<int64_t> CStrides(N), FStrides(N);
  int64_t Stride = byteSize(Element);
  for (unsigned I = N; I-- > 0;) {
    CStrides[I] = Stride;
    Stride *= A.Shape[I];
  }
  Stride = byteSize(Element);
  for (unsigned I = 0; I < N; ++I) {
    FStrides[I] = Stride;
    Stride *= A.Shape[I];
  }
  if (StridesTuple && StridesTuple != Py_None) {
    for (unsigned I = 0; I < N; ++I)
      A.Strides.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(StridesTuple, I)));
  } else {
    A.Strides = CStrides;
  }
  Layout L = A.Strides == CStrides ? Layout::C : A.Strides == FStrides ? Layout::F : Layout::A;
  bool ReadOnly = PyObject_IsTrue(PyTuple_GET_ITEM(Data, 1)) == 1;
  A.T = Type::array(Element, N, L, ReadOnly);
  A.Address = PyLong_AsUnsignedLongLongMask(PyTuple_GET_ITEM(Data, 0));
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw std::runtime_error("its __cuda_array_interface__ has a shape, strides or pointer "
                             "that are not integers");
  }
  return A;
}

} // namespace tidal::frontend
