"""Not Numba: the package ``numba`` that `python3 -m tidal run` puts first on
PYTHONPATH (tidal/numba_mapping.py). Imported in place of Numba, it imports
Numba itself from the rest of sys.path (where installed), makes numba.cuda
tidal.cuda, and leaves Numba in sys.modules["numba"], which is what the
importing statement gets."""

__tidal_shim__ = True

from tidal.numba_mapping import install_as_numba_cuda  # noqa: E402

install_as_numba_cuda()
