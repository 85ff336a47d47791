"""The targets a test runs on, for the `target` fixture (conftest.py): 'cpu'
always, and 'cuda', over the real driver where a GPU is present (those cases
are marked `gpu`) and over the mock driver (build/lib/libtidal_mock_cuda.so,
test/mock_driver) everywhere else. A test that holds on some targets only
says which with `@on_targets(...)`; one that needs a real GPU with
`@needs_gpu`."""

import json
import os
from pathlib import Path

import pytest

from mock_driver import MOCK
from tidal import _tidal, cuda

# Set in a child process started for the cases of another target: the file
# that the child appends one JSON line per test report to.
CHILD_REPORT_VARIABLE = "TIDAL_TEST_CHILD_REPORT"

MOCK_LIBRARY = MOCK
_DRIVER_USABLE, _DEVICE_COUNT, _DRIVER_REASON, _DRIVER_LIBRARY = _tidal.driver_status()
# The process's own driver is a real one with a device (not the mock).
REAL_GPU = bool(_DRIVER_USABLE and _DEVICE_COUNT > 0
                and Path(str(_DRIVER_LIBRARY)).name != MOCK_LIBRARY.name)
PROCESS_TARGET = cuda.current_target()


class Target:
    """One target a test runs on: `name` is 'cpu' or 'cuda'; `computes` is
    False on the mock driver, whose launches run nothing."""

    def __init__(self, name, mock):
        self.name = name
        self.mock = mock
        self.computes = not mock

    def __repr__(self):
        return f"<target {self.name}{' (mock driver)' if self.mock else ''}>"

    def driver_calls(self, call=None):
        """The mock driver's log since the test began (one dict per call),
        only the calls named `call` if given; None off the mock."""
        if not self.mock:
            return None
        path = os.environ.get("TIDAL_MOCK_CUDA_LOG")
        if not path or not os.path.exists(path):
            return []
        calls = [json.loads(line) for line in Path(path).read_text().splitlines()]
        return [c for c in calls if call is None or c["call"] == call]

    def launched(self, kernel):
        """How many launches of `kernel` the mock driver saw (mock only)."""
        return sum(1 for c in self.driver_calls("cuLaunchKernel") if c["kernel"] == kernel)

    def assert_result(self, kernel, actual, expected, rtol=None, launches=1):
        """A kernel's result: where kernels run, `actual` equals `expected`
        (within `rtol` when given); on the mock driver, which runs nothing,
        the kernel named `kernel` reached cuLaunchKernel `launches` times."""
        import numpy as np
        if not self.computes:
            assert self.launched(kernel) == launches, self.driver_calls("cuLaunchKernel")
        elif rtol is None:
            np.testing.assert_array_equal(actual, expected)
        else:
            np.testing.assert_allclose(actual, expected, rtol=rtol)

    def ran(self, kernel, launches=1):
        """Whether the kernel's results can be checked: True where kernels
        run; on the mock driver, False once it has checked that the kernel
        named `kernel` reached cuLaunchKernel `launches` times."""
        if self.computes:
            return True
        assert self.launched(kernel) == launches, self.driver_calls("cuLaunchKernel")
        return False

    @property
    def float_rtol(self):
        """Tolerance for float results that the GPU may contract into fma."""
        return None if self.name == "cpu" else 1e-6


def cuda_is_mock():
    return not REAL_GPU


def target_params(*names):
    """pytest.param per target (all when no names are given), with its marks."""
    params = [pytest.param("cpu", id="cpu")]
    if REAL_GPU:
        params.append(pytest.param("cuda", id="cuda", marks=pytest.mark.gpu))
    elif MOCK_LIBRARY.is_file():
        params.append(pytest.param("cuda", id="cuda"))
    else:
        params.append(pytest.param("cuda", id="cuda", marks=pytest.mark.skip(
            reason=f"no GPU ({_DRIVER_REASON}) and no mock CUDA driver at {MOCK_LIBRARY}")))
    return [p for p in params if not names or p.values[0] in names]


def on_targets(*names):
    """Runs a test that takes `target` on the targets named only."""
    return pytest.mark.parametrize("target", target_params(*names), indirect=True)


def needs_gpu(test):
    """Marks a test that needs a real GPU: `gpu`, and skipped elsewhere, saying why."""
    skip = pytest.mark.skipif(not REAL_GPU, reason=f"no usable CUDA GPU: {_DRIVER_REASON}")
    return pytest.mark.gpu(skip(test))
