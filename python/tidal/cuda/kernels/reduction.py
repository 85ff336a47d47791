"""tidal.cuda.kernels.reduction: where Numba 0.56 keeps its Reduce class;
tidal's is tidal.cuda.reduction.Reduce (cuda.Reduce, cuda.reduce)."""

from ..reduction import Reduce, reduce  # noqa: F401
