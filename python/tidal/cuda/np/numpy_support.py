"""numba-cuda's numba.cuda.np.numpy_support.carray and farray, which kernels
import from there (numba-cuda's test_array.py): the same objects as
cuda.carray and cuda.farray, arrays over a pointer's memory
(docs/language.md, "Pointers"). In tidal they are for kernels only."""

from .. import carray, farray  # noqa: F401

__all__ = ["carray", "farray"]
