// LLVM_DEBUG, -debug-only and -stats for the plugin's passes also where
// libLLVM is built with NDEBUG (Debian's LLVM 19, whose opt has no
// -debug-only and prints no statistics): a pass that includes this header
// after llvm/Support/Debug.h prints its LLVM_DEBUG output under
// `-debug-only=<its DEBUG_TYPE>` or `-debug`, which DebugOutput.cpp
// registers when libLLVM did not, and its TIDAL_STATISTIC counters under
// `-stats` (docs/plugin.md).
#ifndef TIDAL_DEBUGOUTPUT_H
#define TIDAL_DEBUGOUTPUT_H

#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

namespace tidal {

// True if `-debug` is on and `-debug-only` is unset or names `Type`.
bool isDebugOutputEnabled(const char *Type);

// Under -stats, after a pass counted: has the counters printed when LLVM
// shuts down (llvm_shutdown), which a libLLVM built with NDEBUG does not do
// itself. Nothing without -stats.
void printStatisticsAtShutdown();

} // namespace tidal

// A counter that counts in every build (Statistic.h's STATISTIC counts
// nothing under NDEBUG); a pass calls printStatisticsAtShutdown() once it
// has counted.
#define TIDAL_STATISTIC(VARNAME, DESC) ALWAYS_ENABLED_STATISTIC(VARNAME, DESC)

namespace tidal {
} // namespace tidal

#undef DEBUG_WITH_TYPE
#define DEBUG_WITH_TYPE(TYPE, ...)                                             \
  do {                                                                         \
    if (::tidal::isDebugOutputEnabled(TYPE)) {                                 \
      __VA_ARGS__;                                                             \
    }                                                                          \
  } while (false)
#undef LLVM_DEBUG
#define LLVM_DEBUG(...) DEBUG_WITH_TYPE(DEBUG_TYPE, __VA_ARGS__)

#endif
