import os
import sys

import pytest

# The package is imported from the build tree (PYTHONPATH=build/python); make
# `pytest test/python` work without it too.
_BUILD_PYTHON = os.path.join(os.path.dirname(__file__), "..", "..", "build", "python")
if os.path.isdir(_BUILD_PYTHON) and _BUILD_PYTHON not in sys.path:
    sys.path.insert(0, os.path.abspath(_BUILD_PYTHON))


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(1234)
