"""The CUDA Array Interface (version 3): reading and checking another
library's ``__cuda_array_interface__`` dict, and its stream rules.

Version 3 (https://nvidia.github.io/numba-cuda/user/cuda_array_interface.html):
a producer names in "stream" the stream its work on the memory may still be
pending on (1: the legacy default stream, 2: the per-thread default stream,
otherwise a CUstream; None: nothing pending); 0 is disallowed as ambiguous.
A consumer synchronises on that stream before it uses the memory, unless
the user asks it not to (sync=False). The DeviceNDArrays over such memory
are made in device_arrays.py.
"""

import numpy as np

from ._native import native
from .layouts import _shape_strides_dtype
from .streams import _stream_handle
from .target import on_cuda


def is_cuda_array(obj):
    """True when ``obj`` has ``__cuda_array_interface__`` (not verified)."""
    return hasattr(obj, "__cuda_array_interface__")


def _check_host_memory(pointer, low, high):
    """On the cpu target a __cuda_array_interface__ pointer must be host
    memory this process can read; a GPU pointer (another library's device
    array) is refused here instead of crashing in a kernel."""
    if high <= low:
        return
    begin, end = pointer + low, pointer + high
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                span, permissions = line.split(None, 2)[:2]
                first, last = (int(x, 16) for x in span.split("-"))
                if first <= begin < last:
                    if permissions[0] != "r":
                        break
                    if end <= last:
                        return
                    begin = last
    except OSError:
        return  # no /proc: trust the exporter
    raise ValueError(
        f"__cuda_array_interface__ pointer {pointer:#x} is not host memory this process "
        f"can read: on the cpu target device arrays must be in host memory")


_LEGACY_DEFAULT_STREAM = 1


def _interface_stream(stream, on_device):
    """The "stream" a device array exports. On the cuda target work on the
    default stream (tidal's is the legacy default stream) may be pending:
    1; on the cpu target work is done when issued, so the default stream
    needs no synchronisation: None. Other streams: their handle."""
    handle = _stream_handle(stream)
    if handle:
        return handle
    return _LEGACY_DEFAULT_STREAM if on_device else None


def _checked_interface(desc):
    """(shape, strides, dtype, pointer, readonly, stream) of a
    __cuda_array_interface__ dict; TypeError or ValueError saying what is
    wrong with it."""
    if not isinstance(desc, dict):
        raise TypeError(f"__cuda_array_interface__ must be a dict, not {type(desc).__name__}")
    missing = [key for key in ("shape", "typestr", "data", "version") if key not in desc]
    if missing:
        raise ValueError(f"__cuda_array_interface__ lacks {', '.join(map(repr, missing))}: "
                         f"it must have 'shape', 'typestr', 'data' and 'version' ({desc!r})")
    version = desc["version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise ValueError(f"__cuda_array_interface__ without a valid version: {desc!r}")
    if desc.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported")
    try:
        dtype = np.dtype(desc["typestr"])
    except TypeError:
        raise TypeError(f"__cuda_array_interface__ 'typestr' {desc['typestr']!r} is not a "
                        f"NumPy type string") from None
    shape, strides, dtype = _shape_strides_dtype(desc["shape"], desc.get("strides"), dtype,
                                                 "C")
    data = desc["data"]
    if (not isinstance(data, (tuple, list)) or len(data) != 2 or isinstance(data[0], bool)
            or not isinstance(data[0], int) or data[0] < 0):
        raise TypeError(f"__cuda_array_interface__ 'data' must be (pointer, read-only flag), "
                        f"a pointer being an int >= 0, not {data!r}")
    return shape, strides, dtype, data[0], bool(data[1]), _producer_stream(desc.get("stream"))


def _producer_stream(stream):
    """A __cuda_array_interface__ "stream": None or a handle, checked."""
    if stream is None:
        return None
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise TypeError(f"__cuda_array_interface__ 'stream' must be None or an int (a stream "
                        f"handle), not {stream!r}")
    if stream == 0:
        raise ValueError("__cuda_array_interface__ 'stream' is 0, which the CUDA Array "
                         "Interface (version 3) disallows as ambiguous: the producer must give "
                         "None (no synchronisation), 1 (the legacy default stream), 2 (the "
                         "per-thread default stream) or a stream handle")
    if stream < 0:
        raise ValueError(f"__cuda_array_interface__ 'stream' must be None or a positive stream "
                         f"handle, not {stream}")
    return stream


def _wait_for_producer(stream):
    """Waits for the work a producer has pending on ``stream``. The handles
    1 and 2 are the driver's own CU_STREAM_LEGACY and CU_STREAM_PER_THREAD,
    so every handle goes to cuStreamSynchronize as it is. On the cpu target
    a stream's work is done when it is issued: nothing to wait for."""
    if on_cuda():
        native.cuda_stream_synchronize(stream)
