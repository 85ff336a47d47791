"""Errors of the CUDA driver, raised by the cuda target (``tidal.cuda.CudaDriverError``,
``CudaSupportError``), Numba's ``KernelRuntimeError``, and Numba's raw copies
(``cuda.driver.device_to_host`` & co.)."""


class CudaSupportError(ImportError, RuntimeError):
    """No usable CUDA driver: none is installed, it fails to load, or it
    fails to initialise (Numba's class, an ImportError; also a RuntimeError,
    which tidal raised for this before). The message gives the loader's or
    the driver's reason. TIDAL_TARGET=cpu runs kernels without one."""


class KernelRuntimeError(RuntimeError):
    """Numba's class for an exception raised in a kernel, reported with the
    thread and block that raised it. tidal raises the kernel's own exception
    class instead (docs/language.md, "Exceptions"); this class is here for
    programs that name it."""

    def __init__(self, msg, tid=None, ctaid=None):
        self.tid = tid
        self.ctaid = ctaid
        self.msg = msg
        super().__init__(f"An exception was raised in thread={tid} block={ctaid}\n\t{msg}")


class CudaDriverError(RuntimeError):
    """A CUDA Driver API call failed.

    ``call`` is the failing call (``"cuModuleLoadDataEx"``), ``error_name``
    the driver's name for the error (``"CUDA_ERROR_INVALID_PTX"``) and
    ``code`` its CUresult; the message says what was being done (the kernel,
    the JIT's log). After a kernel fault (``CUDA_ERROR_ILLEGAL_ADDRESS`` and
    the other sticky errors) the CUDA context cannot be used again in this
    process.
    """

    def __init__(self, message, call=None, error_name=None, code=None):
        super().__init__(message)
        self.call = call
        self.error_name = error_name
        self.code = code


# --- Numba's cuda.driver copies between raw memory --------------------------------
# host_to_device / device_to_host / device_to_device(dst, src, size, stream=0):
# device memory is anything with a device pointer (a MemoryPointer, such as an
# opened IpcHandle gives, or a device array), host memory a NumPy array (or
# anything with a buffer) or an address. On the cpu target device pointers are
# host pointers and the copy is a memmove.

def _device_address(obj):
    if isinstance(obj, int):
        return obj
    pointer = getattr(obj, "device_ctypes_pointer", None)
    if pointer is None:
        raise TypeError(f"{type(obj).__name__} is no device memory (it has no "
                        f"device_ctypes_pointer)")
    return pointer.value or 0


def _host_address(obj):
    if isinstance(obj, int):
        return obj
    import numpy as np
    array = obj if isinstance(obj, np.ndarray) else np.frombuffer(obj, dtype=np.uint8)
    return array.ctypes.data


def _copy(kind, destination, source, size, stream):
    # The target as the extension holds it (target.py imports this module).
    from ._native import native
    size = int(size)
    if size <= 0:
        return
    target = native.selected_target()
    if target is None:
        raise RuntimeError("no tidal target is in use yet, so there is no device memory "
                           "to copy")
    if target == "cuda":
        native.cuda_copy(kind, destination, source, size, int(stream) if stream else 0)
    else:
        import ctypes
        ctypes.memmove(destination, source, size)


def host_to_device(dst, src, size, stream=0):
    """Copies ``size`` bytes of host memory ``src`` to device memory ``dst``."""
    _copy(0, _device_address(dst), _host_address(src), size, stream)


def device_to_host(dst, src, size, stream=0):
    """Copies ``size`` bytes of device memory ``src`` to host memory ``dst``."""
    _copy(1, _host_address(dst), _device_address(src), size, stream)


def device_to_device(dst, src, size, stream=0):
    """Copies ``size`` bytes between device memories."""
    _copy(2, _device_address(dst), _device_address(src), size, stream)
