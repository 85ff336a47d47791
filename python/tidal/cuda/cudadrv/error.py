"""``numba.cuda.cudadrv.error``: Numba's classes of CUDA errors, as tidal
raises them."""

from ..driver import CudaDriverError, CudaSupportError  # noqa: F401
