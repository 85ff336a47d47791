// The targets kernels launch on, and which one is selected: tidal.cuda.target
// chooses (set_target, use_target, or detection at the first use); a launch
// reads the choice here without calling Python.
#ifndef TIDAL_BINDING_TARGETS_H
#define TIDAL_BINDING_TARGETS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace tidal::binding {

enum class TargetKind : int { Cpu = 0, Cuda = 1 };
constexpr int TargetCount = 2;

// "cpu" or "cuda".
const char *targetName(TargetKind Target);

// The selected target; the first call asks tidal.cuda.target to choose one
// (throws PythonErrorSet when that fails).
TargetKind selectedTarget();

// select_target(name) and selected_target(); 0, or -1 with a Python error set.
int addTargetFunctions(PyObject *Module);

} // namespace tidal::binding

#endif
