"""The names of Numba's ``numba.cuda.devicearray`` module that programs use
(``cuda.devicearray.auto_device(...)``, ``isinstance(x,
cuda.devicearray.DeviceNDArray)``): tidal's device arrays under them."""

import numpy as np

from .array_interface import is_cuda_array
from .device_arrays import DeviceNDArray, IpcArrayHandle, to_device
from .layouts import _require_contiguous

__all__ = ["DeviceNDArray", "IpcArrayHandle", "auto_device", "is_cuda_ndarray", "require_cuda_ndarray",
           "sentry_contiguous"]


def is_cuda_ndarray(obj):
    """True for a device array (an object with __cuda_ndarray__)."""
    return getattr(obj, "__cuda_ndarray__", False)


def require_cuda_ndarray(obj):
    """Raises ValueError unless ``obj`` is a device array."""
    if not is_cuda_ndarray(obj):
        raise ValueError("require an cuda ndarray object")


def sentry_contiguous(ary):
    """Raises ValueError unless ``ary`` is C or F contiguous (its broadcast
    axes aside), as copies between host and device need."""
    _require_contiguous(ary if isinstance(ary, np.ndarray) else np.asarray(ary))


def auto_device(obj, stream=0, copy=True, user_explicit=False):
    """(device array, whether it is new): ``obj`` itself when it is a device
    array (or has __cuda_array_interface__), else a copy of it on the device
    (a scalar becomes a 0-d array; a non-contiguous array raises ValueError)."""
    if is_cuda_ndarray(obj) or is_cuda_array(obj):
        return to_device(obj, stream=stream), False
    if not isinstance(obj, np.ndarray):
        obj = np.asanyarray(obj)
    sentry_contiguous(obj)
    return to_device(obj, stream=stream, copy=copy), True
