"""Host memory of the cuda target: cuda.pinned_array (a NumPy array over
cuMemHostAlloc memory), mapped_array and managed_array (NumPy arrays over
mapped memory, cuMemHostAlloc with DEVICEMAP, or managed memory,
cuMemAllocManaged, that also carry ``_tidal_memory`` and ``_tidal_device``
as a DeviceNDArray does), and cuda.pinned / cuda.mapped, which register the
arrays' own memory (cuMemHostRegister) for their block. On the cpu target
they are ordinary NumPy arrays.
"""

import contextlib

import numpy as np

from ._native import native
from .device_arrays import DeviceNDArray, _like
from .layouts import (
    _InterfaceHolder, _allocate, _device_layout, _extent, _shape_strides_dtype, _span,
)
from .streams import _check_stream
from .target import on_cuda


class _HostMemoryArray(np.ndarray):
    """mapped_array and managed_array: NumPy arrays that are device arrays
    too. On the cpu target the memory is the same.

    On the cuda target the array is over mapped or managed memory and has
    its device side as a DeviceNDArray does: ``_tidal_memory`` (the capsule
    that owns the memory) and ``_tidal_device`` (a layout whose data pointer
    is the device pointer of element 0; never read from the host). Views
    (slices, reshape, view, transpose) have them too, for their own elements;
    an array with other memory (a copy, a ufunc's result) has neither, nor a
    ``__cuda_array_interface__``, and a kernel takes it as a NumPy array.
    ``_tidal_device`` is made at each use from the array's shape, strides and
    address as they are then: NumPy sets a transpose's strides after
    __array_finalize__, and ``a.shape = ...`` changes an array in place.
    """

    __cuda_memory__ = True
    stream = 0

    def __array_finalize__(self, obj):
        # A view starts in its parent's memory; a copy elsewhere.
        memory = getattr(obj, "_tidal_host_memory", None)
        if memory is not None and memory.starts(self):
            memory.adopt(self)
            self.stream = obj.stream

    @property
    def _tidal_device(self):
        memory = getattr(self, "_tidal_host_memory", None)
        layout = None if memory is None else memory.device_layout(self)
        if layout is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                 f"'_tidal_device': its memory is not mapped or managed")
        return layout

    def device_setup(self, gpu_data=None, stream=0):
        self.stream = _check_stream(stream)

    @property
    def __cuda_array_interface__(self):
        layout = getattr(self, "_tidal_device", None)
        if layout is not None:
            return DeviceNDArray._wrap_device(layout, None, self.stream).__cuda_array_interface__
        if on_cuda():
            raise AttributeError(f"this {type(self).__name__} is a copy in ordinary host "
                                 f"memory: it has no device pointer")
        return DeviceNDArray._wrap(self.view(np.ndarray), self.stream).__cuda_array_interface__


class MappedNDArray(_HostMemoryArray):
    """A host array mapped into the device's address space (cuda.mapped_array)."""


class ManagedNDArray(_HostMemoryArray):
    """An array in managed (unified) memory (cuda.managed_array)."""


# --- host memory: pinned, mapped and managed ------------------------------------------

class _HostMemory:
    """Page-locked or managed memory of the cuda target: ``capsule`` owns it
    (it is freed when the last array over it is collected), ``host`` and
    ``device`` are its addresses (``device`` is 0 for memory kernels cannot
    use), ``nbytes`` its size. Zero bytes: nothing allocated, capsule None."""

    __slots__ = ("capsule", "host", "device", "nbytes", "_bytes_on_device")

    def __init__(self, capsule, host, device, nbytes):
        self.capsule, self.host, self.device, self.nbytes = capsule, host, device, nbytes
        self._bytes_on_device = None

    def array(self, shape, strides, dtype):
        """A NumPy array over this memory (its lowest byte first) that keeps it alive."""
        if not self.nbytes:
            return np.empty(shape, dtype=dtype)
        interface = {"shape": (self.nbytes,), "typestr": "|u1", "data": (self.host, False),
                     "version": 3}
        buffer = np.asarray(_InterfaceHolder(self, interface))
        low, _ = _extent(shape, strides, dtype.itemsize)
        return np.ndarray(shape, dtype=dtype, buffer=buffer, offset=-low, strides=strides)

    def adopt(self, ary):
        """Makes ``ary``, a _HostMemoryArray over this memory, carry it."""
        ary._tidal_host_memory = self
        ary._tidal_memory = self.capsule

    def starts(self, ary):
        """True when element 0 of ``ary`` is in this memory (or just past it)."""
        address = ary.__array_interface__["data"][0]
        return self.host <= address <= self.host + self.nbytes

    def device_layout(self, ary):
        """The layout of ``ary``'s elements at their device addresses (see
        _device_layout), or None when they are not all in this memory."""
        if ary.size == 0:
            return np.empty(ary.shape, dtype=ary.dtype)
        if not self.device:
            return None
        if self._bytes_on_device is None:
            # Owned by the capsule, not by self: the garbage collector cannot
            # see a cycle through an array's base (NumPy does not track it).
            self._bytes_on_device = _device_layout(self.device, (self.nbytes,), (1,),
                                                   np.dtype(np.uint8), self.capsule)
        offset = ary.__array_interface__["data"][0] - self.host
        try:  # NumPy checks that the elements lie in the buffer
            return np.ndarray(ary.shape, dtype=ary.dtype, buffer=self._bytes_on_device,
                              offset=offset, strides=ary.strides)
        except ValueError:
            return None


def _page_locked_memory(ary):
    """The _HostMemory a NumPy array is a view of, or None."""
    base = ary
    while base is not None:
        if isinstance(base, _InterfaceHolder):
            return base.owner if isinstance(base.owner, _HostMemory) else None
        base = getattr(base, "base", None)
    return None


def _flag(value, name):
    if not isinstance(value, (bool, np.bool_, int)) or value not in (0, 1):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return bool(value)


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    """A host array in page-locked memory (cuMemHostAlloc on the cuda
    target, freed with the array). On the cpu target: a NumPy array (there is
    no transfer for pinning to speed up)."""
    shape, strides, dtype = _shape_strides_dtype(shape, strides, dtype, order)
    if not on_cuda():
        return _allocate(shape, strides, dtype)
    return _host_alloc(shape, strides, dtype, False, False, False).array(shape, strides, dtype)


def pinned_array_like(ary):
    return pinned_array(**_like(ary))


def _host_alloc(shape, strides, dtype, mapped, portable, wc):
    low, high = _extent(shape, strides, dtype.itemsize)
    if high <= low:
        return _HostMemory(None, 0, 0, 0)
    return _HostMemory(*native.cuda_host_alloc(high - low, mapped, portable, wc), high - low)


def _managed_alloc(shape, strides, dtype, attach_global):
    low, high = _extent(shape, strides, dtype.itemsize)
    if high <= low:
        return _HostMemory(None, 0, 0, 0)
    capsule, pointer = native.cuda_managed_alloc(high - low, attach_global)
    return _HostMemory(capsule, pointer, pointer, high - low)


def _host_memory_array(cls, shape, dtype, strides, order, stream, allocate):
    shape, strides, dtype = _shape_strides_dtype(shape, strides, dtype, order)
    stream = _check_stream(stream)
    if not on_cuda():
        array = _allocate(shape, strides, dtype).view(cls)
        array.device_setup(stream=stream)
        return array
    memory = allocate(shape, strides, dtype)
    array = memory.array(shape, strides, dtype).view(cls)
    array.device_setup(stream=stream)
    memory.adopt(array)
    return array


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0,
                 portable=False, wc=False):
    """A host array that kernels use in place: on the cuda target page-locked
    memory mapped into the device's address space (cuMemHostAlloc with
    DEVICEMAP, and PORTABLE / WRITECOMBINED from ``portable`` / ``wc``). On
    the cpu target all memory is mapped: a NumPy array (MappedNDArray)."""
    portable, wc = _flag(portable, "portable"), _flag(wc, "wc")
    return _host_memory_array(
        MappedNDArray, shape, dtype, strides, order, stream,
        lambda shape, strides, dtype: _host_alloc(shape, strides, dtype, True, portable, wc))


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    return mapped_array(stream=stream, portable=portable, wc=wc, **_like(ary))


def managed_array(shape, dtype=np.float64, strides=None, order="C", stream=0,
                  attach_global=True):
    """An array in managed memory, used by the host and kernels alike
    (cuMemAllocManaged, attached to every stream with ``attach_global``,
    else to the host). On the cpu target: a NumPy array (ManagedNDArray)."""
    attach_global = _flag(attach_global, "attach_global")
    return _host_memory_array(
        ManagedNDArray, shape, dtype, strides, order, stream,
        lambda shape, strides, dtype: _managed_alloc(shape, strides, dtype, attach_global))


def _check_host_arrays(what, arylist):
    for ary in arylist:
        if not isinstance(ary, np.ndarray):
            raise TypeError(f"cuda.{what} takes NumPy arrays, not {type(ary).__name__}")


@contextlib.contextmanager
def _registered(arylist, mapped):
    """Registers each array's memory (cuMemHostRegister, mapped or not) for
    the block; yields, per array, (registration capsule or None, device
    pointer of its lowest byte or 0). Memory tidal already page-locked
    (pinned, mapped or managed arrays) is not registered again."""
    registrations, taken = [], []
    try:
        for ary in arylist:
            address, nbytes = _span(ary)
            memory = _page_locked_memory(ary) if nbytes else None
            if not nbytes:
                taken.append((None, 0))
            elif memory is None:
                capsule, device = native.cuda_host_register(address, nbytes, mapped)
                registrations.append(capsule)
                taken.append((capsule, device))
            elif memory.device:
                taken.append((None, memory.device + (address - memory.host)))
            elif mapped:
                raise ValueError("cuda.mapped cannot map a pinned_array (page-locked "
                                 "without a device mapping): use cuda.mapped_array")
            else:
                taken.append((None, 0))
        yield taken
    finally:
        for capsule in reversed(registrations):
            native.cuda_host_unregister(capsule)


@contextlib.contextmanager
def pinned(*arylist):
    """Page-locks host arrays for the block (cuMemHostRegister on the cuda
    target, cuMemHostUnregister at its end). On the cpu target there is
    nothing to lock: the arrays are only checked."""
    _check_host_arrays("pinned", arylist)
    if not on_cuda():
        yield
        return
    with _registered(arylist, mapped=False):
        yield


@contextlib.contextmanager
def mapped(*arylist, stream=0):
    """Maps host arrays into device memory for the block; yields their
    device arrays (one, or a list), over the same memory: on the cuda target
    DeviceNDArrays over the mapped device pointers (cuMemHostRegister with
    DEVICEMAP, unregistered at the end of the block, after which those device
    arrays must not be used). On the cpu target they share the host arrays'
    memory."""
    _check_host_arrays("mapped", arylist)
    stream = _check_stream(stream)
    if not on_cuda():
        devices = [DeviceNDArray._wrap(ary.view(np.ndarray), stream) for ary in arylist]
        yield devices[0] if len(devices) == 1 else devices
        return
    with _registered(arylist, mapped=True) as taken:
        devices = []
        for ary, (capsule, device) in zip(arylist, taken):
            low, _ = _extent(ary.shape, ary.strides, ary.dtype.itemsize)
            layout = _device_layout(device - low if device else 0, ary.shape, ary.strides,
                                    ary.dtype, capsule if capsule is not None else ary)
            devices.append(DeviceNDArray._wrap_device(layout, None, stream))
        yield devices[0] if len(devices) == 1 else devices
