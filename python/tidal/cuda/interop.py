"""DLPack in: cuda.from_dlpack, a DeviceNDArray over another library's
tensor without a copy (DLPack out, DeviceNDArray.__dlpack__, is dlpack.py).
Whatever cannot be used without a copy raises BufferError, as the array API
standard asks; wrong arguments raise TypeError or ValueError.
"""

import numpy as np

from ._native import native
from .device_arrays import DeviceNDArray
from .dlpack import (
    _BFLOAT, _CAPSULE, _CPU_TARGET_DEVICES, _CUDA_TARGET_DEVICES, _DTYPES, _KDLCPU, _KDLCUDA,
    _KDLCUDAMANAGED, _LEGACY_DEFAULT_STREAM, _current_device_id, _device_name,
)
from .layouts import _InterfaceHolder, _device_layout
from .target import on_cuda


def _check_device(device_type, device_id):
    """BufferError unless this target's kernels can use the memory in place."""
    if on_cuda():
        if device_type not in _CUDA_TARGET_DEVICES:
            how = (" (copy it with cuda.to_device(np.from_dlpack(obj)))"
                   if device_type == _KDLCPU else "")
            raise BufferError(f"from_dlpack: the cuda target takes device memory (kDLCUDA, "
                              f"kDLCUDAHost or kDLCUDAManaged), not {_device_name(device_type)}"
                              f"{how}")
        current = _current_device_id()
        if device_type == _KDLCUDA and device_id != current:
            raise BufferError(f"from_dlpack: the tensor is on CUDA device {device_id} and the "
                              f"current device is {current}: select it first "
                              f"(with cuda.gpus[{device_id}]: ...)")
    elif device_type not in _CPU_TARGET_DEVICES:
        raise BufferError(f"from_dlpack: the cpu target runs kernels on host memory (kDLCPU or "
                          f"kDLCUDAHost), not {_device_name(device_type)} (device "
                          f"{device_id}): copy the tensor to the host first")


def _dtype(code, bits, lanes):
    if lanes != 1:
        raise BufferError(f"from_dlpack: vector elements ({lanes} lanes) are not supported")
    if code == _BFLOAT:
        raise BufferError("from_dlpack: bfloat16 has no NumPy dtype: pass the tensor's bits "
                          "as int16 or uint16 (PyTorch: t.view(torch.int16)) and read them as "
                          "bfloat16 in the kernel (bits.view(cuda.bfloat16))")
    dtype = _DTYPES.get((code, bits))
    if dtype is None:
        raise BufferError(f"from_dlpack: DLPack type code {code} with {bits} bits has no "
                          f"NumPy dtype")
    return dtype


def _stream_for(device_type):
    """The stream a consumer names for memory on this device: tidal's
    default stream (the legacy default stream) for CUDA memory; none for
    host memory, which has no streams."""
    return _LEGACY_DEFAULT_STREAM if device_type in (_KDLCUDA, _KDLCUDAMANAGED) else None


def _capsule_of(obj):
    if type(obj) is _CAPSULE:  # a bare capsule, the protocol before __dlpack__
        return obj
    produce = getattr(obj, "__dlpack__", None)
    if produce is None:
        raise TypeError(f"from_dlpack takes an object with __dlpack__ (an array of NumPy, "
                        f"CuPy, PyTorch, ...) or a DLPack capsule, not {type(obj).__name__}")
    device_of = getattr(obj, "__dlpack_device__", None)
    if device_of is None:
        return produce()
    device_type, device_id = device_of()
    _check_device(device_type, device_id)  # before the producer does any work
    stream = _stream_for(device_type)
    return produce() if stream is None else produce(stream=stream)


def from_dlpack(obj):
    """A DeviceNDArray over the memory of ``obj`` (anything with
    ``__dlpack__``, or a DLPack capsule), without copying. The producer's
    work on it is ordered before tidal's default stream; its memory is given
    back to the producer when the last view of the result dies."""
    owner, pointer, shape, strides, code, bits, lanes, device_type, device_id = \
        native.dlpack_import(_capsule_of(obj))
    # From here an error drops owner, which gives the tensor back.
    _check_device(device_type, device_id)
    dtype = _dtype(code, bits, lanes)
    if strides is None:  # producers before DLPack 1.2: C-contiguous
        strides = [dtype.itemsize] * len(shape)
        for axis in range(len(shape) - 1, 0, -1):
            strides[axis - 1] = strides[axis] * shape[axis]
        strides = tuple(strides)
    else:
        strides = tuple(s * dtype.itemsize for s in strides)
    if on_cuda():
        return DeviceNDArray._wrap_device(
            _device_layout(pointer, shape, strides, dtype, owner), None)
    if pointer == 0 or 0 in shape:
        return DeviceNDArray._wrap(np.empty(shape, dtype=dtype))
    interface = {"shape": shape, "typestr": dtype.str, "data": (pointer, False),
                 "strides": strides, "version": 3}
    return DeviceNDArray._wrap(np.asarray(_InterfaceHolder(owner, interface)))
