"""numba-cuda's ``numba.cuda.misc.special``: literal_unroll, which its tests
and programs import from here (tidal.literal_unroll)."""

from tidal._literal_unroll import literal_unroll  # noqa: F401
