"""``numba.cuda.cudadrv.linkable_code``: tidal's code objects for link=."""

from ..linkable_code import *  # noqa: F401,F403
from ..linkable_code import __all__  # noqa: F401
