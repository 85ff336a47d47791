"""cuda.runtime: Numba's CUDA Runtime object, for what Numba asks it: the
CUDA version (``cuda.runtime.get_version()``, a (major, minor) tuple).

tidal runs nothing through the CUDA runtime library (libcudart): kernels,
memory and streams go through the driver API. The version is, in order:

1. the CUDA runtime library's, as Numba reads it (cudaRuntimeGetVersion of
   ``libcudart.so`` under $CUDA_HOME/lib64, /usr/local/cuda/lib64, else on
   the loader's path): the toolkit's version, which needs no GPU;
2. else the driver's (cuDriverGetVersion), when a usable driver loads: the
   newest CUDA version the driver supports;
3. else none: get_version() raises RuntimeError saying that neither was
   found.
"""

import ctypes
import os

from ._native import native

# The oldest CUDA whose driver loads the PTX tidal writes for every device it
# compiles for by default (PTX ISA 7.8 for sm_89 and sm_90: CUDA 11.8).
_OLDEST_SUPPORTED = (11, 8)


def _runtime_library_version():
    """cudaRuntimeGetVersion's number from libcudart, or None."""
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    candidates = [os.path.join(home, "lib64", "libcudart.so") for home in homes if home]
    candidates.append("libcudart.so")
    for candidate in candidates:
        if os.sep in candidate and not os.path.exists(candidate):
            continue
        try:
            library = ctypes.CDLL(candidate)
            get_version = library.cudaRuntimeGetVersion
        except (OSError, AttributeError):
            continue
        number = ctypes.c_int(0)
        if get_version(ctypes.byref(number)) == 0 and number.value > 0:
            return number.value
    return None


def _as_tuple(number):
    """1000 * major + 10 * minor (CUDA's encoding) -> (major, minor)."""
    return number // 1000, number % 1000 // 10


class Runtime:
    """Numba's cuda.runtime: get_version(), is_supported_version(). The
    version is found once, at the first question."""

    def __init__(self):
        self._version = None
        self._source = None

    def _find(self):
        if self._version is None:
            number = _runtime_library_version()
            source = "the CUDA runtime library (cudaRuntimeGetVersion)"
            if number is None:
                number = native.cuda_driver_version()
                source = "the CUDA driver (cuDriverGetVersion)"
            if number is None:
                raise RuntimeError(
                    "cuda.runtime.get_version(): found neither a CUDA runtime library "
                    "(libcudart.so under $CUDA_HOME/lib64, /usr/local/cuda/lib64 or on the "
                    "loader's path) nor a usable CUDA driver to ask for the CUDA version")
            self._version, self._source = _as_tuple(number), source
        return self._version

    def get_version(self):
        """The CUDA version as (major, minor): the runtime library's, else
        the driver's (module docstring)."""
        return self._find()

    @property
    def version_source(self):
        """Which library get_version() asked (a sentence)."""
        self._find()
        return self._source

    def is_supported_version(self):
        """True when get_version() is CUDA 11.8 or newer: a driver of that
        version loads the PTX tidal writes for every device it compiles for
        by default (sm_90a needs 12.0)."""
        return self.get_version() >= _OLDEST_SUPPORTED

    def __repr__(self):
        return "<tidal CUDA runtime version query>"


runtime = Runtime()


def get_version():
    """cuda.runtime.get_version() as a module function, as Numba's."""
    return runtime.get_version()


def is_supported_version():
    return runtime.is_supported_version()
