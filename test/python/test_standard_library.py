"""The rest of the standard library that Numba's CUDA target accepts, on
every target: the operator module's functions, round(x, ndigits),
math.frexp/ldexp/modf/remainder, min/max over a tuple, the type name
`double`, and array shapes from locals bound once to a constant, globals,
closure variables and constant expressions; bad calls raise located errors."""

import math
import operator
import os

import numpy as np
import pytest

import tidal
from tidal import cuda, double, float32, float64, int32, void
from tidal.errors import CompileError, TypingError
from source_positions import position_of


def _libdevice_found():
    """Whether the NVPTX path finds a libdevice (as test_libdevice.py asks)."""
    explicit = os.environ.get("TIDAL_LIBDEVICE")
    if explicit is not None:
        return explicit not in ("", "none") and os.path.exists(explicit)
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    return os.path.exists(os.path.join(home, "nvvm", "libdevice", "libdevice.10.bc"))


@pytest.fixture
def target(target):
    """The target fixture, where the cuda target can compile libdevice calls."""
    if target.name == "cuda" and not _libdevice_found():
        pytest.skip("the cuda target links libdevice from a CUDA toolkit, and none is here")
    return target


def _compile_error(kernel, *args):
    with pytest.raises(CompileError) as info:
        kernel[1, 1](*args)
    return info.value


# --- the operator module ------------------------------------------------------

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.pow, operator.iadd, operator.imul]
COMPARISONS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
BITWISE = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


def _binary_kernel(op):
    @cuda.jit
    def apply(out, a, b):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = op(a[i], b[i])
    return apply


@pytest.mark.parametrize("op", BINARY, ids=lambda op: op.__name__)
def test_operator_arithmetic_matches_the_operator(target, op):
    a = np.array([7.5, -3.25, 2.0, 9.0])
    b = np.array([2.0, 1.5, -4.0, 3.0])
    out = np.zeros_like(a)
    _binary_kernel(op)[1, 4](out, a, b)
    target.assert_result("apply", out, np.array([op(x, y) for x, y in zip(a, b)]))


@pytest.mark.parametrize("op", COMPARISONS, ids=lambda op: op.__name__)
def test_operator_comparisons(target, op):
    a = np.array([1, 2, 3, 4], dtype=np.int32)
    b = np.array([2, 2, 2, 5], dtype=np.int32)
    out = np.zeros(4, dtype=np.bool_)
    _binary_kernel(op)[1, 4](out, a, b)
    target.assert_result("apply", out, op(a, b))


@pytest.mark.parametrize("op", BITWISE, ids=lambda op: op.__name__)
def test_operator_bitwise_on_integers(target, op):
    a = np.array([12, 5, 255, 1 << 20], dtype=np.int64)
    b = np.array([10, 3, 4, 7], dtype=np.int64)
    out = np.zeros_like(a)
    _binary_kernel(op)[1, 4](out, a, b)
    target.assert_result("apply", out, op(a, b))


def test_operator_integer_floordiv_and_mod_floor_like_python(target):
    a = np.array([7, -7, 7, -7], dtype=np.int64)
    b = np.array([2, 2, -2, -2], dtype=np.int64)
    quotient, remainder = np.zeros_like(a), np.zeros_like(a)

    @cuda.jit
    def divmod_kernel(q, r, a, b):
        i = cuda.grid(1)
        q[i] = operator.floordiv(a[i], b[i])
        r[i] = operator.mod(a[i], b[i])

    divmod_kernel[1, 4](quotient, remainder, a, b)
    target.assert_result("divmod_kernel", quotient, a // b)
    target.assert_result("divmod_kernel", remainder, a % b)


def test_operator_unary_functions(target):
    x = np.array([3.5, -2.0, 0.0])
    n = np.array([5, -6, 0], dtype=np.int64)
    neg, pos, absolute = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    inverted = np.zeros_like(n)
    truth, negated = np.zeros(3, np.bool_), np.zeros(3, np.bool_)

    @cuda.jit
    def unary(neg, pos, absolute, inverted, truth, negated, x, n):
        i = cuda.grid(1)
        neg[i] = operator.neg(x[i])
        pos[i] = operator.pos(x[i])
        absolute[i] = operator.abs(x[i])
        inverted[i] = operator.invert(n[i])
        truth[i] = operator.truth(n[i])
        negated[i] = operator.not_(n[i])

    unary[1, 3](neg, pos, absolute, inverted, truth, negated, x, n)
    if target.ran("unary"):
        np.testing.assert_array_equal(neg, -x)
        assert np.signbit(neg[2])  # -0.0, as Python's -x
        np.testing.assert_array_equal(pos, x)
        np.testing.assert_array_equal(absolute, np.abs(x))
        np.testing.assert_array_equal(inverted, ~n)
        np.testing.assert_array_equal(truth, n != 0)
        np.testing.assert_array_equal(negated, n == 0)


def test_operator_function_passed_to_a_device_function(target):
    @cuda.jit(device=True)
    def combine(op, a, b):
        return op(a, b)

    @cuda.jit
    def use(out, a, b):
        out[0] = combine(operator.sub, a[0], b[0])
        out[1] = combine(operator.mul, a[0], b[0])

    out = np.zeros(2)
    use[1, 1](out, np.array([6.0]), np.array([4.0]))
    target.assert_result("use", out, np.array([2.0, 24.0]))


def test_operator_on_an_array_is_a_located_typing_error():
    @cuda.jit
    def bad(a, b):
        a[0] = operator.add(a, b)

    err = _compile_error(bad, np.zeros(2), np.zeros(2))
    assert isinstance(err, TypingError)
    assert "unsupported operand types for +" in str(err)
    line, column = position_of(bad.py_func, "operator.add(a, b)")
    assert (err.line, err.column) == (line, column)


def test_operator_with_a_wrong_argument_count_is_located():
    @cuda.jit
    def bad(a):
        a[0] = operator.add(a[0])

    err = _compile_error(bad, np.zeros(2))
    assert isinstance(err, TypingError)
    assert "operator.add() takes 2 arguments, got 1" in str(err)
    line, column = position_of(bad.py_func, "operator.add(a[0])")
    assert (err.line, err.column) == (line, column)


# --- round(x, ndigits) --------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_to_digits_matches_python(target, dtype):
    values = np.array([0.123456, 2.5, 1234.5678, -98.7654321, 0.5425, 7.0], dtype=dtype)
    digits = np.array([-3, -2, -1, 0, 1, 2, 3, 4, 5], dtype=np.int32)
    out = np.zeros((len(values), len(digits)), dtype=dtype)

    @cuda.jit
    def round_all(out, values, digits):
        i, j = cuda.grid(2)
        if i < out.shape[0] and j < out.shape[1]:
            out[i, j] = round(values[i], digits[j])

    round_all[1, (len(values), len(digits))](out, values, digits)
    expected = np.array([[round(float(v), int(d)) for d in digits] for v in values], dtype=dtype)
    target.assert_result("round_all", out, expected)


def test_round_to_digits_rounds_a_scaled_tie_to_even_as_numba_does(target):
    # 0.3425 * 1000 rounds to 342.5 in float64, a tie: 342, so 0.342, as
    # Numba's algorithm gives; CPython rounds the exact decimal value (0.343).
    @cuda.jit
    def round_tie(out, x):
        out[0] = round(x[0], 3)

    out = np.zeros(1)
    round_tie[1, 1](out, np.array([0.3425]))
    target.assert_result("round_tie", out, np.array([0.342]))


def test_round_to_digits_keeps_the_float_type_and_special_values(target):
    @cuda.jit(void(float32[::1], float32[::1], float64[::1], int32))
    def round_specials(out32, x32, out64, ndigits):
        for i in range(x32.size):
            out32[i] = round(x32[i], ndigits)
            out64[i] = round(np.float64(x32[i]), ndigits)

    x32 = np.array([np.inf, -np.inf, np.nan, np.finfo(np.float32).max, 1.25], dtype=np.float32)
    out32, out64 = np.zeros_like(x32), np.zeros(len(x32))
    round_specials[1, 1](out32, x32, out64, 1)
    if target.ran("round_specials"):
        np.testing.assert_array_equal(out32[:2], x32[:2])
        assert np.isnan(out32[2]) and np.isnan(out64[2])
        assert out32[3] == np.finfo(np.float32).max
        assert out32[4] == np.float32(1.2)  # ties to even
        assert out64[4] == round(1.25, 1)


def test_round_to_digits_where_the_scaling_overflows_gives_x(target):
    @cuda.jit
    def round_large(out, x, ndigits):
        out[0] = round(x[0], ndigits[0])
        out[1] = round(x[1], ndigits[1])

    x = np.array([np.finfo(np.float64).max, 12345.678])
    out = np.zeros(2)
    round_large[1, 1](out, x, np.array([12, -400], dtype=np.int64))
    target.assert_result("round_large", out, np.array([x[0], round(12345.678, -400)]))


def test_round_of_an_integer_to_digits_is_a_located_typing_error():
    @cuda.jit
    def bad(out, n):
        out[0] = round(n[0], 2)

    err = _compile_error(bad, np.zeros(1), np.ones(1, np.int64))
    assert isinstance(err, TypingError)
    assert "round(x, ndigits) takes a float x" in str(err)
    line, column = position_of(bad.py_func, "n[0], 2")
    assert (err.line, err.column) == (line, column)


def test_round_with_float_digits_is_a_located_typing_error():
    @cuda.jit
    def bad(out, x):
        out[0] = round(x[0], 1.5)

    err = _compile_error(bad, np.zeros(1), np.ones(1))
    assert "the ndigits of round() must be an integer, not float64" in str(err)
    line, column = position_of(bad.py_func, "1.5")
    assert (err.line, err.column) == (line, column)


# --- math.frexp, ldexp, modf, remainder ----------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_frexp_and_ldexp_round_trip(target, dtype):
    x = np.array([3.1415, -0.001, 1e10, 0.0, np.inf, np.nan], dtype=dtype)
    mantissa, exponent = np.zeros_like(x), np.zeros(len(x), np.int32)
    back = np.zeros_like(x)

    @cuda.jit
    def split_and_join(mantissa, exponent, back, x):
        i = cuda.grid(1)
        if i < x.size:
            m, e = math.frexp(x[i])
            mantissa[i], exponent[i] = m, e
            back[i] = math.ldexp(m, e)

    split_and_join[1, len(x)](mantissa, exponent, back, x)
    if target.ran("split_and_join"):
        expected_m, expected_e = np.frexp(x[:4])
        np.testing.assert_array_equal(mantissa[:4], expected_m)
        np.testing.assert_array_equal(exponent[:4], expected_e)
        # Numba's CUDA frexp gives the exponent 0 for inf and NaN.
        assert mantissa[4] == np.inf and exponent[4] == 0
        assert np.isnan(mantissa[5]) and exponent[5] == 0
        np.testing.assert_array_equal(back, x)


def test_frexp_of_an_integer_is_float64_and_ldexp_keeps_float32(target):
    @cuda.jit(void(float64[::1], int32[::1], tidal.int64[::1], float32[::1], float32))
    def typed(mantissa, exponent, n, scaled, x):
        mantissa[0], exponent[0] = math.frexp(n[0])
        scaled[0] = math.ldexp(x, exponent[0])

    mantissa, exponent = np.zeros(1), np.zeros(1, np.int32)
    scaled = np.zeros(1, np.float32)
    typed[1, 1](mantissa, exponent, np.array([12], np.int64), scaled, np.float32(0.1))
    if target.ran("typed"):
        assert (mantissa[0], exponent[0]) == math.frexp(12)
        assert scaled[0] == np.float32(np.ldexp(np.float32(0.1), 4))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_modf_matches_numpy(target, dtype):
    x = np.array([3.75, -2.5, 0.0, -0.0, 1e20, np.inf], dtype=dtype)
    fractional, integral = np.zeros_like(x), np.zeros_like(x)

    @cuda.jit
    def split(fractional, integral, x):
        i = cuda.grid(1)
        if i < x.size:
            fractional[i], integral[i] = math.modf(x[i])

    split[1, len(x)](fractional, integral, x)
    expected_f, expected_i = np.modf(x)
    if target.ran("split"):
        np.testing.assert_array_equal(fractional, expected_f)
        np.testing.assert_array_equal(integral, expected_i)
        np.testing.assert_array_equal(np.signbit(fractional), np.signbit(expected_f))


def test_remainder_is_ieee_remainder(target):
    x = np.array([5.0, 7.0, -7.5, 1e-11, 0.0])
    y = np.array([2.0, 2.0, 2.0, 3.0, 0.0])
    n = np.array([5, 7, -8, 1], dtype=np.int64)
    m = np.array([2, 2, 3, 3], dtype=np.int64)
    out, out_int = np.zeros_like(x), np.zeros(4)

    @cuda.jit
    def remainders(out, out_int, x, y, n, m):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = math.remainder(x[i], y[i])
        if i < n.size:
            out_int[i] = math.remainder(n[i], m[i])

    remainders[1, 5](out, out_int, x, y, n, m)
    if target.ran("remainders"):
        np.testing.assert_array_equal(out[:4], [math.remainder(a, b) for a, b in zip(x[:4], y[:4])])
        assert np.isnan(out[4])  # remainder(0, 0)
        np.testing.assert_array_equal(out_int, [math.remainder(a, b) for a, b in zip(n, m)])


def test_remainder_of_float32_stays_float32(target):
    @cuda.jit(void(float32[::1], float32, float32))
    def rem32(out, x, y):
        out[0] = math.remainder(x, y)

    out = np.zeros(1, np.float32)
    rem32[1, 1](out, np.float32(7.5), np.float32(2.0))
    target.assert_result("rem32", out, np.array([math.remainder(7.5, 2.0)], np.float32))


def test_ldexp_with_a_float_exponent_is_a_located_typing_error():
    @cuda.jit
    def bad(out, x):
        out[0] = math.ldexp(x[0], 2.0)

    err = _compile_error(bad, np.zeros(1), np.ones(1))
    assert isinstance(err, TypingError)
    assert "the exponent of math.ldexp() must be an integer, not float64" in str(err)
    line, column = position_of(bad.py_func, "2.0)")
    assert (err.line, err.column) == (line, column)


def test_modf_of_an_array_is_a_located_typing_error():
    @cuda.jit
    def bad(out, x):
        out[0], out[1] = math.modf(x)

    err = _compile_error(bad, np.zeros(2), np.ones(2))
    assert "math.modf() takes real numbers, not array(float64, 1d, C)" in str(err)
    line, column = position_of(bad.py_func, "math.modf(x)")
    assert (err.line, err.column) == (line, column + len("math.modf("))


# --- min and max over tuples ----------------------------------------------------

def test_min_and_max_of_a_tuple(target):
    @cuda.jit
    def extremes(out, a):
        t = (a[0], a[1], a[2])
        out[0] = min(t)
        out[1] = max(t)
        out[2] = max((a[3],))
        out[3] = min(a[0], a[1], a[2], a[3])
        out[4] = max(a[0], 2, a[2])

    a = np.array([4.0, -1.5, 9.25, 3.0])
    out = np.zeros(5)
    extremes[1, 1](out, a)
    target.assert_result("extremes", out, np.array([-1.5, 9.25, 3.0, -1.5, 9.25]))


def test_max_of_a_mixed_tuple_promotes(target):
    @cuda.jit
    def mixed(out, n, x):
        out[0] = max((n[0], x[0]))

    out = np.zeros(1)
    mixed[1, 1](out, np.array([7], np.int32), np.array([2.5]))
    target.assert_result("mixed", out, np.array([7.0]))


def test_max_of_an_array_is_a_located_typing_error():
    @cuda.jit
    def bad(out, a):
        out[0] = max(a)

    err = _compile_error(bad, np.zeros(1), np.ones(3))
    assert isinstance(err, TypingError)
    assert "max() of an array is not supported in kernels" in str(err)
    line, column = position_of(bad.py_func, "max(a)")
    assert (err.line, err.column) == (line, column)


def test_min_of_an_empty_tuple_is_a_typing_error():
    @cuda.jit
    def bad(out):
        out[0] = min(())

    err = _compile_error(bad, np.zeros(1))
    assert "min() in kernels takes two or more numbers, or one tuple of numbers" in str(err)


# --- the type name double --------------------------------------------------------

def test_double_is_float64_in_signatures_and_casts(target):
    assert tidal.double is tidal.float64 and tidal.float_ is tidal.float32

    @cuda.jit(double(double), device=True)
    def half(x):
        return x / 2

    @cuda.jit(void(double[:], int32))
    def use_double(out, n):
        out[0] = half(double(n))

    out = np.zeros(1)
    use_double[1, 1](out, 5)
    target.assert_result("use_double", out, np.array([2.5]))


# --- array shapes from constants ------------------------------------------------

SHAPE = 8
SHAPE_2D = (4, 2)


def test_shared_array_shape_from_a_local_bound_once(target):
    @cuda.jit(void(int32[::1]))
    def from_local(out):
        n = 16
        shape = (n // 4, 4)
        sm = cuda.shared.array(n, int32)
        grid = cuda.local.array(shape, int32)
        i = cuda.threadIdx.x
        sm[i] = i * 2
        grid[i // 4, i % 4] = 1
        cuda.syncthreads()
        out[i] = sm[n - 1 - i] + grid[i // 4, i % 4]

    out = np.zeros(16, np.int32)
    from_local[1, 16](out)
    target.assert_result("from_local", out, np.arange(15, -1, -1, dtype=np.int32) * 2 + 1)


def test_shared_array_shapes_from_globals_closures_and_expressions(target):
    width = 3

    @cuda.jit
    def mixed_shapes(out):
        a = cuda.shared.array(SHAPE, float32)
        b = cuda.shared.array(SHAPE_2D, float32)
        c = cuda.local.array((width, SHAPE // 2 + 1), float32)
        d = cuda.local.array(SHAPE * width - 4, float32)
        out[0] = a.size
        out[1] = b.shape[0] * 10 + b.shape[1]
        out[2] = c.shape[0] * 10 + c.shape[1]
        out[3] = d.size

    out = np.zeros(4, np.int64)
    mixed_shapes[1, 1](out)
    target.assert_result("mixed_shapes", out, np.array([8, 42, 35, 20]))


def test_a_local_bound_twice_is_not_a_constant_shape():
    @cuda.jit
    def rebound(out):
        n = 4
        if out[0] > 0:
            n = 8
        sm = cuda.shared.array(n, float32)
        out[0] = sm[0]

    err = _compile_error(rebound, np.zeros(1))
    assert isinstance(err, TypingError)
    assert ("must be a constant int or a tuple of constant ints, not a value computed at run time"
            in str(err))
    line, column = position_of(rebound.py_func, "n, float32)")
    assert (err.line, err.column) == (line, column)
