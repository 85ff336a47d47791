"""tidal.cuda's intrinsic names come from the compiler's intrinsic table
(generated at build time by `tidalc --list-intrinsics`): every row is an
object of tidal.cuda with its name and doc, and each one means something
to the compiler."""

import os
import subprocess

import numpy as np
import pytest

from tidal import cuda
from tidal.cuda import intrinsics
from tidal.cuda._intrinsic_table import INTRINSICS

TIDALC = os.path.join(os.path.dirname(intrinsics.__file__), "..", "..", "..", "bin", "tidalc")


def lookup(path):
    # cuda.* are objects of tidal.cuda; libdevice.* of tidal.cuda.libdevice.
    obj = cuda.libdevice if path.startswith("libdevice.") else cuda
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def test_every_row_is_an_object_of_tidal_cuda():
    assert len(INTRINSICS) > 40
    for path, kind, doc in INTRINSICS:
        obj = lookup(path)
        assert obj.__tidal_intrinsic__ == path
        assert obj.__doc__ == doc and doc
        if kind == "function":
            with pytest.raises(RuntimeError, match="can only be used inside a kernel"):
                obj()


def test_generated_module_matches_tidalc():
    if not os.path.exists(TIDALC):
        pytest.skip("tidalc is not beside the package (not a build tree)")
    listed = subprocess.run([TIDALC, "--list-intrinsics"], check=True,
                            capture_output=True, text=True).stdout
    namespace = {}
    exec(listed, namespace)
    assert namespace["INTRINSICS"] == INTRINSICS


def test_rows_served_by_one_handler_compile_to_their_marker():
    # math.*, cuda.atomic.* and fences are rows of a shared handler that
    # reads the row's marker.
    @cuda.jit
    def k(x, counts, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = cuda.cbrt(x[i]) + np.float64(0) * x[i]
            cuda.atomic.max(counts, 0, i)
            cuda.threadfence_block()

    x = np.array([8.0, 27.0, 64.0])
    counts = np.zeros(1, np.int64)
    out = np.zeros(3)
    k[1, 32](x, counts, out)
    np.testing.assert_allclose(out, [2.0, 3.0, 4.0])
    assert counts[0] == 2


def test_math_exp2_is_one_row_on_an_existing_marker():
    # math.exp2 (Python 3.11) is one row of IntrinsicsMath.cpp over the
    # existing tidal.math.exp2 marker.
    import math

    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = math.exp2(x[i])

    for dtype in (np.float32, np.float64):
        x = np.array([-1.0, 0.0, 0.5, 10.0], dtype)
        out = np.zeros(4, dtype)
        k[1, 32](x, out)
        np.testing.assert_allclose(out, np.exp2(x), rtol=1e-6)
