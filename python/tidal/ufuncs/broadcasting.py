"""NumPy's broadcasting for ufunc arguments: the common shape (Numba's
errors), and device arrays viewed in a larger shape with zero strides along
the broadcast axes (no copy)."""

import numpy as np


def is_scalar(value):
    """A Python or NumPy number, which a ufunc takes by value."""
    return isinstance(value, (bool, int, float, complex, np.number, np.bool_))


def broadcast_shapes(shapes):
    """The shape the arguments broadcast to; ValueError 'failed to broadcast
    argument #i' (Numba's) naming the first argument that does not fit."""
    result = ()
    for position, shape in enumerate(shapes):
        ndim = max(len(result), len(shape))
        padded_result = (1,) * (ndim - len(result)) + tuple(result)
        padded = (1,) * (ndim - len(shape)) + tuple(shape)
        merged = []
        for a, b in zip(padded_result, padded):
            if a != b and a != 1 and b != 1:
                raise ValueError(f"failed to broadcast argument #{position}: shape "
                                 f"{tuple(shape)} does not broadcast with {tuple(result)}")
            merged.append(b if a == 1 else a)
        result = tuple(merged)
    return result


def broadcast_device(array, shape):
    """A view of device array `array` with `shape` (its shape broadcast):
    zero strides on the added and the stretched axes."""
    if array.shape == shape:
        return array
    missing = len(shape) - array.ndim
    strides = [0] * missing + list(array.strides)
    for axis in range(missing, len(shape)):
        if array.shape[axis - missing] != shape[axis]:
            strides[axis] = 0
    return array._restrided(tuple(shape), tuple(strides))
