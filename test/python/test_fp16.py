"""cuda.fp16.* (Numba 0.56's half-precision functions) on every target:
each operation over a grid of float16 operands (signed zeros, subnormals,
the largest finite values, infinities, NaN) against NumPy's float16, which
rounds once as PTX's f16 instructions do; hfma rounds a*b+c once; the
comparisons are ordered; bad arguments are refused with their position."""
from fractions import Fraction

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError
from source_positions import position_of

SPECIAL = [0.0, -0.0, 1.0, -1.0, 1.5, 0.1, -2.5, 3.140625, 1000.0, 65504.0, -65504.0,
           6e-8, -6e-8, 6.1e-5, 0.6669921875, 2049.0, np.inf, -np.inf, np.nan]


def operand_pairs():
    """Every pair of the special values, plus random halves."""
    values = np.array(SPECIAL, np.float16)
    a, b = np.meshgrid(values, values)
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 1 << 16, size=(2, 400), dtype=np.uint16)
    return (np.concatenate([a.ravel(), bits[0].view(np.float16)]),
            np.concatenate([b.ravel(), bits[1].view(np.float16)]))


def same_halves(actual, expected):
    """Bitwise equality, any NaN matching any NaN."""
    both_nan = np.isnan(actual) & np.isnan(expected)
    np.testing.assert_array_equal(np.where(both_nan, 0, actual.view(np.uint16)),
                                  np.where(both_nan, 0, expected.view(np.uint16)))


@cuda.jit
def _binary(a, b, add, sub, mul, hmax, hmin):
    i = cuda.grid(1)
    if i < a.size:
        add[i] = cuda.fp16.hadd(a[i], b[i])
        sub[i] = cuda.fp16.hsub(a[i], b[i])
        mul[i] = cuda.fp16.hmul(a[i], b[i])
        hmax[i] = cuda.fp16.hmax(a[i], b[i])
        hmin[i] = cuda.fp16.hmin(a[i], b[i])


def test_binary_arithmetic(target):
    a, b = operand_pairs()
    outs = [np.zeros_like(a) for _ in range(5)]
    _binary[(a.size + 127) // 128, 128](a, b, *outs)
    if not target.ran("_binary"):
        return
    with np.errstate(all="ignore"):
        expected = [a + b, a - b, a * b, np.where(a > b, a, b), np.where(a < b, a, b)]
    for got, want in zip(outs, expected):
        same_halves(got, want)


@cuda.jit
def _unary(a, neg, absolute):
    i = cuda.grid(1)
    if i < a.size:
        neg[i] = cuda.fp16.hneg(a[i])
        absolute[i] = cuda.fp16.habs(a[i])


def test_unary(target):
    a, _ = operand_pairs()
    neg, absolute = np.zeros_like(a), np.zeros_like(a)
    _unary[(a.size + 127) // 128, 128](a, neg, absolute)
    if target.ran("_unary"):
        # Sign bit flips and clears, NaN included.
        np.testing.assert_array_equal(neg.view(np.uint16), a.view(np.uint16) ^ 0x8000)
        np.testing.assert_array_equal(absolute.view(np.uint16), a.view(np.uint16) & 0x7FFF)


@cuda.jit
def _comparisons(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = cuda.fp16.heq(a[i], b[i])
        out[i, 1] = cuda.fp16.hne(a[i], b[i])
        out[i, 2] = cuda.fp16.hge(a[i], b[i])
        out[i, 3] = cuda.fp16.hgt(a[i], b[i])
        out[i, 4] = cuda.fp16.hle(a[i], b[i])
        out[i, 5] = cuda.fp16.hlt(a[i], b[i])


def test_comparisons_are_ordered(target):
    a, b = operand_pairs()
    out = np.zeros((a.size, 6), np.bool_)
    _comparisons[(a.size + 127) // 128, 128](a, b, out)
    ordered = ~(np.isnan(a) | np.isnan(b))
    expected = np.stack([a == b, (a != b) & ordered, a >= b, a > b, a <= b, a < b], axis=1)
    target.assert_result("_comparisons", out, expected)


def exact_fma(a, b, c):
    """a*b+c rounded once to float16, from exact rationals (finite operands)."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    # float64 holds it when exact; otherwise the float64 nearest rounds the same
    # (the argument in IntrinsicsHalf.cpp), and Fraction checks the example below.
    return np.float16(float(exact))


@cuda.jit
def _fma(a, b, c, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = cuda.fp16.hfma(a[i], b[i], c[i])


def test_hfma_rounds_once(target):
    a, b = operand_pairs()
    c = np.roll(a, 7)
    # 1.5 * 0.6669921875 is 1 + 2^-11 exactly, halfway between two halves;
    # + 2^-24 puts it above: 1 + 2^-10. A float32 fma rounds to the tie (1).
    a = np.concatenate([a, np.array([1.5, -1.5], np.float16)])
    b = np.concatenate([b, np.array([0.6669921875, 0.6669921875], np.float16)])
    c = np.concatenate([c, np.array([2.0 ** -24, -(2.0 ** -24)], np.float16)])
    assert Fraction(1.5) * Fraction(0.6669921875) == 1 + Fraction(1, 2048)
    out = np.zeros_like(a)
    _fma[(a.size + 127) // 128, 128](a, b, c, out)
    if not target.ran("_fma"):
        return
    with np.errstate(all="ignore"):
        expected = (a.astype(np.float64) * b + c).astype(np.float16)
    same_halves(out, expected)
    assert out[-2] == np.float16(1 + 2.0 ** -10) and out[-1] == -np.float16(1 + 2.0 ** -10)
    finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & np.isfinite(expected)
    for x, y, z, got in list(zip(a[finite], b[finite], c[finite], out[finite]))[::9]:
        assert got == exact_fma(x, y, z) or (got == 0 and exact_fma(x, y, z) == 0)


@cuda.jit
def _scalar_arguments(x, out):
    # Numba's float16 signatures take any real number, converted (unsafely).
    out[0] = cuda.fp16.hmul(x[0], 2)
    out[1] = cuda.fp16.hmul(np.float16(x[0]), 2.5)
    out[2] = cuda.fp16.hadd(np.float32(0.1), True)


def test_real_arguments_convert_to_float16(target):
    x = np.array([3.0], np.float16)
    out = np.zeros(3, np.float16)
    _scalar_arguments[1, 1](x, out)
    target.assert_result("_scalar_arguments", out,
                         np.array([6.0, 7.5, np.float16(0.1) + np.float16(1)], np.float16))


def test_fp16_names_match_numba():
    names = {"hadd", "hsub", "hmul", "hfma", "hneg", "habs", "heq", "hne", "hge", "hgt",
             "hle", "hlt", "hmax", "hmin"}
    assert names <= set(dir(cuda.fp16))


def test_complex_argument_is_refused():
    def complex_argument(a, out):
        out[0] = cuda.fp16.hadd(out[0], a[0])

    kernel = cuda.jit(complex_argument)
    with pytest.raises(TypingError, match=r"cuda\.fp16\.hadd\(\) takes float16 numbers .*not "
                                          r"complex64") as info:
        kernel[1, 1](np.zeros(1, np.complex64), np.zeros(1, np.float16))
    assert (info.value.line, info.value.column) == position_of(complex_argument, "a[0])")


def test_array_argument_is_refused():
    def array_argument(a, out):
        out[0] = cuda.fp16.hneg(a)

    kernel = cuda.jit(array_argument)
    with pytest.raises(TypingError, match=r"cuda\.fp16\.hneg\(\) takes float16 numbers"):
        kernel[1, 1](np.zeros(1, np.float16), np.zeros(1, np.float16))


def test_wrong_argument_count_is_refused():
    def three_arguments(a, out):
        out[0] = cuda.fp16.hadd(a[0], a[0], a[0])

    kernel = cuda.jit(three_arguments)
    with pytest.raises(TypingError, match=r"cuda\.fp16\.hadd"):
        kernel[1, 1](np.zeros(1, np.float16), np.zeros(1, np.float16))
