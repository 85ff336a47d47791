"""NumPy ufuncs called inside kernels (np.sin(x[i]), np.add(a[i], b[i]),
np.maximum(x, y, out)), on every target, against NumPy: the loop Numba
chooses (NumPy's casting rules without float16 loops), scalars and out
arrays, and the located errors of what stays refused."""

import math

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError

from source_positions import position_of

FLOATS = np.array([-2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 3.0, 1e10, -np.inf, np.inf,
                   np.nan])
UNARY_FLOAT = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
               "arcsinh", "arccosh", "arctanh", "exp", "exp2", "expm1", "log", "log2", "log10",
               "log1p", "sqrt", "cbrt", "deg2rad", "rad2deg", "radians", "degrees", "floor",
               "ceil", "trunc", "rint", "fabs", "absolute", "negative", "positive", "sign",
               "square", "reciprocal", "conjugate", "isnan", "isinf", "isfinite", "signbit",
               "logical_not"]
BINARY_FLOAT = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide",
                "remainder", "mod", "fmod", "power", "float_power", "arctan2", "hypot",
                "maximum", "minimum", "fmax", "fmin", "copysign", "nextafter", "greater",
                "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
                "logical_or", "logical_xor"]


def unary_kernel(name):
    namespace = {"cuda": cuda, "np": np}
    exec(f"def k(x, out):\n"
         f"    i = cuda.grid(1)\n"
         f"    if i < x.size:\n"
         f"        out[i] = np.{name}(x[i])\n", namespace)
    return cuda.jit(namespace["k"])


def binary_kernel(name):
    namespace = {"cuda": cuda, "np": np}
    exec(f"def k(x, y, out):\n"
         f"    i = cuda.grid(1)\n"
         f"    if i < x.size:\n"
         f"        out[i] = np.{name}(x[i], y[i])\n", namespace)
    return cuda.jit(namespace["k"])


def assert_like_numpy(got, want, context):
    """Equal, NaN where NumPy gives NaN; within a few ulps for the math
    library's functions (libdevice on a GPU)."""
    assert got.dtype == want.dtype, context
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(want.dtype).eps, atol=0,
                                   equal_nan=True, err_msg=str(context))
    else:
        np.testing.assert_array_equal(got, want, err_msg=str(context))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UNARY_FLOAT)
def test_unary_ufunc_of_floats_matches_numpy(target, name, dtype):
    x = FLOATS.astype(dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    out = np.zeros_like(want)
    kernel = unary_kernel(name)
    kernel[1, 32](x, out)
    if target.ran("k"):
        assert_like_numpy(out, want, (name, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", BINARY_FLOAT)
def test_binary_ufunc_of_floats_matches_numpy(target, name, dtype):
    pairs = [(a, b) for a in FLOATS for b in FLOATS[::3]]
    x = np.array([a for a, _ in pairs], dtype)
    y = np.array([b for _, b in pairs], dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x, y)
        if name == "floor_divide":  # Numba's is floor(x / y): 1.0 // 0.1 is 10.0, not 9.0
            want = np.floor(x / y)
    out = np.zeros_like(want)
    binary_kernel(name)[2, 64](x, y, out)
    if not target.ran("k"):
        return
    if name in ("power", "float_power"):  # pow's error grows with the exponent
        np.testing.assert_allclose(out, want, rtol=1e-5 if dtype == np.float32 else 1e-14,
                                   equal_nan=True)
    else:
        assert_like_numpy(out, want, (name, dtype))


def test_small_integers_compute_in_float32_and_integers_in_float64(target):
    # Numba's loop choice: the first of np.sin.types the argument casts to
    # safely, skipping float16: int8 and int16 take 'f->f', int32 'd->d'.
    @cuda.jit
    def k(a8, a16, a32, out):
        out[0] = np.sin(a8[0])
        out[1] = np.sqrt(a16[0])
        out[2] = np.sin(a32[0])
        out[3] = np.sqrt(a32[0])

    out = np.zeros(4)
    k[1, 1](np.array([3], np.int8), np.array([3], np.int16), np.array([3], np.int32), out)
    want = [np.sin(np.float32(3)), np.sqrt(np.float32(3)), math.sin(3), math.sqrt(3)]
    target.assert_result("k", out, np.array(want, np.float64), rtol=1e-7)
    if target.ran("k"):
        assert out[0] == np.float32(out[0]) and out[1] == np.float32(out[1])
        assert out[3] != np.float32(out[3])


def test_integer_arithmetic_wraps_in_the_loop_type_as_numpy_does(target):
    # a + b on int8 is int64 in Numba; np.add(a, b) is NumPy's int8 loop.
    @cuda.jit
    def k(a, b, out, wide):
        for i in range(a.size):
            out[i] = np.add(a[i], b[i])
            wide[i] = a[i] + b[i]

    a = np.array([100, -100, 7, 127], np.int8)
    b = np.array([100, -100, 1, 1], np.int8)
    out = np.zeros(4, np.int64)
    wide = np.zeros(4, np.int64)
    k[1, 1](a, b, out, wide)
    target.assert_result("k", out, np.add(a, b).astype(np.int64))
    target.assert_result("k", wide, a.astype(np.int64) + b)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "floor_divide", "remainder",
                                  "fmod", "maximum", "minimum", "bitwise_and", "bitwise_or",
                                  "bitwise_xor", "left_shift", "right_shift", "greater",
                                  "less_equal", "equal", "logical_and", "logical_xor",
                                  "true_divide", "arctan2"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint16, np.int64])
def test_binary_ufunc_of_integers_matches_numpy(target, name, dtype):
    values = [0, 1, 2, 3, 7, 100] + ([-1, -7, -100] if np.dtype(dtype).kind == "i" else [9])
    pairs = [(a, b) for a in values for b in values if not (name.endswith("shift") and b > 60)]
    x = np.array([a for a, _ in pairs], dtype)
    y = np.array([b if not name.endswith("shift") else abs(b) for _, b in pairs], dtype)
    with np.errstate(all="ignore"):
        if dtype == np.uint16 and name in ("true_divide", "arctan2"):
            # Numba takes the first loop the inputs cast to safely: 'ff->f'
            # (NumPy's own resolver divides integers in float64).
            want = getattr(np, name)(x.astype(np.float32), y.astype(np.float32))
        else:
            want = getattr(np, name)(x, y)
    out = np.zeros_like(want)
    binary_kernel(name)[2, 64](x, y, out)
    if target.ran("k"):
        assert_like_numpy(out, want, (name, dtype))


@pytest.mark.parametrize("name", ["invert", "negative", "absolute", "sign", "square",
                                  "logical_not", "isnan", "isfinite", "sqrt", "sin"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.uint32, np.int64])
def test_unary_ufunc_of_integers_and_booleans_matches_numpy(target, name, dtype):
    values = [0, 1] if dtype == np.bool_ else [0, 1, 5, 100] + \
        ([-1, -100] if np.dtype(dtype).kind == "i" else [])
    x = np.array(values, dtype)
    with np.errstate(all="ignore"):
        if dtype == np.bool_ and name in ("negative", "sign"):
            # NumPy refuses these of booleans; Numba (and numba-cuda) take
            # the first loop a bool casts to, int8's: np.negative(True) is -1.
            want = getattr(np, name)(x.astype(np.int8))
        else:
            want = getattr(np, name)(x)
    out = np.zeros_like(want)
    unary_kernel(name)[1, 32](x, out)
    if target.ran("k"):
        assert_like_numpy(out, want, (name, dtype))


@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "sin", "cos", "tanh", "absolute",
                                  "negative", "square", "conjugate", "isnan", "isfinite",
                                  "reciprocal"])
def test_unary_ufunc_of_complex_numbers_matches_numpy(target, name):
    x = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j, -2 - 2j], np.complex128)
    want = getattr(np, name)(x)
    out = np.zeros_like(want)
    unary_kernel(name)[1, 32](x, out)
    if target.ran("k"):
        np.testing.assert_allclose(out, want, rtol=1e-13)


def test_mixed_integer_and_float_arguments_take_the_float_loop(target):
    # np.power(float32, int32) is float32 in Numba (any integer casts to a
    # float loop when the inputs mix kinds); np.add(int64, float32) too.
    @cuda.jit
    def k(x, n, out):
        out[0] = np.power(x[0], n[0])
        out[1] = np.add(n[0], x[0])

    x = np.array([1.1], np.float32)
    n = np.array([3], np.int32)
    out = np.zeros(2)
    k[1, 1](x, n, out)
    want = np.array([np.float32(1.1) ** np.float32(3), np.float32(3) + np.float32(1.1)])
    target.assert_result("k", out, want, rtol=1e-6)
    if target.ran("k"):
        assert all(v == np.float32(v) for v in out)


def test_out_arrays_get_every_element_with_numpy_broadcasting(target):
    @cuda.jit
    def k(x, row, out1, out2, one):
        np.sin(x, out1)                  # array in, array out
        np.add(row, 10.0, out2)          # a row and a scalar broadcast over 2-D
        np.multiply(x[1], 2.0, one)      # a scalar into a 1-element array

    x = np.linspace(0, 1, 5)
    row = np.arange(3, dtype=np.float32)
    out1 = np.zeros(5)
    out2 = np.zeros((4, 3), np.float32)
    one = np.zeros(1)
    k[1, 1](x, row, out1, out2, one)
    target.assert_result("k", out1, np.sin(x), rtol=1e-15)
    target.assert_result("k", out2, np.broadcast_to(row + 10, (4, 3)))
    target.assert_result("k", one, np.array([2 * x[1]]))


def test_out_array_of_another_type_takes_the_cast_numpy_allows(target):
    # float64 results into a float32 out array: 'same_kind' casting.
    @cuda.jit
    def k(a, b, out):
        np.maximum(a, b, out)

    a = np.array([1.5, -2.0, np.nan, 4.0])
    b = np.array([0.5, 3.0, 1.0, np.nan])
    out = np.zeros(4, np.float32)
    k[1, 1](a, b, out)
    target.assert_result("k", out, np.maximum(a, b).astype(np.float32))


def test_ufuncs_in_device_functions(target):
    @cuda.jit(device=True)
    def clamp(v, lo, hi):
        return np.minimum(np.maximum(v, lo), hi)

    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = clamp(x[i], -1.0, 1.0)

    x = np.array([-3.0, -0.5, 0.0, 0.75, 2.0])
    out = np.zeros_like(x)
    k[1, 32](x, out)
    target.assert_result("k", out, np.clip(x, -1, 1))


def test_keyword_arguments_of_a_ufunc_call_are_a_located_error():
    @cuda.jit
    def k(x, out):
        np.sin(x, out=out)

    with pytest.raises(TypingError, match=r"keyword arguments \(out\) in a call of the ufunc "
                                          r"numpy.sin are not supported in kernels: pass the out "
                                          r"array positionally") as info:
        k[1, 1](np.zeros(2), np.zeros(2))
    assert (info.value.file, info.value.line, info.value.column) == \
        (__file__, *position_of(k.py_func, "np.sin(x, out=out)"))


def test_array_without_out_is_a_located_error():
    @cuda.jit
    def k(x, out):
        out[0] = np.sin(x)[0]

    with pytest.raises(TypingError, match=r"NumPy ufunc 'sin' of an array in a kernel needs an "
                                          r"out array as its last argument") as info:
        k[1, 1](np.zeros(2), np.zeros(1))
    assert (info.value.file, info.value.line, info.value.column) == \
        (__file__, *position_of(k.py_func, "np.sin(x)"))


def test_refused_ufuncs_and_loops_are_typing_errors():
    @cuda.jit
    def complex_order(z, out):
        out[0] = np.greater(z[0], z[1])

    with pytest.raises(TypingError, match=r"NumPy ufunc 'greater' is not supported in kernels "
                                          r"for \(complex128, complex128\)"):
        complex_order[1, 1](np.zeros(2, np.complex128), np.zeros(1, np.bool_))

    @cuda.jit
    def two_outputs(x, out):
        out[0] = np.frexp(x[0])[0]

    with pytest.raises(TypingError, match=r"NumPy ufunc 'frexp' is not supported in kernels"):
        two_outputs[1, 1](np.zeros(2), np.zeros(1))

    @cuda.jit
    def float_shift(x, out):
        out[0] = np.left_shift(x[0], 1)

    with pytest.raises(TypingError, match=r"NumPy ufunc 'left_shift' has no loop for argument "
                                          r"types \(float64, int64\)"):
        float_shift[1, 1](np.zeros(2), np.zeros(1))

    @cuda.jit
    def read_only_out(x, out):
        np.sin(x, out)

    with pytest.raises(TypingError, match=r"out array of NumPy ufunc 'sin' is read-only"):
        read_only_out[1, 1](np.zeros(2), _read_only(np.zeros(2)))


def _read_only(array):
    array.flags.writeable = False
    return array
