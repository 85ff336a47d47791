"""Which target runs kernels: ``cpu`` or ``cuda``.

The first use chooses: what TIDAL_TARGET says, else ``cuda`` when the CUDA
driver loads and has a device, else ``cpu`` (with a one-line notice);
TIDAL_TARGET=cuda without a usable driver fails at the first launch, naming
the driver's reason. ``set_target(name)`` and ``with use_target(name):``
change it at any time in the process (for the whole process, not per
thread). Each kernel keeps its compiled code per target; device arrays,
streams and events belong to the target they were made on.
"""

import contextlib
import os
import sys

from ._native import native
from .driver import CudaSupportError

TARGETS = ("cpu", "cuda")


def _checked_name(name):
    if name not in TARGETS:
        raise ValueError(f"a tidal target is 'cpu' or 'cuda', not {name!r}")
    return name


def _detected_target():
    """The target of a process that has chosen none: TIDAL_TARGET, else the
    cuda target where a GPU is usable, else cpu (saying why)."""
    requested = os.environ.get("TIDAL_TARGET", "").strip().lower()
    if requested:
        if requested not in TARGETS:
            raise ValueError(
                f"TIDAL_TARGET must be 'cpu' or 'cuda', not {requested!r}")
        return requested
    usable, count, reason, _ = native.driver_status()
    if usable and count > 0:
        return "cuda"
    print(f"tidal: no usable CUDA GPU ({reason}); kernels run on the cpu target",
          file=sys.stderr)
    return "cpu"


def current_target():
    """'cpu' or 'cuda': the target launches go to now."""
    name = native.selected_target()
    if name is None:
        name = _detected_target()
        native.select_target(name)
    return name


def on_cuda():
    """True when launches go to the cuda target now."""
    return current_target() == "cuda"


def set_target(name):
    """Launches go to target ``name`` ('cpu' or 'cuda') from now on. The
    cuda target needs a usable CUDA driver (TIDAL_CUDA_DRIVER names one,
    read at its first use): without one this raises the CudaSupportError
    (a RuntimeError too) a launch on it would raise."""
    _checked_name(name)
    if name == "cuda":
        usable, _, reason, _ = native.driver_status()
        if not usable:
            raise CudaSupportError(
                f"the cuda target cannot be selected: the CUDA driver is not usable: "
                f"{reason} (TIDAL_TARGET=cpu runs kernels on the cpu)")
    native.select_target(name)


@contextlib.contextmanager
def use_target(name):
    """``with use_target('cuda'):`` launches go to ``name`` inside the block,
    and to the target of before after it (also when it raises)."""
    previous = native.selected_target()
    set_target(name)
    try:
        yield name
    finally:
        native.select_target(previous)


def cuda_available():
    """True when a CUDA GPU is present: the CUDA driver loads and reports at
    least one device (what cuda.is_available() answered before it counted
    the cpu target)."""
    usable, count, _, _ = native.driver_status()
    return bool(usable and count > 0)


def is_available():
    """True whenever tidal will run kernels: on the cpu target always, on the
    cuda target when a GPU is present (cuda_available()). Programs gate
    their GPU code on it, as they do with Numba's simulator, which answers
    True too. Asks without choosing a target (no notice is printed)."""
    name = native.selected_target()
    if name is None:
        name = os.environ.get("TIDAL_TARGET", "").strip().lower() or None
    if name == "cpu":
        return True
    # 'cuda' chosen, or nothing chosen: the cuda target where a GPU is
    # usable, else (nothing chosen) the cpu target.
    return cuda_available() or name is None
