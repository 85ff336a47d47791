"""numba.cuda.testing for the tests run against tidal (copied into the scratch folder).

Numba's base classes and skips are kept: CUDATestCase only sets Numba's
warning switches, and the skips read Numba's config, where
NUMBA_ENABLE_CUDASIM is off, so tidal is tested as Numba's compiled target is
(skip_on_cudasim does not skip). What would reach Numba's own CUDA driver
is replaced by tidal's:
  - the compute capability checks ask tidal's current device,
  - ContextResettingTestCase closes tidal's context after each test,
  - no static cudadevrt is needed (tidal links none), so nothing skips for it,
  - ensure_supported_ccs_initialized (Numba's NVVM) does nothing.
"""

import unittest  # noqa: F401  (the tests import it from here)

from numba.cuda.testing import *  # noqa: F401,F403
from numba.cuda.testing import CUDATestCase

from tidal import cuda as _tidal_cuda


def ensure_supported_ccs_initialized():
    pass


class ContextResettingTestCase(CUDATestCase):
    def tearDown(self):
        super().tearDown()
        _tidal_cuda.close()


def cc_X_or_above(major, minor):
    return tuple(_tidal_cuda.get_current_device().compute_capability) >= (major, minor)


def skip_unless_cc_50(function):
    return unittest.skipUnless(cc_X_or_above(5, 0), "requires cc >= 5.0")(function)


def skip_unless_cc_53(function):
    return unittest.skipUnless(cc_X_or_above(5, 3), "requires cc >= 5.3")(function)


def skip_unless_cc_60(function):
    return unittest.skipUnless(cc_X_or_above(6, 0), "requires cc >= 6.0")(function)


def cudadevrt_missing():
    return False


def skip_if_cudadevrt_missing(function):
    return function
