"""numba-cuda's cuda.fp16 functions beyond Numba 0.56's (IntrinsicsHalf.cpp):
hdiv, hrcp, hmax_nan/hmin_nan, and the math functions, computed in float32
and rounded to float16, on every target; their PTX accepted by ptxas for
sm_75, sm_80 and sm_90 (docs/language.md, "cuda.fp16")."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tidal import cuda, float16, void

fp16 = cuda.fp16

# name: (the intrinsic, NumPy's function in float32, whether exact)
UNARY = {
    "hsin": (fp16.hsin, np.sin, False),
    "hcos": (fp16.hcos, np.cos, False),
    "htanh": (fp16.htanh, np.tanh, False),
    "hexp": (fp16.hexp, np.exp, False),
    "hexp2": (fp16.hexp2, np.exp2, False),
    "hexp10": (fp16.hexp10, lambda x: np.power(np.float32(10), x), False),
    "hlog": (fp16.hlog, np.log, False),
    "hlog2": (fp16.hlog2, np.log2, False),
    "hlog10": (fp16.hlog10, np.log10, False),
    "hrsqrt": (fp16.hrsqrt, lambda x: 1 / np.sqrt(x), False),
    "hsqrt": (fp16.hsqrt, np.sqrt, True),
    "hrcp": (fp16.hrcp, lambda x: 1 / x, True),
    "hceil": (fp16.hceil, np.ceil, True),
    "hfloor": (fp16.hfloor, np.floor, True),
    "htrunc": (fp16.htrunc, np.trunc, True),
    "hrint": (fp16.hrint, np.rint, True),
}

VALUES = np.array([0.1, 0.5, 0.75, 1.0, 1.5, 2.5, 3.0, 3.5, 4.25, 7.0, 9.9, 0.333,
                   -0.5, -1.5, -2.5, -3.7], dtype=np.float16)


def _kernel(function):
    @cuda.jit(void(float16[::1], float16[::1]))
    def apply(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = function(x[i])
    return apply


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(target, name):
    function, reference, exact = UNARY[name]
    positive_only = name in ("hlog", "hlog2", "hlog10", "hrsqrt", "hsqrt")
    x = np.abs(VALUES) if positive_only else VALUES.copy()
    out = np.zeros_like(x)
    kernel = _kernel(function)
    kernel[1, 32](x, out)
    if not target.ran("apply"):
        return
    with np.errstate(all="ignore"):
        expected = reference(x.astype(np.float32)).astype(np.float16)
    if exact or target.name == "cpu":
        # The cpu target rounds the float32 result; the exact ones are
        # correctly rounded on every target.
        np.testing.assert_array_equal(out, expected, err_msg=name)
    else:  # the GPU's float32 functions may differ in their last float32 bit
        np.testing.assert_array_less(np.abs(out.astype(np.float32) - expected.astype(np.float32)),
                                     np.spacing(np.abs(expected)).astype(np.float32) * 1.01)


def test_hdiv_is_correctly_rounded(target, rng):
    a = rng.uniform(-100, 100, 512).astype(np.float16)
    b = rng.uniform(0.01, 50, 512).astype(np.float16)
    out = np.zeros_like(a)

    @cuda.jit(void(float16[::1], float16[::1], float16[::1]))
    def divide(a, b, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = fp16.hdiv(a[i], b[i])

    divide[4, 128](a, b, out)
    # float64's quotient, rounded once, is the correctly rounded half one.
    target.assert_result("divide", out, (a.astype(np.float64) / b.astype(np.float64))
                         .astype(np.float16))


def test_max_and_min_with_nan(target):
    nan = np.float16("nan")
    a = np.array([1, nan, 3, nan, -0.5], dtype=np.float16)
    b = np.array([2, 5, nan, nan, -0.25], dtype=np.float16)
    out = np.zeros((4, 5), dtype=np.float16)

    @cuda.jit(void(float16[::1], float16[::1], float16[:, ::1]))
    def extremes(a, b, out):
        i = cuda.grid(1)
        if i < a.size:
            out[0, i] = fp16.hmax_nan(a[i], b[i])
            out[1, i] = fp16.hmin_nan(a[i], b[i])
            out[2, i] = fp16.hmax(a[i], b[i])
            out[3, i] = fp16.hmin(a[i], b[i])

    extremes[1, 8](a, b, out)
    if target.ran("extremes"):
        np.testing.assert_array_equal(out[0], [2, nan, nan, nan, -0.25])
        np.testing.assert_array_equal(out[1], [1, nan, nan, nan, -0.5])
        np.testing.assert_array_equal(out[2], [2, 5, nan, nan, -0.25])  # b when either is NaN
        np.testing.assert_array_equal(out[3], [1, 5, nan, nan, -0.5])


def test_typing_errors():
    from tidal.errors import TypingError

    def bad(out):
        out[0] = fp16.hsin(1j)

    with pytest.raises(TypingError, match=r"cuda.fp16.hsin\(\) takes float16 numbers"):
        cuda.jit("void(float16[::1])")(bad)


def _ptxas():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    return path if path.is_file() else None


@pytest.mark.skipif(_ptxas() is None, reason="no ptxas (CUDA toolkit) under CUDA_HOME or /usr/local/cuda")
@pytest.mark.parametrize("cc", [(7, 5), (8, 0), (9, 0)])
def test_ptxas_accepts_every_function(tmp_path, cc):
    def every(x, out):
        i = cuda.grid(1)
        a = x[i]
        out[i] = (fp16.hsin(a) + fp16.hcos(a) + fp16.htanh(a) + fp16.htanh_approx(a)
                  + fp16.hexp(a) + fp16.hexp2(a) + fp16.hexp10(a) + fp16.hlog(a)
                  + fp16.hlog2(a) + fp16.hlog10(a) + fp16.hsqrt(a) + fp16.hrsqrt(a)
                  + fp16.hrcp(a) + fp16.hceil(a) + fp16.hfloor(a) + fp16.htrunc(a)
                  + fp16.hrint(a) + fp16.hdiv(a, x[0]) + fp16.hmax_nan(a, x[0])
                  + fp16.hmin_nan(a, x[0]))

    ptx, _ = cuda.compile_ptx(every, (float16[::1], float16[::1]), cc=cc)
    path = tmp_path / "every.ptx"
    path.write_text(ptx)
    run = subprocess.run([str(_ptxas()), f"-arch=sm_{cc[0]}{cc[1]}", "-c", str(path), "-o",
                          os.devnull], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


# numba-cuda types these math functions of a float16 as float16 (cudamath.py,
# and fp16.py's overloads onto the cuda.fp16 functions): the rest of math
# takes float16 as a float and returns float64.
HALF_MATH = {
    "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "exp": np.exp, "exp2": np.exp2,
    "log": np.log, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt, "fabs": np.abs,
    "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc,
}


@pytest.mark.parametrize("name", list(HALF_MATH))
def test_math_of_float16_is_float16(target, name):
    import math
    function = getattr(math, name)

    def apply(x):
        return function(x)

    _, result_type = cuda.compile_ptx(apply, (float16,), device=True)
    assert str(result_type) == "float16"
    x = np.abs(VALUES) if name in ("log", "log2", "log10", "sqrt") else VALUES.copy()
    out = np.zeros_like(x)

    @cuda.jit(void(float16[::1], float16[::1]))
    def half_math(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = function(x[i])

    half_math[1, 32](x, out)
    if not target.ran("half_math"):
        return
    expected = HALF_MATH[name](x.astype(np.float32)).astype(np.float16)
    if name in ("sqrt", "fabs", "ceil", "floor", "trunc") or target.name == "cpu":
        np.testing.assert_array_equal(out, expected)
    else:  # the GPU's float32 functions may differ in their last float32 bit
        np.testing.assert_array_less(np.abs(out.astype(np.float32) - expected.astype(np.float32)),
                                     np.spacing(np.abs(expected)).astype(np.float32) * 1.01)


def test_other_math_of_float16_stays_float64():
    import math

    def apply(x):
        return math.atan(x) + math.log(x, 2.0) + math.ceil(x * 1.0)

    _, result_type = cuda.compile_ptx(apply, (float16,), device=True)
    assert str(result_type) == "float64"
