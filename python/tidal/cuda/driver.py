"""Errors of the CUDA driver, raised by the cuda target (``tidal.cuda.CudaDriverError``,
``CudaSupportError``), and Numba's ``KernelRuntimeError``."""


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
