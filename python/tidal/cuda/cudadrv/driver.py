"""``numba.cuda.cudadrv.driver``: the names of Numba's driver module that
tidal has (the raw copies between memories, the driver's errors)."""

from ..driver import (  # noqa: F401
    CudaDriverError, CudaSupportError, KernelRuntimeError, device_to_device,
    device_to_host, host_to_device,
)
