// The Python objects behind tuple-like and enum types, shared by the
// frontend (globals and closure values frozen into a kernel) and the
// extension (launch arguments): namedtuple classes and Enum members.
#ifndef TIDAL_FRONTEND_TUPLETYPES_H
#define TIDAL_FRONTEND_TUPLETYPES_H

#include "Types.h"

#include <Python.h>

#include <memory>

namespace tidal::frontend {

// True when O is an instance of a namedtuple class (a tuple subclass with
// _fields); its class's names then come from namedTupleInfoOf.
bool isNamedTupleInstance(PyObject *O);
std::shared_ptr<const NamedTupleInfo> namedTupleInfoOf(PyObject *Instance);

// True when O is a member of an enum.Enum class (IntEnum included);
// false, with no error set, otherwise or when the enum module is missing.
bool isEnumMember(PyObject *O);
// The class of an Enum member, one record per class for the life of the
// process (it holds a reference to the class, so types compare by its
// identity safely).
std::shared_ptr<const EnumInfo> enumInfoOf(PyObject *Member);
// The value of an Enum member (its _value_), borrowed from the member;
// null with a Python error set when it has none.
PyObject *enumValueOf(PyObject *Member);

} // namespace tidal::frontend

#endif
