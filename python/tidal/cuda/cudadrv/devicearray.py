"""``numba.cuda.cudadrv.devicearray``: tidal's device arrays under Numba's
names (the same objects as tidal.cuda.devicearray's)."""

from ..devicearray import *  # noqa: F401,F403
from ..devicearray import __all__  # noqa: F401
