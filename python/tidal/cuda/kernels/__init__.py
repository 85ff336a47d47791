"""tidal.cuda.kernels: Numba 0.56's numba.cuda.kernels, the library kernels
written with the kernel API: ``transpose`` (kernels.transpose.transpose) and
``reduction`` (kernels.reduction.Reduce, which is cuda.Reduce)."""

from . import reduction, transpose  # noqa: F401
