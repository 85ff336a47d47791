"""max()/min() in kernels on every target, with Numba's CUDA rule: of two
float32/float64 numbers they are fmax/fmin (the operand that is not NaN;
max.f32/min.f64 in the PTX); of three or more, or of integers, Python's
algorithm (an argument replaces the best so far when it compares greater)."""
import numpy as np
import pytest

from tidal import cuda

NAN = np.nan


@cuda.jit
def _two(a, b, high, low):
    i = cuda.grid(1)
    if i < a.size:
        high[i] = max(a[i], b[i])
        low[i] = min(a[i], b[i])


@pytest.mark.parametrize("left, right", [(np.float32, np.float32), (np.float64, np.float32),
                                         (np.float32, np.float64), (np.float64, np.float64)])
def test_two_floats_ignore_nan(target, left, right):
    a = np.array([1.0, 3.0, NAN, 2.0, NAN, -0.5], left)
    b = np.array([2.0, 1.0, 2.0, NAN, NAN, -0.25], right)
    result = np.result_type(left, right)
    high, low = np.zeros(a.size, result), np.zeros(a.size, result)
    _two[1, 8](a, b, high, low)
    if target.ran("_two"):
        np.testing.assert_array_equal(high, np.fmax(a, b).astype(result))
        np.testing.assert_array_equal(low, np.fmin(a, b).astype(result))


@cuda.jit
def _three(a, b, c, high, low):
    i = cuda.grid(1)
    if i < a.size:
        high[i] = max(a[i], b[i], c[i])
        low[i] = min(a[i], b[i], c[i])


def test_three_follow_python(target):
    a = np.array([NAN, 1.0, 5.0])
    b = np.array([2.0, NAN, 4.0])
    c = np.array([3.0, 0.5, 6.0])
    high, low = np.zeros(3), np.zeros(3)
    _three[1, 3](a, b, c, high, low)
    if target.ran("_three"):
        expected = [(max(x, y, z), min(x, y, z)) for x, y, z in zip(a, b, c)]
        np.testing.assert_array_equal(high, [e[0] for e in expected])
        np.testing.assert_array_equal(low, [e[1] for e in expected])


@pytest.mark.parametrize("dtype, suffix", [(np.float32, "f32"), (np.float64, "f64")])
def test_ptx_has_max_and_min_instructions(dtype, suffix):
    ptx = _two.inspect_asm(f"void({np.dtype(dtype).name}[::1], {np.dtype(dtype).name}[::1], "
                           f"{np.dtype(dtype).name}[::1], {np.dtype(dtype).name}[::1])")
    assert f"max.{suffix}" in ptx and f"min.{suffix}" in ptx
