"""Numba's ``numba.cuda.cudadrv`` modules that programs import, as tidal's:
``devicearray`` (DeviceNDArray for isinstance checks, auto_device, ...),
``driver`` (the raw copies, CudaDriverError) and ``error``."""

from . import devicearray, driver, error, linkable_code  # noqa: F401
