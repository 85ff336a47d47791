// Numba's performance warnings (PerformanceWarnings.h).
#include "PerformanceWarnings.h"
#include "ModuleParts.h"
#include "NumPy.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tidal::binding {

using namespace tidal::frontend;

namespace {

// pause_performance_warnings(True) on this thread: the library's launch
// sequences whose grids it chooses (ufunc.reduce's halving steps). Read at
// every launch: initial-exec, one load rather than a call of __tls_get_addr.
__attribute__((tls_model("initial-exec"))) thread_local bool Paused = false;

// A warning's switch: tidal's environment variable, Numba's config name and
// Numba's environment variable.
struct Switch {
  const char *TidalVariable;
  const char *ConfigName;
  const char *NumbaVariable;
};

constexpr Switch LowOccupancySwitch{"TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS",
                                    "CUDA_LOW_OCCUPANCY_WARNINGS",
                                    "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"};
constexpr Switch ImplicitCopySwitch{"TIDAL_CUDA_WARN_ON_IMPLICIT_COPY",
                                    "CUDA_WARN_ON_IMPLICIT_COPY",
                                    "NUMBA_CUDA_WARN_ON_IMPLICIT_COPY"};

// An environment variable's word: 1 on, 0 off ("0"), -1 not set (or empty).
int environmentSwitch(const char *Variable) {
  const char *Value = std::getenv(Variable);
  if (!Value || !*Value)
    return -1;
  return std::strcmp(Value, "0") != 0;
}

// Whether the warning is on, read each time it would be given:
// 1. TIDAL_<name> when set;
// 2. else numba.core.config.<name> when the program has imported Numba's
//    config (it is never imported here): code written for Numba sets the
//    switch there, as Numba's test cases do (override_config);
// 3. else NUMBA_<name>;
// 4. else on, as Numba's default.
bool switchedOn(const Switch &S) {
  if (int Tidal = environmentSwitch(S.TidalVariable); Tidal >= 0)
    return Tidal;
  static PyObject *ConfigModule = PyUnicode_InternFromString("numba.core.config");
  PyRef Config = PyRef::steal(PyImport_GetModule(ConfigModule));
  if (!Config && PyErr_Occurred())
    throw PythonErrorSet();
  if (Config) {
    PyRef Value = PyRef::steal(PyObject_GetAttrString(Config.get(), S.ConfigName));
    if (Value) {
      int On = PyObject_IsTrue(Value.get());
      if (On < 0)
        throw PythonErrorSet();
      return On;
    }
    PyErr_Clear(); // an older Numba without this switch
  }
  return environmentSwitch(S.NumbaVariable) != 0;
}

// The stack level of the first frame outside tidal's package: a launch
// that kernel.forall or a ufunc makes is reported at the user's line, as
// the user's own kernel[...] is.
int userStackLevel() {
  static const std::string PackageFolder = [] {
    PyRef Tidal = importModule("tidal");
    std::string File = Tidal.attr("__file__").str();
    return File.substr(0, File.rfind('/') + 1);
  }();
  int Level = 1;
  PyRef Frame = PyRef::borrow(reinterpret_cast<PyObject *>(PyEval_GetFrame()));
  while (Frame) {
    auto *Current = reinterpret_cast<PyFrameObject *>(Frame.get());
    PyRef Code = PyRef::steal(reinterpret_cast<PyObject *>(PyFrame_GetCode(Current)));
    PyRef File = PyRef::steal(PyObject_GetAttrString(Code.get(), "co_filename"));
    const char *Name = File ? PyUnicode_AsUTF8(File.get()) : nullptr;
    if (!Name) {
      PyErr_Clear();
      break;
    }
    if (std::strncmp(Name, PackageFolder.c_str(), PackageFolder.size()) != 0)
      break;
    ++Level;
    Frame = PyRef::steal(reinterpret_cast<PyObject *>(PyFrame_GetBack(Current)));
  }
  return Level;
}

void warn(const std::string &Message) {
  static PyObject *Category = [] {
    PyRef Errors = importModule("tidal.errors");
    return Errors.attr("PerformanceWarning").release(); // kept for the process
  }();
  if (PyErr_WarnEx(Category, Message.c_str(), userStackLevel()) < 0)
    throw PythonErrorSet();
}

} // namespace

void warnLowOccupancy(DispatcherState &D, const runtime::Dim3 &Grid) {
  constexpr uint64_t MinimumBlocks = 128; // Numba's heuristic
  uint64_t Blocks = static_cast<uint64_t>(Grid[0]) * Grid[1] * Grid[2];
  if (Blocks >= MinimumBlocks || !D.PerformanceWarnings || Paused)
    return;
  auto &Warned = D.LowOccupancyWarned;
  if (std::find(Warned.begin(), Warned.end(), Blocks) != Warned.end())
    return;
  if (!switchedOn(LowOccupancySwitch))
    return;
  warn("Grid size " + std::to_string(Blocks) +
       " will likely result in GPU under-utilization due to low occupancy.");
  Warned.push_back(Blocks); // after a filter that made it an error, it warns again
}

bool warnImplicitCopy(const char *Note) {
  if (Paused || !switchedOn(ImplicitCopySwitch))
    return false;
  warn(std::string("Host array used in CUDA kernel will incur copy overhead to/from device.") +
       Note);
  return true;
}

void warnImplicitCopyOnce(DispatcherState &D) {
  if (!D.ImplicitCopyWarned && D.PerformanceWarnings)
    D.ImplicitCopyWarned = warnImplicitCopy(
        " (On a GPU; the cpu target reads host arrays in place, without copies.)");
}

bool wouldCopyOnCudaTarget(PyObject *HostArray) {
  if (PyArray_CheckExact(HostArray))
    return true;
  // mapped_array and managed_array (tidal.cuda.host_memory): memory a GPU
  // reads in place.
  static PyObject *Marker = PyUnicode_InternFromString("__cuda_memory__");
  PyObject *Found = _PyType_Lookup(Py_TYPE(HostArray), Marker); // borrowed
  return !(Found && PyObject_IsTrue(Found) == 1);
}

namespace {

// pause_performance_warnings(pause) -> whether they were paused on this thread.
PyObject *module_pause_performance_warnings(PyObject *, PyObject *Pause) {
  int On = PyObject_IsTrue(Pause);
  if (On < 0)
    return nullptr;
  bool Was = Paused;
  Paused = On;
  return PyBool_FromLong(Was);
}

PyMethodDef PerformanceWarningMethods[] = {
    {"pause_performance_warnings", module_pause_performance_warnings, METH_O,
     "pause_performance_warnings(pause): no performance warnings on this thread while "
     "paused; returns whether they were paused."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int addPerformanceWarningFunctions(PyObject *Module) {
  return PyModule_AddFunctions(Module, PerformanceWarningMethods);
}

} // namespace tidal::binding
