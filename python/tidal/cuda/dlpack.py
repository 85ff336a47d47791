"""DLPack out: DeviceNDArray.__dlpack__ and __dlpack_device__, per the Python
specification of DLPack (https://dmlc.github.io/dlpack/latest/python_spec.html)
with the unversioned "dltensor" capsule: the C side (the structs, the
capsules, the deleters) is python/src/DLPack.cpp; this module picks the
device, the dtype code and the streams, and checks the arguments. DLPack in
(cuda.from_dlpack) is interop.py.

A tidal array is kDLCPU memory on the cpu target (device memory is host
memory there) and kDLCUDA memory on the cuda target. Whatever cannot be
exchanged without a copy raises BufferError, as the array API standard asks;
wrong arguments raise TypeError or ValueError.
"""

import datetime

import numpy as np

from ._native import native
from .streams import _stream_handle

# DLDeviceType values (python/src/DLPack.h)
_KDLCPU, _KDLCUDA, _KDLCUDAHOST, _KDLCUDAMANAGED = 1, 2, 3, 13
_DEVICE_NAMES = {_KDLCPU: "kDLCPU (host memory)", _KDLCUDA: "kDLCUDA (device memory)",
                 _KDLCUDAHOST: "kDLCUDAHost (page-locked host memory)",
                 _KDLCUDAMANAGED: "kDLCUDAManaged (managed memory)"}

# Where each target's kernels can use memory in place: the cpu target reads
# host memory only; the cuda target device memory and what the device maps
# (page-locked and managed memory, at the same address with unified
# addressing).
_CPU_TARGET_DEVICES = (_KDLCPU, _KDLCUDAHOST)
_CUDA_TARGET_DEVICES = (_KDLCUDA, _KDLCUDAHOST, _KDLCUDAMANAGED)


def _current_device_id():
    """The id of the calling thread's current CUDA device (0 until one is selected)."""
    selected = native.cuda_current_device()
    return 0 if selected is None else selected

# The dtypes exchanged, by (DLDataTypeCode, bits): the code of each NumPy
# kind, the width of the itemsize. (float128 is not IEEE binary128 in NumPy,
# and DLPack's bfloat16, code 4, has no NumPy dtype.)
_TYPE_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_DTYPES = {(_TYPE_CODES[dtype.kind], dtype.itemsize * 8): dtype for dtype in map(np.dtype, (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128))}
_BFLOAT = 4

# The PyCapsule type, which Python names nowhere before 3.13 (types.CapsuleType):
# the type of a capsule the standard library always has.
_CAPSULE = type(datetime.datetime_CAPI)

# The legacy default stream's handle in the stream protocols (CU_STREAM_LEGACY).
_LEGACY_DEFAULT_STREAM = 1


def _device_name(device_type):
    return _DEVICE_NAMES.get(device_type, f"device type {device_type}")


# --- export -------------------------------------------------------------------------

def dlpack_device(array):
    """(device type, device id) of a DeviceNDArray's memory."""
    if array._tidal_host is None:
        memory = array._tidal_memory  # None: another library's memory, on the current device
        device = _current_device_id() if memory is None else \
            native.cuda_allocation_device(memory)
        return (_KDLCUDA, device)
    return (_KDLCPU, 0)


def _consumer_stream(stream, device):
    """The consumer's stream handle that a __dlpack__ ``stream`` argument
    names, per the array API: None is the legacy default stream, 1 and 2 the
    legacy and per-thread default streams, others a CUstream; -1 asks for
    no synchronisation (returned as None). kDLCPU memory has no streams."""
    if device[0] == _KDLCPU:
        if stream is not None:
            raise ValueError(f"__dlpack__: this array is kDLCPU memory (the cpu target), which "
                             f"has no streams: stream must be None, not {stream!r}")
        return None
    if stream is None:
        return _LEGACY_DEFAULT_STREAM
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise TypeError(f"__dlpack__: stream must be None or an int (a CUDA stream handle), "
                        f"not {stream!r}")
    if stream == -1:
        return None
    if stream == 0:
        raise ValueError("__dlpack__: stream 0 is disallowed by the DLPack specification, as "
                         "it is ambiguous: give None or 1 for the legacy default stream, 2 for "
                         "the per-thread default stream")
    if stream < 0:
        raise ValueError(f"__dlpack__: stream must be None, -1 or a positive stream handle, "
                         f"not {stream}")
    return stream


def _order_before(array, consumer):
    """Makes work later issued to the consumer's stream wait for the work
    already issued to the array's stream (cuda target): an event recorded on
    one and waited for by the other, as the specification suggests. Both on
    the legacy default stream: program order already."""
    producer = _stream_handle(array.stream)
    if producer == consumer or {producer, consumer} <= {0, _LEGACY_DEFAULT_STREAM}:
        return
    event = native.cuda_event_create(False)
    native.cuda_event("record", event, producer)
    native.cuda_event("wait", event, consumer)


def export(array, stream=None, max_version=None, dl_device=None, copy=None):
    """DeviceNDArray.__dlpack__: a "dltensor" capsule over the array's
    memory, which keeps the array alive until the consumer is done.

    ``max_version`` is accepted and the capsule is the unversioned one, which
    the specification lets consumers take from producers that have no other.
    """
    device = dlpack_device(array)
    if dl_device is not None and tuple(dl_device) != device:
        raise BufferError(f"__dlpack__: this array is on {device} "
                          f"({_device_name(device[0])}); exporting it to {tuple(dl_device)} "
                          f"needs a copy, which tidal does not make: copy it there first")
    if copy:
        raise BufferError("__dlpack__: tidal exports device arrays without copying "
                          "(copy=True is not supported): copy the array first")
    consumer = _consumer_stream(stream, device)
    dtype = array.dtype
    if not dtype.isnative:
        raise BufferError(f"__dlpack__: dtype {dtype} is not in this machine's byte order, "
                          f"which DLPack cannot describe")
    exchanged = _DTYPES.get((_TYPE_CODES.get(dtype.kind), dtype.itemsize * 8))
    if exchanged is None or exchanged != dtype:
        raise BufferError(f"__dlpack__: DLPack has no type for dtype {dtype} (bool, integers, "
                          f"float16/32/64 and complex64/128 are exchanged)")
    layout = array._layout
    itemsize = dtype.itemsize
    if any(s % itemsize for s in layout.strides):
        raise BufferError(f"__dlpack__: strides {layout.strides} are not multiples of the "
                          f"itemsize {itemsize}: DLPack counts strides in elements")
    strides = tuple(s // itemsize for s in layout.strides)
    # The cuda target's empty arrays have no device memory (their layout is
    # a host array): they export a null pointer.
    pointer = layout.ctypes.data if layout.size or device[0] == _KDLCPU else 0
    if consumer is not None:  # device memory: the cuda target
        _order_before(array, consumer)
    return native.dlpack_export(array, pointer, layout.shape, strides,
                                   _TYPE_CODES[dtype.kind], itemsize * 8, *device)
