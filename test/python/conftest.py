import os
import sys

import pytest

# The package is imported from the build tree (PYTHONPATH=build/python); make
# `pytest test/python` work without it too.
_BUILD_PYTHON = os.path.join(os.path.dirname(__file__), "..", "..", "build", "python")
if os.path.isdir(_BUILD_PYTHON) and _BUILD_PYTHON not in sys.path:
    sys.path.append(os.path.abspath(_BUILD_PYTHON))  # after PYTHONPATH, never before


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(1234)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA GPU (run on a lent GPU machine by utils/gpu-kit/run.sh)")
