"""The cmath functions, complex ** and pow(), on every target, against
CPython's cmath: finite values, signed zeros, branch cuts, infinities and
NaNs in every combination (C99 Annex G's special values), huge and
subnormal parts; and the typing errors of their misuse."""

import cmath
import itertools
import math

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError, UnsupportedError

from source_positions import position_of

INF = math.inf
NAN = math.nan
PARTS = [-INF, -1e300, -3.5, -math.pi, -1.0, -0.5, -1e-310, -0.0,
         0.0, 1e-310, 0.5, 1.0, 1.5, math.pi, 1e300, INF, NAN]
VALUES = [complex(x, y) for x, y in itertools.product(PARTS, PARTS)]

UNARY = ["sqrt", "exp", "log", "log10", "acos", "asin", "atan", "cos", "sin", "tan",
         "acosh", "asinh", "atanh", "cosh", "sinh", "tanh"]


def expected_value(function, *args):
    """CPython's result; None where CPython raises (domain or range error)."""
    try:
        return function(*args)
    except (ValueError, OverflowError, ZeroDivisionError):
        return None


def assert_component(got, want, ulps, dtype, context):
    if math.isnan(want):
        assert math.isnan(got), context
    elif math.isinf(want) or want == 0.0:
        assert got == want and math.copysign(1, got) == math.copysign(1, want), context
    else:
        assert abs(got - want) <= ulps * np.spacing(dtype(abs(want))), context


def assert_matches(got, want, ulps, dtype, context):
    if isinstance(want, bool):
        assert bool(got) == want, context
    elif isinstance(want, tuple):
        for g, w in zip(got, want):
            assert_component(float(g), w, ulps, dtype, context)
    elif isinstance(want, complex):
        assert_component(float(got.real), want.real, ulps, dtype, (context, "real"))
        assert_component(float(got.imag), want.imag, ulps, dtype, (context, "imag"))
    else:
        assert_component(float(got), want, ulps, dtype, context)


def make_unary_kernel(name):
    function = getattr(cmath, name)
    # A kernel per function: cmath.<name> is read from the kernel's globals.
    namespace = {"cuda": cuda, "cmath": cmath}
    exec(f"def k(z, out):\n"
         f"    i = cuda.grid(1)\n"
         f"    if i < z.size:\n"
         f"        out[i] = cmath.{name}(z[i])\n", namespace)
    return function, cuda.jit(namespace["k"])


def ulps_for(target):
    # The cpu target calls the host's libm, as CPython does; libdevice on a
    # GPU differs from it by a few ulps per call.
    return 4 if target.name == "cpu" else 64


@pytest.mark.parametrize("name", UNARY)
def test_unary_function_matches_cpython_on_special_values(target, name):
    function, kernel = make_unary_kernel(name)
    z = np.array(VALUES, np.complex128)
    out = np.zeros_like(z)
    kernel[2, 256](z, out)
    if not target.ran("k"):
        return
    for value, got in zip(VALUES, out):
        want = expected_value(function, value)
        if want is not None:
            assert_matches(complex(got), want, ulps_for(target), np.float64, (name, value, got, want))


@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "acos", "atanh", "tan"])
def test_complex64_computes_in_double_and_rounds_once(target, name):
    function, kernel = make_unary_kernel(name)
    small = [x for x in PARTS if abs(x) not in (1e300, 1e-310)]
    values = [complex(x, y) for x, y in itertools.product(small, small)]
    z = np.array(values, np.complex64)
    out = np.zeros_like(z)
    kernel[1, 256](z, out)
    assert "complex64" in str(kernel.signatures[0])
    if not target.ran("k"):
        return
    assert out.dtype == np.complex64
    for value, got in zip(z, out):
        want = expected_value(function, complex(value))
        if want is not None:
            want = complex(np.complex64(want)) if all(map(math.isfinite, (want.real, want.imag))) \
                else want
            assert_matches(complex(got), want, 1, np.float32, (name, value, got, want))


def test_predicates_phase_polar_rect_and_log_base(target):
    @cuda.jit
    def k(z, w, flags, reals, out):
        i = cuda.grid(1)
        if i < z.size:
            flags[i, 0] = cmath.isnan(z[i])
            flags[i, 1] = cmath.isinf(z[i])
            flags[i, 2] = cmath.isfinite(z[i])
            reals[i, 0] = cmath.phase(z[i])
            r, phi = cmath.polar(z[i])
            reals[i, 1] = r
            reals[i, 2] = phi
            out[i, 0] = cmath.rect(z[i].real, z[i].imag)
            out[i, 1] = cmath.log(z[i], w[i])
            out[i, 2] = complex(*cmath.polar(z[i]))

    n = len(VALUES)
    z = np.array(VALUES, np.complex128)
    w = np.array(VALUES[::-1], np.complex128)
    flags = np.zeros((n, 3), np.bool_)
    reals = np.zeros((n, 3))
    out = np.zeros((n, 3), np.complex128)
    k[2, 256](z, w, flags, reals, out)
    if not target.ran("k"):
        return
    ulps = ulps_for(target)
    for i, (value, base) in enumerate(zip(VALUES, VALUES[::-1])):
        context = (value, base)
        assert list(flags[i]) == [cmath.isnan(value), cmath.isinf(value), cmath.isfinite(value)]
        for got, function in ((reals[i, 0], cmath.phase), (tuple(reals[i, 1:]), cmath.polar)):
            want = expected_value(function, value)  # subnormal results raise OverflowError
            if want is not None:
                assert_matches(got, want, ulps, np.float64, (function.__name__,) + context)
        want = expected_value(cmath.rect, value.real, value.imag)
        if want is not None:
            assert_matches(out[i, 0], want, ulps, np.float64, ("rect",) + context)
        want = expected_value(cmath.log, value, base)
        if want is not None:
            assert_matches(out[i, 1], want, 3 * ulps, np.float64, ("log", context))
        want = expected_value(lambda v: complex(*cmath.polar(v)), value)
        if want is not None:
            assert_matches(out[i, 2], want, ulps, np.float64, ("polar", context))


def test_real_arguments_are_taken_as_complex(target):
    @cuda.jit
    def k(x, out):
        out[0] = cmath.sqrt(x[0])          # float64 -> complex128
        out[1] = cmath.acos(np.float32(2.0))  # float32 -> complex64, widened to out's type
        out[2] = cmath.exp(1)

    out = np.zeros(3, np.complex128)
    k[1, 1](np.array([-4.0]), out)
    target.assert_result("k", out, [cmath.sqrt(-4.0), complex(np.complex64(cmath.acos(2.0))),
                                    cmath.exp(1)], rtol=1e-15)


def test_complex_power_and_pow_match_cpython(target, rng):
    @cuda.jit
    def k(a, b, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i, 0] = a[i] ** b[i]
            out[i, 1] = pow(a[i], b[i])
            out[i, 2] = a[i] ** 3           # by squaring
            out[i, 3] = a[i] ** -2.0        # an integral float exponent
            out[i, 4] = 2.0 ** b[i]         # a real base
            c = a[i]
            c **= 0.5
            out[i, 5] = c

    a = rng.standard_normal(64) + 1j * rng.standard_normal(64)
    b = rng.standard_normal(64) + 1j * rng.standard_normal(64)
    a[:3] = [0j, 1 + 0j, -2 + 0j]
    b[:3] = [0j, 2.5 - 1j, 0.5 + 0j]
    out = np.zeros((64, 6), np.complex128)
    k[1, 64](a, b, out)
    if not target.ran("k"):
        return
    for i in range(64):
        x, y = complex(a[i]), complex(b[i])
        wants = [x ** y, pow(x, y), x ** 3, x ** -2.0 if x else None, 2.0 ** y, x ** 0.5]
        for got, want in zip(out[i], wants):
            if want is not None:
                assert got == pytest.approx(want, rel=1e-14, abs=1e-300), (i, x, y, got, want)


def test_complex64_power_stays_complex64(target):
    @cuda.jit
    def k(a, out):
        out[0] = a[0] ** a[1]
        out[1] = pow(a[0], np.float32(2))

    a = np.array([1.5 - 0.5j, 0.25 + 1j], np.complex64)
    out = np.zeros(2, np.complex64)
    k[1, 1](a, out)
    assert str(k.signatures[0]).count("complex64") == 2
    target.assert_result("k", out, np.array([a[0] ** a[1], a[0] ** 2], np.complex64), rtol=1e-6)


def test_cmath_typing_errors_point_at_the_argument():
    @cuda.jit
    def on_array(z, out):
        out[0] = cmath.sqrt(z)

    with pytest.raises(TypingError, match=r"cmath\.sqrt\(\) takes a number, not array") as info:
        on_array[1, 1](np.zeros(2, np.complex128), np.zeros(1, np.complex128))
    # Located at the argument, in this file.
    assert (info.value.file, info.value.line, info.value.column) == \
        (__file__, *position_of(on_array.py_func, "z)"))

    @cuda.jit
    def rect_of_complex(z, out):
        out[0] = cmath.rect(z[0], 1.0)

    with pytest.raises(TypingError, match=r"cmath\.rect\(\) takes real numbers, not complex128") \
            as info:
        rect_of_complex[1, 1](np.zeros(2, np.complex128), np.zeros(1, np.complex128))
    assert (info.value.line, info.value.column) == position_of(rect_of_complex.py_func, "z[0], 1.0")

    @cuda.jit
    def too_many(z, out):
        out[0] = cmath.exp(z[0], z[1])

    with pytest.raises(TypingError, match=r"cmath\.exp\(\) takes at most 1 arguments, got 2"):
        too_many[1, 1](np.zeros(2, np.complex128), np.zeros(1, np.complex128))

    @cuda.jit
    def modular_pow(x, out):
        out[0] = pow(x[0], 2, 5)

    with pytest.raises(UnsupportedError, match=r"pow\(\) with a modulus is not supported"):
        modular_pow[1, 1](np.ones(1, np.int64), np.zeros(1, np.int64))

    @cuda.jit
    def starred_array(x, out):
        out[0] = complex(*x)

    with pytest.raises(UnsupportedError, match=r"a starred argument must be a tuple"):
        starred_array[1, 1](np.ones(2), np.zeros(1, np.complex128))
