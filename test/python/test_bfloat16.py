"""bfloat16 on every target (IntrinsicsBFloat16.cpp, docs/language.md
"bfloat16"): the type as a constructor, in arrays (host arrays hold the bits
as uint16, viewed as bfloat16 in the kernel) and in signatures; Python's
operators; numba-cuda's cuda.bf16 functions; conversions in every rounding
mode. Results are checked bit for bit against a reference written on the
bit patterns (bfloat16_reference.py): every one of the 65,536 patterns for
the conversion to float32 and for a binary operation, and a large sample of
float32 values (ties, subnormals, infinities, NaN) for the rounding to
bfloat16."""
import math
import os
import re
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import bfloat16_reference as ref
from source_positions import position_of
from tidal import cuda, float32, float64, int16, int32, int64, uint16, void
from tidal.cuda import bf16
from tidal.cuda.bf16 import bfloat16
from tidal.errors import TypingError

ALL_BITS = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def blocks(n, threads=256):
    return (n + threads - 1) // threads, threads


def float32_sample(rng):
    """float32 values that stress the rounding to bfloat16: exact ties (the
    16 dropped bits 0x8000) on both sides of even and odd, a step either
    side of a tie, subnormals, values at the overflow threshold, zeros,
    infinities and NaNs, and random bit patterns."""
    upper = rng.integers(0, 1 << 16, 20000, dtype=np.uint32)
    low = np.array([0x8000, 0x7FFF, 0x8001, 0x0000, 0x0001, 0xFFFF], np.uint32)
    ties = (upper[:, None] << 16 | low[None, :]).ravel()
    subnormals = rng.integers(1, 1 << 23, 4000, dtype=np.uint32) | (
        rng.integers(0, 2, 4000, dtype=np.uint32) << 31)
    special = np.array([0x7F7F7FFF, 0x7F7F8000, 0x7F7F8001, 0x7F7FFFFF, 0xFF7F8000, 0x7F800000,
                        0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0x00000000,
                        0x80000000, 0x00008000, 0x00018000, 0x80008000, 0x0000FFFF],
                       np.uint32)
    noise = rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([ties, subnormals, special, noise]).view(np.float32)


# --- the type, conversions to and from float32 -------------------------------------------


@cuda.jit
def _widen(bits, out, out_named):
    i = cuda.grid(1)
    if i < bits.size:
        x = bits.view(bfloat16)[i]
        out[i] = float32(x)
        out_named[i] = bf16.bfloat162float(x)


def test_every_pattern_widens_to_float32_exactly(target):
    out = np.zeros(ALL_BITS.size, np.float32)
    out_named = np.zeros_like(out)
    _widen[blocks(ALL_BITS.size)](ALL_BITS, out, out_named)
    if target.ran("_widen"):
        expected = ref.to_float32(ALL_BITS)
        for got in (out, out_named):
            nan = np.isnan(expected)
            assert np.isnan(got[nan]).all()
            np.testing.assert_array_equal(got[~nan].view(np.uint32), expected[~nan].view(np.uint32))


@cuda.jit
def _narrow(values, rn, cast, rz, rd, ru, default):
    i = cuda.grid(1)
    if i < values.size:
        x = values[i]
        rn[i] = bf16.bfloat16_as_ushort(bf16.float2bfloat16_rn(x))
        cast.view(bfloat16)[i] = bfloat16(x)  # the constructor, stored through a view
        rz[i] = bf16.bfloat16_as_ushort(bf16.float2bfloat16_rz(x))
        rd[i] = bf16.bfloat16_as_ushort(bf16.float32_to_bfloat16_rd(x))
        ru[i] = bf16.bfloat16_as_ushort(bf16.float2bfloat16_ru(x))
        default[i] = bf16.bfloat16_as_ushort(bf16.float2bfloat16(x))


def test_float32_rounds_to_bfloat16_in_each_mode(target, rng):
    values = float32_sample(rng)
    outs = [np.zeros(values.size, np.uint16) for _ in range(6)]
    _narrow[blocks(values.size)](values, *outs)
    if target.ran("_narrow"):
        rn, cast, rz, rd, ru, default = outs
        for got in (rn, cast, default):
            ref.same_bits(got, ref.from_float32(values, "rn"))
        ref.same_bits(rz, ref.from_float32(values, "rz"))
        ref.same_bits(rd, ref.from_float32(values, "rd"))
        ref.same_bits(ru, ref.from_float32(values, "ru"))


@cuda.jit
def _narrow_double(values, out, implicit):
    i = cuda.grid(1)
    if i < values.size:
        out[i] = bf16.bfloat16_as_ushort(bf16.double2bfloat16(values[i]))
        implicit.view(bfloat16)[i] = values[i]  # a store converts as bfloat16(x)


def test_float64_rounds_once(target, rng):
    # float64 values a float32 would round onto a bfloat16 tie (or off one):
    # a rounding through float32 first would go the wrong way.
    upper = rng.integers(0, 1 << 16, 3000, dtype=np.uint64)
    tie = (upper << 16 | 0x8000).astype(np.uint32).view(np.float32).astype(np.float64)
    tiny = np.abs(tie) * 2.0 ** -30
    values = np.concatenate([tie + tiny, tie - tiny, tie, [1e300, -1e300, 2.0 ** -140, np.nan]])
    out, implicit = np.zeros(values.size, np.uint16), np.zeros(values.size, np.uint16)
    _narrow_double[blocks(values.size)](values, out, implicit)
    if target.ran("_narrow_double"):
        expected = [ref.CANONICAL_NAN if v != v else
                    ref.round_fraction(Fraction(v)) if np.isfinite(v) else 0 for v in values]
        ref.same_bits(out, expected)
        ref.same_bits(implicit, expected)


# --- arithmetic on every pattern -------------------------------------------------------


@cuda.jit
def _arithmetic(a_bits, b_bits, add, sub, mul, div, hadd, hsub, hmul, hdiv):
    i = cuda.grid(1)
    if i < a_bits.size:
        a = a_bits.view(bfloat16)[i]
        b = b_bits.view(bfloat16)[i]
        add.view(bfloat16)[i] = a + b
        sub.view(bfloat16)[i] = a - b
        mul.view(bfloat16)[i] = a * b
        div.view(bfloat16)[i] = a / b
        hadd.view(bfloat16)[i] = bf16.hadd(a, b)
        hsub.view(bfloat16)[i] = bf16.hsub_rn(a, b)
        hmul.view(bfloat16)[i] = bf16.hmul(a, b)
        hdiv.view(bfloat16)[i] = bf16.hdiv(a, b)


def test_arithmetic_on_every_pattern(target, rng):
    a = ALL_BITS
    b = rng.integers(0, 1 << 16, a.size, dtype=np.uint32).astype(np.uint16)
    # Some fixed second operands too: equal magnitudes, zeros, infinities.
    b[:8] = [0x3F80, 0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x0001, 0x7F7F]
    outs = [np.zeros(a.size, np.uint16) for _ in range(8)]
    _arithmetic[blocks(a.size)](a, b, *outs)
    if not target.ran("_arithmetic"):
        return
    x, y = ref.to_float32(a), ref.to_float32(b)
    with np.errstate(all="ignore"):
        # float32 holds each result closely enough that one more rounding
        # is the correctly rounded bfloat16 one.
        expected = [x + y, x - y, x * y, x / y]
    for got, want in zip(outs, expected + expected):
        ref.same_bits(got, ref.from_float32(want))


def test_fma_rounds_once(target, rng):
    a = rng.integers(0, 1 << 16, 4096, dtype=np.uint32).astype(np.uint16)
    b = rng.integers(0, 1 << 16, 4096, dtype=np.uint32).astype(np.uint16)
    c = rng.integers(0, 1 << 16, 4096, dtype=np.uint32).astype(np.uint16)
    # (1 + 2**-7) * 1.5 is a bfloat16 tie; a tiny c decides its side, which
    # a float64 fma rounded to bfloat16 would lose.
    a[:4] = [0x3F81, 0x3F81, 0xBF81, 0x3F81]
    b[:4] = [0x3FC0, 0x3FC0, 0x3FC0, 0x3FC0]
    c[:4] = [0x0DA0, 0x8DA0, 0x0DA0, 0x0000]
    outs = [np.zeros(a.size, np.uint16) for _ in range(3)]

    @cuda.jit
    def fused(a_bits, b_bits, c_bits, fma, sat, relu):
        i = cuda.grid(1)
        if i < a_bits.size:
            x, y, z = a_bits.view(bfloat16)[i], b_bits.view(bfloat16)[i], c_bits.view(bfloat16)[i]
            fma.view(bfloat16)[i] = bf16.hfma(x, y, z)
            sat.view(bfloat16)[i] = bf16.hfma_sat(x, y, z)
            relu.view(bfloat16)[i] = bf16.hfma_relu(x, y, z)

    fused[blocks(a.size)](a, b, c, *outs)
    if not target.ran("fused"):
        return
    fma, sat, relu = outs
    # Above the tie, below it, below its negative (toward zero), on it (to even).
    assert list(fma[:4]) == [0x3FC2, 0x3FC1, 0xBFC1, 0x3FC2]
    for i in range(a.size):
        x, y, z = (ref.to_float32(np.uint16(v)) for v in (a[i], b[i], c[i]))
        if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(z)):
            continue
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        want = ref.round_fraction(exact)
        assert fma[i] == want or (fma[i] & 0x7FFF == 0 and want & 0x7FFF == 0), (i, hex(fma[i]), hex(want))
        value = float(ref.to_float32(np.uint16(want)))
        want_sat = 0x3F80 if value >= 1 else 0 if not value > 0 else want
        assert sat[i] == want_sat or (sat[i] == 0 and want_sat & 0x7FFF == 0), i
        want_relu = 0 if value < 0 else want
        assert relu[i] == want_relu or (relu[i] & 0x7FFF == 0 and want_relu & 0x7FFF == 0), i


# --- integers --------------------------------------------------------------------------

INT32_SAMPLE = np.array([0, 1, -1, 3, 255, 256, 257, 383, 384, 385, 789, -789, 65535, 16777217,
                         16777216 + 2 ** 17, 2 ** 24 + 2 ** 16 + 1, 0x01008001, -0x01008001,
                         2 ** 31 - 1, -2 ** 31, 0x7FBFFFFF, 0x40C00000, 0x40C00001, -0x40C00000],
                        np.int64)
INT64_SAMPLE = np.array([2 ** 53 + 1, 2 ** 62 + 2 ** 54, 2 ** 62 + 2 ** 54 + 1, -(2 ** 62 + 2 ** 54 + 1),
                         2 ** 63 - 1, -2 ** 63, 0x0180000000000001, 0x0180000000000000,
                         -0x0180000000000000, 0x7FC0000000000000, 0x7FC0000000000001],
                        np.int64)


@cuda.jit
def _from_integers(i32, i64, u64, out32, out64, outu64):
    for j in range(i32.size):
        x = i32[j]
        out32[j, 0] = bf16.bfloat16_as_short(bfloat16(x))
        out32[j, 1] = bf16.bfloat16_as_short(bf16.int2bfloat16_rn(x))
        out32[j, 2] = bf16.bfloat16_as_short(bf16.int32_to_bfloat16_rz(x))
        out32[j, 3] = bf16.bfloat16_as_short(bf16.int2bfloat16_rd(x))
        out32[j, 4] = bf16.bfloat16_as_short(bf16.int2bfloat16_ru(x))
    for j in range(i64.size):
        y = i64[j]
        out64[j, 0] = bf16.bfloat16_as_short(bfloat16(y))
        out64[j, 1] = bf16.bfloat16_as_short(bf16.ll2bfloat16_rn(y))
        out64[j, 2] = bf16.bfloat16_as_short(bf16.ll2bfloat16_rz(y))
        out64[j, 3] = bf16.bfloat16_as_short(bf16.int64_to_bfloat16_rd(y))
        out64[j, 4] = bf16.bfloat16_as_short(bf16.ll2bfloat16_ru(y))
        z = u64[j]
        outu64[j, 0] = bf16.bfloat16_as_short(bfloat16(z))
        outu64[j, 1] = bf16.bfloat16_as_short(bf16.ull2bfloat16_rn(z))
        outu64[j, 2] = bf16.bfloat16_as_short(bf16.ull2bfloat16_rz(z))
        outu64[j, 3] = bf16.bfloat16_as_short(bf16.ull2bfloat16_rd(z))
        outu64[j, 4] = bf16.bfloat16_as_short(bf16.uint64_to_bfloat16_ru(z))


def test_integers_round_once_in_each_mode(target):
    i32 = INT32_SAMPLE.astype(np.int32)
    i64 = np.concatenate([INT64_SAMPLE, INT32_SAMPLE])
    u64 = i64.view(np.uint64)
    out32 = np.zeros((i32.size, 5), np.int16)
    out64 = np.zeros((i64.size, 5), np.int16)
    outu64 = np.zeros((u64.size, 5), np.int16)
    _from_integers[1, 1](i32, i64, u64, out32, out64, outu64)
    if not target.ran("_from_integers"):
        return
    for values, out in ((i32, out32), (i64, out64), (u64, outu64)):
        for column, mode in enumerate(["rn", "rn", "rz", "rd", "ru"]):
            expected = [ref.from_integer(int(v), mode) for v in values]
            ref.same_bits(out[:, column].view(np.uint16), expected)


@cuda.jit
def _to_integers(bits, i8, u8, i16, u16, i32, u32, i64, u64):
    i = cuda.grid(1)
    if i < bits.size:
        x = bf16.ushort_as_bfloat16(bits[i])
        i8[i] = bf16.bfloat162char_rz(x)
        u8[i] = bf16.bfloat16_to_uint8_rz(x)
        i16[i, 0] = bf16.bfloat162short_rn(x)
        i16[i, 1] = bf16.bfloat162short_rz(x)
        i16[i, 2] = bf16.bfloat162short_rd(x)
        i16[i, 3] = bf16.bfloat162short_ru(x)
        u16[i, 0] = bf16.bfloat162ushort_rn(x)
        u16[i, 1] = bf16.bfloat162ushort_rz(x)
        u16[i, 2] = bf16.bfloat162ushort_rd(x)
        u16[i, 3] = bf16.bfloat162ushort_ru(x)
        i32[i, 0] = bf16.bfloat162int_rn(x)
        i32[i, 1] = bf16.bfloat162int_rz(x)
        i32[i, 2] = bf16.bfloat16_to_int32_rd(x)
        i32[i, 3] = bf16.bfloat162int_ru(x)
        u32[i, 0] = bf16.bfloat162uint_rn(x)
        u32[i, 1] = bf16.bfloat162uint_rz(x)
        u32[i, 2] = bf16.bfloat162uint_rd(x)
        u32[i, 3] = bf16.bfloat162uint_ru(x)
        i64[i, 0] = bf16.bfloat162ll_rn(x)
        i64[i, 1] = bf16.bfloat162ll_rz(x)
        i64[i, 2] = bf16.bfloat162ll_rd(x)
        i64[i, 3] = bf16.bfloat162ll_ru(x)
        u64[i, 0] = bf16.bfloat162ull_rn(x)
        u64[i, 1] = bf16.bfloat162ull_rz(x)
        u64[i, 2] = bf16.bfloat162ull_rd(x)
        u64[i, 3] = bf16.bfloat16_to_uint64_ru(x)


def test_every_pattern_converts_to_integers_saturating(target):
    bits = ALL_BITS
    outs = {dtype: np.zeros(bits.size if dtype in (np.int8, np.uint8) else (bits.size, 4), dtype)
            for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                          np.uint64)}
    _to_integers[blocks(bits.size)](bits, *outs.values())
    if not target.ran("_to_integers"):
        return
    np.testing.assert_array_equal(outs[np.int8], ref.to_integer(bits, np.int8, "rz"))
    np.testing.assert_array_equal(outs[np.uint8], ref.to_integer(bits, np.uint8, "rz"))
    for dtype in (np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        for column, mode in enumerate(["rn", "rz", "rd", "ru"]):
            np.testing.assert_array_equal(outs[dtype][:, column], ref.to_integer(bits, dtype, mode),
                                          err_msg=f"{np.dtype(dtype).name} {mode}")


# --- operators, comparisons, min/max, classification --------------------------------------

SPECIAL_BITS = np.array([0x0000, 0x8000, 0x3F80, 0xBF80, 0x3FC0, 0x4049, 0x0001, 0x8001, 0x7F7F,
                         0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x4000, 0x3F81], np.uint16)


@cuda.jit
def _compare(a_bits, b_bits, out):
    i = cuda.grid(1)
    if i < a_bits.size:
        a = bf16.ushort_as_bfloat16(a_bits[i])
        b = bf16.ushort_as_bfloat16(b_bits[i])
        out[i, 0] = bf16.heq(a, b)
        out[i, 1] = bf16.hne(a, b)
        out[i, 2] = bf16.hge(a, b)
        out[i, 3] = bf16.hgt(a, b)
        out[i, 4] = bf16.hle(a, b)
        out[i, 5] = bf16.hlt(a, b)
        out[i, 6] = bf16.hequ(a, b)
        out[i, 7] = bf16.hneu(a, b)
        out[i, 8] = bf16.hgeu(a, b)
        out[i, 9] = bf16.hgtu(a, b)
        out[i, 10] = bf16.hleu(a, b)
        out[i, 11] = bf16.hltu(a, b)
        out[i, 12] = a == b
        out[i, 13] = a != b
        out[i, 14] = a < b
        out[i, 15] = a >= b


def test_comparisons_ordered_and_unordered(target):
    a, b = (m.ravel() for m in np.meshgrid(SPECIAL_BITS, SPECIAL_BITS))
    out = np.zeros((a.size, 16), np.bool_)
    _compare[blocks(a.size)](a, b, out)
    if not target.ran("_compare"):
        return
    x, y = ref.to_float32(a), ref.to_float32(b)
    unordered = np.isnan(x) | np.isnan(y)
    ordered = [x == y, (x != y) & ~unordered, x >= y, x > y, x <= y, x < y]
    expected = ordered + [o | unordered for o in ordered[:1]] + [x != y] + \
        [o | unordered for o in ordered[2:]] + [x == y, x != y, x < y, x >= y]
    np.testing.assert_array_equal(out, np.stack(expected, axis=1))


@cuda.jit
def _extremes(a_bits, b_bits, out, classes):
    i = cuda.grid(1)
    if i < a_bits.size:
        a = bf16.ushort_as_bfloat16(a_bits[i])
        b = bf16.ushort_as_bfloat16(b_bits[i])
        out[i, 0] = bf16.bfloat16_as_ushort(bf16.hmax(a, b))
        out[i, 1] = bf16.bfloat16_as_ushort(bf16.hmin(a, b))
        out[i, 2] = bf16.bfloat16_as_ushort(bf16.hmax_nan(a, b))
        out[i, 3] = bf16.bfloat16_as_ushort(bf16.hmin_nan(a, b))
        out[i, 4] = bf16.bfloat16_as_ushort(bf16.hneg(a))
        out[i, 5] = bf16.bfloat16_as_ushort(bf16.habs(a))
        out[i, 6] = bf16.bfloat16_as_ushort(-a)
        out[i, 7] = bf16.bfloat16_as_ushort(bf16.hadd_sat(a, b))
        classes[i, 0] = bf16.hisinf(a)
        classes[i, 1] = bf16.hisnan(a)


def test_min_max_and_classification(target):
    a, b = (m.ravel() for m in np.meshgrid(SPECIAL_BITS, SPECIAL_BITS))
    out = np.zeros((a.size, 8), np.uint16)
    classes = np.zeros((a.size, 2), np.int32)
    _extremes[blocks(a.size)](a, b, out, classes)
    if not target.ran("_extremes"):
        return
    x, y = ref.to_float32(a), ref.to_float32(b)
    for i in range(a.size):
        xi, yi = float(x[i]), float(y[i])
        nan_x, nan_y = math.isnan(xi), math.isnan(yi)
        # +0 above -0, the number when one is NaN.
        larger = a[i] if (xi > yi or (xi == yi and b[i] & 0x8000)) else b[i]
        smaller = a[i] if (xi < yi or (xi == yi and a[i] & 0x8000)) else b[i]
        if nan_x or nan_y:
            larger = smaller = ref.CANONICAL_NAN if (nan_x and nan_y) else (b[i] if nan_x else a[i])
        ref.same_bits(out[i, :2], [larger, smaller])
        if nan_x or nan_y:
            assert math.isnan(float(ref.to_float32(out[i, 2]))) and \
                math.isnan(float(ref.to_float32(out[i, 3])))
        else:
            ref.same_bits(out[i, 2:4], [larger, smaller])
        if not nan_x:
            assert out[i, 4] == a[i] ^ 0x8000 and out[i, 6] == a[i] ^ 0x8000
            assert out[i, 5] == a[i] & 0x7FFF
        total = np.float32(xi) + np.float32(yi)
        sat = 0.0 if not total > 0 else min(float(ref.to_float32(ref.from_float32(total))), 1.0)
        assert float(ref.to_float32(out[i, 7])) == sat, i
        assert classes[i, 0] == (1 if xi == math.inf else -1 if xi == -math.inf else 0)
        assert classes[i, 1] == int(nan_x)


# --- the type in kernels: constructors, operators, arrays ---------------------------------


@cuda.jit
def _constructors(out):
    a = bfloat16(3.14)
    out[0] = float32(a)
    out[1] = int16(bfloat16(int32(-7)))
    out[2] = bfloat16(cuda.float16(1.5)) + bfloat16(np.uint16(2))
    b = bfloat16(1.0)
    b += bfloat16(2.0)
    b *= 2  # an int64: float64, as Numba promotes
    out[3] = b
    out[4] = +bfloat16(-2.5)
    c = bfloat16(2.0)
    out[5] = c ** 3
    out[6] = float32(bfloat16(0.1)) - float32(0.1)


def test_constructors_and_operators(target):
    out = np.zeros(7, np.float64)
    _constructors[1, 1](out)
    # bfloat16(3.14) is 3.140625; 0.1 is 0.10009765625.
    target.assert_result("_constructors", out,
                         [3.140625, -7, 3.5, 6.0, -2.5, 8.0,
                          np.float32(0.10009765625) - np.float32(0.1)])


@cuda.jit
def _floor_division(out):
    a = bfloat16(7.5)
    b = bfloat16(2)
    out[0] = a // b
    out[1] = a % b
    out[2] = -a % b  # Python's sign: the divisor's
    out[3] = a ** bfloat16(3)  # a bfloat16: 421.875 rounds to 422
    out[4] = float32(bfloat16(2) ** bfloat16(0.5))


def test_floor_division_modulo_and_power(target):
    out = np.zeros(5, np.float32)
    _floor_division[1, 1](out)
    target.assert_result("_floor_division", out,
                         [3, 1.5, 0.5, 422, ref.to_float32(ref.from_float32(np.float32(np.sqrt(2))))[0]])


@cuda.jit
def _promotions(out):
    x = bfloat16(256)
    out[0] = x + x                      # bfloat16
    out[1] = x + np.int8(1)             # bfloat16: 257 rounds to even, 256
    out[2] = x + np.int16(1)            # float32
    out[3] = x + cuda.float16(1)        # float32: neither half holds the other
    out[4] = x + float32(1)             # float32
    out[5] = x + 2.0 ** -20             # float64
    out[6] = x + 1                      # float64 (an int64 literal)


def test_promotions_follow_numba_rules(target):
    out = np.zeros(7, np.float64)
    _promotions[1, 1](out)
    target.assert_result("_promotions", out, [512, 256, 257, 257, 257, 256 + 2.0 ** -20, 257])


@cuda.jit
def _local_and_shared(bits, out):
    local = cuda.local.array(4, bfloat16)
    shared = cuda.shared.array(64, dtype=bfloat16)
    i = cuda.threadIdx.x
    shared[i] = bits.view(bfloat16)[i]
    cuda.syncthreads()
    for k in range(4):
        local[k] = shared[(i + k) % 64]
    total = bfloat16(0)
    for k in range(4):
        total = total + local[k]
    out.view(bfloat16)[i] = total


def test_local_and_shared_arrays(target, rng):
    values = rng.integers(-8, 8, 64).astype(np.float32)
    bits = ref.from_float32(values)
    out = np.zeros(64, np.uint16)
    _local_and_shared[1, 64](bits, out)
    expected = np.array([sum(values[(i + k) % 64] for k in range(4)) for i in range(64)], np.float32)
    target.assert_result("_local_and_shared", ref.to_float32(out), expected)


def test_bits_in_uint16_arrays_with_a_signature(target):
    # Host arrays hold the bits: a kernel views them as bfloat16.
    @cuda.jit(void(uint16[::1], uint16[::1]))
    def scale_bits(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out.view(bfloat16)[i] = a.view(bfloat16)[i] * bfloat16(2)

    bits = ref.from_float32(np.array([1.5, -3.0, 0.1], np.float32))
    out = np.zeros(3, np.uint16)
    scale_bits[1, 4](bits, out)
    target.assert_result("scale_bits", out, ref.from_float32(ref.to_float32(bits) * 2))


def test_bfloat16_arrays_in_signatures_compile():
    def scale(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = a[i] * bfloat16(2)

    ptx, result = cuda.compile_ptx(scale, (bfloat16[::1], bfloat16[::1]), cc=(8, 0))
    assert ".visible .entry" in ptx or ".entry" in ptx
    assert "bf16" in ptx


@cuda.jit
def _math(bits, out):
    i = cuda.grid(1)
    if i < bits.size:
        x = bf16.ushort_as_bfloat16(bits[i])
        out[i, 0] = bf16.bfloat16_as_ushort(bf16.hsqrt(x))
        out[i, 1] = bf16.bfloat16_as_ushort(bf16.hrcp(x))
        out[i, 2] = bf16.bfloat16_as_ushort(bf16.htrunc(x))
        out[i, 3] = bf16.bfloat16_as_ushort(bf16.hceil(x))
        out[i, 4] = bf16.bfloat16_as_ushort(bf16.hfloor(x))
        out[i, 5] = bf16.bfloat16_as_ushort(bf16.hrint(x))
        out[i, 6] = bf16.bfloat16_as_ushort(bf16.hsin(x))
        out[i, 7] = bf16.bfloat16_as_ushort(bf16.hexp(x))
        out[i, 8] = bf16.bfloat16_as_ushort(bf16.hlog2(x))
        out[i, 9] = bf16.bfloat16_as_ushort(bf16.hexp10(x))
        out[i, 10] = bf16.bfloat16_as_ushort(bf16.htanh_approx(x))


def test_math_functions(target):
    bits = ALL_BITS
    out = np.zeros((bits.size, 11), np.uint16)
    _math[blocks(bits.size)](bits, out)
    if not target.ran("_math"):
        return
    x = ref.to_float32(bits)
    with np.errstate(all="ignore"):
        exact = [np.sqrt(x), np.float32(1) / x, np.trunc(x), np.ceil(x), np.floor(x), np.rint(x)]
        approximate = [np.sin(x), np.exp(x), np.log2(x), np.power(np.float32(10), x), np.tanh(x)]
    for column, want in enumerate(exact):
        ref.same_bits(out[:, column], ref.from_float32(want))
    # The float32 functions may differ from NumPy's in their last float32
    # bit, which may move a bfloat16 rounding by one step.
    for column, want in enumerate(approximate, start=len(exact)):
        got = ref.to_float32(out[:, column]).astype(np.float64)
        want = ref.to_float32(ref.from_float32(want)).astype(np.float64)
        finite = np.isfinite(want) & (np.abs(want) > 1e-30)
        np.testing.assert_allclose(got[finite], want[finite], rtol=2 ** -7)
        assert (np.isnan(got) == np.isnan(want)).all()


@cuda.jit
def _math_module(bits, out, floor_is_bfloat16):
    x = bits.view(bfloat16)[0]
    out.view(bfloat16)[0] = math.sqrt(x)
    out.view(bfloat16)[1] = math.floor(x)
    out.view(bfloat16)[2] = math.ceil(x)
    out.view(bfloat16)[3] = math.trunc(x)
    out.view(bfloat16)[4] = math.log(x)
    out.view(bfloat16)[5] = math.exp2(x)
    y = math.floor(x)
    floor_is_bfloat16[0] = bf16.bfloat16_as_ushort(y) == bf16.bfloat16_as_ushort(bf16.hfloor(x))
    floor_is_bfloat16[1] = math.atan(x) == math.atan(float64(x))  # not overloaded: float64


def test_math_module_keeps_bfloat16_as_numba_cuda_overloads_it(target):
    bits = ref.from_float32(np.array([3.140625], np.float32))
    out = np.zeros(6, np.uint16)
    flags = np.zeros(2, np.bool_)
    _math_module[1, 1](bits, out, flags)
    if target.ran("_math_module"):
        x = np.float32(3.140625)
        ref.same_bits(out[:4], ref.from_float32(np.array([np.sqrt(x), 3, 4, 3], np.float32)))
        np.testing.assert_allclose(ref.to_float32(out[4:]), [math.log(3.140625), 2 ** 3.140625],
                                   rtol=2 ** -7)
        assert flags.all()


# --- the API around the type -------------------------------------------------------------


def test_is_bfloat16_supported():
    from tidal.cuda.target import current_target
    if current_target() == "cpu":
        assert cuda.is_bfloat16_supported() is True
    else:
        cc = cuda.get_current_device().compute_capability
        assert cuda.is_bfloat16_supported() == (cc >= (8, 0))


def test_names_match_numba_cuda():
    import tidal.types
    from tidal.cuda import types as cuda_types
    assert cuda.bfloat16 is tidal.types.bfloat16 is cuda_types.bfloat16 is bf16.bfloat16
    assert bf16.float32_to_bfloat16 is bf16.float2bfloat16
    assert bf16.bfloat16_to_int64_rn is bf16.bfloat162ll_rn
    assert bf16.int16_as_bfloat16 is bf16.short_as_bfloat16
    numba_cuda_all = {"bfloat16", "habs", "hadd", "hsub", "hmul", "hadd_rn", "hsub_rn", "hmul_rn",
                      "hdiv", "hadd_sat", "hsub_sat", "hmul_sat", "hfma", "hfma_sat", "hneg",
                      "hfma_relu", "heq", "hne", "hge", "hgt", "hle", "hlt", "hmax", "hmin",
                      "hmax_nan", "hmin_nan", "hisinf", "hisnan", "hequ", "hneu", "hgeu", "hgtu",
                      "hleu", "hltu", "float32_to_bfloat16", "float64_to_bfloat16",
                      "bfloat16_to_float32", "float32_to_bfloat16_rn", "float32_to_bfloat16_rz",
                      "float32_to_bfloat16_rd", "float32_to_bfloat16_ru", "bfloat16_to_int8_rz",
                      "bfloat16_to_uint8_rz", "bfloat16_as_int16", "bfloat16_as_uint16",
                      "int16_as_bfloat16", "uint16_as_bfloat16", "htrunc", "hceil", "hfloor",
                      "hrint", "hsqrt", "hrsqrt", "hrcp", "hlog", "hlog2", "hlog10", "hcos", "hsin",
                      "htanh", "htanh_approx", "hexp", "hexp2", "hexp10"}
    for c_type in ("int16", "uint16", "int32", "uint32", "int64", "uint64"):
        for mode in ("rn", "rz", "rd", "ru"):
            numba_cuda_all |= {f"{c_type}_to_bfloat16_{mode}", f"bfloat16_to_{c_type}_{mode}"}
    assert numba_cuda_all == set(bf16.__all__)
    assert all(hasattr(bf16, name) for name in numba_cuda_all)


def test_numba_cuda_names_under_the_mapping():
    # A numba-cuda program's imports, unedited (tidal.install_as_numba_cuda).
    import sys
    from child_processes import python_environment
    script = """
import numpy as np
import tidal
tidal.install_as_numba_cuda(child_processes=False)
from numba import cuda
from numba.cuda import types
from numba.cuda.bf16 import bfloat16, hmul, bfloat16_as_int16

@cuda.jit
def kernel(out):
    out[0] = bfloat16_as_int16(hmul(bfloat16(1.5), bfloat16(3)))

out = np.zeros(1, np.int16)
kernel[1, 1](out)
print(types.bfloat16 is bfloat16, cuda.is_bfloat16_supported(), hex(out[0]))
"""
    process = subprocess.run([sys.executable, "-c", script], env=python_environment(
        TIDAL_TARGET="cpu"), capture_output=True, text=True, timeout=120)
    assert process.returncode == 0, process.stderr
    assert process.stdout.split() == ["True", "True", "0x4090"]  # 4.5


@cuda.jit(device=True)
def _halve(x):
    return x / bfloat16(2)


@cuda.jit
def _device_function(bits, out):
    i = cuda.grid(1)
    if i < bits.size:
        out.view(bfloat16)[i] = _halve(bits.view(bfloat16)[i])


def test_device_functions_take_and_return_bfloat16(target):
    bits = ref.from_float32(np.array([3.0, -1.0, 2.0 ** -126, 0.1], np.float32))
    out = np.zeros(4, np.uint16)
    _device_function[1, 4](bits, out)
    target.assert_result("_device_function", out, ref.from_float32(ref.to_float32(bits) / 2))


def test_host_call_says_numpy_has_no_bfloat16():
    with pytest.raises(TypeError, match="NumPy has no bfloat16"):
        bfloat16(1.5)


def test_complex_argument_is_refused():
    def complex_argument(a, out):
        out[0] = bf16.bfloat16_as_short(bf16.hadd(bfloat16(1), a[0]))

    kernel = cuda.jit(complex_argument)
    with pytest.raises(TypingError, match=r"cuda\.bf16\.hadd\(\) takes bfloat16 numbers .*not "
                                          r"complex64") as info:
        kernel[1, 1](np.zeros(1, np.complex64), np.zeros(1, np.int16))
    assert (info.value.line, info.value.column) == position_of(complex_argument, "a[0])")


def test_wrong_argument_count_is_refused():
    def three(a, out):
        out[0] = bf16.bfloat16_as_short(bf16.hmul(bfloat16(a[0]), bfloat16(a[0]), bfloat16(1)))

    with pytest.raises(TypingError, match=r"cuda\.bf16\.hmul"):
        cuda.jit(three)[1, 1](np.zeros(1, np.float32), np.zeros(1, np.int16))


# --- PTX -------------------------------------------------------------------------------


def _ptxas():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    return path if path.is_file() else None


def _every(bits, out):
    i = cuda.grid(1)
    a = bf16.ushort_as_bfloat16(bits[i])
    b = bf16.ushort_as_bfloat16(bits[0])
    r = bf16.hfma(a, b, a) + a * b - a / b
    r = bf16.hmax(r, bf16.hmin_nan(a, b)) + bf16.hsqrt(a) + bf16.hsin(a) + bf16.hexp10(a)
    r = r + bf16.float2bfloat16_rz(float32(i)) + bf16.ll2bfloat16_ru(i) + bfloat16(i)
    out[i] = bf16.bfloat162int_rd(r) + bf16.hisinf(a) + (a < b) + bf16.hequ(a, b)


@pytest.mark.skipif(_ptxas() is None, reason="no ptxas (CUDA toolkit) under CUDA_HOME or /usr/local/cuda")
@pytest.mark.parametrize("cc", [(7, 5), (8, 0), (9, 0)])
def test_ptx_uses_native_bf16_where_the_target_has_it(tmp_path, cc):
    ptx, _ = cuda.compile_ptx(_every, (uint16[::1], int64[::1]), cc=cc)
    arithmetic = re.search(r"\b(add|sub|mul)(\.rn)?\.bf16\b", ptx)
    if cc >= (8, 0):
        assert "fma.rn.bf16" in ptx and "cvt.rn.bf16.f32" in ptx
    if cc >= (9, 0):  # native add/sub/mul and comparisons
        assert arithmetic and "setp.lt.bf16" in ptx
    elif cc >= (8, 0):  # add/sub/mul in float32, rounded once by cvt.rn.bf16.f32
        assert not arithmetic
    else:  # everything emulated in float32
        assert ".bf16" not in ptx
    path = tmp_path / "every.ptx"
    path.write_text(ptx)
    run = subprocess.run([str(_ptxas()), f"-arch=sm_{cc[0]}{cc[1]}", "-c", str(path), "-o",
                          os.devnull], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_numba_cuda_internal_names():
    # numba-cuda's numba.cuda._internal.cuda_bf16: the type as nv_bfloat16
    # and each function under CUDA's double-underscore name, the same objects.
    from tidal.cuda._internal import cuda_bf16
    assert cuda_bf16.nv_bfloat16 is cuda.bfloat16
    assert getattr(cuda_bf16, "__hadd") is bf16.hadd
    assert getattr(cuda_bf16, "__float2bfloat16_rz") is bf16.float2bfloat16_rz
    assert getattr(cuda_bf16, "__bfloat162int_rn") is bf16.bfloat162int_rn
    assert all(getattr(cuda_bf16, name) is getattr(bf16, name[2:])
               for name in cuda_bf16.__all__ if name.startswith("__h"))
    assert not hasattr(cuda_bf16, "__hadd2")  # no bfloat162 pairs
