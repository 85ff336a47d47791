// The Python objects behind namedtuple and enum types (TupleTypes.h).
#include "TupleTypes.h"

#include "PyRef.h"

#include <map>

namespace tidal::frontend {

bool isNamedTupleInstance(PyObject *O) {
  if (!PyTuple_Check(O) || PyTuple_CheckExact(O))
    return false;
  PyObject *Fields = PyObject_GetAttrString(reinterpret_cast<PyObject *>(Py_TYPE(O)), "_fields");
  if (!Fields) {
    PyErr_Clear();
    return false;
  }
  bool IsTuple = PyTuple_Check(Fields);
  Py_DECREF(Fields);
  return IsTuple;
}

std::shared_ptr<const NamedTupleInfo> namedTupleInfoOf(PyObject *Instance) {
  auto Info = std::make_shared<NamedTupleInfo>();
  PyTypeObject *Class = Py_TYPE(Instance);
  std::string Name = Class->tp_name;
  Info->ClassName = Name.substr(Name.rfind('.') + 1);
  PyRef Fields = PyRef::check(
      PyObject_GetAttrString(reinterpret_cast<PyObject *>(Class), "_fields"));
  for (Py_ssize_t I = 0; I < PyTuple_GET_SIZE(Fields.get()); ++I)
    Info->Fields.push_back(PyRef::borrow(PyTuple_GET_ITEM(Fields.get(), I)).str());
  return Info;
}

// enum.Enum and enum.IntEnum, imported once (null when the import fails).
static PyObject *enumClass(const char *Name) {
  static PyObject *Enum = nullptr, *IntEnum = nullptr;
  static bool Tried = false;
  if (!Tried) {
    Tried = true;
    PyObject *Module = PyImport_ImportModule("enum");
    if (Module) {
      Enum = PyObject_GetAttrString(Module, "Enum");
      IntEnum = PyObject_GetAttrString(Module, "IntEnum");
      Py_DECREF(Module);
    }
    PyErr_Clear();
  }
  return std::string(Name) == "Enum" ? Enum : IntEnum;
}

bool isEnumMember(PyObject *O) {
  // Plain numbers, tuples and arrays are never members: answer quickly.
  if (PyLong_CheckExact(O) || PyFloat_CheckExact(O) || PyTuple_CheckExact(O) || PyType_Check(O))
    return false;
  PyObject *Enum = enumClass("Enum");
  if (!Enum)
    return false;
  int Is = PyObject_IsInstance(O, Enum);
  if (Is < 0)
    PyErr_Clear();
  return Is == 1;
}

std::shared_ptr<const EnumInfo> enumInfoOf(PyObject *Member) {
  static std::map<PyObject *, std::shared_ptr<const EnumInfo>> Known;
  PyObject *Class = reinterpret_cast<PyObject *>(Py_TYPE(Member));
  auto It = Known.find(Class);
  if (It != Known.end())
    return It->second;
  auto Info = std::make_shared<EnumInfo>();
  Py_INCREF(Class); // held for the life of the process: types point at it
  Info->Class = Class;
  std::string Name = Py_TYPE(Member)->tp_name;
  Info->ClassName = Name.substr(Name.rfind('.') + 1);
  PyObject *IntEnum = enumClass("IntEnum");
  int IsInt = IntEnum ? PyObject_IsInstance(Member, IntEnum) : 0;
  if (IsInt < 0)
    PyErr_Clear();
  Info->IsIntEnum = IsInt == 1;
  Known[Class] = Info;
  return Info;
}

PyObject *enumValueOf(PyObject *Member) {
  PyObject *Value = PyObject_GetAttrString(Member, "_value_");
  if (!Value)
    return nullptr;
  Py_DECREF(Value); // the member holds it
  return Value;
}

} // namespace tidal::frontend
