"""tidal.cuda.libdevice: every function of CUDA's libdevice, by its name
without ``__nv_`` (``libdevice.sinf(x)``, ``libdevice.frexp(x)``), typed as
Numba types them. They work only inside kernels and device functions; on
the GPU they call libdevice itself, on the cpu target tidal's host versions
(docs/libdevice.md).

The names and their signatures come from the compiler's table, which the
build generates from clang's declarations of libdevice."""

from .._intrinsic_table import INTRINSICS
from .intrinsics import _Function


def _functions():
    objects = {}
    for path, kind, doc in INTRINSICS:
        if path.startswith("libdevice.") and kind == "function":
            objects[path.split(".", 1)[1]] = _Function(path, doc)
    return objects


_FUNCTIONS = _functions()
globals().update(_FUNCTIONS)
__all__ = sorted(_FUNCTIONS)
