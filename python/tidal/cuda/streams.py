"""Streams and events: numba.cuda's cuda.stream(), cuda.event(), ...

On the cpu target every operation (a launch, a copy) has finished when the
call that issues it returns, so a stream only orders work, which program
order already does: synchronize() has nothing to wait for, and an event
completes when it is recorded, with the host's clock (time.perf_counter_ns)
as its timestamp. elapsed_time() is then the host time between two
record() calls, which includes the work issued between them.

On the cuda target cuda.stream() creates a CUstream and cuda.event() a
CUevent (C++ objects the Stream and Event hold, destroyed with them); a
stream's handle is the CUstream, so int(stream) is what the driver takes.

``stream.handle`` is a StreamHandle: the CUstream as an int (what Numba's
NVIDIA-binding handles give to int()) that also has the ``.value`` of
Numba's ctypes handles (c_void_p: None for the default stream's 0). On the
cpu target a stream made by cuda.stream() has a handle of its own too,
counted up from 16 and never reused in the process, so that a
__cuda_array_interface__ "stream" names it, and an array made from one
gets back a stream (external) with the same handle.

A stream or an event belongs to the target it was made on (its ``target``);
using it on the other one raises ValueError. The default streams belong to
every target.
"""

import asyncio
import contextlib
import itertools
import time

from ._native import native
from .target import current_target as _current_target, on_cuda

# Numba's handles of the three default streams (CU_STREAM_DEFAULT, _LEGACY,
# _PER_THREAD); streams made by cuda.stream() count up from 16.
_DEFAULT, _LEGACY, _PER_THREAD = 0, 1, 2
_handles = itertools.count(16)


class StreamHandle(int):
    """A stream's handle: the CUstream as an int (int(h), h == 0x1234, as
    Numba's handles with the NVIDIA binding), with ctypes' ``value`` (as
    Numba's c_void_p handles: the int, or None for 0, the default
    stream)."""

    __slots__ = ()

    @property
    def value(self):
        return int(self) or None

    def __repr__(self):
        return f"StreamHandle({int(self):#x})"


def _check_same_target(what, target, stream):
    """Raises ValueError when `stream` was made on another target than
    `target` (the target of `what`, which is used with it)."""
    other = getattr(stream, "target", None)
    if other is not None and target is not None and other != target:
        raise ValueError(f"{what} was made on the {target} target but is used with a stream "
                         f"made on the {other} target: each belongs to the target it was "
                         f"made on")


def _stream_handle(stream):
    """The CUstream of a stream argument (0 for the default stream)."""
    return int(stream) if stream else 0


class Stream:
    """A CUDA stream (a queue of work). On the cpu target work runs when it
    is issued, so a stream is always complete."""

    __slots__ = ("handle", "external", "target", "_tidal_stream", "__weakref__")

    def __init__(self, handle, external=False, owner=None, target=None):
        self.handle = StreamHandle(handle)
        self.external = external
        self.target = target  # 'cpu' or 'cuda'; None for the default streams (every target)
        self._tidal_stream = owner  # cuda target: the CUstream's owner

    def __int__(self):
        return int.__int__(self.handle)

    def __repr__(self):
        default = {_DEFAULT: "Default", _LEGACY: "Legacy default",
                   _PER_THREAD: "Per-thread default"}.get(self.handle)
        target = self.target or _current_target()
        if default:
            return f"<{default} CUDA stream on the tidal {target} target>"
        external = "External CUDA" if self.external else "CUDA"
        return f"<{external} stream {int(self):#x} on the tidal {target} target>"

    def synchronize(self):
        """Waits for the work issued to this stream (cuStreamSynchronize on
        the cuda target; on the cpu target it has all finished already)."""
        if (self.target or _current_target()) == "cuda":
            native.cuda_stream_synchronize(int(self), self._tidal_stream)

    @contextlib.contextmanager
    def auto_synchronize(self):
        """with stream.auto_synchronize(): ... synchronizes on leaving."""
        yield self
        self.synchronize()

    def add_callback(self, callback, arg=None):
        """Calls callback(stream, status, arg) once the work issued so far is
        done: at once on the cpu target (status 0); after synchronising the
        stream on the cuda target."""
        self.synchronize()
        callback(self, 0, arg)

    def async_done(self):
        """An asyncio future that resolves (to this stream) when the work
        issued so far is done: already resolved on the cpu target."""
        future = asyncio.get_running_loop().create_future()
        self.synchronize()
        future.set_result(self)
        return future


def _check_stream(stream):
    """A stream argument: 0 (or None) for the default stream, or a Stream."""
    if stream is None or isinstance(stream, Stream):
        return stream or 0
    if isinstance(stream, int) and not isinstance(stream, bool) and stream == 0:
        return 0
    raise TypeError(f"a stream argument is a cuda.stream() (or 0 for the default stream), "
                    f"not {stream!r}")


_default_stream = Stream(_DEFAULT)
_legacy_default_stream = Stream(_LEGACY)
_per_thread_default_stream = Stream(_PER_THREAD)


def stream():
    """A new stream (a CUstream on the cuda target)."""
    if on_cuda():
        owner, handle = native.cuda_stream_create()
        return Stream(handle, owner=owner, target="cuda")
    return Stream(next(_handles), target="cpu")


def external_stream(ptr):
    """A Stream over a CUstream that another library made (CuPy's
    ``stream.ptr``, PyTorch's ``stream.cuda_stream``), as Numba's: tidal
    uses it and never destroys it; the caller keeps it alive. On the cpu
    target work runs when it is issued, so the handle only names it."""
    if isinstance(ptr, bool) or not isinstance(ptr, int) or ptr <= 0:
        raise ValueError(f"cuda.external_stream takes a CUstream handle (an int > 0), "
                         f"not {ptr!r}")
    return Stream(ptr, external=True, target=_current_target())


def default_stream():
    """The default stream (Numba: the legacy default stream's semantics)."""
    return _default_stream


def legacy_default_stream():
    return _legacy_default_stream


def per_thread_default_stream():
    return _per_thread_default_stream


class Event:
    """A CUDA event: a point in a stream. On the cpu target it completes
    when it is recorded, and a timing event keeps the host's clock then."""

    __slots__ = ("timing", "target", "_time_ns", "_tidal_event")

    def __init__(self, timing=True):
        self.timing = bool(timing)
        self.target = _current_target()  # the target it belongs to
        self._time_ns = None
        # cuda target: the CUevent (a capsule owning it)
        self._tidal_event = (native.cuda_event_create(self.timing)
                             if self.target == "cuda" else None)

    def __repr__(self):
        state = "recorded" if self._time_ns is not None else "not recorded"
        return f"<CUDA event ({state}) on the tidal {self.target} target>"

    def record(self, stream=0):
        """Marks the point after the work issued to ``stream`` so far."""
        stream = _check_stream(stream)
        _check_same_target("this event", self.target, stream)
        if self._tidal_event is not None:
            native.cuda_event("record", self._tidal_event, _stream_handle(stream))
        self._time_ns = time.perf_counter_ns()

    def query(self):
        """True when the work before the last record() is done (always, on
        the cpu target; also for an event never recorded, as in CUDA)."""
        if self._tidal_event is not None:
            return native.cuda_event("query", self._tidal_event)
        return True

    def synchronize(self):
        """Waits for the event: on the cpu target it has completed."""
        if self._tidal_event is not None:
            native.cuda_event("synchronize", self._tidal_event)

    def wait(self, stream=0):
        """Makes later work on ``stream`` wait for the event: on the cpu
        target it has completed already."""
        stream = _check_stream(stream)
        _check_same_target("this event", self.target, stream)
        if self._tidal_event is not None:
            native.cuda_event("wait", self._tidal_event, _stream_handle(stream))

    def elapsed_time(self, evtend):
        """Milliseconds from this event to ``evtend`` (as CUDA:
        start.elapsed_time(end))."""
        return event_elapsed_time(self, evtend)


def event(timing=True):
    """A new event; elapsed_time needs timing=True."""
    return Event(timing)


def event_elapsed_time(evtstart, evtend):
    """Milliseconds between two recorded timing events. Raises as CUDA's
    cuEventElapsedTime does for an event made with timing=False or never
    recorded."""
    for what, evt in (("start", evtstart), ("end", evtend)):
        if not isinstance(evt, Event):
            raise TypeError(f"event_elapsed_time: the {what} event must be a cuda.event(), "
                            f"not {evt!r}")
        if not evt.timing:
            raise RuntimeError(f"event_elapsed_time: the {what} event was created with "
                               f"timing=False, so it has no time")
        if evt._time_ns is None:
            raise RuntimeError(f"event_elapsed_time: the {what} event was never recorded "
                               f"(call its record() first)")
    if evtstart.target != evtend.target:
        raise ValueError(f"event_elapsed_time: the start event was made on the "
                         f"{evtstart.target} target and the end event on the {evtend.target} "
                         f"target: both must belong to one target")
    if evtstart._tidal_event is not None and evtend._tidal_event is not None:
        return native.cuda_event("elapsed", evtstart._tidal_event, evtend._tidal_event)
    return (evtend._time_ns - evtstart._time_ns) / 1e6


def synchronize():
    """Waits for all work on the device (cuCtxSynchronize on the cuda
    target; on the cpu target it has finished)."""
    if on_cuda():
        native.cuda_synchronize()
