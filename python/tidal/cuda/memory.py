"""tidal.cuda's memory API in one namespace (cuda.to_device, device_array,
pinned_array, mapped_array, as_cuda_array, cuda.In, ...), gathered from the
modules that hold it: device arrays (device_arrays.py), host memory of the
cuda target (host_memory.py) and the CUDA Array Interface
(array_interface.py).
"""

from .array_interface import is_cuda_array  # noqa: F401
from .device_arrays import (  # noqa: F401
    DeviceNDArray, In, InOut, Out, as_cuda_array, device_array, device_array_like,
    from_cuda_array_interface, to_device,
)
from .host_memory import (  # noqa: F401
    ManagedNDArray, MappedNDArray, managed_array, mapped, mapped_array, mapped_array_like,
    pinned, pinned_array, pinned_array_like,
)
