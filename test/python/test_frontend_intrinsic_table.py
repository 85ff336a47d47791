"""tidal.cuda's intrinsic names come from the compiler's intrinsic table
(generated at build time by `tidalc --list-intrinsics`): every row is an
object of tidal.cuda with its name and doc, and each one means something
to the compiler."""

import os
import subprocess

import numpy as np
import pytest

import tidal
from tidal import cuda
from tidal.cuda import intrinsics
from tidal._intrinsic_table import INTRINSICS

TIDALC = os.path.join(os.path.dirname(intrinsics.__file__), "..", "..", "..", "bin", "tidalc")


def lookup(path):
    # cuda.* are objects of tidal.cuda; libdevice.* of tidal.cuda.libdevice;
    # cast.* are tidal's scalar types.
    if path.startswith("cast."):
        return tidal.types.SCALAR_TYPES[path.split(".", 1)[1]]
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
        if kind == "function" and not path.startswith("cast."):
            with pytest.raises(RuntimeError, match="can only be used inside a kernel"):
                obj()


def test_scalar_types_are_the_tables_casts():
    # tidal.float32 and the rest are made from the cast.* rows: one type per
    # cast the compiler knows, each casting in a kernel.
    casts = {path.split(".", 1)[1] for path, _, _ in INTRINSICS if path.startswith("cast.")}
    assert casts == set(tidal.types.SCALAR_TYPES)
    assert {"bool", "int8", "uint64", "float16", "float64"} <= casts
    assert tidal.float32 is tidal.types.SCALAR_TYPES["float32"]
    assert tidal.bool_ is tidal.boolean is tidal.types.SCALAR_TYPES["bool"]
    assert tidal.intp is tidal.int64
    assert tidal.float32.__tidal_intrinsic__ == "cast.float32"
    assert tidal.float32(1.5) == np.float32(1.5)

    @cuda.jit
    def k(x, out):
        out[0] = tidal.int8(x[0]) + tidal.uint16(x[0])

    x = np.array([300.7])
    out = np.zeros(1, np.int64)
    k[1, 1](x, out)
    assert out[0] == np.int8(np.int64(300)) + np.uint16(300)


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
