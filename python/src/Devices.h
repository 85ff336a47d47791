// The CUDA driver's devices as the binding's functions name them.
#ifndef TIDAL_BINDING_DEVICES_H
#define TIDAL_BINDING_DEVICES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace tidal::binding {

// The device an ordinal argument names (an int; TypeError otherwise), or the
// calling thread's current device for None. An int no device can have
// becomes -1, which the runtime rejects naming the device count.
int deviceOrdinalArgument(PyObject *Ordinal);

} // namespace tidal::binding

#endif
