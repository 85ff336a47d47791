// The cpu target's fitted block functions, built at the first launch that
// can run one (FittedBlocks.cpp, docs/cpu-target.md).
#ifndef TIDAL_BINDING_FITTEDBLOCKS_H
#define TIDAL_BINDING_FITTEDBLOCKS_H

#include "Dispatcher.h"

namespace tidal::binding {

// The block function a launch of S over Grid blocks of Block threads with
// the packed Params runs: S's fitted block function when the launch meets
// its block conditions and S's fitting launches, this one included, have
// run at least S.FittedAfterThreads threads (built now, at the first such
// launch), else S.Block. A block of more than one row gets a fitted
// function specialised to its shape (up to 4 shapes per kernel; others run
// S.Block). Call with the GIL held.
TidalBlockFunction cpuBlockFunctionFor(const DispatcherState &D, Specialization &S,
                                       const runtime::Dim3 &Grid, const runtime::Dim3 &Block,
                                       void **Params);

// How many threads a kernel's fitting launches run before its fitted block
// function is built: TIDAL_CPU_FITTED_THREADS (0: at the first fitting
// launch), by default 2^20, so that kernels launched a few times over small
// arrays (a test suite, a notebook's checks) never pay for the second
// compile, and a kernel that does real work builds it within its first
// launches.
uint64_t fittedBlockThreshold();

} // namespace tidal::binding

#endif
