// Numba's performance warnings (tidal.errors.PerformanceWarning, also named
// NumbaPerformanceWarning): a grid too small to fill a GPU, and a host array
// copied to and from the device at a launch. Both targets give them: they
// say what the launch costs on a GPU, so that a kernel developed on the cpu
// target is launched well on one. Each has Numba's switch, read when the
// warning would be given: TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS /
// TIDAL_CUDA_WARN_ON_IMPLICIT_COPY, else Numba's config of those names when
// the program imported numba.core.config, else the NUMBA_ variables; on by
// default, as Numba's (0 turns one off).
#ifndef TIDAL_BINDING_PERFORMANCEWARNINGS_H
#define TIDAL_BINDING_PERFORMANCEWARNINGS_H

#include "Dispatcher.h"

namespace tidal::binding {

// kernel[griddim, ...] with fewer than 128 blocks: warns, once per grid size
// and kernel (Numba warns once per cached configuration). Throws
// PythonErrorSet when a filter made the warning an error.
void warnLowOccupancy(DispatcherState &D, const runtime::Dim3 &Grid);

// A NumPy array argument that the cuda target copies in and back: warns
// when the switch is on (each launch there, as Numba's); returns whether it
// warned. The cpu target, which copies nothing, warns once per kernel of
// what a GPU would cost, and says so (Note): warnImplicitCopyOnce.
bool warnImplicitCopy(const char *Note = "");
void warnImplicitCopyOnce(DispatcherState &D);

// Whether a NumPy array argument (ArgKind::HostArray) is one the cuda target
// would copy: any but mapped and managed memory (tidal.cuda.host_memory),
// which the cpu target also reads as NumPy arrays.
bool wouldCopyOnCudaTarget(PyObject *HostArray);

} // namespace tidal::binding

#endif
