// _tidal's functions for host memory on the cuda target (tidal.cuda.memory's
// pinned_array, mapped_array, managed_array, pinned and mapped): each returns
// a capsule that owns the C++ object (freed, or unregistered, when the capsule
// is collected) with the memory's host address and device pointer as ints.
// Device 0's context.
#include "Capsules.h"
#include "Errors.h"
#include "ModuleParts.h"

#include "tidal/runtime/CudaMemory.h"

#include <memory>

namespace tidal::binding {

using frontend::PyRef;

namespace {

unsigned long long addressOf(const void *Pointer) {
  return reinterpret_cast<unsigned long long>(Pointer);
}

// cuda_host_alloc(bytes, mapped, portable, wc) -> (capsule, host address, device pointer)
PyObject *module_cuda_host_alloc(PyObject *, PyObject *Args) {
  unsigned long long Bytes;
  int Mapped, Portable, WriteCombined;
  if (!PyArg_ParseTuple(Args, "Kppp", &Bytes, &Mapped, &Portable, &WriteCombined))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    runtime::CudaHostAllocation::Options Opts;
    Opts.Mapped = Mapped;
    Opts.Portable = Portable;
    Opts.WriteCombined = WriteCombined;
    auto Memory = std::make_unique<runtime::CudaHostAllocation>(runtime::CudaContext::forDevice(0),
                                                                static_cast<size_t>(Bytes), Opts);
    unsigned long long Host = addressOf(Memory->host()), Device = Memory->device();
    PyRef Capsule = capsuleOwning(std::move(Memory), HostAllocationCapsule);
    return Py_BuildValue("(OKK)", Capsule.get(), Host, Device);
  });
}

// cuda_host_register(address, bytes, mapped) -> (capsule, device pointer)
PyObject *module_cuda_host_register(PyObject *, PyObject *Args) {
  unsigned long long Address, Bytes;
  int Mapped;
  if (!PyArg_ParseTuple(Args, "KKp", &Address, &Bytes, &Mapped))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    auto Registration = std::make_unique<runtime::CudaHostRegistration>(
        runtime::CudaContext::forDevice(0), reinterpret_cast<void *>(Address),
        static_cast<size_t>(Bytes), Mapped);
    unsigned long long Device = Registration->device();
    PyRef Capsule = capsuleOwning(std::move(Registration), HostRegistrationCapsule);
    return Py_BuildValue("(OK)", Capsule.get(), Device);
  });
}

// cuda_host_unregister(capsule): cuMemHostUnregister now (the end of
// cuda.pinned's or cuda.mapped's block); then the capsule holds nothing.
PyObject *module_cuda_host_unregister(PyObject *, PyObject *Capsule) {
  if (!PyCapsule_IsValid(Capsule, HostRegistrationCapsule)) {
    PyErr_Format(PyExc_TypeError, "cuda_host_unregister takes a %s capsule, not %s",
                 HostRegistrationCapsule, Py_TYPE(Capsule)->tp_name);
    return nullptr;
  }
  auto *Registration = static_cast<runtime::CudaHostRegistration *>(
      PyCapsule_GetPointer(Capsule, HostRegistrationCapsule));
  return translateErrors([&]() -> PyObject * {
    Registration->release();
    Py_RETURN_NONE;
  });
}

// cuda_managed_alloc(bytes, attach_global) -> (capsule, pointer): one address
// for the host and the device.
PyObject *module_cuda_managed_alloc(PyObject *, PyObject *Args) {
  unsigned long long Bytes;
  int AttachGlobal;
  if (!PyArg_ParseTuple(Args, "Kp", &Bytes, &AttachGlobal))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    auto Memory = std::make_unique<runtime::CudaManagedAllocation>(
        runtime::CudaContext::forDevice(0), static_cast<size_t>(Bytes), AttachGlobal);
    unsigned long long Pointer = Memory->pointer();
    PyRef Capsule = capsuleOwning(std::move(Memory), ManagedAllocationCapsule);
    return Py_BuildValue("(OK)", Capsule.get(), Pointer);
  });
}

PyMethodDef HostMemoryMethods[] = {
    {"cuda_host_alloc", module_cuda_host_alloc, METH_VARARGS,
     "cuda_host_alloc(bytes, mapped, portable, wc): (memory, host address, device pointer "
     "or 0) of cuMemHostAlloc."},
    {"cuda_host_register", module_cuda_host_register, METH_VARARGS,
     "cuda_host_register(address, bytes, mapped): (registration, device pointer or 0) of "
     "cuMemHostRegister."},
    {"cuda_host_unregister", module_cuda_host_unregister, METH_O,
     "cuda_host_unregister(registration): cuMemHostUnregister now."},
    {"cuda_managed_alloc", module_cuda_managed_alloc, METH_VARARGS,
     "cuda_managed_alloc(bytes, attach_global): (memory, pointer) of cuMemAllocManaged."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int addHostMemoryFunctions(PyObject *Module) {
  return PyModule_AddFunctions(Module, HostMemoryMethods);
}

} // namespace tidal::binding
