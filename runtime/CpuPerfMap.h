// TIDAL_PERF_MAP=1: the cpu target's JIT-compiled functions are named in
// /tmp/perf-<pid>.map, the file `perf report` reads for code it finds in no
// ELF file, so a profile shows `__tidal_block_K` instead of a bare address.
#pragma once

#include "llvm/ExecutionEngine/Orc/LLJIT.h"

namespace tidal::runtime {

// True when the environment asks for the perf map (TIDAL_PERF_MAP set, not
// "0" or empty); read once per process.
bool perfMapRequested();

// Makes Jit's object linking layer write each linked function (its address,
// size and name) to /tmp/perf-<pid>.map. Does nothing when the JIT links
// with another layer than JITLink's.
void addPerfMapPlugin(llvm::orc::LLJIT &Jit);

} // namespace tidal::runtime
