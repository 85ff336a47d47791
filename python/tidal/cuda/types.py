"""``cuda.types`` (numba-cuda's ``numba.cuda.types``): the type names of
signatures and casts, the same objects as tidal.types'. ``from
tidal.cuda.types import *`` (and tidal.cuda itself, as numba.cuda) gives
the type names only."""

from .. import types as _types

globals().update({name: value for name, value in vars(_types).items()
                  if not name.startswith("_")})
__all__ = [name for name, value in vars(_types).items()
           if not name.startswith("_") and isinstance(value, _types.NumberType)]
