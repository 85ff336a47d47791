"""numba-cuda's ``numba.cuda.testing`` names that libraries' test suites
import (``CUDATestCase``, ``skip_on_cudasim``, ``skip_unless_cc_60``, ...),
for suites run on tidal through ``python3 -m tidal run -m pytest``
(docs/ecosystem.md). tidal is not Numba's simulator: the simulator's skips
do not skip and ``skip_unless_cudasim`` does; compute-capability checks ask
the current device (the cpu target's reports 7.5). What tidal has no
counterpart for (``assertFileCheckAsm``, nvdisasm, conda toolkits) is left
out: importing it is an ImportError naming it."""

import os
import unittest
from unittest import TestCase

import numpy as np

__all__ = ["CUDATestCase", "cc_X_or_above", "skip_on_cudasim", "skip_unless_cudasim",
           "skip_on_arm", "skip_under_cuda_memcheck", "skip_if_cudadevrt_missing",
           "skip_unless_cc_50", "skip_unless_cc_53", "skip_unless_cc_60", "skip_unless_cc_75",
           "skip_unless_cc_90", "xfail_unless_cudasim", "unittest"]

_WARNING_SWITCHES = ("TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS", "TIDAL_CUDA_WARN_ON_IMPLICIT_COPY")


class CUDATestCase(TestCase):
    """A test case that uses a CUDA device: Numba's performance warnings
    (low occupancy, implicit copies) are off during each test, as in
    numba-cuda's, and back as they were after it."""

    FLOAT16_RTOL = np.finfo(np.float16).eps

    def setUp(self):
        self._tidal_warning_switches = {name: os.environ.get(name) for name in _WARNING_SWITCHES}
        for name in _WARNING_SWITCHES:
            os.environ[name] = "0"

    def tearDown(self):
        for name, value in self._tidal_warning_switches.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _reason(reason):
    if not isinstance(reason, str):
        raise TypeError(f"a skip's reason is a str, not {reason!r}")
    return reason


def skip_on_cudasim(reason):
    """Skips under Numba's simulator, which tidal is not: never skips."""
    return unittest.skipIf(False, _reason(reason))


def skip_unless_cudasim(reason):
    """Runs only under Numba's simulator: always skips on tidal."""
    return unittest.skip(_reason(reason))


def xfail_unless_cudasim(fn):
    """An expected failure except under the simulator: expected to fail."""
    return unittest.expectedFailure(fn)


def skip_on_arm(reason):
    import platform
    machine = platform.machine().lower()
    return unittest.skipIf(machine.startswith(("arm", "aarch")), _reason(reason))


def skip_under_cuda_memcheck(reason):
    return unittest.skipIf(os.environ.get("CUDA_MEMCHECK") is not None, _reason(reason))


def skip_if_cudadevrt_missing(fn):
    """tidal needs no cudadevrt (grid.sync() is lowered in-line): never skips."""
    return fn


def cc_X_or_above(major, minor):
    """Whether the current device's compute capability is (major, minor) or newer."""
    from .devices import get_current_device
    return tuple(get_current_device().compute_capability) >= (major, minor)


def _skip_unless_cc(major, minor):
    def decorate(fn):
        return unittest.skipUnless(cc_X_or_above(major, minor),
                                   f"requires cc >= {major}.{minor}")(fn)
    return decorate


skip_unless_cc_50 = _skip_unless_cc(5, 0)
skip_unless_cc_53 = _skip_unless_cc(5, 3)
skip_unless_cc_60 = _skip_unless_cc(6, 0)
skip_unless_cc_75 = _skip_unless_cc(7, 5)
skip_unless_cc_90 = _skip_unless_cc(9, 0)
