"""Device arrays and Numba's API for them (cuda.to_device, device_array,
as_cuda_array, cuda.In / Out / InOut, ...).

On the cpu target device memory is host memory: a DeviceNDArray keeps its
memory as a NumPy array (``_tidal_host``), copies between host and device are
NumPy copies, and a kernel launched with a DeviceNDArray runs on that memory
in place (the binding reads ``_tidal_host``; nothing is copied). The names,
arguments, results and errors follow numba-cuda, so that a program runs
unchanged on either target.

On the cuda target a DeviceNDArray owns device memory from the C++ caching
allocator (``_tidal_memory``, a capsule shared by its views) and describes it
with ``_tidal_device``: a NumPy array whose data pointer is the device
pointer of element 0. That array is only a layout (shape, strides, dtype,
pointer arithmetic for views): it is never read or written from the host.
Copies go through cuMemcpy* (asynchronous on a stream other than the default
one), and a kernel launched with a device array gets its device pointer,
with no copy. A device array belongs to the target it was made on.
"""

import functools
import operator

import numpy as np

from . import devices, dlpack, memory_managers
from ._native import native
from .array_interface import (
    _check_host_memory, _checked_interface, _interface_stream, _wait_for_producer,
    is_cuda_array,
)
from .layouts import (
    _InterfaceHolder, _allocate, _check_compatible, _check_index,
    _contiguous_strides, _core, _device_layout, _extent, _index_tuple, _is_c_layout,
    _require_contiguous, _shape_strides_dtype, _span,
)
from .streams import _check_same_target, _check_stream, _stream_handle, external_stream
from .target import on_cuda


def _is_host_memory_array(obj):
    """True for cuda.mapped_array's and managed_array's NumPy arrays, which
    are device arrays too (host_memory.py: they say so with
    ``__cuda_memory__``)."""
    return isinstance(obj, np.ndarray) and getattr(type(obj), "__cuda_memory__", False)


def _plugin():
    """The memory-manager plugin of the current device, or None."""
    if not memory_managers.plugin_set():
        return None
    return memory_managers.plugin_of(devices.current_context())


def _allocate_device(shape, strides, dtype, stream):
    """(layout, allocation) of new device memory for this layout."""
    low, high = _extent(shape, strides, dtype.itemsize)
    if high <= low:
        return np.empty(shape, dtype=dtype), None
    plugin = _plugin()
    if plugin is not None:  # the layout keeps the plugin's MemoryPointer alive
        pointer, owner = memory_managers.allocate(plugin, high - low)
        return _device_layout(pointer - low, shape, strides, dtype, owner), None
    memory, pointer = native.cuda_alloc(high - low, _stream_handle(stream))
    return _device_layout(pointer - low, shape, strides, dtype, memory), memory


def _allocate_host(shape, strides, dtype):
    """Device memory of the cpu target (host memory) for this layout: a
    plugin's (checked to be host memory), else NumPy's."""
    plugin = _plugin()
    low, high = _extent(shape, strides, dtype.itemsize)
    if plugin is None or high <= low:
        return _allocate(shape, strides, dtype)
    pointer, owner = memory_managers.allocate(plugin, high - low)
    _check_host_memory(pointer, 0, high - low)
    interface = {"shape": shape, "typestr": dtype.str, "data": (pointer - low, False),
                 "strides": strides, "version": 3}
    host = np.asarray(_InterfaceHolder(owner, interface))
    return host if dtype.fields is None else host.view(dtype)


# --- device arrays ------------------------------------------------------------------

class DeviceNDArray:
    """An array in device memory: numba.cuda's DeviceNDArray.

    On the cpu target device memory is host memory: ``_tidal_host`` is the
    NumPy array over it, which kernels get in place. Views (slices, reshape,
    ravel, split, squeeze, view) share memory with their parent. There is no
    NumPy arithmetic on device arrays, as in Numba: copy_to_host() first.
    """

    __slots__ = ("_tidal_host", "_tidal_device", "_tidal_memory", "stream", "__weakref__")
    __cuda_memory__ = True
    __cuda_ndarray__ = True

    def __init__(self, shape, strides, dtype, stream=0):
        shape, strides, dtype = _shape_strides_dtype(shape, strides, dtype, "C")
        if on_cuda():
            layout, memory = _allocate_device(shape, strides, dtype, _check_stream(stream))
            self._init_device(layout, memory, stream)
        else:
            self._init(_allocate_host(shape, strides, dtype), stream)

    @classmethod
    def _wrap_device(cls, layout, memory, stream=0):
        """A device array over device memory (cuda target; no copy)."""
        self = cls.__new__(cls)
        self._init_device(layout, memory, stream)
        return self

    def _init_device(self, layout, memory, stream):
        self._tidal_host = None
        self._tidal_device = layout
        self._tidal_memory = memory
        self.stream = self._checked_stream(stream)

    @property
    def _layout(self):
        host = self._tidal_host
        return self._tidal_device if host is None else host

    def _derive(self, layout, stream):
        """A view: ``layout`` is a view of this array's layout array."""
        if self._tidal_host is None:
            return DeviceNDArray._wrap_device(layout, self._tidal_memory, stream)
        return DeviceNDArray._wrap(layout, stream)

    @classmethod
    def _wrap(cls, host, stream=0):
        """A device array over this NumPy array's memory (no copy)."""
        self = cls.__new__(cls)
        self._init(host, stream)
        return self

    def _init(self, host, stream):
        # Never rebound: the binding borrows it for the length of a launch.
        self._tidal_host = host
        self._tidal_device = None
        self._tidal_memory = None
        self.stream = self._checked_stream(stream)

    @property
    def target(self):
        """The target this array was made on: 'cpu' (host memory) or 'cuda'."""
        return "cuda" if self._tidal_host is None else "cpu"

    def _checked_stream(self, stream):
        """A stream argument, which must not belong to the other target."""
        stream = _check_stream(stream)
        _check_same_target("this device array", self.target, stream)
        return stream

    # attributes
    shape = property(lambda self: self._layout.shape)
    strides = property(lambda self: self._layout.strides)
    dtype = property(lambda self: self._layout.dtype)
    ndim = property(lambda self: self._layout.ndim)
    size = property(lambda self: self._layout.size)
    nbytes = property(lambda self: self._layout.nbytes)

    @property
    def alloc_size(self):
        """Bytes spanned by the elements of this array (Numba: of its allocation)."""
        low, high = _extent(self.shape, self.strides, self.dtype.itemsize)
        return high - low

    @property
    def flags(self):
        flags = self._layout.flags
        return {"C_CONTIGUOUS": flags.c_contiguous, "F_CONTIGUOUS": flags.f_contiguous}

    def is_c_contiguous(self):
        return bool(self._layout.flags.c_contiguous)

    def is_f_contiguous(self):
        return bool(self._layout.flags.f_contiguous)

    @property
    def device_ctypes_pointer(self):
        """ctypes.c_void_p of element 0. On the cpu target: a host pointer."""
        import ctypes
        return ctypes.c_void_p(self._layout.ctypes.data if self.size else None)

    @property
    def gpu_data(self):
        """Numba's gpu_data: the memory of the array's elements as a
        MemoryPointer (its lowest byte and its extent; a host pointer on the
        cpu target). Arrays over the same bytes (a dtype view, a view of the
        whole) compare equal."""
        address, nbytes = _span(self._layout) if self.size else (0, 0)
        return memory_managers.MemoryPointer(devices.current_context(), address, nbytes,
                                             owner=self)

    def get_ipc_handle(self):
        """An IpcArrayHandle of this array for another process on this
        machine (picklable; ipc.py). Cuda target only: on the cpu target a
        device array is this process's memory, and this raises OSError."""
        handle = devices.current_context().get_ipc_handle(self.gpu_data)
        desc = dict(shape=self.shape, strides=self.strides, dtype=self.dtype)
        return IpcArrayHandle(ipc_handle=handle, array_desc=desc)

    @property
    def __cuda_array_interface__(self):
        """Version 3 of the CUDA Array Interface. On the cpu target ``data``
        is a host pointer (device memory is host memory): hand it only to
        code that runs on the cpu target too. On the cuda target it is the
        device pointer. ``stream`` is where a consumer must synchronise:
        the array's stream (1 and 2 for the legacy and per-thread default
        streams, never 0), or None when nothing can be pending."""
        host = self._layout
        return {
            "shape": host.shape,
            "strides": None if _is_c_layout(host) else host.strides,
            "data": (host.ctypes.data if host.size else 0, False),
            "typestr": host.dtype.str,
            "stream": _interface_stream(self.stream, on_device=self._tidal_host is None),
            "version": 3,
        }

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule over this array's memory (no copy), for another
        library's from_dlpack. ``stream`` is the consumer's (array API
        semantics: None or 1 the legacy default stream, 2 the per-thread
        one, -1 no synchronisation); it waits for this array's stream."""
        return dlpack.export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """(DLPack device type, device id): (kDLCUDA = 2, 0) on the cuda
        target, (kDLCPU = 1, 0) on the cpu target."""
        return dlpack.dlpack_device(self)

    def __len__(self):
        if not self.ndim:
            raise TypeError("len() of a 0-d DeviceNDArray")
        return self.shape[0]

    def __repr__(self):
        where = "cpu target: host memory" if self._tidal_host is not None else \
            "cuda target: device memory"
        return (f"<tidal DeviceNDArray shape={self.shape} dtype={self.dtype} "
                f"strides={self.strides} ({where})>")

    def __array__(self, dtype=None, copy=None):
        """A NumPy copy, as in Numba (np.asarray(d) copies to the host)."""
        host = self.copy_to_host()
        return host if dtype is None else host.astype(dtype, copy=False)

    def _default_stream(self, stream):
        return self.stream if not stream else self._checked_stream(stream)

    def bind(self, stream=0):
        """The same array, with ``stream`` as the default for its operations."""
        return self._derive(self._layout, stream)

    # copies
    def copy_to_host(self, ary=None, stream=0):
        """Copies to ``ary`` (same dtype, shape and strides) or to a new NumPy
        array with this array's layout; returns it. On the cpu target copies
        are done when this returns, whatever the stream."""
        self._default_stream(stream)
        if any(s < 0 for s in self.strides):
            raise NotImplementedError(
                f"D->H copy not implemented for negative strides: {self.strides}")
        if ary is None:
            ary = _allocate(self.shape, self.strides, self.dtype)
        else:
            if not isinstance(ary, np.ndarray):
                raise TypeError(f"copy_to_host copies into a NumPy array, not "
                                f"{type(ary).__name__}")
            _check_compatible(self._layout, ary, "device to host")
        if self._tidal_host is None:
            if self.size:
                stream = self._default_stream(stream)
                address, nbytes = _span(ary)
                source, _ = _span(self._tidal_device)
                native.cuda_copy(1, address, source, nbytes, _stream_handle(stream),
                                    self._tidal_memory)
            return ary
        np.copyto(ary, self._tidal_host, casting="no")
        return ary

    def copy_to_device(self, ary, stream=0):
        """Copies ``ary`` (a host array, or a device array: a device-to-device
        copy) into this array: same dtype, shape and strides."""
        stream = self._default_stream(stream)
        if self._tidal_host is None:
            return self._copy_to_device_cuda(ary, stream)
        if is_cuda_array(ary) and not isinstance(ary, np.ndarray):
            source = _host_array(ary)
            if source.size == 0:
                return
            _require_contiguous(self._tidal_host)
            _require_contiguous(source)
        else:
            source = np.asarray(ary)
            if source.size == 0:
                return
            _require_contiguous(self._tidal_host)
            source = _core(source)
            order = "C" if _core(self._tidal_host).flags.c_contiguous else "F"
            source = np.asarray(source, order=order)
        target = _core(self._tidal_host)
        _check_compatible(target, source, "host to device")
        np.copyto(target, source, casting="no")

    def _copy_to_device_cuda(self, ary, stream):
        layout = self._tidal_device
        handle = _stream_handle(stream)
        if is_cuda_array(ary) and not isinstance(ary, np.ndarray):
            source = as_cuda_array(ary)
            if source.size == 0:
                return
            _require_contiguous(layout)
            _require_contiguous(source._layout)
            _check_compatible(_core(layout), _core(source._layout), "device to device")
            if source._tidal_host is not None:  # host memory: a host to device copy
                address, nbytes = _span(_core(source._tidal_host))
                native.cuda_copy(0, _span(_core(layout))[0], address, nbytes, handle,
                                    self._tidal_memory)
                return
            address, nbytes = _span(_core(source._tidal_device))
            native.cuda_copy(2, _span(_core(layout))[0], address, nbytes, handle,
                                self._tidal_memory)
            return
        source = np.asarray(ary)
        if source.size == 0:
            return
        _require_contiguous(layout)
        target = _core(layout)
        order = "C" if target.flags.c_contiguous else "F"
        source = np.asarray(_core(source), order=order)
        _check_compatible(target, source, "host to device")
        address, nbytes = _span(source)
        native.cuda_copy(0, _span(target)[0], address, nbytes, handle, self._tidal_memory)

    # views
    def __getitem__(self, item):
        return self.getitem(item)

    def getitem(self, item, stream=0):
        """A view for a slice; a NumPy scalar (a copy) for one element."""
        _check_index(item)
        if self._tidal_host is None:
            # Ellipsis keeps the result a (0-d) view: nothing is read.
            parts = item if isinstance(item, tuple) else (item,)
            view = self._tidal_device[parts if Ellipsis in parts else parts + (Ellipsis,)]
            result = self._derive(view, self._default_stream(stream))
            if view.ndim == 0 and Ellipsis not in parts and not any(
                    isinstance(p, slice) or p is None for p in parts):
                return result.copy_to_host()[()]
            return result
        result = self._tidal_host[item]
        if isinstance(result, np.ndarray):
            return DeviceNDArray._wrap(result, self._default_stream(stream))
        return result

    def __setitem__(self, key, value):
        self.setitem(key, value)

    def setitem(self, key, value, stream=0):
        """Writes a scalar or an array (broadcast as in Numba) into self[key]."""
        stream = self._default_stream(stream)
        _check_index(key)
        if self._tidal_host is None:
            return self._setitem_cuda(key, value, stream)
        target = self._tidal_host[key]
        source = _host_array(value) if is_cuda_array(value) else np.asarray(value)
        target_shape = np.shape(target)
        if source.ndim > len(target_shape):
            raise ValueError(f"Can't assign {source.ndim}-D array to "
                             f"{len(target_shape)}-D self")
        padded = (1,) * (len(target_shape) - source.ndim) + source.shape
        for axis, (n, m) in enumerate(zip(target_shape, padded)):
            if m != 1 and m != n:
                raise ValueError(f"Can't copy sequence with size {m} to array axis "
                                 f"{axis} with dimension {n}")
        self._tidal_host[key] = source

    def _setitem_cuda(self, key, value, stream):
        parts = key if isinstance(key, tuple) else (key,)
        target = self._derive(
            self._tidal_device[parts if Ellipsis in parts else parts + (Ellipsis,)], stream)
        source = (as_cuda_array(value).copy_to_host() if is_cuda_array(value)
                  and not isinstance(value, np.ndarray) else np.asarray(value))
        if source.ndim > target.ndim:
            raise ValueError(f"Can't assign {source.ndim}-D array to {target.ndim}-D self")
        padded = (1,) * (target.ndim - source.ndim) + source.shape
        for axis, (n, m) in enumerate(zip(target.shape, padded)):
            if m != 1 and m != n:
                raise ValueError(f"Can't copy sequence with size {m} to array axis "
                                 f"{axis} with dimension {n}")
        if not target.size:
            return
        # Read, modify, write the bytes the view spans (any strides).
        layout = target._tidal_device
        low, high = _extent(layout.shape, layout.strides, layout.dtype.itemsize)
        span = np.empty(high - low, dtype=np.uint8)
        device_low = layout.ctypes.data + low
        handle = _stream_handle(stream)
        native.cuda_copy(1, span.ctypes.data, device_low, high - low, handle,
                            self._tidal_memory)
        if handle:
            native.cuda_stream_synchronize(handle)
        host = np.ndarray(layout.shape, dtype=layout.dtype, buffer=span, offset=-low,
                          strides=layout.strides)
        host[...] = source
        native.cuda_copy(0, device_low, span.ctypes.data, high - low, handle,
                            self._tidal_memory)
        if handle:
            native.cuda_stream_synchronize(handle)

    def reshape(self, *newshape, order="C"):
        """A view with another shape, of a C- or F-contiguous array. As in
        Numba, ``order`` is the layout of the result over the same memory."""
        if len(newshape) == 1 and isinstance(newshape[0], (tuple, list)):
            newshape = tuple(newshape[0])
        newshape = _index_tuple(newshape, "shape")
        if newshape == self.shape:
            return self._derive(self._layout, self.stream)
        if order not in ("C", "F", "A"):
            raise ValueError(f"order must be 'C', 'F' or 'A', not {order!r}")
        unknown = [i for i, n in enumerate(newshape) if n < 0]
        if len(unknown) > 1:
            raise ValueError("can only specify one unknown dimension")
        known = functools.reduce(operator.mul, (n for n in newshape if n >= 0), 1)
        if unknown:
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape an array of size {self.size} into "
                                 f"shape {newshape}")
            newshape = tuple(self.size // known if n < 0 else n for n in newshape)
        if functools.reduce(operator.mul, newshape, 1) != self.size:
            raise ValueError(f"cannot reshape an array of size {self.size} into shape "
                             f"{newshape}")
        if not (self.is_c_contiguous() or self.is_f_contiguous()):
            raise NotImplementedError(
                f"reshape of a non-contiguous DeviceNDArray (shape {self.shape}, "
                f"strides {self.strides}) would require a copy")
        if order == "A":
            order = "F" if self.is_f_contiguous() else "C"
        return self._restrided(newshape,
                               _contiguous_strides(newshape, self.dtype.itemsize, order))

    def ravel(self, order="C", stream=0):
        """A 1-D view of a contiguous array (NotImplementedError otherwise)."""
        stream = self._default_stream(stream)
        if order not in ("C", "F", "A"):
            raise ValueError(f"order must be 'C', 'F' or 'A', not {order!r}")
        if self.ndim <= 1:
            return self._derive(self._layout, stream)
        if not ((order in "CA" and self.is_c_contiguous())
                or (order in "FA" and self.is_f_contiguous())):
            raise NotImplementedError(
                f"ravel (order {order!r}) of a DeviceNDArray with shape {self.shape} and "
                f"strides {self.strides}: the array is not contiguous in that order")
        view = self._restrided((self.size,), (self.dtype.itemsize,))
        view.stream = stream
        return view

    def _restrided(self, shape, strides):
        host = self._layout
        if host.size == 0:
            return self._derive(np.empty(shape, host.dtype), self.stream)
        # Element 0 of a contiguous array is the lowest address for both layouts.
        view = np.lib.stride_tricks.as_strided(host, shape, strides)
        return self._derive(view, self.stream)

    def squeeze(self, axis=None, stream=0):
        """A view without the length-1 axes (or the given ones)."""
        return self._derive(self._layout.squeeze(axis), self._default_stream(stream))

    def view(self, dtype):
        """The same memory as another dtype; a dtype of another size needs a
        C-contiguous array whose last axis divides evenly."""
        dtype = np.dtype(dtype)
        if dtype.itemsize != self.dtype.itemsize:
            if not self.is_c_contiguous():
                raise ValueError("To change to a dtype of a different size, the array "
                                 "must be C-contiguous")
            if self.ndim == 0 or (self.shape[-1] * self.dtype.itemsize) % dtype.itemsize:
                raise ValueError("When changing to a larger dtype, its size must be a "
                                 "divisor of the total size in bytes of the last axis "
                                 "of the array.")
        return self._derive(self._layout.view(dtype), self.stream)

    def split(self, section, stream=0):
        """Views of ``section`` elements each (the last may be shorter), of a
        1-D array with unit stride; a generator, as in Numba."""
        stream = self._default_stream(stream)
        if self.ndim != 1:
            raise ValueError(f"split needs a 1-D array, not {self.ndim}-D")
        if self.strides[0] != self.dtype.itemsize:
            raise ValueError(f"split needs unit stride, not {self.strides[0]} bytes for "
                             f"{self.dtype.itemsize}-byte elements")
        section = operator.index(section)
        if section <= 0:
            raise ValueError(f"split needs a section of at least 1 element, not {section}")
        return (self._derive(self._layout[begin:begin + section], stream)
                for begin in range(0, self.size, section))

    @property
    def T(self):
        return self.transpose()

    def transpose(self, axes=None):
        """A transposed copy of a 2-D array, as Numba (which runs a transpose
        kernel into new device memory)."""
        if axes is not None and tuple(axes) == tuple(range(self.ndim)):
            return self
        if self.ndim != 2:
            raise NotImplementedError("transposing a non-2D DeviceNDArray isn't supported")
        if axes is not None and set(axes) != {0, 1}:
            raise ValueError(f"invalid axes list {axes!r}")
        if self._tidal_host is None:  # through the host (Numba runs a kernel)
            return to_device(np.ascontiguousarray(self.copy_to_host().T), stream=self.stream)
        return DeviceNDArray._wrap(np.ascontiguousarray(self._tidal_host.T), self.stream)


# --- CUDA IPC: the array side (ipc.py has the handles) --------------------------------

def _array_over(memory, shape, strides, dtype):
    """A DeviceNDArray over a MemoryPointer whose first byte is the lowest
    byte of the array (as gpu_data gives it)."""
    low, high = _extent(shape, strides, dtype.itemsize)
    if high - low > memory.size:
        raise ValueError(f"an array of shape {shape} and strides {strides} spans "
                         f"{high - low} bytes; the IPC memory has {memory.size}")
    layout = _device_layout(memory.device_pointer_value - low, shape, strides, dtype, memory)
    return DeviceNDArray._wrap_device(layout, None)


class IpcArrayHandle:
    """Numba's IpcArrayHandle (DeviceNDArray.get_ipc_handle()): a picklable
    handle of a device array for another process, whose ``open()`` gives a
    DeviceNDArray over the same memory and ``close()`` unmaps it; ``with
    handle as array:`` does both."""

    def __init__(self, ipc_handle, array_desc):
        self._array_desc = array_desc
        self._ipc_handle = ipc_handle

    def open(self):
        """A DeviceNDArray over the exporter's memory, in the current
        device's context. Not in the process that made the handle."""
        memory = self._ipc_handle.open(devices.current_context())
        desc = self._array_desc
        return _array_over(memory, tuple(desc["shape"]), tuple(desc["strides"]),
                           np.dtype(desc["dtype"]))

    def close(self):
        """Closes the handle: the array open() gave must not be used after it."""
        self._ipc_handle.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()


def _host_array(obj):
    """The NumPy array over a device array's memory (no copy)."""
    host = getattr(obj, "_tidal_host", None)
    if isinstance(host, np.ndarray):
        return host
    if _is_host_memory_array(obj):
        return obj.view(np.ndarray)
    return as_cuda_array(obj)._tidal_host


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A DeviceNDArray over the memory a __cuda_array_interface__ dict
    describes (no copy). With ``sync`` (the default), first waits for the
    producer's work on the dict's ``stream``; a producer's stream becomes
    the array's default stream (cuda.external_stream(handle), as Numba's).
    On the cpu target the pointer must be host memory."""
    shape, strides, dtype, pointer, readonly, stream = _checked_interface(desc)
    if not on_cuda():
        _check_host_memory(pointer, *_extent(shape, strides, dtype.itemsize))
    if sync and stream is not None:
        _wait_for_producer(stream)
    # The producer's stream is the array's default stream, as Numba's (an
    # external stream: tidal never destroys it).
    stream = 0 if stream is None else external_stream(stream)
    if on_cuda():  # another library's device memory, kept alive by owner
        return DeviceNDArray._wrap_device(
            _device_layout(pointer, shape, strides, dtype, owner), None, stream)
    if pointer == 0 or 0 in shape:
        host = np.empty(shape, dtype=dtype)
    else:
        interface = {"shape": shape, "typestr": dtype.str, "data": (pointer, readonly),
                     "strides": strides, "version": 3}
        host = np.asarray(_InterfaceHolder(owner, interface))
    return DeviceNDArray._wrap(host, stream)


def as_cuda_array(obj, sync=True):
    """A DeviceNDArray over the memory of any object with
    ``__cuda_array_interface__`` (no copy; it keeps ``obj`` alive). With
    ``sync`` (the default), first waits for the producer's work on the
    interface's ``stream``. On the cpu target its pointer must be host
    memory."""
    if isinstance(obj, DeviceNDArray):
        return obj
    if not is_cuda_array(obj):
        raise TypeError(f"*obj* doesn't implement the cuda array interface: "
                        f"{type(obj).__name__} has no __cuda_array_interface__")
    if _is_host_memory_array(obj):
        if getattr(obj, "_tidal_device", None) is not None:  # cuda target
            return DeviceNDArray._wrap_device(obj._tidal_device, None, obj.stream)
        return DeviceNDArray._wrap(obj.view(np.ndarray), getattr(obj, "stream", 0))
    return from_cuda_array_interface(obj.__cuda_array_interface__, owner=obj, sync=sync)


def to_device(obj, stream=0, copy=True, to=None):
    """Copies a NumPy array (or anything np.asarray takes) to new device
    memory; returns the DeviceNDArray. A device array is returned as it is.
    With ``to``, copies into that device array instead."""
    _check_stream(stream)
    if to is not None:
        if copy:
            to.copy_to_device(obj, stream=stream)
        return to
    if isinstance(obj, DeviceNDArray):
        return obj
    if is_cuda_array(obj) and not isinstance(obj, np.ndarray):
        return as_cuda_array(obj)
    if isinstance(obj, np.void):
        raise NotImplementedError("a record on the device (Numba's DeviceRecord) is not "
                                  "supported yet: copy an array of records instead")
    host = np.asarray(obj)
    _require_contiguous(host)
    device = DeviceNDArray(host.shape, host.strides, host.dtype, stream=stream)
    if copy:
        device.copy_to_device(host, stream=stream)
    return device


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    """New, uninitialised device memory, like np.empty."""
    shape, strides, dtype = _shape_strides_dtype(shape, strides, dtype, order)
    return DeviceNDArray(shape, strides, dtype, stream=stream)


def _contiguous_strides_like(ary):
    """Strides of a contiguous array that orders its axes as ``ary`` does
    (None where C or F order does already), as numba's."""
    if ary.flags["C_CONTIGUOUS"] or ary.flags["F_CONTIGUOUS"] or ary.ndim <= 1:
        return None
    strides = [0] * ary.ndim
    step = ary.dtype.itemsize
    for axis, _ in sorted(enumerate(ary.strides), key=lambda item: item[1]):
        strides[axis] = step
        step *= ary.shape[axis]
    return tuple(strides)


def _order_like(ary):
    return "F" if ary.flags["F_CONTIGUOUS"] and not ary.flags["C_CONTIGUOUS"] else "C"


def _like(ary):
    if isinstance(ary, DeviceNDArray):
        ary = ary._layout
    return dict(shape=ary.shape, dtype=ary.dtype, strides=_contiguous_strides_like(ary),
                order=_order_like(ary))


def device_array_like(ary, stream=0):
    """device_array with the shape, dtype and layout of ``ary``."""
    return device_array(stream=stream, **_like(ary))


# --- cuda.In, cuda.Out, cuda.InOut --------------------------------------------------

class _Directed:
    """A NumPy array passed to a kernel with the copies the launch makes of
    it on the cuda target, as Numba's: In is copied to the device only (the
    kernel reads it), Out is copied back only (the kernel writes it; the
    device memory starts undefined), InOut both, which is what a bare NumPy
    array gets. On the cpu target a kernel uses the array itself for Out
    and InOut, and a copy of it for In (its writes are dropped, as on a
    GPU). The launch reads ``_tidal_array`` and the class's
    ``_tidal_direction`` (1: in, 2: out, 3: both)."""

    __slots__ = ("_tidal_array",)
    _tidal_direction = 3

    def __init__(self, ary):
        if not isinstance(ary, np.ndarray):
            raise TypeError(f"cuda.{type(self).__name__} takes a NumPy array, "
                            f"not {type(ary).__name__}")
        self._tidal_array = ary

    def __repr__(self):
        return f"cuda.{type(self).__name__}({self._tidal_array!r})"


class In(_Directed):
    """cuda.In(ary): copied to the device before the launch, not back."""

    __slots__ = ()
    _tidal_direction = 1


class Out(_Directed):
    """cuda.Out(ary): not copied to the device; copied back after the launch."""

    __slots__ = ()
    _tidal_direction = 2


class InOut(_Directed):
    """cuda.InOut(ary): copied to the device and back (a NumPy array's default)."""

    __slots__ = ()
    _tidal_direction = 3
