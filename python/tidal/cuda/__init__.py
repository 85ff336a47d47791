"""tidal.cuda: Numba's CUDA API (``from tidal import cuda``).

Kernels are compiled for the GPU through LLVM's NVPTX backend, or for this
machine's CPU (the cpu target) where no GPU is usable.
"""

from .dispatcher import Dispatcher, DeviceFunction, jit  # noqa: F401
from .intrinsics import (  # noqa: F401
    blockDim, blockIdx, grid, gridDim, gridsize, threadIdx,
)
from .target import current_target, detect, is_available  # noqa: F401
