// Reading the Python AST through the CPython API: a node's fields, its kind,
// the items of a list field; and the __tidal_intrinsic__ name of an object.
// Shared by the files of the frontend.
#ifndef TIDAL_FRONTEND_ASTACCESS_H
#define TIDAL_FRONTEND_ASTACCESS_H

#include "PyRef.h"

#include <string>
#include <vector>

namespace tidal::frontend {

inline PyRef field(PyObject *Node, const char *Name) {
  return PyRef::check(PyObject_GetAttrString(Node, Name));
}

inline std::string nodeKind(PyObject *Node) { return typeName(Node); }

inline std::vector<PyObject *> listItems(PyObject *List) {
  std::vector<PyObject *> Items;
  if (!List || !PyList_Check(List))
    return Items;
  for (Py_ssize_t I = 0; I < PyList_GET_SIZE(List); ++I)
    Items.push_back(PyList_GET_ITEM(List, I));
  return Items;
}

inline std::string identifierField(PyObject *Node, const char *Name) {
  return field(Node, Name).str();
}

// The __tidal_intrinsic__ name of a Python object (python/tidal/cuda/
// intrinsics.py), or "" when it has none.
inline std::string intrinsicName(PyObject *O) {
  PyObject *N = PyObject_GetAttrString(O, "__tidal_intrinsic__");
  if (!N) {
    PyErr_Clear();
    return "";
  }
  std::string Name = PyUnicode_Check(N) ? PyUnicode_AsUTF8(N) : "";
  Py_DECREF(N);
  return Name;
}

} // namespace tidal::frontend

#endif
