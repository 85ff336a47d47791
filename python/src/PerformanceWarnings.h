// Numba's performance warnings on the cuda target (tidal.errors.PerformanceWarning,
// also named NumbaPerformanceWarning): a grid too small to fill a GPU, and a
// host array copied to and from the device at a launch. Each has Numba's
// environment switch, read when the warning would be given: TIDAL_ or
// NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS, TIDAL_ or NUMBA_CUDA_WARN_ON_IMPLICIT_COPY
// (default 1, as Numba's; 0 turns it off).
#ifndef TIDAL_BINDING_PERFORMANCEWARNINGS_H
#define TIDAL_BINDING_PERFORMANCEWARNINGS_H

#include "Dispatcher.h"

namespace tidal::binding {

// kernel[griddim, ...] on the cuda target with fewer than 128 blocks: warns,
// once per grid size and kernel (Numba warns once per cached configuration).
// Throws PythonErrorSet when a filter made the warning an error.
void warnLowOccupancy(DispatcherState &D, const runtime::Dim3 &Grid);

// A NumPy array argument that the cuda target copies in and back.
void warnImplicitCopy();

} // namespace tidal::binding

#endif
