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

from .. import _tidal

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
    usable, count, reason, _ = _tidal.driver_status()
    if usable and count > 0:
        return "cuda"
    print(f"tidal: no usable CUDA GPU ({reason}); kernels run on the cpu target",
          file=sys.stderr)
    return "cpu"


def current_target():
    """'cpu' or 'cuda': the target launches go to now."""
    name = _tidal.selected_target()
    if name is None:
        name = _detected_target()
        _tidal.select_target(name)
    return name


def set_target(name):
    """Launches go to target ``name`` ('cpu' or 'cuda') from now on. The
    cuda target needs a usable CUDA driver (TIDAL_CUDA_DRIVER names one,
    read at its first use): without one this raises the RuntimeError a
    launch on it would raise."""
    _checked_name(name)
    if name == "cuda":
        usable, _, reason, _ = _tidal.driver_status()
        if not usable:
            raise RuntimeError(
                f"the cuda target cannot be selected: the CUDA driver is not usable: "
                f"{reason} (TIDAL_TARGET=cpu runs kernels on the cpu)")
    _tidal.select_target(name)


@contextlib.contextmanager
def use_target(name):
    """``with use_target('cuda'):`` launches go to ``name`` inside the block,
    and to the target of before after it (also when it raises)."""
    previous = _tidal.selected_target()
    set_target(name)
    try:
        yield name
    finally:
        _tidal.select_target(previous)


def is_available():
    """True when the CUDA driver loads and reports at least one device."""
    return bool(_tidal.driver_status()[0])


def detect():
    """Prints the CUDA devices (id, name, whether tidal supports them, and
    a few of their facts, laid out as numba.cuda.detect() prints them), then
    the target kernels run on. Returns True when a supported GPU is found."""
    usable, count, reason, library = _tidal.driver_status()
    if not usable:
        print(f"No usable CUDA device: {reason}")
        print(f"Kernels run on the '{current_target()}' target")
        return False
    from .devices import MIN_COMPUTE_CAPABILITY, _driver_devices
    print(f"Found {count} CUDA devices")
    supported = 0
    for device in _driver_devices():
        major, minor = device.compute_capability
        if (major, minor) < MIN_COMPUTE_CAPABILITY:
            status = "[NOT SUPPORTED: CC < {}.{}]".format(*MIN_COMPUTE_CAPABILITY)
        else:
            status = "[SUPPORTED]"
            supported += 1
        print(f"id {device.id}    {device.name:>20s} {status:>40s}")
        facts = (
            ("Compute Capability", f"{major}.{minor}"),
            ("PCI Device ID", device.PCI_DEVICE_ID),
            ("PCI Bus ID", device.PCI_BUS_ID),
            ("UUID", device.uuid),
            ("Watchdog", "Enabled" if device.KERNEL_EXEC_TIMEOUT else "Disabled"),
            ("FP32/FP64 Performance Ratio", device.SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO),
        )
        for key, value in facts:
            print(f"{key:>40s}: {value}")
    print("Summary:")
    print(f"\t{supported}/{count} devices are supported")
    print(f"Kernels run on the '{current_target()}' target (driver: {library})")
    return supported > 0
