// The cuda target's device memory (tidal.cuda.memory): allocations from the
// caching allocator, owned by capsules, copies, and the allocator's facts.
#include "Capsules.h"
#include "Devices.h"
#include "Errors.h"
#include "ModuleParts.h"

#include "tidal/runtime/CudaIpc.h"
#include "tidal/runtime/CudaMemory.h"
#include "tidal/runtime/CudaTarget.h"

#include <cstring>

namespace tidal::binding {

using namespace tidal::frontend;

namespace {

// cuda_alloc(bytes, stream) -> (allocation capsule, device pointer)
PyObject *module_cuda_alloc(PyObject *, PyObject *Args) {
  unsigned long long Bytes, Stream;
  if (!PyArg_ParseTuple(Args, "KK", &Bytes, &Stream))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    auto Allocation = std::make_unique<runtime::CudaAllocation>(
        runtime::CudaAllocator::forDevice(runtime::currentDeviceOrdinal()),
        static_cast<size_t>(Bytes), streamFromHandle(Stream));
    unsigned long long Pointer = Allocation->pointer();
    PyRef Capsule = capsuleOwning(std::move(Allocation), AllocationCapsule);
    return Py_BuildValue("(OK)", Capsule.get(), Pointer);
  });
}

// cuda_copy(kind, destination, source, bytes, stream, allocation): kind 0 host
// to device, 1 device to host, 2 device to device; pointers as ints; the
// allocation capsule (or None) is marked as used on the stream. The copy runs
// in the allocation's context (a null stream is its device's default
// stream), else in the current device's.
PyObject *module_cuda_copy(PyObject *, PyObject *Args) {
  int Kind;
  unsigned long long Destination, Source, Bytes, Stream;
  PyObject *Allocation = Py_None;
  if (!PyArg_ParseTuple(Args, "iKKKK|O", &Kind, &Destination, &Source, &Bytes, &Stream,
                        &Allocation))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    runtime::CudaAllocation *Owner =
        Allocation == Py_None
            ? nullptr
            : &capsuleObject<runtime::CudaAllocation>(Allocation, AllocationCapsule);
    runtime::CudaContext &Context = Owner ? Owner->context() : runtime::currentContext();
    Context.requireUsable();
    if (Owner)
      Owner->usedOn(streamFromHandle(Stream));
    withoutGIL([&] {
      runtime::ScopedCurrentContext Current(Context);
      const runtime::CudaDriver &Driver = Context.driver();
      if (Kind == 0)
        runtime::cudaCopyToDevice(Driver, Destination, reinterpret_cast<const void *>(Source),
                                  Bytes, streamFromHandle(Stream));
      else if (Kind == 1)
        runtime::cudaCopyToHost(Driver, reinterpret_cast<void *>(Destination), Source, Bytes,
                                streamFromHandle(Stream));
      else
        runtime::cudaCopyDeviceToDevice(Driver, Destination, Source, Bytes,
                                        streamFromHandle(Stream));
    });
    Py_RETURN_NONE;
  });
}

// The device an ordinal argument names (an int; TypeError otherwise), or the
// calling thread's current device for None. An int no device can have

// cuda_memory_stats(ordinal=None): the caching allocator of a device.
PyObject *module_cuda_memory_stats(PyObject *, PyObject *Args) {
  PyObject *Ordinal = Py_None;
  if (!PyArg_ParseTuple(Args, "|O", &Ordinal))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    runtime::CudaMemoryStats S =
        runtime::CudaAllocator::forDevice(deviceOrdinalArgument(Ordinal)).stats();
    return Py_BuildValue(
        "{sKsKsKsKsKsKsKsKsK}", "bytes_in_use", (unsigned long long)S.BytesInUse, "bytes_requested",
        (unsigned long long)S.BytesRequested, "bytes_cached", (unsigned long long)S.BytesCached,
        "bytes_pending", (unsigned long long)S.BytesPending, "driver_allocations",
        (unsigned long long)S.DriverAllocations, "driver_frees", (unsigned long long)S.DriverFrees,
        "live_driver_allocations", (unsigned long long)S.LiveDriverAllocations, "reuses",
        (unsigned long long)S.Reuses, "exported_allocations",
        (unsigned long long)S.ExportedAllocations);
  });
}

// cuda_memory_clear(ordinal=None): a device's cached blocks back to the driver.
PyObject *module_cuda_memory_clear(PyObject *, PyObject *Args) {
  PyObject *Ordinal = Py_None;
  if (!PyArg_ParseTuple(Args, "|O", &Ordinal))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    runtime::CudaAllocator &Allocator =
        runtime::CudaAllocator::forDevice(deviceOrdinalArgument(Ordinal));
    Py_BEGIN_ALLOW_THREADS Allocator.releaseCached();
    Py_END_ALLOW_THREADS Py_RETURN_NONE;
  });
}

// cuda_memory_info(ordinal=None): (free, total) of a device (cuMemGetInfo).
PyObject *module_cuda_memory_info(PyObject *, PyObject *Args) {
  PyObject *Ordinal = Py_None;
  if (!PyArg_ParseTuple(Args, "|O", &Ordinal))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    size_t Free = 0, Total = 0;
    runtime::CudaContext::forDevice(deviceOrdinalArgument(Ordinal)).memoryInfo(Free, Total);
    return Py_BuildValue("(KK)", (unsigned long long)Free, (unsigned long long)Total);
  });
}

// cuda_allocation_device(allocation): the device whose memory it is.
PyObject *module_cuda_allocation_device(PyObject *, PyObject *Allocation) {
  return translateErrors([&]() -> PyObject * {
    return PyLong_FromLong(
        capsuleObject<runtime::CudaAllocation>(Allocation, AllocationCapsule).context().ordinal());
  });
}

// cuda_close(): waits for the work of every device used so far, returns the
// caching allocators' free blocks to the driver and forgets the thread's
// selection. The primary contexts stay retained: loaded kernels and live

// cuda_ipc_export(pointer, allocation=None) -> (handle, base, allocation
// bytes, offset, device): the driver allocation holding a device pointer,
// exported for other processes (the handle: 64 bytes). The allocation
// capsule, when given, names the context; else the current device's.
PyObject *module_cuda_ipc_export(PyObject *, PyObject *Args) {
  unsigned long long Pointer;
  PyObject *Allocation = Py_None;
  if (!PyArg_ParseTuple(Args, "K|O", &Pointer, &Allocation))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    runtime::CudaAllocator &Allocator =
        Allocation == Py_None
            ? runtime::CudaAllocator::forDevice(runtime::currentDeviceOrdinal())
            : capsuleObject<runtime::CudaAllocation>(Allocation, AllocationCapsule).allocator();
    runtime::CudaIpcExport Export = runtime::cudaIpcExport(Allocator, Pointer);
    runtime::CudaContext &Context = Allocator.context();
    return Py_BuildValue("(y#KKKi)", Export.Handle.Reserved,
                         static_cast<Py_ssize_t>(runtime::cu::IpcHandleBytes),
                         static_cast<unsigned long long>(Export.Base),
                         static_cast<unsigned long long>(Export.AllocationBytes),
                         static_cast<unsigned long long>(Export.Offset), Context.ordinal());
  });
}

// cuda_ipc_open(handle) -> (mapping capsule, pointer): another process's
// allocation mapped in the current device's context.
PyObject *module_cuda_ipc_open(PyObject *, PyObject *Args) {
  const char *Bytes;
  Py_ssize_t Length;
  if (!PyArg_ParseTuple(Args, "y#", &Bytes, &Length))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    if (Length != static_cast<Py_ssize_t>(runtime::cu::IpcHandleBytes))
      throw std::invalid_argument("a CUDA IPC handle is 64 bytes, not " +
                                  std::to_string(Length));
    runtime::cu::IpcMemHandle Handle;
    std::memcpy(Handle.Reserved, Bytes, sizeof Handle.Reserved);
    auto Mapping =
        std::make_unique<runtime::CudaIpcMapping>(runtime::currentContext(), Handle);
    unsigned long long Pointer = Mapping->pointer();
    PyRef Capsule = capsuleOwning(std::move(Mapping), IpcMappingCapsule);
    return Py_BuildValue("(OK)", Capsule.get(), Pointer);
  });
}

// cuda_ipc_close(mapping): unmaps now (cuIpcCloseMemHandle); once only.
PyObject *module_cuda_ipc_close(PyObject *, PyObject *Mapping) {
  return translateErrors([&]() -> PyObject * {
    capsuleObject<runtime::CudaIpcMapping>(Mapping, IpcMappingCapsule).close();
    Py_RETURN_NONE;
  });
}

PyMethodDef MemoryMethods[] = {
    {"cuda_alloc", module_cuda_alloc, METH_VARARGS,
     "cuda_alloc(bytes, stream): (allocation, device pointer) from the caching allocator."},
    {"cuda_copy", module_cuda_copy, METH_VARARGS,
     "cuda_copy(kind, dst, src, bytes, stream, allocation=None): 0 HtoD, 1 DtoH, 2 DtoD."},
    {"cuda_memory_stats", module_cuda_memory_stats, METH_VARARGS,
     "cuda_memory_stats(ordinal=None): the caching allocator's statistics (dict) of a device "
     "(None: the current one)."},
    {"cuda_memory_clear", module_cuda_memory_clear, METH_VARARGS,
     "cuda_memory_clear(ordinal=None): returns a device's cached blocks to the driver."},
    {"cuda_memory_info", module_cuda_memory_info, METH_VARARGS,
     "cuda_memory_info(ordinal=None): (free, total) bytes of a device (cuMemGetInfo)."},
    {"cuda_allocation_device", module_cuda_allocation_device, METH_O,
     "cuda_allocation_device(allocation): the id of the device the memory is on."},
    {"cuda_ipc_export", module_cuda_ipc_export, METH_VARARGS,
     "cuda_ipc_export(pointer, allocation=None): (handle, base, allocation bytes, offset, "
     "device) of the driver allocation holding a device pointer (CUDA IPC)."},
    {"cuda_ipc_open", module_cuda_ipc_open, METH_VARARGS,
     "cuda_ipc_open(handle): (mapping, pointer) of another process's allocation."},
    {"cuda_ipc_close", module_cuda_ipc_close, METH_O,
     "cuda_ipc_close(mapping): unmaps another process's allocation now."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int addMemoryFunctions(PyObject *Module) { return PyModule_AddFunctions(Module, MemoryMethods); }
} // namespace tidal::binding
