"""The benchmark kernels, written once in Numba-CUDA style.

They are compiled by whichever `cuda` module `define(cuda)` is given:
`tidal.cuda`, `numba.cuda` (on a GPU or under NUMBA_ENABLE_CUDASIM=1). The
module below is executed afresh for each `cuda` module, with `cuda` and
`float32`/`int32` of that package as its globals, so each package's compiler
reads the same source file (tidal reads the AST, Numba the bytecode).
"""

import importlib
import importlib.util
import os

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_source.py")

# name -> (signature text, what the kernel needs from the language)
SIGNATURES = {
    "saxpy": "void(float32, float32[::1], float32[::1], float32[::1])",
    "stencil": "void(float32[:, ::1], float32[:, ::1])",
    "matmul": "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    "reduction": "void(float32[::1], float32[::1])",
    "histogram": "void(int32[::1], int32[::1])",
    "math": "void(float32[::1], float32[::1])",
}

# The launch-overhead shapes of the runtime issue: name -> (empty kernel,
# label, arrays, float32 scalars). Launches measure kernel[1, 1](...) of the
# empty kernel; the arrays are device arrays of 16 float32.
LAUNCH_SHAPES = {
    "0 args": ("empty0", 0, 0),
    "1 array": ("empty1", 1, 0),
    "3 arrays": ("empty3", 3, 0),
    "16 scalars": ("empty16s", 0, 16),
    "16 arrays": ("empty16a", 16, 0),
    "256 scalars": ("empty256", 0, 256),
}

def launch_args(shape, array, scalar):
    """The arguments of a LAUNCH_SHAPES launch, from one array and one scalar."""
    _, arrays, scalars = LAUNCH_SHAPES[shape]
    return (array,) * arrays + (scalar,) * scalars


TILE = 16
BLOCK = 256
BINS = 256


def define(cuda, source=_SOURCE):
    """Returns a namespace (module) of the kernels of `source` (kernel_source.py
    unless told) compiled by `cuda`'s @cuda.jit."""
    package = importlib.import_module(cuda.__name__.split(".")[0])
    stem = os.path.splitext(os.path.basename(source))[0]
    name = f"_bench_{stem}_{package.__name__}_{id(cuda)}"
    spec = importlib.util.spec_from_file_location(name, source)
    module = importlib.util.module_from_spec(spec)
    module.cuda = cuda
    module.float32 = package.float32
    module.int32 = package.int32
    spec.loader.exec_module(module)
    return module


def kernel(namespace, name):
    """The dispatcher called `name` in SIGNATURES or LAUNCH_SHAPES ('math' is math_kernel)."""
    return getattr(namespace, "math_kernel" if name == "math" else name)
