"""Shapes, strides and extents of arrays, and NumPy arrays that describe
memory they do not own (another library's, or device memory: a layout whose
data pointer is a device pointer, never read from the host). Used by every
module of tidal.cuda that makes arrays; imports none of them.
"""

import operator

import numpy as np


class _InterfaceHolder:
    """Exposes a cuda array interface as NumPy's array interface (same
    pointer), keeping the exporting object alive."""

    def __init__(self, owner, interface):
        self.owner = owner
        self.__array_interface__ = interface


def _device_layout(pointer, shape, strides, dtype, owner):
    """A NumPy array over device memory: element 0 at ``pointer``. Never read."""
    if pointer == 0 or 0 in shape:
        return np.empty(shape, dtype=dtype)
    typestr = dtype.str if dtype.fields is None else f"|V{dtype.itemsize}"
    interface = {"shape": tuple(shape), "typestr": typestr, "data": (pointer, False),
                 "strides": tuple(strides), "version": 3}
    layout = np.asarray(_InterfaceHolder(owner, interface))
    return layout if dtype.fields is None else layout.view(dtype)


def _span(ary):
    """(address of the lowest byte, bytes) of an array's elements."""
    low, high = _extent(ary.shape, ary.strides, ary.dtype.itemsize)
    return ary.ctypes.data + low, high - low

_NON_CONTIGUOUS = ("Array contains non-contiguous buffer and cannot be transferred as "
                   "a single memory region. Please ensure contiguous buffer with numpy "
                   ".ascontiguousarray()")


# --- shapes, strides and extents ------------------------------------------------

def _shape_strides_dtype(shape, strides, dtype, order):
    """Numba's prepare_shape_strides_dtype, with checks: a shape of ints >= 0,
    strides of ints (one per axis), order 'C' or 'F'."""
    dtype = np.dtype(dtype)
    shape = _index_tuple(shape, "shape")
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: shape {shape}")
    if strides is None:
        if order not in ("C", "F"):
            raise ValueError(f"order must be either 'C' or 'F', not {order!r}")
        strides = _contiguous_strides(shape, dtype.itemsize, order)
    else:
        strides = _index_tuple(strides, "strides")
        if len(strides) != len(shape):
            raise ValueError(f"strides {strides} do not match shape {shape}: "
                             f"one stride per axis")
    return shape, strides, dtype


def _index_tuple(value, what):
    items = value if isinstance(value, (tuple, list)) else (value,)
    try:
        return tuple(operator.index(n) for n in items)
    except TypeError:
        raise TypeError(f"{what} must be an int or a tuple of ints, not {value!r}") from None


def _contiguous_strides(shape, itemsize, order):
    strides = [0] * len(shape)
    step = itemsize
    axes = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for axis in axes:
        strides[axis] = step
        step *= shape[axis]
    return tuple(strides)


def _extent(shape, strides, itemsize):
    """(first byte, one past the last byte) of the elements, relative to the
    pointer of element 0; (0, 0) when there are none."""
    if any(n == 0 for n in shape):
        return 0, 0
    low = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    high = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0)
    return low, high + itemsize


def _allocate(shape, strides, dtype):
    """Host memory for an array of this layout (uninitialised, as cudaMalloc),
    as a NumPy array that owns it."""
    low, high = _extent(shape, strides, dtype.itemsize)
    buffer = np.empty(high - low, dtype=np.uint8)
    return np.ndarray(shape, dtype=dtype, buffer=buffer, offset=-low, strides=strides)


def _core(ary):
    """The array without its broadcast axes (stride 0), as Numba's array_core."""
    if not ary.strides or not ary.size:
        return ary
    return ary[tuple(0 if s == 0 else slice(None) for s in ary.strides)]


def _is_c_layout(ary):
    """C-contiguous, ignoring broadcast and length-1 axes (Numba's is_contiguous)."""
    size = ary.dtype.itemsize
    for n, s in zip(reversed(ary.shape), reversed(ary.strides)):
        if n > 1 and s != 0:
            if s != size:
                return False
            size *= n
    return True


def _require_contiguous(ary):
    core = _core(ary)
    if not core.flags["C_CONTIGUOUS"] and not core.flags["F_CONTIGUOUS"]:
        raise ValueError(_NON_CONTIGUOUS)


def _check_compatible(device, host, direction):
    """Numba's check_array_compatibility: same dtype, same shape and strides
    once length-1 axes are dropped."""
    if device.dtype != host.dtype:
        raise TypeError(f"incompatible dtype for a {direction} copy: device array is "
                        f"{device.dtype}, host array is {host.dtype}")
    if device.squeeze().shape != host.squeeze().shape:
        raise ValueError(f"incompatible shape for a {direction} copy: device array has "
                         f"shape {device.shape}, host array has shape {host.shape}")
    if device.size and device.squeeze().strides != host.squeeze().strides:
        raise ValueError(f"incompatible strides for a {direction} copy: device array has "
                         f"strides {device.strides}, host array has strides "
                         f"{host.strides}")


def _check_index(item):
    """Device arrays take basic indices only (ints, slices, ...), so that a
    result is a view of the same memory, as in Numba."""
    for part in item if isinstance(item, tuple) else (item,):
        if part is Ellipsis or isinstance(part, slice):
            continue
        if (isinstance(part, (bool, np.bool_)) or not hasattr(part, "__index__")
                or (isinstance(part, np.ndarray) and (part.ndim or part.dtype.kind != "i"))):
            raise TypeError(f"a DeviceNDArray is indexed with ints and slices, not "
                            f"{part!r} (copy it to the host for other NumPy indexing)")
