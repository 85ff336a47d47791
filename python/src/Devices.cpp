// The CUDA driver's devices (tidal.cuda.devices): their facts, the calling
// thread's current device, and the driver's state.
#include "Devices.h"

#include "Errors.h"
#include "ModuleParts.h"

#include "tidal/runtime/CudaDevice.h"
#include "tidal/runtime/CudaDriver.h"
#include "tidal/runtime/CudaMemory.h"
#include "tidal/runtime/CudaTarget.h"

#include <climits>

namespace tidal::binding {

using namespace tidal::frontend;

int deviceOrdinalArgument(PyObject *Ordinal) {
  if (Ordinal == Py_None)
    return runtime::currentDeviceOrdinal();
  if (!PyLong_Check(Ordinal) || PyBool_Check(Ordinal))
    throw std::invalid_argument("a device id must be an int or None");
  int Overflow = 0;
  long Value = PyLong_AsLongAndOverflow(Ordinal, &Overflow);
  return Overflow || Value < INT_MIN || Value > INT_MAX ? -1 : static_cast<int>(Value);
}

namespace {

// driver_status(): (usable, device count, reason, library path).
PyObject *module_driver_status(PyObject *, PyObject *) {
  return translateErrors([&]() -> PyObject * {
    runtime::CudaDriver &D = runtime::CudaDriver::get();
    return Py_BuildValue("(Oiss)", D.usable() ? Py_True : Py_False, D.deviceCount(),
                         D.reason().c_str(), D.libraryPath().c_str());
  });
}

// cuda_driver_version(): cuDriverGetVersion (1000 * major + 10 * minor), or
// None when no usable driver loads (tidal.cuda.runtime).
PyObject *module_cuda_driver_version(PyObject *, PyObject *) {
  return translateErrors([&]() -> PyObject * {
    const runtime::CudaDriver &D = runtime::CudaDriver::get();
    int Version = 0;
    if (!D.usable() || D.api().DriverGetVersion(&Version) != runtime::cu::Success)
      Py_RETURN_NONE;
    return PyLong_FromLong(Version);
  });
}

// cuda_synchronize(ordinal=None): cuCtxSynchronize of a device's context.
PyObject *module_cuda_synchronize(PyObject *, PyObject *Args) {
  PyObject *Ordinal = Py_None;
  if (!PyArg_ParseTuple(Args, "|O", &Ordinal))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    runtime::CudaContext &Context = runtime::CudaContext::forDevice(deviceOrdinalArgument(Ordinal));
    withoutGIL([&] {
      runtime::ScopedCurrentContext Current(Context);
      Context.synchronize();
    });
    Py_RETURN_NONE;
  });
}

// which allocations, streams, events and launches use.

// cuda_profile(start): cuProfilerStart (true) or cuProfilerStop (false) in
// the current device's context (tidal.cuda.profile_start / profile_stop).
PyObject *module_cuda_profile(PyObject *, PyObject *Args) {
  int Start = 0;
  if (!PyArg_ParseTuple(Args, "p", &Start))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    runtime::CudaContext &Context = runtime::CudaContext::forDevice(deviceOrdinalArgument(Py_None));
    withoutGIL([&] {
      runtime::ScopedCurrentContext Current(Context);
      const runtime::CudaDriver &Driver = Context.driver();
      Driver.check(Start ? Driver.api().ProfilerStart() : Driver.api().ProfilerStop(),
                   Start ? "cuProfilerStart" : "cuProfilerStop");
    });
    Py_RETURN_NONE;
  });
}

// cuda_device_count(): the driver's devices (RuntimeError with the driver's
// reason when it is not usable).
PyObject *module_cuda_device_count(PyObject *, PyObject *) {
  return translateErrors([&]() -> PyObject * {
    const runtime::CudaDriver &Driver = runtime::CudaDriver::get();
    Driver.requireUsable();
    return PyLong_FromLong(Driver.deviceCount());
  });
}

PyObject *dim3Tuple(runtime::Dim3 D) { return Py_BuildValue("(III)", D[0], D[1], D[2]); }

// cuda_device_info(ordinal): the facts read once per device, as a dict.
PyObject *module_cuda_device_info(PyObject *, PyObject *Ordinal) {
  return translateErrors([&]() -> PyObject * {
    const runtime::CudaDevice &Device = runtime::CudaDevice::get(deviceOrdinalArgument(Ordinal));
    const runtime::CudaDeviceLimits &L = Device.limits();
    PyRef Block = PyRef::check(dim3Tuple(L.MaxBlockDim));
    PyRef Grid = PyRef::check(dim3Tuple(L.MaxGridDim));
    return Py_BuildValue(
        "{sisss(ii)sssKsisisisOsOsisi}", "id", Device.ordinal(), "name", Device.name().c_str(),
        "compute_capability", L.ComputeMajor, L.ComputeMinor, "uuid", Device.uuidText().c_str(),
        "total_memory", (unsigned long long)Device.totalMemory(), "multiprocessor_count",
        Device.multiprocessorCount(), "warp_size", Device.warpSize(), "max_threads_per_block",
        L.MaxThreadsPerBlock, "max_block_dim", Block.get(), "max_grid_dim", Grid.get(),
        "max_shared_memory_per_block", L.MaxSharedPerBlock, "max_shared_memory_per_block_optin",
        L.MaxSharedPerBlockOptin);
  });
}

// cuda_device_attribute(ordinal, attribute): cuDeviceGetAttribute, the
// attribute by its CUdevice_attribute number or its name ("WARP_SIZE").
PyObject *module_cuda_device_attribute(PyObject *, PyObject *Args) {
  PyObject *Ordinal, *Attribute;
  if (!PyArg_ParseTuple(Args, "OO", &Ordinal, &Attribute))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    const runtime::CudaDevice &Device = runtime::CudaDevice::get(deviceOrdinalArgument(Ordinal));
    int Number;
    if (PyUnicode_Check(Attribute)) {
      const char *Name = PyUnicode_AsUTF8(Attribute);
      if (!Name)
        return nullptr;
      Number = runtime::cudaDeviceAttributeNumber(Name);
      if (Number < 0) {
        PyErr_Format(PyExc_ValueError,
                     "unknown CUDA device attribute '%s' (expected a CUdevice_attribute name "
                     "less CU_DEVICE_ATTRIBUTE_, such as 'MULTIPROCESSOR_COUNT')",
                     Name);
        return nullptr;
      }
    } else if (PyLong_Check(Attribute) && !PyBool_Check(Attribute)) {
      int Overflow = 0;
      long Value = PyLong_AsLongAndOverflow(Attribute, &Overflow);
      // The driver rejects -1 as it rejects any number it does not know.
      Number = Overflow || Value < INT_MIN || Value > INT_MAX ? -1 : static_cast<int>(Value);
    } else {
      throw std::invalid_argument("a device attribute must be a name (str) or a "
                                  "CUdevice_attribute number (int)");
    }
    return PyLong_FromLong(Device.attribute(Number));
  });
}

// cuda_device_attributes(): {name: CUdevice_attribute number} of cuda.h.
PyObject *module_cuda_device_attributes(PyObject *, PyObject *) {
  return translateErrors([&]() -> PyObject * {
    PyRef Names = PyRef::check(PyDict_New());
    for (const runtime::CudaDeviceAttributeName &A : runtime::cudaDeviceAttributeNames()) {
      PyRef Number = PyRef::check(PyLong_FromLong(A.Number));
      if (PyDict_SetItemString(Names.get(), A.Name, Number.get()) < 0)
        return nullptr;
    }
    return Names.release();
  });
}

// cuda_select_device(ordinal): makes the device current on this thread
// (ValueError naming the device count for a bad ordinal); None forgets the
// selection (device 0 is used) and leaves no context current.
PyObject *module_cuda_select_device(PyObject *, PyObject *Ordinal) {
  return translateErrors([&]() -> PyObject * {
    if (Ordinal == Py_None)
      runtime::deselectDevice();
    else
      runtime::selectDevice(deviceOrdinalArgument(Ordinal));
    Py_RETURN_NONE;
  });
}

// cuda_current_device(): the device selected on this thread, or None when
// none is (kernels and allocations then use device 0).
PyObject *module_cuda_current_device(PyObject *, PyObject *) {
  int Ordinal = runtime::selectedDeviceOrdinal();
  if (Ordinal < 0)
    Py_RETURN_NONE;
  return PyLong_FromLong(Ordinal);
}

// cuda_close(): waits for the work of every device used so far, returns the
// caching allocators' free blocks to the driver and forgets the thread's
// selection. The primary contexts stay retained: loaded kernels and live
// arrays remain valid.
PyObject *module_cuda_close(PyObject *, PyObject *) {
  return translateErrors([&]() -> PyObject * {
    const runtime::CudaDriver &Driver = runtime::CudaDriver::get();
    if (Driver.usable()) {
      for (int Ordinal = 0; Ordinal < Driver.deviceCount(); ++Ordinal) {
        runtime::CudaContext *Context = runtime::CudaContext::existing(Ordinal);
        if (!Context || Context->faulted())
          continue;
        runtime::CudaAllocator &Allocator = runtime::CudaAllocator::forDevice(Ordinal);
        withoutGIL([&] {
          runtime::ScopedCurrentContext Current(*Context);
          Context->synchronize();
          Allocator.releaseCached();
        });
      }
    }
    runtime::deselectDevice();
    Py_RETURN_NONE;
  });
}

PyMethodDef DeviceMethods[] = {
    {"driver_status", module_driver_status, METH_NOARGS,
     "driver_status(): (usable, device_count, reason, library)."},
    {"cuda_driver_version", module_cuda_driver_version, METH_NOARGS,
     "cuda_driver_version(): cuDriverGetVersion's number, or None without a usable driver."},
    {"cuda_profile", module_cuda_profile, METH_VARARGS,
     "cuda_profile(start): cuProfilerStart or cuProfilerStop in the current device's context."},
    {"cuda_synchronize", module_cuda_synchronize, METH_VARARGS,
     "cuda_synchronize(ordinal=None): cuCtxSynchronize of a device's context."},
    {"cuda_device_count", module_cuda_device_count, METH_NOARGS,
     "cuda_device_count(): the CUDA driver's devices."},
    {"cuda_device_info", module_cuda_device_info, METH_O,
     "cuda_device_info(ordinal): name, compute capability, uuid, memory and limits (dict)."},
    {"cuda_device_attribute", module_cuda_device_attribute, METH_VARARGS,
     "cuda_device_attribute(ordinal, name_or_number): cuDeviceGetAttribute."},
    {"cuda_device_attributes", module_cuda_device_attributes, METH_NOARGS,
     "cuda_device_attributes(): {CUdevice_attribute name: number}."},
    {"cuda_select_device", module_cuda_select_device, METH_O,
     "cuda_select_device(ordinal): the thread's current device (None: none selected)."},
    {"cuda_current_device", module_cuda_current_device, METH_NOARGS,
     "cuda_current_device(): the device selected on this thread, or None (device 0 is used)."},
    {"cuda_close", module_cuda_close, METH_NOARGS,
     "cuda_close(): synchronise every used device, free cached blocks, forget the selection."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int addDeviceFunctions(PyObject *Module) { return PyModule_AddFunctions(Module, DeviceMethods); }
} // namespace tidal::binding
