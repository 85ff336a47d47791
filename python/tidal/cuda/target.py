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
    """Prints the CUDA devices (id, name, whether tidal supports them, and
    a few of their facts, laid out as numba.cuda.detect() prints them), then
    the target kernels run on. Returns True when a supported GPU is found."""
    usable, count, reason, library = _native().driver_status()
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
