"""tidal._tidal, the C++ extension, as tidal.cuda's modules reach it:
``from ._native import native``. It imports nothing of tidal.cuda, so any
module of the package can import it at its top.

The launch limits are the extension's, which takes them from the C++
constants (include/tidal/HostABI.h) that every target enforces.
"""

from .. import _tidal as native

MAX_THREADS_PER_BLOCK = native.MAX_THREADS_PER_BLOCK
MAX_BLOCK_DIM = native.MAX_BLOCK_DIM  # (x, y, z)
MAX_GRID_DIM = native.MAX_GRID_DIM  # (x, y, z)
# Shared memory per block, static and dynamic (without and with opting in).
MAX_SHARED_MEMORY_PER_BLOCK = native.MAX_SHARED_MEMORY_PER_BLOCK
MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = native.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
