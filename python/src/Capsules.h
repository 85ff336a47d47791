// The cuda target's C++ objects handed to Python: each is owned by a capsule
// (the Python object holds the capsule), and destroyed (memory given back to
// the caching allocator, cuStreamDestroy, cuEventDestroy, ...) when the
// capsule is collected.
#ifndef TIDAL_BINDING_CAPSULES_H
#define TIDAL_BINDING_CAPSULES_H

#include "PyRef.h"

#include "tidal/runtime/CudaDriver.h"

#include <memory>
#include <stdexcept>
#include <string>

namespace tidal::binding {

constexpr const char *AllocationCapsule = "tidal.CudaAllocation";
constexpr const char *StreamCapsule = "tidal.CudaStream";
constexpr const char *EventCapsule = "tidal.CudaEvent";
constexpr const char *HostAllocationCapsule = "tidal.CudaHostAllocation";
constexpr const char *HostRegistrationCapsule = "tidal.CudaHostRegistration";
constexpr const char *ManagedAllocationCapsule = "tidal.CudaManagedAllocation";
constexpr const char *IpcMappingCapsule = "tidal.CudaIpcMapping";

// Hands Object to a new capsule named Name that deletes it when collected.
template <typename T> frontend::PyRef capsuleOwning(std::unique_ptr<T> Object, const char *Name) {
  frontend::PyRef Capsule =
      frontend::PyRef::check(PyCapsule_New(Object.get(), Name, [](PyObject *C) {
        delete static_cast<T *>(PyCapsule_GetPointer(C, PyCapsule_GetName(C)));
      }));
  Object.release();
  return Capsule;
}

// The object a capsule named Name owns; std::invalid_argument (TypeError)
// for anything else.
template <typename T> T &capsuleObject(PyObject *Capsule, const char *Name) {
  auto *Object = static_cast<T *>(PyCapsule_GetPointer(Capsule, Name));
  if (!Object)
    throw std::invalid_argument(std::string("expected a ") + Name);
  return *Object;
}

inline runtime::cu::Stream streamFromHandle(unsigned long long Handle) {
  return reinterpret_cast<runtime::cu::Stream>(Handle);
}

} // namespace tidal::binding

#endif
