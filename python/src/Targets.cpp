// Which target launches go to, kept in C++ so that a launch reads it
// without calling Python.
#include "Targets.h"

#include "PyRef.h"

#include <stdexcept>

namespace tidal::binding {

using frontend::PyRef;

namespace {

constexpr const char *TargetNames[TargetCount] = {"cpu", "cuda"};

// The target launches go to; -1 until tidal.cuda.target chooses. Read and
// written with the GIL held.
int SelectedTarget = -1;

// select_target(name): launches go to target 'cpu' or 'cuda' from now on
// (tidal.cuda.target checks that the cuda target is usable first); None
// forgets the choice, and the next use chooses again.
PyObject *module_select_target(PyObject *, PyObject *Name) {
  for (int Target = 0; Target < TargetCount; ++Target) {
    if (PyUnicode_Check(Name) && PyUnicode_CompareWithASCIIString(Name, TargetNames[Target]) == 0) {
      SelectedTarget = Target;
      Py_RETURN_NONE;
    }
  }
  if (Name == Py_None) {
    SelectedTarget = -1;
    Py_RETURN_NONE;
  }
  PyErr_Format(PyExc_ValueError, "a tidal target is 'cpu' or 'cuda', not %R", Name);
  return nullptr;
}

// selected_target(): 'cpu', 'cuda', or None while none is chosen.
PyObject *module_selected_target(PyObject *, PyObject *) {
  if (SelectedTarget < 0)
    Py_RETURN_NONE;
  return PyUnicode_FromString(TargetNames[SelectedTarget]);
}

PyMethodDef TargetMethods[] = {
    {"select_target", module_select_target, METH_O,
     "select_target(name): launches go to 'cpu' or 'cuda' from now on (None: choose again)."},
    {"selected_target", module_selected_target, METH_NOARGS,
     "selected_target(): 'cpu', 'cuda', or None while none is chosen."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

const char *targetName(TargetKind Target) { return TargetNames[static_cast<int>(Target)]; }

TargetKind selectedTarget() {
  if (SelectedTarget < 0) {
    PyRef Module = PyRef::check(PyImport_ImportModule("tidal.cuda.target"));
    PyRef Chosen = PyRef::check(PyObject_CallMethod(Module.get(), "current_target", nullptr));
    if (SelectedTarget < 0)
      throw std::runtime_error("internal error: tidal.cuda.target.current_target() chose no "
                               "target");
  }
  return static_cast<TargetKind>(SelectedTarget);
}

int addTargetFunctions(PyObject *Module) { return PyModule_AddFunctions(Module, TargetMethods); }

} // namespace tidal::binding
