"""CUDA IPC, Numba's API: device memory of one process used by another on
the same machine (issue 13; docs/runtime.md, "CUDA IPC").

The exporting process asks for a handle: ``DeviceNDArray.get_ipc_handle()``
(an ``IpcArrayHandle``) or ``cuda.current_context().get_ipc_handle(memory)``
(an ``IpcHandle``, the driver level). A handle names the driver allocation
that holds the memory (64 bytes from cuIpcGetMemHandle of the allocation's
base, which cuMemGetAddressRange gives) and the memory's offset in it; it
pickles without the exporter's objects, so it can be sent to another process
(multiprocessing, a pipe), which opens it (``open()``, ``with handle as
array:``) and gets a DeviceNDArray over the same bytes, and closes it
(``close()``). ``cuda.open_ipc_array(handle, shape, dtype)`` does the same for
the raw 64 bytes another library exported.

The exporting process keeps the memory: its handle holds the exported memory
alive, and the caching allocator gives an exported allocation back to the
driver when it is freed, never to another array of this process (a handle
that may still be open elsewhere never names reused memory). As in CUDA, a
process must not free memory that another process still has open.

On the cpu target a device array is this process's own NumPy memory, which
no other process can map: every entry point raises OSError saying so.
"""

import contextlib
import functools
import operator

import numpy as np

from . import devices, memory_managers
from ._native import native
from .device_arrays import IpcArrayHandle, _array_over, device_array
from .layouts import _contiguous_strides
from .target import on_cuda

__all__ = ["IpcHandle", "IpcArrayHandle", "open_ipc_array"]  # IpcArrayHandle: device_arrays.py

HANDLE_BYTES = 64


def _require_cuda(what):
    """OSError on the cpu target, whose device memory no other process can map."""
    if not on_cuda():
        raise OSError(
            f"{what}: CUDA IPC needs the cuda target. On the cpu target a device array is "
            f"this process's own memory (NumPy's), which another process cannot map; share "
            f"host memory with multiprocessing.shared_memory instead, or run on the cuda "
            f"target (TIDAL_TARGET=cuda)")


def _handle_bytes(handle):
    """The 64 bytes of a CUipcMemHandle given as bytes or as a sequence of
    ints (Numba's ctypes handle gives signed bytes)."""
    if isinstance(handle, (bytes, bytearray, memoryview)):
        data = bytes(handle)
    else:
        try:
            data = bytes(operator.index(b) & 0xFF for b in handle)
        except TypeError:
            raise TypeError(f"a CUDA IPC handle is 64 bytes (bytes or a sequence of ints), "
                            f"not {type(handle).__name__}") from None
    if len(data) != HANDLE_BYTES:
        raise ValueError(f"a CUDA IPC handle is {HANDLE_BYTES} bytes, not {len(data)}")
    return data


def _device_with_identity(source_info):
    """The device of this process whose identity (PCI location) is source_info."""
    for device in devices._driver_devices():
        if device.get_device_identity() == source_info:
            return device
    raise RuntimeError(f"no device of this process has the identity {source_info} "
                       f"(the device the IPC handle's memory is on)")


def _identity(device_id):
    """The PCI identity of CUDA device ``device_id`` (Numba's source_info)."""
    return devices._driver_devices()[device_id].get_device_identity()


def export(memory, context=None):
    """The IpcHandle of a MemoryPointer's device memory (GetIpcHandleMixin's
    get_ipc_handle and tidal's own context)."""
    _require_cuda("get_ipc_handle()")
    pointer = memory.device_pointer_value
    if not pointer or not memory.size:
        raise ValueError("get_ipc_handle() of empty memory: there is no allocation to share")
    allocation = getattr(memory.owner, "_tidal_memory", None)
    handle, _, _, offset, device_id = native.cuda_ipc_export(pointer, allocation)
    return IpcHandle(memory, handle, memory.size, _identity(device_id), offset=offset)


class IpcHandle:
    """Numba's cuda.IpcHandle: a CUDA IPC handle of ``size`` bytes at
    ``offset`` in the exported driver allocation. ``base`` is the exported
    memory in the exporting process (it keeps it alive) and None in any other
    (a handle pickles without it); ``handle`` is the driver's 64 bytes;
    ``source_info`` the identity of the device the memory is on."""

    def __init__(self, base, handle, size, source_info=None, offset=0):
        self.base = base
        self.handle = _handle_bytes(handle)
        self.size = int(size)
        self.source_info = source_info
        self.offset = int(offset)
        self._mapping = None  # the opened allocation (direct), or True (staged)

    def __repr__(self):
        return (f"<IpcHandle of {self.size} bytes at offset {self.offset}"
                f"{' (opened)' if self._mapping is not None else ''}>")

    def _sentry_source_info(self):
        if self.source_info is None:
            raise RuntimeError("IPC handle doesn't have source info")

    def can_access_peer(self, context):
        """Whether ``context`` can map the memory directly: it is on the
        memory's device (tidal enables no peer access between devices)."""
        self._sentry_source_info()
        return self.source_info == _identity(context.device.id)

    def _check_openable(self):
        _require_cuda("IpcHandle.open()")
        if self._mapping is not None:
            raise ValueError("IpcHandle is already opened")

    def open_direct(self, context):
        """Maps the memory in ``context`` (cuIpcOpenMemHandle); returns a
        MemoryPointer of its ``size`` bytes."""
        self._check_openable()
        if self.base is not None:
            raise ValueError("opening IpcHandle from original process")
        with devices.gpus[context.device.id]:
            mapping, pointer = native.cuda_ipc_open(self.handle)
        self._mapping = mapping
        return memory_managers.MemoryPointer(context, pointer + self.offset, self.size,
                                             owner=mapping)

    def open_staged(self, context):
        """Copies the memory into new memory of ``context`` through its own
        device (mapped there, copied, unmapped); returns a MemoryPointer of
        the copy, which writes do not reach the exporter through."""
        self._sentry_source_info()
        self._check_openable()
        if self.base is not None:
            raise ValueError("opening IpcHandle from original process")
        source = _device_with_identity(self.source_info)
        with devices.gpus[source.id]:
            mapping, pointer = native.cuda_ipc_open(self.handle)
        try:
            with devices.gpus[context.device.id]:
                staged = device_array(self.size, dtype=np.uint8)
                target = staged.device_ctypes_pointer.value
                native.cuda_copy(2, target, pointer + self.offset, self.size, 0,
                                 staged._tidal_memory)
                native.cuda_synchronize(context.device.id)
        finally:
            with devices.gpus[source.id]:
                native.cuda_ipc_close(mapping)
        self._mapping = True
        return memory_managers.MemoryPointer(context, target, self.size, owner=staged)

    def open(self, context):
        """Opens the handle in ``context``: mapped directly on the memory's
        own device, copied (staged) on another. Returns a MemoryPointer."""
        if self.source_info is None or self.can_access_peer(context):
            return self.open_direct(context)
        return self.open_staged(context)

    def open_array(self, context, shape, dtype, strides=None):
        """open(), as a DeviceNDArray of this shape and dtype (C-contiguous
        unless strides are given)."""
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if strides is None:
            strides = _contiguous_strides(shape, dtype.itemsize, "C")
        strides = (strides,) if isinstance(strides, int) else tuple(strides)
        memory = self.open(context)
        return _array_over(memory, shape, strides, dtype)

    def close(self):
        """Unmaps the memory (cuIpcCloseMemHandle): arrays from open() must
        not be used after it."""
        if self._mapping is None:
            raise ValueError("IpcHandle not opened")
        mapping, self._mapping = self._mapping, None
        if mapping is not True:
            native.cuda_ipc_close(mapping)

    def __reduce__(self):
        return (_rebuild_ipc_handle, (self.handle, self.size, self.source_info, self.offset))


def _rebuild_ipc_handle(handle, size, source_info, offset):
    return IpcHandle(None, handle, size, source_info, offset=offset)


@contextlib.contextmanager
def open_ipc_array(handle, shape, dtype, strides=None, offset=0):
    """Opens a raw CUDA IPC handle (the 64 bytes of a CUipcMemHandle another
    process exported, as bytes or a sequence of ints) as a device array of
    ``shape`` and ``dtype`` starting ``offset`` bytes into the exported
    allocation; closed when the block ends."""
    _require_cuda("cuda.open_ipc_array()")
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    size = functools.reduce(operator.mul, shape, 1) * dtype.itemsize
    ipc_handle = IpcHandle(None, handle, size, offset=offset)
    array = ipc_handle.open_array(devices.current_context(), shape=shape, dtype=dtype,
                                  strides=strides)
    try:
        yield array
    finally:
        ipc_handle.close()


# --- the context's methods (devices.Context.get_ipc_handle, open_ipc_handle) ---------

def _context_get_ipc_handle(context, memory):
    _require_cuda("get_ipc_handle()")
    plugin = memory_managers.plugin_of(context)
    if plugin is not None:
        return plugin.get_ipc_handle(memory)
    with devices.gpus[context.device.id]:
        return export(memory, context)


def _context_open_ipc_handle(context, handle, size):
    _require_cuda("open_ipc_handle()")
    with devices.gpus[context.device.id]:
        mapping, pointer = native.cuda_ipc_open(_handle_bytes(handle))
    return memory_managers.MemoryPointer(context, pointer, size, owner=mapping)


devices._ipc_entry_points.update(get_ipc_handle=_context_get_ipc_handle,
                                 open_ipc_handle=_context_open_ipc_handle)
