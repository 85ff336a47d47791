"""The targets a test runs on, for the `target` fixture (conftest.py): 'cpu'
always, and 'cuda', over the real driver where a GPU is present (those cases
are marked `gpu`) and over the mock driver (build/lib/libtidal_mock_cuda.so,
test/mock_driver) everywhere else. A test that holds on some targets only
says which with `@on_targets(...)`; one that needs a real GPU with
`@needs_gpu`.

Every case runs in the pytest process: tidal.cuda.target.use_target switches
targets, and the driver library is chosen at its first use, so this module
puts the mock in place of a missing driver before anything uses one."""

import atexit
import ctypes
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from mock_driver import MOCK
from tidal import _tidal
from tidal.cuda import target as target_module


def _libcuda_has_a_device():
    """Whether libcuda.so.1 loads and reports a device (asked through ctypes,
    so that tidal has not chosen its driver yet)."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return (libcuda.cuInit(0) == 0 and libcuda.cuDeviceGetCount(ctypes.byref(count)) == 0
            and count.value > 0)


def _put_the_mock_in_place():
    """Without a GPU (and without a driver chosen by TIDAL_CUDA_DRIVER), the
    cuda target of this process runs over the mock driver, logging its calls
    to a file of the session. Returns the log's path, or None."""
    chosen = os.environ.get("TIDAL_CUDA_DRIVER")
    if chosen and Path(chosen).name != MOCK.name:
        return None  # a driver of the user's choice
    if not chosen and (not MOCK.is_file() or _libcuda_has_a_device()):
        return None
    handle, log = tempfile.mkstemp(prefix="tidal-mock-calls-", suffix=".jsonl")
    os.close(handle)
    atexit.register(lambda: os.path.exists(log) and os.remove(log))
    os.environ["TIDAL_MOCK_CUDA_LOG"] = log  # the mock reads it at each call
    if not chosen:
        os.environ["TIDAL_CUDA_DRIVER"] = str(MOCK)
        try:
            _tidal.driver_status()  # loads the driver: from now on the mock, for good
        finally:
            # Scripts that tests start choose their own driver.
            del os.environ["TIDAL_CUDA_DRIVER"]
    return log


MOCK_LOG = _put_the_mock_in_place()
_USABLE, _DEVICE_COUNT, DRIVER_REASON, _DRIVER_LIBRARY = _tidal.driver_status()
# The process's driver is a real one with a device (not the mock).
REAL_GPU = bool(_USABLE and _DEVICE_COUNT > 0 and Path(str(_DRIVER_LIBRARY)).name != MOCK.name)
CUDA_IS_MOCK = MOCK_LOG is not None
if MOCK_LOG is not None and not os.environ.get("TIDAL_TARGET"):
    # The mock is no GPU: tests that take no `target` run on the cpu target, as
    # in a process without a driver.
    target_module.set_target("cpu")


class Target:
    """One target a test runs on: `name` is 'cpu' or 'cuda'; `computes` is
    False on the mock driver, whose launches run nothing."""

    def __init__(self, name, mock):
        self.name = name
        self.mock = mock
        self.computes = not mock

    def __repr__(self):
        return f"<target {self.name}{' (mock driver)' if self.mock else ''}>"

    def forget_driver_calls(self):
        """Empties the mock driver's log (at the start of each test)."""
        log = os.environ.get("TIDAL_MOCK_CUDA_LOG")
        if self.mock and log and os.path.exists(log):
            os.truncate(log, 0)

    def driver_calls(self, call=None):
        """The mock driver's log since the test began (one dict per call),
        only the calls named `call` if given; None off the mock."""
        if not self.mock:
            return None
        log = os.environ.get("TIDAL_MOCK_CUDA_LOG")
        if not log or not os.path.exists(log):
            return []
        calls = [json.loads(line) for line in Path(log).read_text().splitlines()]
        return [c for c in calls if call is None or c["call"] == call]

    def launched(self, kernel):
        """How many launches of `kernel` the mock driver saw (mock only;
        cooperative launches included)."""
        return sum(1 for c in self.driver_calls()
                   if c["call"] in ("cuLaunchKernel", "cuLaunchCooperativeKernel")
                   and c.get("kernel") == kernel)

    def ran(self, kernel, launches=1):
        """Whether the kernel's results can be checked: True where kernels
        run; on the mock driver, False once it has checked that the kernel
        named `kernel` reached cuLaunchKernel `launches` times."""
        if self.computes:
            return True
        assert self.launched(kernel) == launches, self.driver_calls("cuLaunchKernel")
        return False

    def assert_result(self, kernel, actual, expected, rtol=None, launches=1):
        """A kernel's result: where kernels run, `actual` equals `expected`
        (within `rtol` when given); on the mock driver, which runs nothing,
        the kernel named `kernel` reached cuLaunchKernel `launches` times."""
        if not self.ran(kernel, launches):
            return
        if rtol is None:
            np.testing.assert_array_equal(actual, expected)
        else:
            np.testing.assert_allclose(actual, expected, rtol=rtol)

    @property
    def float_rtol(self):
        """Tolerance for float results that the GPU may contract into fma."""
        return None if self.name == "cpu" else 1e-6


def target_params(*names):
    """pytest.param per target (all when no names are given), with its marks."""
    params = [pytest.param("cpu", id="cpu")]
    if REAL_GPU:
        params.append(pytest.param("cuda", id="cuda", marks=pytest.mark.gpu))
    elif CUDA_IS_MOCK:
        params.append(pytest.param("cuda", id="cuda"))
    else:
        params.append(pytest.param("cuda", id="cuda", marks=pytest.mark.skip(
            reason=f"no GPU ({DRIVER_REASON}) and no mock CUDA driver at {MOCK}")))
    return [p for p in params if not names or p.values[0] in names]


def on_targets(*names):
    """Runs a test that takes `target` on the targets named only."""
    return pytest.mark.parametrize("target", target_params(*names), indirect=True)


def needs_gpu(test):
    """Marks a test that needs a real GPU: `gpu`, and skipped elsewhere, saying why."""
    skip = pytest.mark.skipif(not REAL_GPU, reason=f"no usable CUDA GPU: {DRIVER_REASON}")
    return pytest.mark.gpu(skip(test))
