"""A reference for bfloat16 written on the bit patterns, in NumPy and in
Python's integers (independent of the compiler): what CUDA's cuda_bf16.h
and PTX's bf16 instructions give, rounded once."""
from fractions import Fraction

import numpy as np

CANONICAL_NAN = 0x7FFF


def to_float32(bits):
    """bfloat16 bits (uint16) as float32: exact, the bits shifted up."""
    bits = np.asarray(bits, np.uint16)
    wide = bits.reshape(-1).astype(np.uint32) << np.uint32(16)
    return wide.view(np.float32).reshape(bits.shape)


def from_float32(values, mode="rn"):
    """float32 values rounded to bfloat16 bits in mode rn (nearest, ties to
    even), rz, rd or ru; NaN gives CUDA's canonical NaN."""
    values = np.atleast_1d(np.asarray(values, np.float32))
    bits = values.view(np.uint32).astype(np.uint64)
    upper = bits >> np.uint64(16)
    dropped = bits & np.uint64(0xFFFF)
    negative = (bits >> np.uint64(31)) == 1
    if mode == "rn":
        up = (dropped > 0x8000) | ((dropped == 0x8000) & ((upper & np.uint64(1)) == 1))
    elif mode == "rz":
        up = np.zeros_like(negative)
    elif mode == "rd":
        up = negative & (dropped != 0)
    elif mode == "ru":
        up = ~negative & (dropped != 0)
    else:
        raise ValueError(mode)
    out = (upper + up.astype(np.uint64)).astype(np.uint16)
    return np.where(np.isnan(values), np.uint16(CANONICAL_NAN), out)


def fraction_of(bits):
    """The exact value of finite bfloat16 bits."""
    return Fraction(float(to_float32(np.uint16(bits))))


def round_fraction(value, mode="rn"):
    """An exact rational rounded to bfloat16 bits (finite values, overflow to
    infinity as IEEE rounding gives): bfloat16 has float32's exponent range
    and 8 significant bits, subnormals below 2**-126."""
    if value == 0:
        return 0
    sign = 0x8000 if value < 0 else 0
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    exponent = max(exponent, -126)
    quantum = Fraction(2) ** (exponent - 7)  # the last significant bit's weight
    units, remainder = divmod(magnitude, quantum)
    units = int(units)
    if remainder:
        away = {"rz": False, "rd": sign != 0, "ru": sign == 0}.get(mode)
        if mode == "rn":
            half = quantum / 2
            away = remainder > half or (remainder == half and units % 2 == 1)
        units += away
    # units * quantum, as bits: the field's value is the count above the
    # binade's start (a carry into the next binade is the next exponent).
    if exponent == -126 and units < 128:
        return sign | units  # subnormal (or 0)
    while units >= 256:
        units //= 2
        exponent += 1
    if exponent > 127:  # past the largest finite: infinity, or it where the mode goes back
        to_infinity = {"rn": True, "rz": False, "rd": sign != 0, "ru": sign == 0}[mode]
        return sign | (0x7F80 if to_infinity else 0x7F7F)
    return sign | ((exponent + 127) << 7) | (units - 128)


def from_integer(n, mode="rn"):
    return round_fraction(Fraction(int(n)), mode)


def to_integer(bits, dtype, mode):
    """bfloat16 bits as integers of dtype: rounded in mode, NaN to 0,
    saturated to the type's range (PTX's cvt.r*i)."""
    values = to_float32(bits).astype(np.float64)
    rounded = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode](values)
    info = np.iinfo(dtype)
    low, high = int(info.min), int(info.max)

    def saturated(v):
        if v != v:
            return 0
        if v in (np.inf, -np.inf):
            return high if v > 0 else low
        return min(max(int(v), low), high)
    return np.array([saturated(v) for v in rounded], dtype)


def same_bits(actual, expected):
    """Equal bfloat16 bits, any NaN matching any NaN."""
    actual = np.asarray(actual, np.uint16)
    expected = np.asarray(expected, np.uint16)
    nan = (to_float32(actual) != to_float32(actual)) & (to_float32(expected) != to_float32(expected))
    mismatch = np.flatnonzero(np.where(nan, False, actual != expected))
    assert mismatch.size == 0, (
        f"{mismatch.size} differ; first at {mismatch[:5]}: got "
        f"{[hex(v) for v in actual[mismatch[:5]]]}, expected {[hex(v) for v in expected[mismatch[:5]]]}")
