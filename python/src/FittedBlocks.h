// The cpu target's fitted block functions, built at the first launch that
// can run one (FittedBlocks.cpp, docs/cpu-target.md).
#ifndef TIDAL_BINDING_FITTEDBLOCKS_H
#define TIDAL_BINDING_FITTEDBLOCKS_H

#include "Dispatcher.h"

namespace tidal::binding {

// The block function a launch of S with blocks of Block threads and the
// packed Params runs: S's fitted block function when the launch meets its
// block conditions (built now, at the first such launch), else S.Block.
// Call with the GIL held.
TidalBlockFunction cpuBlockFunctionFor(const DispatcherState &D, Specialization &S,
                                       const runtime::Dim3 &Block, void **Params);

} // namespace tidal::binding

#endif
