// An owned reference to a Python object (RAII over Py_INCREF/Py_DECREF),
// and the few CPython calls the frontend makes, turned into C++ exceptions.
#ifndef TIDAL_FRONTEND_PYREF_H
#define TIDAL_FRONTEND_PYREF_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace tidal::frontend {

// A Python exception that is still set in the interpreter (PyErr_Occurred):
// the binding layer lets it propagate as it is.
class PythonErrorSet : public std::runtime_error {
public:
  PythonErrorSet() : std::runtime_error("a Python exception is set") {}
};

class PyRef {
public:
  PyRef() = default;
  // Takes ownership of a new reference (may be null).
  static PyRef steal(PyObject *O) { return PyRef(O); }
  // Adds a reference to a borrowed one.
  static PyRef borrow(PyObject *O) {
    Py_XINCREF(O);
    return PyRef(O);
  }
  // Takes a new reference that must not be null; throws PythonErrorSet.
  static PyRef check(PyObject *O) {
    if (!O)
      throw PythonErrorSet();
    return PyRef(O);
  }
  PyRef(const PyRef &O) : Object(O.Object) { Py_XINCREF(Object); }
  PyRef(PyRef &&O) noexcept : Object(std::exchange(O.Object, nullptr)) {}
  PyRef &operator=(PyRef O) noexcept {
    std::swap(Object, O.Object);
    return *this;
  }
  ~PyRef() { Py_XDECREF(Object); }

  PyObject *get() const { return Object; }
  PyObject *release() { return std::exchange(Object, nullptr); }
  explicit operator bool() const { return Object != nullptr; }

  // getattr; throws PythonErrorSet when missing.
  PyRef attr(const char *Name) const {
    return check(PyObject_GetAttrString(Object, Name));
  }
  // getattr; null (and no error set) when missing.
  PyRef attrOrNull(const char *Name) const {
    PyObject *R = PyObject_GetAttrString(Object, Name);
    if (!R)
      PyErr_Clear();
    return steal(R);
  }
  long asLong() const {
    long V = PyLong_AsLong(Object);
    if (V == -1 && PyErr_Occurred())
      throw PythonErrorSet();
    return V;
  }
  std::string str() const {
    PyRef S = check(PyObject_Str(Object));
    const char *C = PyUnicode_AsUTF8(S.get());
    if (!C)
      throw PythonErrorSet();
    return C;
  }
  bool isNone() const { return Object == Py_None; }

private:
  explicit PyRef(PyObject *O) : Object(O) {}
  PyObject *Object = nullptr;
};

// The name of an object's type without its module: "BinOp", "float".
inline std::string typeName(PyObject *O) {
  std::string N = Py_TYPE(O)->tp_name;
  size_t Dot = N.rfind('.');
  return Dot == std::string::npos ? N : N.substr(Dot + 1);
}

// Takes the pending Python error (clearing it) and returns str() of its
// value, or `Otherwise` when it has none: for errors that become a
// located CompileError.
inline std::string takePendingErrorText(const std::string &Otherwise) {
  PyObject *Type, *Value, *Traceback;
  PyErr_Fetch(&Type, &Value, &Traceback);
  std::string Text = Value ? PyRef::borrow(Value).str() : Otherwise;
  Py_XDECREF(Type);
  Py_XDECREF(Value);
  Py_XDECREF(Traceback);
  return Text;
}

inline PyRef importModule(const char *Name) {
  return PyRef::check(PyImport_ImportModule(Name));
}

} // namespace tidal::frontend

#endif
