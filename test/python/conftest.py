"""What every test module shares: the package from the build tree, the `rng`
fixture, the `gpu` marker, the `mock_script` fixture (mock_driver.py) and the
`target` fixture.

`target` runs a test once per target, in this process (targets.py): 'cpu'
always, and 'cuda', over the real driver where a GPU is present (those cases
are marked `gpu`) and over the mock driver (build/lib/libtidal_mock_cuda.so,
test/mock_driver) everywhere else. The mock runs no kernels (device memory is
host memory, copies are real, a launch is checked and logged): a test checks
a kernel's results with `target.assert_result(...)` or `if target.ran(...):`,
which on the mock check that the kernel was launched, and reads what the mock
saw with `target.driver_calls()`.
"""

import os
import signal
import sys

import pytest

# Tests stop endless kernels with SIGINT (the fuzzer's interrupt tests, and
# Ctrl-C in a cpu launch). A shell starts a background job with SIGINT
# ignored, Python then keeps ignoring it, and tidal's handler, installed at
# the first cpu launch, chains to what it found: ignored, launches were
# never interrupted, and four tests of test_fuzz_regressions.py failed under
# `( make check & )`. Python's handler first, as in a foreground run.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The package is imported from the build tree (PYTHONPATH=build/python); make
# `pytest test/python` work without it too.
_BUILD_PYTHON = os.path.join(os.path.dirname(__file__), "..", "..", "build", "python")
if os.path.isdir(_BUILD_PYTHON) and _BUILD_PYTHON not in sys.path:
    sys.path.append(os.path.abspath(_BUILD_PYTHON))  # after PYTHONPATH, never before

# Numba's performance warnings off, as Numba's CUDATestCase turns them off for
# its tests (test_performance_warnings.py turns them on); scripts that tests
# start inherit this too.
os.environ.setdefault("TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
os.environ.setdefault("TIDAL_CUDA_WARN_ON_IMPLICIT_COPY", "0")

# mock_script: a script in a process of its own over the mock driver.
from mock_driver import mock_script  # noqa: E402,F401  (mock_script is a fixture)
from targets import CUDA_IS_MOCK, Target, target_params  # noqa: E402
from tidal.cuda.target import use_target  # noqa: E402


@pytest.fixture(params=target_params())
def target(request):
    name = request.param
    target = Target(name, mock=name == "cuda" and CUDA_IS_MOCK)
    target.forget_driver_calls()
    with use_target(name):
        yield target


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(1234)


def pytest_configure(config):
    # Numba's warning for cuda.jit(debug=True) with opt=True: tidal's tests
    # use debug=True for its checks (test_performance_warnings.py sees it).
    config.addinivalue_line("filterwarnings", "ignore::tidal.errors.InvalidConfigWarning")
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA GPU (run on a lent GPU machine by utils/gpu-kit/run.sh)")
