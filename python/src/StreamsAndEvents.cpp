// The cuda target's streams and events (tidal.cuda.streams): C++ objects
// owned by capsules, made in the calling thread's current context.
#include "Capsules.h"
#include "Errors.h"
#include "ModuleParts.h"

#include "tidal/runtime/CudaMemory.h"
#include "tidal/runtime/CudaTarget.h"

namespace tidal::binding {

using namespace tidal::frontend;

namespace {

// cuda_stream_create() -> (stream capsule, CUstream handle)
PyObject *module_cuda_stream_create(PyObject *, PyObject *) {
  return translateErrors([&]() -> PyObject * {
    auto Stream = std::make_unique<runtime::CudaStream>(runtime::currentContext());
    unsigned long long Handle = reinterpret_cast<unsigned long long>(Stream->handle());
    PyRef Capsule = capsuleOwning(std::move(Stream), StreamCapsule);
    return Py_BuildValue("(OK)", Capsule.get(), Handle);
  });
}

// cuda_stream_synchronize(handle, stream=None): cuStreamSynchronize (0: the
// current device's default stream). A stream capsule (cuda.stream()'s) names
// the context the stream belongs to, which a kernel fault is reported for;
// without one, the current device's.
PyObject *module_cuda_stream_synchronize(PyObject *, PyObject *Args) {
  unsigned long long Handle;
  PyObject *StreamObject = Py_None;
  if (!PyArg_ParseTuple(Args, "K|O", &Handle, &StreamObject))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    runtime::CudaContext &Context =
        StreamObject == Py_None
            ? runtime::currentContext()
            : capsuleObject<runtime::CudaStream>(StreamObject, StreamCapsule).context();
    Context.requireUsable();
    runtime::cu::Result Result;
    Py_BEGIN_ALLOW_THREADS Result =
        Context.driver().api().StreamSynchronize(streamFromHandle(Handle));
    Py_END_ALLOW_THREADS Context.check(Result, "cuStreamSynchronize");
    Py_RETURN_NONE;
  });
}

// cuda_event_create(timing) -> event capsule
PyObject *module_cuda_event_create(PyObject *, PyObject *Args) {
  int Timing = 1;
  if (!PyArg_ParseTuple(Args, "|p", &Timing))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    auto Event = std::make_unique<runtime::CudaEvent>(runtime::currentContext(), Timing);
    PyRef Capsule = capsuleOwning(std::move(Event), EventCapsule);
    return Capsule.release();
  });
}

// cuda_event(what, event, stream_or_end): what is "record", "query",
// "synchronize", "wait" or "elapsed".
PyObject *module_cuda_event(PyObject *, PyObject *Args) {
  const char *What;
  PyObject *EventObject, *Other = Py_None;
  if (!PyArg_ParseTuple(Args, "sO|O", &What, &EventObject, &Other))
    return nullptr;
  return translateErrors([&]() -> PyObject * {
    runtime::CudaEvent &Event = capsuleObject<runtime::CudaEvent>(EventObject, EventCapsule);
    std::string Op = What;
    auto streamArg = [&] {
      unsigned long long Handle = PyLong_AsUnsignedLongLong(Other);
      if (PyErr_Occurred())
        throw std::invalid_argument("a stream handle must be an int");
      return streamFromHandle(Handle);
    };
    if (Op == "record") {
      Event.record(streamArg());
      Py_RETURN_NONE;
    }
    if (Op == "query")
      return PyBool_FromLong(Event.query());
    if (Op == "wait") {
      Event.waitOn(streamArg());
      Py_RETURN_NONE;
    }
    if (Op == "elapsed")
      return PyFloat_FromDouble(runtime::CudaEvent::elapsed(
          Event, capsuleObject<runtime::CudaEvent>(Other, EventCapsule)));
    if (Op == "synchronize") {
      withoutGIL([&] { Event.synchronize(); });
      Py_RETURN_NONE;
    }
    throw std::invalid_argument("unknown event operation " + Op);
  });
}

PyMethodDef StreamAndEventMethods[] = {
    {"cuda_stream_create", module_cuda_stream_create, METH_NOARGS,
     "cuda_stream_create(): (stream, CUstream handle)."},
    {"cuda_stream_synchronize", module_cuda_stream_synchronize, METH_VARARGS,
     "cuda_stream_synchronize(handle, stream=None): cuStreamSynchronize."},
    {"cuda_event_create", module_cuda_event_create, METH_VARARGS,
     "cuda_event_create(timing=True): an event."},
    {"cuda_event", module_cuda_event, METH_VARARGS, "cuda_event(what, event, stream_or_end=None)."},
    {nullptr, nullptr, 0, nullptr}};

} // namespace

int addStreamAndEventFunctions(PyObject *Module) {
  return PyModule_AddFunctions(Module, StreamAndEventMethods);
}
} // namespace tidal::binding
