// kernel[griddim, blockdim, stream, sharedmem]: the launch configuration, a
// callable object whose call launches the kernel on the selected target.
#ifndef TIDAL_BINDING_LAUNCHCONFIG_H
#define TIDAL_BINDING_LAUNCHCONFIG_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace tidal::binding {

// Dispatcher[Key]: the launch configuration of kernel Dispatcher. The common
// forms (ints, tuples of ints, a stream object or 0, a byte count) are read
// here; anything else goes through the Python dispatcher's
// _launch_config(Key), which accepts what Numba does or raises the error
// that says what is wrong.
PyObject *launchConfiguration(PyObject *Dispatcher, PyObject *Key);

// Adds the LaunchConfiguration type and the launch limits
// (MAX_THREADS_PER_BLOCK, MAX_BLOCK_DIM, MAX_GRID_DIM); 0, or -1 with a
// Python error set.
int addLaunchConfigType(PyObject *Module);

} // namespace tidal::binding

#endif
