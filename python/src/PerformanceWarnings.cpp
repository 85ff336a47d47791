// Numba's performance warnings on the cuda target (PerformanceWarnings.h).
#include "PerformanceWarnings.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tidal::binding {

using namespace tidal::frontend;

namespace {

// The switch: TIDAL_<Name>, else NUMBA_<Name>, else on.
bool switchedOn(const char *Name) {
  for (const char *Prefix : {"TIDAL_", "NUMBA_"}) {
    std::string Variable = std::string(Prefix) + Name;
    if (const char *Value = std::getenv(Variable.c_str()); Value && *Value)
      return std::strcmp(Value, "0") != 0;
  }
  return true;
}

void warn(const std::string &Message) {
  static PyObject *Category = [] {
    PyRef Errors = importModule("tidal.errors");
    return Errors.attr("PerformanceWarning").release(); // kept for the process
  }();
  if (PyErr_WarnEx(Category, Message.c_str(), 1) < 0)
    throw PythonErrorSet();
}

} // namespace

void warnLowOccupancy(DispatcherState &D, const runtime::Dim3 &Grid) {
  constexpr uint64_t MinimumBlocks = 128; // Numba's heuristic
  uint64_t Blocks = static_cast<uint64_t>(Grid[0]) * Grid[1] * Grid[2];
  if (Blocks >= MinimumBlocks || D.Target != TargetKind::Cuda)
    return;
  auto &Warned = D.LowOccupancyWarned;
  if (std::find(Warned.begin(), Warned.end(), Blocks) != Warned.end())
    return;
  if (!switchedOn("CUDA_LOW_OCCUPANCY_WARNINGS"))
    return;
  Warned.push_back(Blocks);
  warn("Grid size " + std::to_string(Blocks) +
       " will likely result in GPU under-utilization due to low occupancy.");
}

void warnImplicitCopy() {
  if (switchedOn("CUDA_WARN_ON_IMPLICIT_COPY"))
    warn("Host array used in CUDA kernel will incur copy overhead to/from device.");
}

} // namespace tidal::binding
