// tidal._cxx: the module that links Clang (cxx/, tidal::cxx::compileCuda).
// Importing it gives compileCuda to tidal._tidal (_set_cxx_compiler), which
// compiles tidal.cuda.RawKernel's source with it (RawKernels.cpp); _tidal
// itself does not link libclang-cpp.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "CudaCompiler.h"

namespace {

// cache_counts(): the process's CUDA C++ compiles by where they came from.
PyObject *cacheCounts(PyObject *, PyObject *) {
  tidal::cxx::CacheCounts Counts = tidal::cxx::cacheCounts();
  return Py_BuildValue("{sKsKsKsK}", "memory_hits", (unsigned long long)Counts.MemoryHits,
                       "disk_hits", (unsigned long long)Counts.DiskHits, "disk_writes",
                       (unsigned long long)Counts.DiskWrites, "compiles",
                       (unsigned long long)Counts.Compiles);
}

PyMethodDef Methods[] = {
    {"cache_counts", cacheCounts, METH_NOARGS,
     "cache_counts(): the CUDA C++ compiles of this process: memory_hits, disk_hits, "
     "disk_writes, compiles (by clang)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef ModuleDefinition = {PyModuleDef_HEAD_INIT, "tidal._cxx",
                                "tidal's in-process CUDA C++ compiler (Clang).", -1, Methods};

} // namespace

PyMODINIT_FUNC PyInit__cxx() {
  PyObject *Module = PyModule_Create(&ModuleDefinition);
  if (!Module)
    return nullptr;
  PyObject *Tidal = PyImport_ImportModule("tidal._tidal");
  PyObject *Capsule =
      Tidal ? PyCapsule_New(reinterpret_cast<void *>(&tidal::cxx::compileCuda),
                            "tidal.cxx.compileCuda", nullptr)
            : nullptr;
  PyObject *Warnings =
      Capsule ? PyCapsule_New(reinterpret_cast<void *>(&tidal::cxx::takeCacheWarnings),
                              "tidal.cxx.takeCacheWarnings", nullptr)
              : nullptr;
  PyObject *Done = Warnings ? PyObject_CallMethod(Tidal, "_set_cxx_compiler", "OO", Capsule,
                                                  Warnings)
                            : nullptr;
  Py_XDECREF(Done);
  Py_XDECREF(Warnings);
  Py_XDECREF(Capsule);
  Py_XDECREF(Tidal);
  if (!Done) {
    Py_DECREF(Module);
    return nullptr;
  }
  return Module;
}
