"""numba-cuda's cache-hinted loads and stores (cuda.ldca, ldcg, ldcs, ldlu,
ldcv; cuda.stcg, stcs, stwb, stwt): the values of plain accesses on every
target, PTX's ld.global.<op>/st.global.<op> in the PTX (accepted by ptxas
for sm_75, sm_80 and sm_90), and numba-cuda's checks of the array and the
index (docs/markers.md, docs/language.md)."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tidal import cuda, float32, float64, int32, int64, uint32, uint64, void
from tidal.errors import TypingError

LOADS = ("ldca", "ldcg", "ldcs", "ldlu", "ldcv")
STORES = ("stcg", "stcs", "stwb", "stwt")


@cuda.jit
def copy_with_hints(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        # each load and each store once per element, of a different slot
        a = cuda.ldca(src, i)
        b = cuda.ldcg(src, i)
        c = cuda.ldcs(src, i)
        d = cuda.ldlu(src, i)
        e = cuda.ldcv(src, i)
        cuda.stcg(dst, (0, i), a)
        cuda.stcs(dst, (1, i), b + c)
        cuda.stwb(dst, (2, i), d)
        cuda.stwt(dst, (3, i), e * 2)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64, np.float32,
                                   np.float64])
def test_values_on_every_target(target, dtype):
    src = np.arange(1, 40, dtype=dtype)
    dst = np.zeros((4, src.size), dtype=dtype)
    copy_with_hints[2, 32](src, dst)
    target.assert_result("copy_with_hints", dst, np.stack([src, src + src, src, src * 2]))


def test_two_dimensional_index_and_conversion(target):
    @cuda.jit(void(float32[:, ::1], float64[:, ::1]))
    def transpose_scaled(a, out):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            cuda.stwt(out, (j, i), cuda.ldcg(a, (i, j)) * 3)  # float32 -> float64 store

    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros((4, 3))
    transpose_scaled[(1, 1), (4, 4)](a, out)
    target.assert_result("transpose_scaled", out, a.T * 3)


def test_markers_and_ptx():
    sig = "void(float64[::1], float64[:, ::1])"
    kernel = cuda.jit(sig)(copy_with_hints.py_func)
    markers = kernel.inspect_markers(sig)
    for marker in ("ld.ca", "ld.cg", "ld.cs", "ld.lu", "ld.cv"):
        assert f"@tidal.{marker}.f64(ptr" in markers
    for marker in ("st.cg", "st.cs", "st.wb", "st.wt"):
        assert f"@tidal.{marker}.f64(ptr" in markers
    ptx = kernel.inspect_asm(sig)
    for instruction in ("ld.global.ca.f64", "ld.global.cg.f64", "ld.global.cs.f64",
                        "ld.global.lu.f64", "ld.global.cv.f64", "st.global.cg.f64",
                        "st.global.cs.f64", "st.global.wb.f64", "st.global.wt.f64"):
        assert instruction in ptx


def _ptxas():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    return path if path.is_file() else None


@pytest.mark.skipif(_ptxas() is None, reason="no ptxas (CUDA toolkit) under CUDA_HOME or /usr/local/cuda")
@pytest.mark.parametrize("cc", [(7, 5), (8, 0), (9, 0)])
@pytest.mark.parametrize("element", [int32, uint64, float32, float64])
def test_ptxas_accepts(tmp_path, cc, element):
    ptx, _ = cuda.compile_ptx(copy_with_hints.py_func, (element[::1], element[:, ::1]), cc=cc)
    path = tmp_path / "hints.ptx"
    path.write_text(ptx)
    run = subprocess.run([str(_ptxas()), f"-arch=sm_{cc[0]}{cc[1]}", "-c", str(path), "-o",
                          os.devnull], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("body, message", [
    ("cuda.ldca(x, 0)", "ldca operates on arrays or pointers. Got type float64"),
    ("cuda.ldcg(a2, 0)", "ldcg: Expected 2 indices, got a scalar"),
    ("cuda.ldcs(a2, (0, 0, 0))", "ldcs: Expected 2 indices, got 3"),
    ("cuda.ldlu(a1, 1.5)", "ldlu: float64 is not a valid index"),
    ("cuda.ldcv(c1, 0)", "ldcv requires array of integer or float type, got complex128"),
    ("cuda.ldca(b1, 0)", "ldca requires array of integer or float type, got bool"),
    ("cuda.ldca(i8, 0)", "ldca requires array dtype with bitwidth in \\[32, 64\\] on tidal, got int8"),
    ("cuda.stcg(a1, 0, a1)", "the value of stcg\\(\\) must be a number, not array"),
])
def test_errors_are_numba_cudas(body, message):
    namespace = {"cuda": cuda}
    exec(f"def bad(x, a1, a2, c1, b1, i8):\n    {body}\n", namespace)
    sig = "void(float64, float64[::1], float64[:, ::1], complex128[::1], bool[::1], int8[::1])"
    with pytest.raises(TypingError, match=r"\d+:\d+: .*" + message):
        cuda.jit(sig)(namespace["bad"])


def test_store_into_a_read_only_array():
    table = np.arange(4.0)

    def bad(out):
        t = cuda.const.array_like(table)
        cuda.stwb(t, 0, 1.0)

    with pytest.raises(TypingError, match="stwb on a read-only array"):
        cuda.jit("void(float64[::1])")(bad)
