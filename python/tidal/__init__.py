"""tidal: Numba-style CUDA kernels in Python, compiled through LLVM.

    from tidal import cuda

    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + y[i]

    saxpy[blocks, threads](2.0, x, y, out)
"""

__version__ = "0.1.0"

from .types import (  # noqa: F401  (Numba's names)
    boolean, bool_, int8, int16, int32, int64, intp, uint8, uint16, uint32,
    uint64, uintp, float16, float32, float64, complex64, complex128, void,
)
from .types import float_, double  # noqa: F401  (Numba's C-style aliases)
from .types import (  # noqa: F401  (Numba's short aliases)
    b1, i1, i2, i4, i8, u1, u2, u4, u8, f2, f4, f8, c8, c16,
)
from .errors import CompileError, TypingError, UnsupportedError  # noqa: F401
from ._literal_unroll import literal_unroll  # noqa: F401  (numba.literal_unroll)
# numba.cuda as tidal.cuda, for Numba programs run unchanged (tidal/numba_mapping.py).
from .numba_mapping import install_as_numba_cuda  # noqa: F401

# From here on, the source of kernels exec'd from strings is kept
# (tidal/_sources.py; TIDAL_KEEP_SOURCES=0 turns it off).
from . import _sources as _sources  # noqa: E402
_sources.install()

def __getattr__(name):
    # vectorize/guvectorize (tidal/ufuncs/) import tidal.cuda, and with it the
    # compiled extension: loaded on first use, so that `import tidal` stays light.
    if name in ("vectorize", "guvectorize"):
        from . import ufuncs
        return getattr(ufuncs, name)
    if name == "compiler":  # the researcher's view of the pipelines
        import importlib  # not `from . import`, which asks this hook again
        return importlib.import_module(".compiler", __name__)
    raise AttributeError(f"module 'tidal' has no attribute {name!r}")
