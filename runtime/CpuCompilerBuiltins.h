// The compiler helper functions (libgcc / compiler-rt names) that the cpu
// target's JIT defines by address, because the process does not export them.
#ifndef TIDAL_RUNTIME_CPUCOMPILERBUILTINS_H
#define TIDAL_RUNTIME_CPUCOMPILERBUILTINS_H

#include <vector>

namespace tidal::runtime {

struct CompilerBuiltin {
  const char *Name;
  void *Address;
};

// Every helper this build can provide (the half-precision conversions only
// where the compiler has _Float16).
std::vector<CompilerBuiltin> compilerBuiltins();

} // namespace tidal::runtime

#endif
