"""Which target runs kernels: ``cuda`` when the CUDA driver loads and has a
device, ``cpu`` otherwise (with a one-line notice), or what TIDAL_TARGET says
(TIDAL_TARGET=cuda without a usable driver fails at the first launch, naming
the driver's reason)."""

import os
import sys

_TARGETS = ("cpu", "cuda")
_current = None


def _native():
    from .. import _tidal
    return _tidal


def current_target():
    """'cpu' or 'cuda', decided once per process."""
    global _current
    if _current is not None:
        return _current
    requested = os.environ.get("TIDAL_TARGET", "").strip().lower()
    if requested:
        if requested not in _TARGETS:
            raise ValueError(
                f"TIDAL_TARGET must be 'cpu' or 'cuda', not {requested!r}")
        _current = requested
        return _current
    usable, count, reason, _ = _native().driver_status()
    if usable and count > 0:
        _current = "cuda"
        return _current
    print(f"tidal: no usable CUDA GPU ({reason}); kernels run on the cpu target",
          file=sys.stderr)
    _current = "cpu"
    return _current


def is_available():
    """True when the CUDA driver loads and reports at least one device."""
    return bool(_native().driver_status()[0])


def detect():
    """Prints the CUDA driver's state and the target kernels run on; returns
    True when a GPU is usable, as numba.cuda.detect() does."""
    usable, count, reason, library = _native().driver_status()
    if usable:
        print(f"Found {count} CUDA device(s) through {library}")
    else:
        print(f"No usable CUDA device: {reason}")
    print(f"Kernels run on the '{current_target()}' target")
    return bool(usable)
