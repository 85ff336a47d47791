"""CUDA's 8-bit floats as numba-cuda binds cuda_fp8.h (IntrinsicsFp8.cpp,
Fp8Conversions.cpp): the fp8_e4m3/fp8_e5m2/fp8_e8m0 values, their
constructors and conversions, and the cvt_* functions with their saturation,
interpretation and rounding modes, checked on every target against a
reference written here in NumPy on the bit patterns (docs/language.md,
"cuda.fp8")."""

import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tidal import (cuda, float16, float32, float64, int8, int16, int32, int64, uint8, uint16,
                   uint32, uint64)
from tidal.cuda._internal.cuda_fp8 import (
    cudaRoundMode, cvt_bfloat16raw_to_e8m0, cvt_bfloat16raw_to_fp8, cvt_double2_to_e8m0x2,
    cvt_double2_to_fp8x2, cvt_double_to_e8m0, cvt_double_to_fp8, cvt_e8m0_to_bf16raw,
    cvt_float2_to_e8m0x2, cvt_float2_to_fp8x2, cvt_float_to_e8m0, cvt_float_to_fp8,
    fp8_e4m3, fp8_e5m2, fp8_e8m0, fp8_interpretation_t, saturation_t)
from tidal.errors import TypingError

NOSAT, SATFINITE = saturation_t.NOSAT, saturation_t.SATFINITE
E4M3, E5M2 = fp8_interpretation_t.E4M3, fp8_interpretation_t.E5M2
ROUND_ZERO, ROUND_UP = cudaRoundMode.cudaRoundZero, cudaRoundMode.cudaRoundPosInf


# --- the reference, on bit patterns ---------------------------------------------------------

def decode(bits, e5m2):
    """The float64 each e4m3 (e5m2) pattern holds; NaN for the NaNs."""
    bits = np.asarray(bits, dtype=np.int64)
    sign = np.where(bits & 0x80, -1.0, 1.0)
    exponent_bits, mantissa_bits, bias = (5, 2, 15) if e5m2 else (4, 3, 7)
    exponent = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1)
    mantissa = bits & ((1 << mantissa_bits) - 1)
    scale = float(1 << mantissa_bits)
    value = np.where(exponent == 0, mantissa / scale * 2.0 ** (1 - bias),
                     (1 + mantissa / scale) * np.exp2(exponent - bias))
    value = sign * value
    if e5m2:
        top = exponent == 31
        value = np.where(top & (mantissa == 0), sign * np.inf, value)
        value = np.where(top & (mantissa != 0), np.nan, value)
    else:
        value = np.where((bits & 0x7F) == 0x7F, np.nan, value)
    return value


def encode(x, saturate, e5m2, canonical_nan=True):
    """float64 values (exact) to e4m3/e5m2 bits, rounded to nearest even: the
    nearest finite value, ties to the even pattern; past the largest one by
    half an ulp or more (e4m3: more) overflow, which saturation makes the
    largest finite value. NaN: 0x7F (a double's NaN keeps its sign, and in
    e5m2 its two top mantissa bits)."""
    x = np.asarray(x, dtype=np.float64)
    codes = np.arange(0x7C if e5m2 else 0x7F)  # every finite non-negative pattern
    values = decode(codes, e5m2)
    # A virtual pattern one step past the largest: rounding onto it overflows.
    virtual = 65536.0 if e5m2 else 480.0
    values = np.append(values, virtual)
    codes = np.append(codes, 0x7C if e5m2 else 0x7F)  # even for e5m2, odd for e4m3
    magnitude = np.abs(x)
    magnitude = np.where(np.isnan(magnitude), 0, magnitude)  # NaNs are set below
    hi = np.clip(np.searchsorted(values, magnitude), 1, len(values) - 1)
    lo = hi - 1
    with np.errstate(invalid="ignore"):  # infinities
        down, up = magnitude - values[lo], values[hi] - magnitude
    pick_hi = (up < down) | ((up == down) & (codes[hi] % 2 == 0))
    index = np.where(pick_hi, hi, lo)
    overflow = (index == len(values) - 1) | (magnitude > virtual)
    largest = 0x7B if e5m2 else 0x7E
    result = np.where(overflow, largest if saturate else (0x7C if e5m2 else 0x7F), codes[index])
    sign_bit = np.signbit(x).astype(np.int64) << 7
    result = result | sign_bit
    nan = np.isnan(x)
    if canonical_nan:
        result = np.where(nan, 0x7F, result)
    else:
        raw = x.view(np.uint64)
        nan_bits = 0x7F | sign_bit
        if e5m2:
            nan_bits = 0x7E | ((raw >> np.uint64(50)) & np.uint64(3)).astype(np.int64) | sign_bit
        result = np.where(nan, nan_bits, result)
    return result.astype(np.uint8)


def ceil_log2(magnitude):
    """The smallest k with 2**k >= magnitude (> 0), exactly."""
    mantissa, exponent = np.frexp(magnitude)  # magnitude = mantissa * 2**exponent, 0.5 <= m < 1
    return np.where(mantissa == 0.5, exponent - 1, exponent)


def encode_e8m0(x, saturate, mode, from_double=False):
    """e8m0 bits: 127 + floor(log2|x|) toward zero (cudaRoundZero), 127 +
    ceil(log2|x|) up (cudaRoundPosInf), 0 at and below 2**-127 (and for
    float32's subnormals toward zero), 0xFF for NaN and beyond 2**127
    (0xFE saturated). A float64 beyond float32's range toward zero is 0xFE."""
    x = np.asarray(x, dtype=np.float64)
    magnitude = np.abs(x)
    with np.errstate(all="ignore"):
        safe = np.where(np.isfinite(magnitude) & (magnitude > 0), magnitude, 1.0)
        if mode == ROUND_ZERO:
            exponent = np.frexp(safe)[1] - 1 + 127
            exponent = np.where(magnitude < 2.0 ** -126, 0, exponent)
            if from_double:
                exponent = np.minimum(exponent, 254)
        else:
            exponent = np.maximum(ceil_log2(safe) + 127, 0)
            exponent = np.where(magnitude == 0, 0, exponent)
    overflow = (exponent >= 255) | np.isinf(magnitude)
    result = np.where(overflow, 0xFE if saturate else 0xFF, exponent)
    return np.where(np.isnan(x), 0xFF, result).astype(np.uint8)


def decode_e8m0(bits):
    bits = np.asarray(bits, dtype=np.float64)
    return np.where(bits == 255, np.nan, np.exp2(bits - 127))


def float32_sample(rng):
    """Random bit patterns, every fp8 value and the midpoints next to them
    (ties), a step either side of each, overflow and underflow thresholds,
    subnormals, infinities and NaNs."""
    random = rng.integers(0, 2 ** 32, 60000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    near = rng.uniform(-600, 600, 20000).astype(np.float32)
    small = (rng.uniform(-1, 1, 20000) * 2.0 ** -6).astype(np.float32)
    special = []
    for e5m2 in (False, True):
        values = decode(np.arange(256), e5m2)
        values = np.sort(values[np.isfinite(values)])
        midpoints = (values[1:] + values[:-1]) / 2
        special += [values, midpoints]
    special.append(np.array([464, 480, 448, 57344, 61440, 65536, 2.0 ** -10, 2.0 ** -17,
                             2.0 ** -9, 2.0 ** -16, 1e20, 3.4e38, np.inf, -np.inf, np.nan,
                             -np.nan, 0.0, -0.0, 1e-45, -1e-45]))
    special = np.concatenate(special).astype(np.float32)
    steps = np.concatenate([np.nextafter(special, np.float32(np.inf)),
                            np.nextafter(special, np.float32(-np.inf))])
    return np.concatenate([special, steps, random, near, small, -special])


# --- kernels ---------------------------------------------------------------------------

@cuda.jit
def float_to_fp8(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = cvt_float_to_fp8(x[i], NOSAT, E4M3)
        out[1, i] = cvt_float_to_fp8(x[i], SATFINITE, E4M3)
        out[2, i] = cvt_float_to_fp8(x[i], NOSAT, E5M2)
        out[3, i] = cvt_float_to_fp8(x[i], SATFINITE, E5M2)


@cuda.jit
def double_to_fp8(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = cvt_double_to_fp8(x[i], NOSAT, E4M3)
        out[1, i] = cvt_double_to_fp8(x[i], SATFINITE, E4M3)
        out[2, i] = cvt_double_to_fp8(x[i], NOSAT, E5M2)
        out[3, i] = cvt_double_to_fp8(x[i], SATFINITE, E5M2)


def test_float32_to_fp8_matches_the_reference(target, rng):
    x = float32_sample(rng)
    out = np.zeros((4, x.size), dtype=np.uint8)
    float_to_fp8[(x.size + 255) // 256, 256](x, out)
    if not target.ran("float_to_fp8"):
        return
    with np.errstate(invalid="ignore"):  # signalling NaNs among the random bits
        wide = x.astype(np.float64)
    for row, (saturate, e5m2) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)]):
        expected = encode(wide, saturate, e5m2)
        bad = np.flatnonzero(out[row] != expected)
        assert bad.size == 0, (row, x[bad[:5]], out[row][bad[:5]], expected[bad[:5]])


def test_float64_to_fp8_matches_the_reference(target, rng):
    with np.errstate(invalid="ignore"):
        x = float32_sample(rng).astype(np.float64)
    # Values between float32's: ties of fp8 a float32 cannot hold, and NaNs
    # with a sign and payloads.
    x = np.concatenate([x, x * (1 + 2.0 ** -40), x * (1 - 2.0 ** -40),
                        np.array([1e300, -1e300, 2.0 ** -1000]),
                        np.array([0xFFF4000000000000, 0x7FF8000000000001, 0x7FF4000000000000],
                                 dtype=np.uint64).view(np.float64)])
    out = np.zeros((4, x.size), dtype=np.uint8)
    double_to_fp8[(x.size + 255) // 256, 256](x, out)
    if not target.ran("double_to_fp8"):
        return
    for row, (saturate, e5m2) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)]):
        expected = encode(x, saturate, e5m2, canonical_nan=False)
        bad = np.flatnonzero(out[row] != expected)
        assert bad.size == 0, (row, x[bad[:5]], out[row][bad[:5]], expected[bad[:5]])


@pytest.mark.parametrize("name", ["fp8_e4m3", "fp8_e5m2"])
def test_every_pattern_converts_to_its_value_and_back(target, name):
    # Each fp8 value, made from the float it holds, gives that float back
    # and the same bits through cvt_float_to_fp8; NaN stays NaN.
    e5m2 = name == "fp8_e5m2"
    bits = np.arange(256)
    values = decode(bits, e5m2).astype(np.float32)
    out = np.zeros(256, dtype=np.float32)
    as_half = np.zeros(256, dtype=np.float16)
    as_double = np.zeros(256, dtype=np.float64)
    again = np.zeros(256, dtype=np.uint8)
    make = fp8_e5m2 if e5m2 else fp8_e4m3
    interpretation = E5M2 if e5m2 else E4M3

    @cuda.jit
    def round_trip(x, out, as_half, as_double, again):
        i = cuda.grid(1)
        if i < x.size:
            v = make(x[i])
            out[i] = float32(v)
            as_half[i] = float16(v)
            as_double[i] = float64(v)
            again[i] = cvt_float_to_fp8(x[i], SATFINITE, interpretation)

    round_trip[1, 256](values, out, as_half, as_double, again)
    if not target.ran("round_trip"):
        return
    # The constructor saturates: e5m2's infinities become +-57344.
    held = np.where(np.isinf(values), np.copysign(np.float32(57344), values), values)
    np.testing.assert_array_equal(out, held)
    np.testing.assert_array_equal(as_half, held.astype(np.float16))
    np.testing.assert_array_equal(as_double, held.astype(np.float64))
    finite = ~np.isnan(values)
    expected_bits = np.where(finite, bits, 0x7F)
    if e5m2:  # infinities saturate in the constructor's mode
        expected_bits = np.where(np.isinf(values), np.where(values > 0, 0x7B, 0xFB), expected_bits)
    np.testing.assert_array_equal(again, expected_bits)


def test_conversions_to_integers_saturate_toward_zero(target):
    values = np.array([2.75, -2.75, 300.0, -300.0, 40000, -40000, np.inf, -np.inf, np.nan, 0.4],
                      dtype=np.float32)
    out = np.zeros((8, values.size), dtype=np.int64)
    unsigned = np.zeros((4, values.size), dtype=np.uint64)

    @cuda.jit
    def to_integers(x, out, unsigned):
        i = cuda.grid(1)
        if i < x.size:
            v = fp8_e5m2(x[i])  # e5m2 holds 40000 (40960); saturated to 57344
            out[0, i] = int8(v)
            out[1, i] = int16(v)
            out[2, i] = int32(v)
            out[3, i] = int64(v)
            w = fp8_e4m3(x[i])  # 300 is 288 in e4m3; saturated to 448
            out[4, i] = int8(w)
            out[5, i] = int16(w)
            out[6, i] = int32(w)
            out[7, i] = int64(w)
            unsigned[0, i] = uint8(v)
            unsigned[1, i] = uint16(v)
            unsigned[2, i] = uint32(w)
            unsigned[3, i] = uint64(w)

    to_integers[1, 32](values, out, unsigned)
    if not target.ran("to_integers"):
        return
    wide = values.astype(np.float64)
    for row, (e5m2, info) in enumerate([(1, np.int8), (1, np.int16), (1, np.int32), (1, np.int64),
                                        (0, np.int8), (0, np.int16), (0, np.int32), (0, np.int64)]):
        held = decode(encode(wide, 1, e5m2), e5m2)
        expected = np.nan_to_num(np.clip(np.trunc(held), np.iinfo(info).min, np.iinfo(info).max),
                                 nan=0)
        np.testing.assert_array_equal(out[row], expected.astype(np.int64), err_msg=str(row))
    for row, (e5m2, info) in enumerate([(1, np.uint8), (1, np.uint16), (0, np.uint32),
                                        (0, np.uint64)]):
        held = decode(encode(wide, 1, e5m2), e5m2)
        expected = np.nan_to_num(np.clip(np.trunc(held), 0, np.iinfo(info).max), nan=0)
        np.testing.assert_array_equal(unsigned[row], expected.astype(np.uint64), err_msg=str(row))


def test_constructors_from_every_number_type(target):
    # numba-cuda's constructor tests: 1.0 from each float type, 2 (4 for
    # e8m0) from each integer type; and values that round.
    out = np.zeros((3, 14), dtype=np.float32)

    @cuda.jit
    def construct(out):
        out[0, 0] = float32(fp8_e4m3(float16(1.0)))
        out[0, 1] = float32(fp8_e4m3(float32(1.0)))
        out[0, 2] = float32(fp8_e4m3(float64(1.0)))
        out[0, 3] = float32(fp8_e4m3(int8(2)))
        out[0, 4] = float32(fp8_e4m3(int16(2)))
        out[0, 5] = float32(fp8_e4m3(int32(2)))
        out[0, 6] = float32(fp8_e4m3(int64(2)))
        out[0, 7] = float32(fp8_e4m3(uint8(2)))
        out[0, 8] = float32(fp8_e4m3(uint16(2)))
        out[0, 9] = float32(fp8_e4m3(uint32(2)))
        out[0, 10] = float32(fp8_e4m3(uint64(2)))
        out[0, 11] = float32(fp8_e4m3(int64(1000)))  # saturated
        out[0, 12] = float32(fp8_e4m3(17))  # between 16 and 18: to even, 16
        out[0, 13] = float32(fp8_e4m3())
        out[1, 0] = float32(fp8_e5m2(float16(1.0)))
        out[1, 1] = float32(fp8_e5m2(float32(1.0)))
        out[1, 2] = float32(fp8_e5m2(float64(1.0)))
        out[1, 3] = float32(fp8_e5m2(int8(2)))
        out[1, 4] = float32(fp8_e5m2(int16(2)))
        out[1, 5] = float32(fp8_e5m2(int32(2)))
        out[1, 6] = float32(fp8_e5m2(int64(2)))
        out[1, 7] = float32(fp8_e5m2(uint8(2)))
        out[1, 8] = float32(fp8_e5m2(uint16(2)))
        out[1, 9] = float32(fp8_e5m2(uint32(2)))
        out[1, 10] = float32(fp8_e5m2(uint64(2)))
        out[1, 11] = float32(fp8_e5m2(int64(100000)))  # saturated
        out[1, 12] = float32(fp8_e5m2(-3.0))
        out[1, 13] = float32(fp8_e5m2(fp8_e4m3(1.5)))
        out[2, 0] = float32(fp8_e8m0(float16(2.0)))
        out[2, 1] = float32(fp8_e8m0(float32(2.0)))
        out[2, 2] = float32(fp8_e8m0(float64(2.0)))
        out[2, 3] = float32(fp8_e8m0(int8(4)))
        out[2, 4] = float32(fp8_e8m0(int16(4)))
        out[2, 5] = float32(fp8_e8m0(int32(4)))
        out[2, 6] = float32(fp8_e8m0(int64(4)))
        out[2, 7] = float32(fp8_e8m0(uint8(4)))
        out[2, 8] = float32(fp8_e8m0(uint16(4)))
        out[2, 9] = float32(fp8_e8m0(uint32(4)))
        out[2, 10] = float32(fp8_e8m0(uint64(4)))
        out[2, 11] = float32(fp8_e8m0(int64(-5)))  # |x| up to a power of two
        out[2, 12] = float32(fp8_e8m0(uint64(2 ** 63 + 1)))
        out[2, 13] = float32(fp8_e8m0(0.3))

    construct[1, 1](out)
    if not target.ran("construct"):
        return
    np.testing.assert_array_equal(out[0], [1, 1, 1] + [2] * 8 + [448, 16, 0])
    np.testing.assert_array_equal(out[1], [1, 1, 1] + [2] * 8 + [57344, -3, 1.5])
    np.testing.assert_array_equal(out[2], [2, 2, 2] + [4] * 8 + [8, 2.0 ** 64, 0.5])


def test_nan_and_truth(target):
    out = np.zeros(6, dtype=np.float32)
    truth = np.zeros(6, dtype=np.int32)

    @cuda.jit
    def nan_and_truth(out, truth):
        nan = float32(math.nan)
        out[0] = float32(fp8_e4m3(nan))
        out[1] = float32(fp8_e5m2(nan))
        out[2] = float32(fp8_e8m0(nan))
        out[3] = float32(float16(fp8_e4m3(nan)))
        out[4] = float32(float64(fp8_e5m2(nan)))
        out[5] = float32(float16(fp8_e8m0(nan)))
        truth[0] = bool(fp8_e4m3(-0.0))
        truth[1] = bool(fp8_e5m2(0.0))
        truth[2] = bool(fp8_e4m3(0.001))
        truth[3] = 1 if fp8_e5m2(-2.0) else 0
        truth[4] = bool(fp8_e8m0(0.0))  # every e8m0 value is true
        truth[5] = bool(fp8_e4m3(nan))

    nan_and_truth[1, 1](out, truth)
    if not target.ran("nan_and_truth"):
        return
    assert np.isnan(out).all()
    np.testing.assert_array_equal(truth, [0, 0, 1, 1, 1, 1])


def test_cvt_overflow_as_numba_cuda(target):
    # numba-cuda's own test values: 1e20 and 1e300 overflow each way.
    result = np.zeros(8, dtype=np.uint8)

    @cuda.jit
    def overflow(result, x, y):
        result[0] = cvt_float_to_fp8(x[0], NOSAT, E5M2)
        result[1] = cvt_float_to_fp8(x[0], SATFINITE, E5M2)
        result[2] = cvt_float_to_fp8(x[0], NOSAT, E4M3)
        result[3] = cvt_float_to_fp8(x[0], SATFINITE, E4M3)
        result[4] = cvt_double_to_fp8(y[0], NOSAT, E5M2)
        result[5] = cvt_double_to_fp8(y[0], SATFINITE, E5M2)
        result[6] = cvt_double_to_fp8(y[0], NOSAT, E4M3)
        result[7] = cvt_double_to_fp8(y[0], SATFINITE, E4M3)

    overflow[1, 1](result, np.array([1e20], np.float32), np.array([1e300]))
    target.assert_result("overflow", result, [0x7C, 0x7B, 0x7F, 0x7E] * 2)


def test_pairs_pack_x_in_the_low_byte(target):
    result = np.zeros(4, dtype=np.uint16)

    @cuda.jit
    def pairs(result):
        result[0] = cvt_float2_to_fp8x2(cuda.float32x2(1.0, -2.0), SATFINITE, E4M3)
        result[1] = cvt_double2_to_fp8x2(cuda.float64x2(0.5, 1e9), NOSAT, E5M2)
        result[2] = cvt_float2_to_e8m0x2(cuda.float32x2(1.0, 3.0), SATFINITE, ROUND_UP)
        result[3] = cvt_double2_to_e8m0x2(cuda.float64x2(3.0, 0.25), SATFINITE, ROUND_ZERO)

    pairs[1, 1](result)
    target.assert_result("pairs", result, [0x38 | 0xC0 << 8, 0x38 | 0x7C << 8,
                                           127 | 129 << 8, 128 | 125 << 8])


@cuda.jit
def float_to_e8m0(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = cvt_float_to_e8m0(x[i], NOSAT, ROUND_ZERO)
        out[1, i] = cvt_float_to_e8m0(x[i], SATFINITE, ROUND_ZERO)
        out[2, i] = cvt_float_to_e8m0(x[i], NOSAT, ROUND_UP)
        out[3, i] = cvt_float_to_e8m0(x[i], SATFINITE, ROUND_UP)


@cuda.jit
def double_to_e8m0(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = cvt_double_to_e8m0(x[i], NOSAT, ROUND_ZERO)
        out[1, i] = cvt_double_to_e8m0(x[i], SATFINITE, ROUND_ZERO)
        out[2, i] = cvt_double_to_e8m0(x[i], NOSAT, ROUND_UP)
        out[3, i] = cvt_double_to_e8m0(x[i], SATFINITE, ROUND_UP)


E8M0_MODES = [(0, ROUND_ZERO), (1, ROUND_ZERO), (0, ROUND_UP), (1, ROUND_UP)]


def e8m0_sample(rng):
    powers = np.exp2(np.arange(-150, 129, dtype=np.float64))
    special = np.concatenate([powers, powers * 1.5, np.array([np.inf, -np.inf, np.nan, 0.0, -0.0,
                                                              3.4028234663852886e38])])
    with np.errstate(over="ignore"):  # 2**128 is float32's infinity
        special = special.astype(np.float32)
        steps = np.concatenate([np.nextafter(special, np.float32(np.inf)),
                                np.nextafter(special, np.float32(-np.inf))])
    random = rng.integers(0, 2 ** 32, 40000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([special, steps, -special, random])


def test_float32_to_e8m0_matches_the_reference(target, rng):
    x = e8m0_sample(rng)
    out = np.zeros((4, x.size), dtype=np.uint8)
    float_to_e8m0[(x.size + 255) // 256, 256](x, out)
    if not target.ran("float_to_e8m0"):
        return
    for row, (saturate, mode) in enumerate(E8M0_MODES):
        with np.errstate(invalid="ignore"):  # signalling NaNs among the random bits
            expected = encode_e8m0(x.astype(np.float64), saturate, mode)
        bad = np.flatnonzero(out[row] != expected)
        assert bad.size == 0, (row, x[bad[:5]], out[row][bad[:5]], expected[bad[:5]])


def test_float64_to_e8m0_matches_the_reference(target, rng):
    with np.errstate(invalid="ignore"):
        x = e8m0_sample(rng).astype(np.float64)
    x = np.concatenate([x, x * (1 + 2.0 ** -40), x * (1 - 2.0 ** -40),
                        np.array([1e300, -1e300, 2.0 ** -1000, 2.0 ** 128, 2.0 ** 127 * 1.5])])
    out = np.zeros((4, x.size), dtype=np.uint8)
    double_to_e8m0[(x.size + 255) // 256, 256](x, out)
    if not target.ran("double_to_e8m0"):
        return
    for row, (saturate, mode) in enumerate(E8M0_MODES):
        expected = encode_e8m0(x, saturate, mode, from_double=True)
        bad = np.flatnonzero(out[row] != expected)
        assert bad.size == 0, (row, x[bad[:5]], out[row][bad[:5]], expected[bad[:5]])


def test_every_bfloat16_pattern_to_e8m0_and_fp8(target):
    raw = np.arange(65536, dtype=np.uint16)
    out = np.zeros((6, raw.size), dtype=np.uint8)

    @cuda.jit
    def from_bfloat16(raw, out):
        i = cuda.grid(1)
        if i < raw.size:
            out[0, i] = cvt_bfloat16raw_to_e8m0(raw[i], NOSAT, ROUND_ZERO)
            out[1, i] = cvt_bfloat16raw_to_e8m0(raw[i], SATFINITE, ROUND_ZERO)
            out[2, i] = cvt_bfloat16raw_to_e8m0(raw[i], NOSAT, ROUND_UP)
            out[3, i] = cvt_bfloat16raw_to_e8m0(raw[i], SATFINITE, ROUND_UP)
            out[4, i] = cvt_bfloat16raw_to_fp8(raw[i], NOSAT, E4M3)
            out[5, i] = cvt_bfloat16raw_to_fp8(raw[i], SATFINITE, E5M2)

    from_bfloat16[256, 256](raw, out)
    if not target.ran("from_bfloat16"):
        return
    with np.errstate(invalid="ignore"):
        x = (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    for row, (saturate, mode) in enumerate(E8M0_MODES):
        # A bfloat16's sign is dropped; toward zero, its exponent field is the
        # answer (bfloat16 subnormals included: 0).
        expected = encode_e8m0(x, saturate, mode)
        bad = np.flatnonzero(out[row] != expected)
        assert bad.size == 0, (row, raw[bad[:5]], out[row][bad[:5]], expected[bad[:5]])
    np.testing.assert_array_equal(out[4], encode(x, 0, 0))
    np.testing.assert_array_equal(out[5], encode(x, 1, 1))


def test_e8m0_patterns(target):
    bits = np.arange(256, dtype=np.uint8)
    raw = np.zeros(256, dtype=np.uint16)
    values = np.zeros(256, dtype=np.float32)
    again = np.zeros(256, dtype=np.uint8)

    @cuda.jit
    def e8m0_patterns(bits, x, raw, values, again):
        i = cuda.grid(1)
        if i < bits.size:
            r = cvt_e8m0_to_bf16raw(bits[i])
            raw[i] = r.x
            values[i] = float32(fp8_e8m0(x[i]))
            again[i] = cvt_bfloat16raw_to_e8m0(r, NOSAT, ROUND_UP)

    exact = decode_e8m0(bits).astype(np.float32)  # 2**-127 is a float32 subnormal
    e8m0_patterns[1, 256](bits, exact, raw, values, again)
    if not target.ran("e8m0_patterns"):
        return
    expected_raw = np.where(bits == 255, 0x7FFF, np.where(bits == 0, 0x0040, bits.astype(np.uint16) << 7))
    np.testing.assert_array_equal(raw, expected_raw)
    np.testing.assert_array_equal(values, exact)  # NaN where NaN
    np.testing.assert_array_equal(again, bits)


def test_numba_cuda_bfloat16raw_tests(target):
    result = np.zeros(7, dtype=np.uint16)

    @cuda.jit
    def raw_round_trip(result, x, exponent):
        raw = cvt_e8m0_to_bf16raw(x[0])
        result[0] = cvt_bfloat16raw_to_fp8(raw, NOSAT, E5M2)
        result[1] = cvt_bfloat16raw_to_fp8(raw, SATFINITE, E5M2)
        result[2] = cvt_bfloat16raw_to_fp8(raw, NOSAT, E4M3)
        result[3] = cvt_bfloat16raw_to_fp8(raw, SATFINITE, E4M3)
        half = cvt_e8m0_to_bf16raw(exponent[0])
        result[4] = cvt_bfloat16raw_to_e8m0(half, NOSAT, ROUND_ZERO)
        result[5] = cvt_bfloat16raw_to_e8m0(half, NOSAT, ROUND_UP)
        result[6] = half.x

    raw_round_trip[1, 1](result, np.array([254], np.uint8), np.array([126], np.uint8))
    target.assert_result("raw_round_trip", result, [0x7C, 0x7B, 0x7F, 0x7E, 126, 126, 0x3F00])


def test_modes_may_be_run_time_values(target):
    # numba-cuda passes enum members as values: a variable holding one works.
    x = np.array([1e20, 0.3], dtype=np.float32)
    modes = np.array([0, 1], dtype=np.int64)
    out = np.zeros((2, 2), dtype=np.uint8)

    @cuda.jit
    def chosen(x, modes, out):
        i = cuda.grid(1)
        if i < x.size:
            saturate = NOSAT if modes[i] == 0 else SATFINITE
            interpretation = E4M3 if modes[i] == 0 else E5M2
            out[0, i] = cvt_float_to_fp8(x[0], saturate, interpretation)
            out[1, i] = cvt_float_to_fp8(x[1], saturate, interpretation)

    chosen[1, 2](x, modes, out)
    expected = [[0x7F, 0x7B], [encode(np.float32(0.3), 0, 0)[()], encode(np.float32(0.3), 1, 1)[()]]]
    target.assert_result("chosen", out, expected)


def test_is_fp8_supported(mock_script):
    assert cuda.is_fp8_supported() is True  # the cpu target computes them
    for cc, expected in (("8.9", True), ("9.0", True), ("8.6", False)):
        run = mock_script("print(cuda.is_fp8_supported())", cc=cc)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == str(expected), cc


@pytest.mark.parametrize("source, message", [
    ("out[0] = float32(fp8_e4m3(1.0) + fp8_e4m3(2.0))",
     r"the operator \+ is not defined on fp8_e4m3, which only converts: write float32\(v\)"),
    ("out[0] = float32(-fp8_e5m2(1.0))", r"a unary operator is not defined on fp8_e5m2"),
    ("out[0] = fp8_e4m3(1.0) < 2.0", r"the comparison < is not defined on fp8_e4m3"),
    ("out[0] = fp8_e4m3(1.0)", r"cannot convert fp8_e4m3 to float32 implicitly: write float32\(v\)"),
    ("out[0] = math.sin(fp8_e8m0(1.0))", r"math.sin\(\) takes numbers, not fp8_e8m0"),
    ("out[0] = max(fp8_e4m3(1.0), fp8_e4m3(2.0))", r"max\(\) of a value of type fp8_e4m3"),
    ("print(fp8_e5m2(1.0))", r"print\(\) in kernels does not print fp8_e5m2 values: print float32\(v\)"),
    ("out[0] = abs(fp8_e4m3(1.0))", r"cannot convert fp8_e4m3 to float32 implicitly"),
    ("a = cuda.local.array(4, fp8_e4m3)", r"expected a dtype"),
    ("out[0] = fp8_e4m3(1j)", r"fp8_e4m3\(\) takes a real number .*not complex128"),
    ("out[0] = cvt_float_to_fp8(1.0, 1, E4M3)",
     r"cvt_float_to_fp8\(\) argument 'saturate' takes a saturation_t member "
     r"\(saturation_t.NOSAT or saturation_t.SATFINITE\), not int64"),
    ("out[0] = cvt_float_to_e8m0(1.0, NOSAT, E4M3)",
     r"argument 'rounding' takes a cudaRoundMode member"),
    ("out[0] = cvt_float2_to_fp8x2(1.0, NOSAT, E4M3)",
     r"cvt_float2_to_fp8x2\(\) takes a float32x2 \(float2\), not float64"),
    ("out[0] = cvt_float_to_fp8(1.0, NOSAT)", r"cvt_float_to_fp8"),
])
def test_errors(source, message):
    namespace = dict(globals())
    exec(f"def bad(out):\n    {source}\n", namespace)
    with pytest.raises(TypingError, match=message):
        cuda.jit("void(float32[::1])")(namespace["bad"])


def test_names_on_cuda_fp8():
    # tidal's cuda.fp8 holds the same objects as numba-cuda's module path.
    assert cuda.fp8.fp8_e4m3 is fp8_e4m3
    assert cuda.fp8.cvt_float_to_fp8 is cvt_float_to_fp8
    assert cuda.fp8.saturation_t is saturation_t
    with pytest.raises(RuntimeError, match="inside a kernel"):
        fp8_e4m3(1.0)


def _ptxas():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    return path if path.is_file() else None


@pytest.mark.skipif(_ptxas() is None, reason="no ptxas (CUDA toolkit) under CUDA_HOME or /usr/local/cuda")
@pytest.mark.parametrize("cc", [(7, 5), (8, 0), (8, 9), (9, 0)])
def test_ptxas_accepts_every_conversion(tmp_path, cc):
    def every(x, y, bits, out):
        i = cuda.grid(1)
        a = fp8_e4m3(x[i])
        b = fp8_e5m2(y[i])
        c = fp8_e8m0(bits[i])
        raw = cvt_e8m0_to_bf16raw(bits[i])
        out[i] = (float32(a) + float32(float16(b)) + float32(float64(c)) + int32(a) + uint8(b)
                  + cvt_float_to_fp8(x[i], NOSAT, E4M3) + cvt_double_to_fp8(y[i], SATFINITE, E5M2)
                  + cvt_float_to_e8m0(x[i], SATFINITE, ROUND_UP)
                  + cvt_double_to_e8m0(y[i], NOSAT, ROUND_ZERO)
                  + cvt_bfloat16raw_to_fp8(raw, NOSAT, E5M2)
                  + cvt_bfloat16raw_to_e8m0(raw, SATFINITE, ROUND_UP)
                  + cvt_float2_to_fp8x2(cuda.float32x2(x[i], x[0]), SATFINITE, E4M3))

    ptx, _ = cuda.compile_ptx(every, (float32[::1], float64[::1], uint8[::1], float32[::1]), cc=cc)
    path = tmp_path / "every.ptx"
    path.write_text(ptx)
    run = subprocess.run([str(_ptxas()), f"-arch=sm_{cc[0]}{cc[1]}", "-c", str(path), "-o",
                          os.devnull], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_bfloat16_to_and_from_fp8(target):
    # numba-cuda's constructors from a bfloat16 and bfloat16(v) of an fp8
    # value: fp8 values are exact in bfloat16, and a bfloat16 rounds to fp8
    # once (to nearest even, saturating as from float32).
    from tidal.cuda import bfloat16
    out = np.zeros((3, 4), dtype=np.float32)

    @cuda.jit
    def bridge(out):
        out[0, 0] = float32(fp8_e4m3(bfloat16(1.0)))
        out[0, 1] = float32(fp8_e4m3(bfloat16(17.0)))  # between 16 and 18: to even
        out[0, 2] = float32(fp8_e4m3(bfloat16(1000.0)))  # saturated
        out[0, 3] = float32(bfloat16(fp8_e4m3(-0.375)))
        out[1, 0] = float32(fp8_e5m2(bfloat16(1.0)))
        out[1, 1] = float32(fp8_e5m2(bfloat16(-3.0)))
        out[1, 2] = float32(fp8_e5m2(bfloat16(1.0e6)))  # saturated
        out[1, 3] = float32(bfloat16(fp8_e5m2(57344.0)))
        out[2, 0] = float32(fp8_e8m0(bfloat16(2.0)))
        out[2, 1] = float32(fp8_e8m0(bfloat16(0.3)))
        out[2, 2] = float32(bfloat16(fp8_e8m0(4.0)))
        out[2, 3] = float32(bfloat16(fp8_e8m0(2.0 ** -100)))

    bridge[1, 1](out)
    if not target.ran("bridge"):
        return
    np.testing.assert_array_equal(out[0], [1, 16, 448, -0.375])
    np.testing.assert_array_equal(out[1], [1, -3, 57344, 57344])
    np.testing.assert_array_equal(out[2], [2, 0.5, 4, 2.0 ** -100])
