"""float16 conversions on the cpu target: every scalar type to and from
float16 (the JIT's half-precision helpers, issue 16's
float16_jit_symbols_not_found)."""
import numpy as np
import pytest

from tidal import cuda

INTEGER_TYPES = [np.int8, np.int16, np.int32, np.int64,
                 np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_TYPES = [np.float32, np.float64]


def source_values(dtype):
    """Values of dtype whose float16 is the same however it is rounded
    (exact in float32, so one rounding step)."""
    if dtype in FLOAT_TYPES:
        return np.array([0.0, -0.0, 1.0, -2.5, 0.1, 1 / 3, 65504.0, 65520.0, 1e6,
                         -1e6, 6e-8, 1e-9, np.inf, -np.inf, 2049.0, 2051.0], dtype)
    info = np.iinfo(dtype)
    values = [0, 1, 2, 3, 100, 127, 2047, 2049, 2051, 4097, 65504, 65519, 65520,
              70000, 1 << 20, info.max, -1, -5, -2049, -70000, info.min]
    return np.array([v for v in values if info.min <= v <= info.max], dtype)


def half_values(dtype):
    """float16 values that convert to dtype without overflow."""
    if dtype in FLOAT_TYPES:
        return np.array([0.0, -0.0, 1.0, -2.5, 0.1, 65504.0, -65504.0, 6e-8,
                         np.inf, -np.inf], np.float16)
    info = np.iinfo(dtype)
    values = [0.0, 1.0, 2.5, 3.75, 100.0, 127.0, 255.0, 2048.0, 32752.0, 65504.0,
              -1.0, -2.5, -128.0, -32768.0]
    return np.array([v for v in values if info.min <= v <= info.max], np.float16)


@pytest.mark.parametrize("dtype", INTEGER_TYPES + FLOAT_TYPES,
                         ids=lambda t: np.dtype(t).name)
def test_to_float16(dtype):
    @cuda.jit
    def to_half(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = np.float16(x[i])

    x = source_values(dtype)
    out = np.full(x.size, 7, np.float16)
    to_half[1, 32](x, out)
    with np.errstate(over="ignore"):
        expected = x.astype(np.float32).astype(np.float16)
    np.testing.assert_array_equal(out.view(np.uint16), expected.view(np.uint16))


@pytest.mark.parametrize("dtype", INTEGER_TYPES + FLOAT_TYPES,
                         ids=lambda t: np.dtype(t).name)
def test_from_float16(dtype):
    # The conversion is written as the target type's constructor, e.g. np.int8(h).
    convert = getattr(np, np.dtype(dtype).name)

    @cuda.jit
    def from_half(h, out):
        i = cuda.grid(1)
        if i < h.size:
            out[i] = convert(h[i])

    h = half_values(dtype)
    out = np.zeros(h.size, dtype)
    from_half[1, 32](h, out)
    np.testing.assert_array_equal(out, h.astype(dtype))


def test_float16_arithmetic_round_trip():
    """float16 arithmetic (each operation rounded to float16, as numpy and
    a GPU's half instructions do) and a float64 result truncated to float16
    on store."""
    @cuda.jit
    def mix(a, b, out, wide):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = a[i] * b[i] + np.float16(1.0)
            wide[i] = np.float64(a[i]) / 3.0

    a = np.linspace(-4, 4, 20).astype(np.float16)
    b = np.linspace(1, 2, 20).astype(np.float16)
    out = np.zeros(20, np.float16)
    wide = np.zeros(20, np.float16)
    mix[1, 32](a, b, out, wide)
    expected = a * b + np.float16(1.0)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(wide, (a.astype(np.float64) / 3.0).astype(np.float16))
