"""Errors of the CUDA driver, raised by the cuda target (``tidal.cuda.CudaDriverError``)."""


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
