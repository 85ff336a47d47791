// The C++ half of the disk cache of @cuda.jit(cache=True) (docs/cache.md):
// a specialisation, or a kernel's PTX, to and from the entries that the
// Python half (tidal.cuda.caching) keys, checks and writes.
#ifndef TIDAL_BINDING_DISPATCHERCACHE_H
#define TIDAL_BINDING_DISPATCHERCACHE_H

#include "Dispatcher.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tidal::binding {

// The specialisation of D for Types, read from D's cache (cpu: its object
// code linked into the JIT; cuda: its marker IR, whose PTX has entries of
// its own), or null when there is no usable entry (D.Cache is None, a miss,
// an entry that does not load: then the cache counts a miss and drops it).
std::unique_ptr<Specialization> loadCachedSpecialization(const DispatcherState &D,
                                                         const std::vector<frontend::Type> &Types);

// Writes S to D's cache (no-op without one). Object: the cpu target's code.
void saveSpecialization(const DispatcherState &D, const Specialization &S,
                        const runtime::CpuObject *Object);

// The PTX of S for sm_<SM> from D's cache, when it has it.
std::optional<std::string> loadCachedPTX(const DispatcherState &D, const Specialization &S,
                                         unsigned SM);
void savePTX(const DispatcherState &D, const Specialization &S, unsigned SM,
             const std::string &PTX);

} // namespace tidal::binding

#endif
