"""tidal.cuda: Numba's CUDA API (``from tidal import cuda``).

Kernels are compiled for the GPU through LLVM's NVPTX backend, or for this
machine's CPU (the cpu target) where no GPU is usable.
"""

from .dispatcher import Dispatcher, DeviceFunction, jit  # noqa: F401
from .raw import RawKernel, RawModule  # noqa: F401
from .foreign import declare_device, include  # noqa: F401
# numba-cuda's code objects for link=[...] (CUDA C++ and PTX in memory).
from .linkable_code import (  # noqa: F401
    LTOIR, Archive, Cubin, CUSource, Fatbin, Object, PTXSource,
)
from .linkable_code import LinkableCode  # noqa: F401
from .compilation import (  # noqa: F401
    compile, compile_all, compile_for_current_device, compile_ptx, compile_ptx_for_current_device,
)
# The names kernels use (cuda.grid, cuda.threadIdx, cuda.atomic, ...), from
# the compiler's intrinsic table.
from .intrinsics import *  # noqa: F401,F403
# libdevice's functions by their Python names (libdevice.sinf, ...).
from . import libdevice  # noqa: F401
from .target import current_target, is_available  # noqa: F401
from .devices import is_fp8_supported  # noqa: F401
# numba-cuda's numba.cuda._internal.cuda_fp8 (its enums also on cuda.fp8).
from ._internal import cuda_fp8 as _cuda_fp8  # noqa: F401
from .memory import (  # noqa: F401
    DeviceNDArray, In, InOut, Out, as_cuda_array, device_array, device_array_like,
    from_cuda_array_interface, is_cuda_array, managed_array, mapped, mapped_array,
    mapped_array_like, pinned, pinned_array, pinned_array_like, to_device,
)
from .interop import from_dlpack  # noqa: F401
# Numba's numba.cuda.devicearray names (auto_device, DeviceNDArray, ...), and
# numba.cuda.cudadrv's modules (cudadrv.devicearray, cudadrv.driver, cudadrv.error).
from . import devicearray, cudadrv  # noqa: F401
# numba-cuda's cuda.types, whose type names numba.cuda has too (cuda.float32).
from . import types  # noqa: F401
from .types import *  # noqa: F401,F403
from .streams import (  # noqa: F401
    default_stream, event, event_elapsed_time, external_stream, legacy_default_stream,
    per_thread_default_stream, stream, synchronize,
)
from .devices import (  # noqa: F401
    close, current_context, defer_cleanup, detect, get_current_device, gpus, list_devices,
    select_device,
)
from .driver import CudaDriverError, CudaSupportError, KernelRuntimeError  # noqa: F401
from .profiling import profile_start, profile_stop, profiling  # noqa: F401
from .memory_managers import (  # noqa: F401
    BaseCUDAMemoryManager, MappedMemory, MemoryInfo, MemoryPointer, PinnedMemory,
    set_memory_manager,
)
from .memory_plugins import GetIpcHandleMixin, HostOnlyCUDAMemoryManager  # noqa: F401
# CUDA IPC: device memory shared with other processes.
from .ipc import IpcHandle, open_ipc_array  # noqa: F401
# Numba's cuda.runtime (get_version) and cuda.is_supported_version().
from . import runtime  # noqa: F401
from .runtime import is_supported_version  # noqa: F401

# Device arrays pickle as their host copy (tidal/pickling.py); kernels and
# device functions through their __reduce__.
import copyreg as _copyreg  # noqa: E402
from ..pickling import reduce_device_array as _reduce_device_array  # noqa: E402
_copyreg.pickle(DeviceNDArray, _reduce_device_array)

# The library on top of kernels (Numba's cuda.random, cuda.reduce/Reduce).
from . import random  # noqa: E402,F401
from .reduction import Reduce, reduce  # noqa: E402,F401
# Numba's numba.cuda.kernels (transpose, reduction), written with kernels.
from . import kernels  # noqa: E402,F401
# numba-cuda's cuda.bf16 (the bfloat16 type and cuda_bf16.h's functions), a
# module over the table's cuda.bf16 namespace, and cuda.is_bfloat16_supported.
from . import bf16  # noqa: E402,F401
from .bf16 import is_bfloat16_supported  # noqa: E402,F401


def __getattr__(name):
    # numba-cuda's cuda.vectorize/cuda.guvectorize (target='cuda' by default):
    # tidal/ufuncs imports tidal.cuda, so they are loaded on first use.
    if name in ("vectorize", "guvectorize"):
        from . import vectorizers
        return getattr(vectorizers, name)
    raise AttributeError(f"module 'tidal.cuda' has no attribute {name!r}")
