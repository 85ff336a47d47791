"""numba-cuda's cuda.fp16 beyond the arithmetic (IntrinsicsHalfConversions.cpp):
conversions with a rounding mode, bit casts, the saturating, ReLU and
unordered forms and the __-named aliases, on every target, against a
reference written here in NumPy on the bit patterns (docs/language.md,
"cuda.fp16")."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tidal import cuda, float16, float32, float64, int16, int32, uint16, void
from tidal.errors import TypingError

fp16 = cuda.fp16
MODES = ("rn", "rz", "rd", "ru")
ALL_HALVES = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)


def to_half(x, mode):
    """float64 values (exact) rounded to float16 in a mode, as bits: NumPy's
    conversion rounds to nearest even; the directed modes step from there
    where it went the wrong way. NaN is 0x7FFF."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        h = x.astype(np.float16)
        wide = h.astype(np.float64)
        if mode == "rz":
            zero = np.copysign(np.float16(0), h)
            h = np.where(np.abs(wide) > np.abs(x), np.nextafter(h, zero), h)
        elif mode == "rd":
            h = np.where(wide > x, np.nextafter(h, np.float16(-np.inf)), h)
        elif mode == "ru":
            h = np.where(wide < x, np.nextafter(h, np.float16(np.inf)), h)
    bits = h.astype(np.float16).view(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FFF), bits)


def from_half(h, mode, dtype):
    """float16 values to an integer type: rounded in the mode, saturated, NaN 0."""
    x = np.asarray(h).astype(np.float64)
    with np.errstate(invalid="ignore"):  # the NaNs
        rounded = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode](x)
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        clipped = np.where(np.isnan(x), 0, np.clip(rounded, info.min, info.max))
        result = clipped.astype(dtype)
    # 2**63 and 2**64 are past int64's and uint64's largest (float64 rounds them up).
    return np.where(rounded >= float(info.max), dtype(info.max), result)


def float_sample(rng):
    """float64 values: every finite half and the midpoints between them,
    overflow and underflow thresholds, and random float32 bit patterns."""
    halves = ALL_HALVES[np.isfinite(ALL_HALVES)].astype(np.float64)
    halves = np.sort(halves)
    midpoints = (halves[1:] + halves[:-1]) / 2
    special = np.array([65504, 65519.99, 65520, 65536, 1e10, 2.0 ** -24, 2.0 ** -25, 2.0 ** -26,
                        3 * 2.0 ** -26, 1e-30, 0.0, -0.0, np.inf, -np.inf, np.nan])
    random = rng.integers(0, 2 ** 32, 30000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    near = rng.uniform(-70000, 70000, 20000)
    with np.errstate(invalid="ignore"):  # signalling NaNs among the random bits
        random = random.astype(np.float64)
    return np.concatenate([halves, midpoints, special, -special, near,
                           rng.uniform(-1, 1, 20000) * 2.0 ** -14, random])


@cuda.jit
def float_to_half(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = fp16.__half_as_ushort(fp16.__float2half_rn(x[i]))
        out[1, i] = fp16.__half_as_ushort(fp16.__float2half_rz(x[i]))
        out[2, i] = fp16.__half_as_ushort(fp16.__float2half_rd(x[i]))
        out[3, i] = fp16.__half_as_ushort(fp16.__float2half_ru(x[i]))
        out[4, i] = fp16.__half_as_ushort(fp16.__float2half(x[i]))


def test_float32_to_half_in_every_mode(target, rng):
    with np.errstate(invalid="ignore", over="ignore"):
        x = float_sample(rng).astype(np.float32)
    out = np.zeros((5, x.size), dtype=np.uint16)
    float_to_half[(x.size + 255) // 256, 256](x, out)
    if not target.ran("float_to_half"):
        return
    with np.errstate(invalid="ignore"):
        wide = x.astype(np.float64)
    for row, mode in enumerate(MODES + ("rn",)):
        expected = to_half(wide, mode)
        bad = np.flatnonzero(out[row] != expected)
        assert bad.size == 0, (mode, x[bad[:5]], out[row][bad[:5]], expected[bad[:5]])


def test_float64_to_half_rounds_once(target, rng):
    x = float_sample(rng)
    # Just past a half tie: float64 keeps it, a rounding through float32 would not.
    x = np.concatenate([x, x * (1 + 2.0 ** -40), x * (1 - 2.0 ** -40)])
    out = np.zeros((5, x.size), dtype=np.uint16)

    @cuda.jit
    def double_to_half(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[0, i] = fp16.__half_as_ushort(fp16.__double2half(x[i]))
            out[1, i] = fp16.__half_as_ushort(fp16.__float2half_rz(x[i]))  # through float32
            out[2, i] = fp16.__half_as_ushort(fp16.__half(x[i]))

    double_to_half[(x.size + 255) // 256, 256](x, out)
    if not target.ran("double_to_half"):
        return
    np.testing.assert_array_equal(out[0], to_half(x, "rn"))
    with np.errstate(over="ignore", invalid="ignore"):
        np.testing.assert_array_equal(out[1], to_half(x.astype(np.float32).astype(np.float64), "rz"))
    assert (out[2] != 0).any()  # float16(x): the existing conversion (not bit-checked)


INTEGER_SOURCES = {  # C name: NumPy type
    "int": np.int32, "uint": np.uint32, "short": np.int16, "ushort": np.uint16,
    "ll": np.int64, "ull": np.uint64,
}


def _integers_to_half_kernel(name):
    functions = [getattr(fp16, f"__{name}2half_{mode}") for mode in MODES]
    rn, rz, rd, ru = functions

    @cuda.jit
    def integers_to_half(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[0, i] = fp16.__half_as_ushort(rn(x[i]))
            out[1, i] = fp16.__half_as_ushort(rz(x[i]))
            out[2, i] = fp16.__half_as_ushort(rd(x[i]))
            out[3, i] = fp16.__half_as_ushort(ru(x[i]))

    return integers_to_half


@pytest.mark.parametrize("name", list(INTEGER_SOURCES))
def test_integers_to_half_in_every_mode(target, rng, name):
    dtype = INTEGER_SOURCES[name]
    info = np.iinfo(dtype)
    if info.bits <= 16:
        x = np.arange(info.min, info.max + 1).astype(dtype)
    else:
        x = np.concatenate([
            rng.integers(info.min, info.max, 20000, dtype=dtype, endpoint=True),
            rng.integers(max(info.min, -70000), 70000, 20000).astype(dtype),
            np.array([info.min, info.max, 0, 1, 65504, 65505, 65519, 65520, 65535, 65536, 2049,
                      2051, 4097, 4098, 4099], dtype=dtype)])
    out = np.zeros((4, x.size), dtype=np.uint16)
    _integers_to_half_kernel(name)[(x.size + 255) // 256, 256](x, out)
    if not target.ran("integers_to_half"):
        return
    # Exact in float64 where it matters: beyond 2**17 every mode gives what it gives 2**17.
    exact = np.clip(x.astype(np.float64), -2.0 ** 17, 2.0 ** 17)
    for row, mode in enumerate(MODES):
        expected = to_half(exact, mode)
        bad = np.flatnonzero(out[row] != expected)
        assert bad.size == 0, (mode, x[bad[:5]], out[row][bad[:5]], expected[bad[:5]])


INTEGER_TARGETS = {"int": np.int32, "uint": np.uint32, "short": np.int16, "ushort": np.uint16,
                   "ll": np.int64, "ull": np.uint64}


@pytest.mark.parametrize("name", list(INTEGER_TARGETS))
def test_every_half_to_integers_in_every_mode(target, name):
    dtype = INTEGER_TARGETS[name]
    rn, rz, rd, ru = (getattr(fp16, f"__half2{name}_{mode}") for mode in MODES)
    out = np.zeros((4, ALL_HALVES.size), dtype=dtype)

    @cuda.jit
    def half_to_integers(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[0, i] = rn(x[i])
            out[1, i] = rz(x[i])
            out[2, i] = rd(x[i])
            out[3, i] = ru(x[i])

    half_to_integers[256, 256](ALL_HALVES, out)
    if not target.ran("half_to_integers"):
        return
    for row, mode in enumerate(MODES):
        np.testing.assert_array_equal(out[row], from_half(ALL_HALVES, mode, dtype), err_msg=mode)


def test_half_to_bytes_floats_and_bits(target):
    out8 = np.zeros((2, ALL_HALVES.size), dtype=np.int16)
    as_float = np.zeros(ALL_HALVES.size, dtype=np.float32)
    bits = np.zeros((2, ALL_HALVES.size), dtype=np.int32)
    back = np.zeros((2, ALL_HALVES.size), dtype=np.float16)

    @cuda.jit
    def bytes_floats_bits(x, raw, out8, as_float, bits, back):
        i = cuda.grid(1)
        if i < x.size:
            out8[0, i] = fp16.__half2char_rz(x[i])
            out8[1, i] = fp16.__half2uchar_rz(x[i])
            as_float[i] = fp16.__half2float(x[i])
            bits[0, i] = fp16.__half_as_short(x[i])
            bits[1, i] = fp16.__half_as_ushort(x[i])
            back[0, i] = fp16.__short_as_half(int16(raw[i]))
            back[1, i] = fp16.__ushort_as_half(raw[i])

    raw = ALL_HALVES.view(np.uint16)
    bytes_floats_bits[256, 256](ALL_HALVES, raw, out8, as_float, bits, back)
    if not target.ran("bytes_floats_bits"):
        return
    np.testing.assert_array_equal(out8[0], from_half(ALL_HALVES, "rz", np.int8))
    np.testing.assert_array_equal(out8[1], from_half(ALL_HALVES, "rz", np.uint8))
    np.testing.assert_array_equal(as_float, ALL_HALVES.astype(np.float32))
    np.testing.assert_array_equal(bits[0], raw.view(np.int16))
    np.testing.assert_array_equal(bits[1], raw)
    np.testing.assert_array_equal(back[0].view(np.uint16), raw)
    np.testing.assert_array_equal(back[1].view(np.uint16), raw)


def test_saturating_relu_and_unordered_forms(target, rng):
    nan, inf = np.float16("nan"), np.float16("inf")
    a = np.concatenate([rng.uniform(-4, 4, 500).astype(np.float16),
                        np.array([nan, 1, nan, inf, -inf, 0.5, 0.75], np.float16)])
    b = np.concatenate([rng.uniform(-4, 4, 500).astype(np.float16),
                        np.array([1, nan, nan, 1, 2, 0.75, 0.5], np.float16)])
    c = rng.uniform(-4, 4, a.size).astype(np.float16)
    out = np.zeros((9, a.size), dtype=np.float16)
    flags = np.zeros((8, a.size), dtype=np.int32)

    @cuda.jit
    def forms(a, b, c, out, flags):
        i = cuda.grid(1)
        if i < a.size:
            out[0, i] = fp16.__hadd_sat(a[i], b[i])
            out[1, i] = fp16.__hsub_sat(a[i], b[i])
            out[2, i] = fp16.__hmul_sat(a[i], b[i])
            out[3, i] = fp16.__hfma_sat(a[i], b[i], c[i])
            out[4, i] = fp16.__hfma_relu(a[i], b[i], c[i])
            out[5, i] = fp16.__hadd_rn(a[i], b[i])
            out[6, i] = fp16.__hsub_rn(a[i], b[i])
            out[7, i] = fp16.__hmul_rn(a[i], b[i])
            out[8, i] = fp16.__hadd(a[i], b[i])
            flags[0, i] = fp16.__hequ(a[i], b[i])
            flags[1, i] = fp16.__hneu(a[i], b[i])
            flags[2, i] = fp16.__hgeu(a[i], b[i])
            flags[3, i] = fp16.__hgtu(a[i], b[i])
            flags[4, i] = fp16.__hleu(a[i], b[i])
            flags[5, i] = fp16.__hltu(a[i], b[i])
            flags[6, i] = fp16.__hisnan(a[i])
            flags[7, i] = fp16.__hisinf(a[i])

    forms[3, 256](a, b, c, out, flags)
    if not target.ran("forms"):
        return
    with np.errstate(invalid="ignore"):
        wide = [v.astype(np.float64) for v in (a, b, c)]
        sums = (wide[0] + wide[1]).astype(np.float16)
        differences = (wide[0] - wide[1]).astype(np.float16)
        products = (wide[0] * wide[1]).astype(np.float16)
        fmas = (wide[0] * wide[1] + wide[2]).astype(np.float16)  # exact in float64 here

        def saturated(v):
            return np.where(np.isnan(v), np.float16(0), np.clip(v, 0, 1)).astype(np.float16)

        relu = np.where(np.isnan(fmas), nan, np.where(fmas < 0, np.float16(0), fmas))
        np.testing.assert_array_equal(out[0], saturated(sums))
        np.testing.assert_array_equal(out[1], saturated(differences))
        np.testing.assert_array_equal(out[2], saturated(products))
        np.testing.assert_array_equal(out[3], saturated(fmas))
        np.testing.assert_array_equal(out[4], relu)
        np.testing.assert_array_equal(out[5], sums)
        np.testing.assert_array_equal(out[6], differences)
        np.testing.assert_array_equal(out[7], products)
        np.testing.assert_array_equal(out[8], sums)
        unordered = np.isnan(a) | np.isnan(b)
        for row, compare in enumerate([np.equal, np.not_equal, np.greater_equal, np.greater,
                                       np.less_equal, np.less]):
            np.testing.assert_array_equal(flags[row], compare(a, b) | unordered, err_msg=str(row))
    np.testing.assert_array_equal(flags[6], np.isnan(a))
    np.testing.assert_array_equal(flags[7], np.where(np.isinf(a), np.sign(a), 0))


def test_aliases_are_the_same_functions(target):
    x = np.array([1.5, -2.25, 3.0], dtype=np.float16)
    out = np.zeros((17, 3), dtype=np.float32)

    @cuda.jit(void(float16[::1], float32[:, ::1]))
    def aliases(x, out):
        i = cuda.grid(1)
        if i < x.size:
            a, b = x[i], x[(i + 1) % x.size]
            out[0, i] = fp16.__habs(a) - fp16.habs(a)
            out[1, i] = fp16.__hadd(a, b) - fp16.hadd(a, b)
            out[2, i] = fp16.__hdiv(a, b) - fp16.hdiv(a, b)
            out[3, i] = fp16.__heq(a, b) == fp16.heq(a, b)
            out[4, i] = fp16.__hfma(a, b, a) - fp16.hfma(a, b, a)
            out[5, i] = fp16.__hge(a, b) == fp16.hge(a, b)
            out[6, i] = fp16.__hgt(a, b) == fp16.hgt(a, b)
            out[7, i] = fp16.__hle(a, b) == fp16.hle(a, b)
            out[8, i] = fp16.__hlt(a, b) == fp16.hlt(a, b)
            out[9, i] = fp16.__hmax(a, b) - fp16.hmax(a, b)
            out[10, i] = fp16.__hmax_nan(a, b) - fp16.hmax_nan(a, b)
            out[11, i] = fp16.__hmin(a, b) - fp16.hmin(a, b)
            out[12, i] = fp16.__hmin_nan(a, b) - fp16.hmin_nan(a, b)
            out[13, i] = fp16.__hmul(a, b) - fp16.hmul(a, b)
            out[14, i] = fp16.__hne(a, b) == fp16.hne(a, b)
            out[15, i] = fp16.__hneg(a) - fp16.hneg(a)
            out[16, i] = fp16.__hsub(a, b) - fp16.hsub(a, b)

    aliases[1, 3](x, out)
    expected = np.zeros((17, 3), dtype=np.float32)
    expected[[3, 5, 6, 7, 8, 14]] = 1
    target.assert_result("aliases", out, expected)


@pytest.mark.parametrize("source, message", [
    ("out[0] = fp16.__float2half_rz(1j)",
     r"__float2half_rz\(\) takes a float32 \(or a real number, converted\), not complex128"),
    ("out[0] = fp16.__half2int_rn(x)", r"__half2int_rn\(\) takes a float16 .*not array"),
    ("out[0] = fp16.__hadd_sat(1j, 1.0)", r"__hadd_sat\(\) takes float16 numbers"),
    ("out[0] = fp16.__hisnan(1.0, 2.0)", r"__hisnan"),
])
def test_errors(source, message):
    namespace = dict(globals())
    exec(f"def bad(out, x):\n    {source}\n", namespace)
    with pytest.raises(TypingError, match=message):
        cuda.jit("void(float32[::1], float32[::1])")(namespace["bad"])


def _ptxas():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    path = Path(home) / "bin" / "ptxas"
    return path if path.is_file() else None


@pytest.mark.skipif(_ptxas() is None, reason="no ptxas (CUDA toolkit) under CUDA_HOME or /usr/local/cuda")
@pytest.mark.parametrize("cc", [(7, 5), (8, 0), (9, 0)])
def test_ptxas_accepts_the_conversions(tmp_path, cc):
    def every(x, h, i, out):
        k = cuda.grid(1)
        out[k] = (fp16.__float2half_rz(x[k]) + fp16.__double2half(float64(x[k]))
                  + fp16.__ll2half_ru(i[k]) + fp16.__ushort2half_rd(uint16(i[k]))
                  + fp16.__half2ll_rd(h[k]) + fp16.__half2uchar_rz(h[k])
                  + fp16.__half_as_ushort(h[k]) + fp16.__hfma_relu(h[k], h[k], h[0])
                  + fp16.__hadd_sat(h[k], h[0]) + fp16.__hisinf(h[k]) + fp16.__hltu(h[k], h[0]))

    ptx, _ = cuda.compile_ptx(every, (float32[::1], float16[::1], int32[::1], float64[::1]), cc=cc)
    path = tmp_path / "every.ptx"
    path.write_text(ptx)
    run = subprocess.run([str(_ptxas()), f"-arch=sm_{cc[0]}{cc[1]}", "-c", str(path), "-o",
                          os.devnull], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_rn_forms_are_not_contracted_into_an_fma():
    # tidal compiles with fp-contract=fast: hadd(hmul(a, b), c) may become
    # fma.rn.f16; the _rn forms stay a multiply and an add (in LLVM).
    def products(a, out):
        out[0] = fp16.__hadd_rn(fp16.__hmul_rn(a[0], a[1]), a[2])

    ptx, _ = cuda.compile_ptx(products, (float16[::1], float16[::1]), cc=(9, 0))
    assert "fma" not in ptx
    assert "mul.f16" in ptx or "mul.rn.f16" in ptx
