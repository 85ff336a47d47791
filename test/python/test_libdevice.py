"""tidal.cuda.libdevice: every libdevice function by its Python name, typed
as Numba types them, on every target. A representative set is checked
against NumPy (each return shape: scalar, UniTuple, Tuple; float and double;
integer and bit functions; rounding-mode variants); every function of the
table is compiled and run once on the cpu target; the NVPTX path links
libdevice where a CUDA toolkit has it; bad calls raise located errors."""

import importlib.util
import math
import os

import numpy as np
import pytest

from tidal import cuda
from tidal.cuda import libdevice
from tidal.errors import CompileError, TypingError
from source_positions import position_of

LIBDEVICE_FILE = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"


def _libdevice_found():
    """Whether the NVPTX path finds a libdevice (llvm-plugin/Libdevice.cpp's search)."""
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


# --- Numba's TestLibdevice kernels: UniTuple, Tuple and scalar returns --------

@cuda.jit
def use_sincos(s, c, x):
    i = cuda.grid(1)
    if i < len(x):
        sr, cr = libdevice.sincos(x[i])
        s[i] = sr
        c[i] = cr


@cuda.jit
def use_frexp(frac, exp, x):
    i = cuda.grid(1)
    if i < len(x):
        fracr, expr = libdevice.frexp(x[i])
        frac[i] = fracr
        exp[i] = expr


@cuda.jit
def use_sad(r, x, y, z):
    i = cuda.grid(1)
    if i < len(x):
        r[i] = libdevice.sad(x[i], y[i], z[i])


def test_sincos_returns_a_unituple(target):
    x = np.arange(100, dtype=np.float64)
    s, c = np.zeros_like(x), np.zeros_like(x)
    use_sincos[4, 32](s, c, x)
    if target.ran("use_sincos"):
        np.testing.assert_allclose(s, np.sin(x), rtol=1e-15, atol=1e-15)
        np.testing.assert_allclose(c, np.cos(x), rtol=1e-15, atol=1e-15)


def test_frexp_returns_a_tuple_of_float_and_int(target):
    x = np.linspace(1.0, 10.0, 100)
    frac, exp = np.zeros_like(x), np.zeros(x.shape, np.int32)
    use_frexp[4, 32](frac, exp, x)
    expected_frac, expected_exp = np.frexp(x)
    if target.ran("use_frexp"):
        np.testing.assert_array_equal(frac, expected_frac)
        np.testing.assert_array_equal(exp, expected_exp)


def test_sad_returns_a_scalar(target):
    x, y, z = np.arange(0, 200, 2), np.arange(50, 150), np.arange(15, 115)
    r = np.zeros_like(x)
    use_sad[4, 32](r, x, y, z)
    target.assert_result("use_sad", r, np.abs(x - y) + z)


# --- float and double math against NumPy ---------------------------------------

@cuda.jit
def single_and_double(x32, x64, out32, out64):
    i = cuda.grid(1)
    if i < x32.size:
        out32[i, 0] = libdevice.sinf(x32[i])
        out32[i, 1] = libdevice.expf(x32[i])
        out32[i, 2] = libdevice.atan2f(x32[i], 0.5)
        out32[i, 3] = libdevice.cospif(x32[i])
        out64[i, 0] = libdevice.sin(x64[i])
        out64[i, 1] = libdevice.exp(x64[i])
        out64[i, 2] = libdevice.atan2(x64[i], 0.5)
        out64[i, 3] = libdevice.cospi(x64[i])
        out64[i, 4] = libdevice.erfinv(x64[i] / 4)
        out64[i, 5] = libdevice.normcdf(x64[i])


def test_float_and_double_math(target):
    x64 = np.linspace(-3, 3, 61)
    x32 = x64.astype(np.float32)
    out32 = np.zeros((x32.size, 4), np.float32)
    out64 = np.zeros((x64.size, 6), np.float64)
    single_and_double[2, 32](x32, x64, out32, out64)
    if not target.ran("single_and_double"):
        return
    d = x32.astype(np.float64)
    for column, expected in enumerate([np.sin(d), np.exp(d), np.arctan2(d, 0.5),
                                       np.cos(np.pi * d)]):
        np.testing.assert_allclose(out32[:, column], expected.astype(np.float32),
                                   rtol=4e-7, atol=1e-7)
    erfinv = [_erfinv(v / 4) for v in x64]
    normcdf = [0.5 * math.erfc(-v / math.sqrt(2)) for v in x64]
    for column, expected in enumerate([np.sin(x64), np.exp(x64), np.arctan2(x64, 0.5),
                                       np.cos(np.pi * x64), erfinv, normcdf]):
        np.testing.assert_allclose(out64[:, column], expected, rtol=1e-14, atol=1e-15)
    # cospi is exact where cos(pi x) is 0 or +-1.
    assert out64[30, 3] == 1.0 and out64[25, 3] == 0.0 and out64[20, 3] == -1.0


def _erfinv(y):
    """The inverse of math.erf by bisection (the reference)."""
    low, high = -6.0, 6.0
    for _ in range(200):
        middle = (low + high) / 2
        if math.erf(middle) < y:
            low = middle
        else:
            high = middle
    return (low + high) / 2


# --- integer and bit functions, exactly -------------------------------------

@cuda.jit
def integer_functions(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = libdevice.popc(a[i])
        out[i, 1] = libdevice.clz(a[i])
        out[i, 2] = libdevice.ffs(a[i])
        out[i, 3] = libdevice.brev(a[i])
        out[i, 4] = libdevice.byte_perm(a[i], b[i], 0x5140)
        out[i, 5] = libdevice.mulhi(a[i], b[i])
        out[i, 6] = libdevice.umulhi(a[i], b[i])
        out[i, 7] = libdevice.mul24(a[i], b[i])
        out[i, 8] = libdevice.hadd(a[i], b[i])
        out[i, 9] = libdevice.rhadd(a[i], b[i])
        out[i, 10] = libdevice.usad(a[i], b[i], 7)
        out[i, 11] = libdevice.abs(a[i])


def _reference_integers(a, b):
    def u32(v):
        return v & 0xFFFFFFFF

    def s32(v):
        v &= 0xFFFFFFFF
        return v - (1 << 32) if v >= 1 << 31 else v

    def s24(v):
        v &= 0xFFFFFF
        return v - (1 << 24) if v >= 1 << 23 else v

    ua, ub = u32(a), u32(b)
    word = ua | (ub << 32)
    perm = 0
    for lane, pick in enumerate((0, 4, 1, 5)):
        perm |= ((word >> (8 * pick)) & 0xFF) << (8 * lane)
    return [bin(ua).count("1"), 32 - ua.bit_length(), (ua & -ua).bit_length(),
            s32(int(format(ua, "032b")[::-1], 2)), s32(perm), s32((a * b) >> 32),
            s32((ua * ub) >> 32), s32(s24(a) * s24(b)), (a + b) >> 1, (a + b + 1) >> 1,
            s32(abs(ua - ub) + 7), s32(abs(a))]


def test_integer_and_bit_functions(target):
    values = [0, 1, -1, 7, -8, 0x12345678, -0x7FFFFFFF - 1, 0x7FFFFFFF, 0x00FF00FF, -123456]
    a = np.array([v for v in values for _ in values], np.int32)
    b = np.array([w for _ in values for w in values], np.int32)
    out = np.zeros((a.size, 12), np.int32)
    integer_functions[4, 32](a, b, out)
    expected = np.array([_reference_integers(int(x), int(y)) for x, y in zip(a, b)], np.int64)
    target.assert_result("integer_functions", out, expected.astype(np.int32))


@cuda.jit
def wide_integer_functions(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = libdevice.mul64hi(a[i], b[i])
        out[i, 1] = libdevice.popcll(a[i])
        out[i, 2] = libdevice.clzll(a[i])
        out[i, 3] = libdevice.llmax(a[i], b[i])


def test_64_bit_integer_functions(target):
    a = np.array([0, -1, 1 << 62, -(1 << 63), 0x123456789ABCDEF], np.int64)
    b = np.array([5, -1, 12, 3, -0x1111111111], np.int64)
    out = np.zeros((a.size, 4), np.int64)
    wide_integer_functions[1, 32](a, b, out)
    expected = [[(int(x) * int(y)) >> 64, bin(int(x) & (2**64 - 1)).count("1"),
                 64 - (int(x) & (2**64 - 1)).bit_length(), max(int(x), int(y))]
                for x, y in zip(a, b)]
    target.assert_result("wide_integer_functions", out, np.array(expected, np.int64))


# --- rounding-mode variants -------------------------------------------------------

@cuda.jit
def rounding_modes(x, y, out32, out64, ints):
    i = cuda.grid(1)
    if i < x.size:
        out32[i, 0] = libdevice.fadd_rn(x[i], y[i])
        out32[i, 1] = libdevice.fadd_rz(x[i], y[i])
        out32[i, 2] = libdevice.fadd_ru(x[i], y[i])
        out32[i, 3] = libdevice.fadd_rd(x[i], y[i])
        out32[i, 4] = libdevice.fmaf_ru(x[i], y[i], 1.0)
        out32[i, 5] = libdevice.double2float_rd(libdevice.ddiv_rn(1.0, x[i]))
        out64[i, 0] = libdevice.dmul_ru(x[i], y[i])
        out64[i, 1] = libdevice.dmul_rd(x[i], y[i])
        out64[i, 2] = libdevice.ddiv_rz(x[i], 3.0)
        out64[i, 3] = libdevice.dsqrt_ru(libdevice.fabs(x[i]))
        ints[i, 0] = libdevice.double2int_rn(x[i] * 1e3)
        ints[i, 1] = libdevice.double2int_rd(x[i] * 1e3)
        ints[i, 2] = libdevice.double2int_ru(x[i] * 1e3)
        ints[i, 3] = libdevice.double2int_rz(x[i] * 1e12)


def _step(value, toward):
    return np.nextafter(value, toward)


def test_rounding_mode_variants(target):
    x = np.array([1.0, 0.1, -0.3, 1e-3, -2.5e-3, 3.0, 1e10, -7.25], np.float64)
    y = np.array([1e-9, 0.2, 0.7, -3e-11, 1.5, -1.0, 1.0, 1e-12], np.float64)
    out32 = np.zeros((x.size, 6), np.float32)
    out64 = np.zeros((x.size, 4), np.float64)
    ints = np.zeros((x.size, 4), np.int32)
    rounding_modes[1, 32](x.astype(np.float32), y.astype(np.float32), out32, out64, ints)
    if not target.ran("rounding_modes"):
        return
    from fractions import Fraction
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    for i in range(x.size):
        exact = Fraction(float(xf[i])) + Fraction(float(yf[i]))
        nearest = np.float32(float(exact))
        low = nearest if Fraction(float(nearest)) <= exact else _step(nearest, np.float32(-np.inf))
        high = nearest if Fraction(float(nearest)) >= exact else _step(nearest, np.float32(np.inf))
        toward_zero = low if exact >= 0 else high
        assert out32[i, 0] == nearest and out32[i, 3] == low and out32[i, 2] == high
        assert out32[i, 1] == toward_zero
        product = Fraction(float(xf[i])) * Fraction(float(yf[i]))
        near = float(product)
        assert out64[i, 0] == (near if Fraction(near) >= product else np.nextafter(near, np.inf))
        assert out64[i, 1] == (near if Fraction(near) <= product else np.nextafter(near, -np.inf))
        assert out64[i, 1] <= out64[i, 0]
        scaled = float(xf[i]) * 1e3
        assert ints[i, 0] == np.clip(np.rint(scaled), -2**31, 2**31 - 1)
        assert ints[i, 1] == np.clip(np.floor(scaled), -2**31, 2**31 - 1)
        assert ints[i, 2] == np.clip(np.ceil(scaled), -2**31, 2**31 - 1)
        # double2int saturates, as PTX's cvt does.
        assert ints[i, 3] == np.clip(np.trunc(float(xf[i]) * 1e12), -2**31, 2**31 - 1)
        assert out64[i, 3] >= math.sqrt(abs(float(xf[i])))


# --- every function of the table compiles and runs on the cpu target -----------

_NUMPY = {"float32": np.float32, "float64": np.float64, "int16": np.int16,
          "int32": np.int32, "int64": np.int64}


def _signature(doc):
    """(argument types, result types) from a function's doc line:
    'sinf(float32) -> float32: ...' or 'frexp(float64) -> Tuple(float64, int32): ...'."""
    head = doc.split(": libdevice's")[0]
    arguments, result = head.split(" -> ")
    arguments = arguments[arguments.index("(") + 1:-1]
    arguments = [a for a in arguments.split(", ") if a]
    for prefix in ("UniTuple(", "Tuple("):
        if result.startswith(prefix):
            inside = result[len(prefix):-1]
            if prefix == "UniTuple(":
                element, count = inside.split(" x ")
                return arguments, [element] * int(count)
            return arguments, inside.split(", ")
    return arguments, [result]


def _argument_value(name, dtype):
    if name in ("jn", "jnf", "yn", "ynf", "ldexp", "ldexpf", "scalbn", "scalbnf",
                "powi", "powif"):
        return 2
    return 1 if dtype in ("int16", "int32", "int64") else 0.375


def test_every_function_compiles_and_runs_on_the_cpu_target(tmp_path):
    names = sorted(libdevice.__all__)
    lines = ["from tidal import cuda", "from tidal.cuda import libdevice", ""]
    signatures = {}
    for name in names:
        arguments, results = _signature(getattr(libdevice, name).__doc__)
        signatures[name] = (arguments, results)
        outs = [f"r{k}" for k in range(len(results))]
        params = ", ".join(outs + [f"a{k}" for k in range(len(arguments))])
        call = f"libdevice.{name}({', '.join(f'a{k}' for k in range(len(arguments)))})"
        lines += ["@cuda.jit", f"def k_{name}({params}):", f"    value = {call}"]
        if len(results) == 1:
            lines.append("    r0[0] = value")
        else:
            lines += [f"    r{k}[0] = value[{k}]" for k in range(len(results))]
        lines.append("")
    path = tmp_path / "every_libdevice_function.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("every_libdevice_function", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    from tidal.cuda.target import use_target
    failures = []
    with use_target("cpu"):
        for name in names:
            arguments, results = signatures[name]
            outs = [np.full(1, 99, _NUMPY[r]) for r in results]
            values = [_NUMPY[a](_argument_value(name, a)) for a in arguments]
            try:
                getattr(module, f"k_{name}")[1, 1](*outs, *values)
            except Exception as error:  # collect them all, then report
                failures.append(f"{name}: {error}")
                continue
            if name == "sinf":
                assert outs[0][0] == np.float32(math.sin(0.375))
    assert not failures, "\n".join(failures)
    assert len(names) >= 317  # every function of Numba's table, and more


def test_the_names_match_numbas_table():
    """Every libdevice function that Numba has (numba/cuda/libdevicefuncs.py,
    read as a reference when Numba is installed) has the same signature here."""
    libdevicefuncs = pytest.importorskip("numba.cuda.libdevicefuncs")
    for libname, (result, arguments) in libdevicefuncs.functions.items():
        name = libname[len("__nv_"):]
        ours_in, ours_out = _signature(getattr(libdevice, name).__doc__)
        assert ours_in == [str(a.ty) for a in arguments if not a.is_ptr], name
        theirs_out = ([] if str(result) == "none" else [str(result)]) + \
            [str(a.ty) for a in arguments if a.is_ptr]
        assert ours_out == theirs_out, name


# --- the NVPTX path links libdevice ------------------------------------------

@cuda.jit
def uses_libdevice(out, x):
    out[0] = libdevice.erfcinvf(x[0]) + libdevice.j0f(x[1])


@pytest.mark.skipif(not os.path.exists(LIBDEVICE_FILE),
                    reason=f"no CUDA toolkit's libdevice at {LIBDEVICE_FILE}")
def test_nvptx_links_libdevice_functions(monkeypatch):
    monkeypatch.setenv("TIDAL_LIBDEVICE", LIBDEVICE_FILE)
    ptx = uses_libdevice.inspect_asm("void(float32[::1], float32[::1])")
    assert ".entry" in ptx
    # Linked and inlined: no call of libdevice is left.
    assert "__nv_" not in ptx
    assert "call" not in ptx.split(".entry", 1)[1]


def test_nvptx_without_libdevice_names_the_missing_file(monkeypatch):
    monkeypatch.setenv("TIDAL_LIBDEVICE", "none")

    @cuda.jit
    def needs_libdevice(out, x):
        out[0] = libdevice.erfcinvf(x[0])

    with pytest.raises(RuntimeError) as info:
        needs_libdevice.inspect_asm("void(float32[::1], float32[::1])")
    message = str(info.value)
    assert ("call of libdevice's '__nv_erfcinvf' in function 'needs_libdevice': it needs "
            "libdevice from a CUDA toolkit, and none was found") in message
    assert "libdevice.10.bc" in message


# --- the module, and bad calls -------------------------------------------------

def test_module_and_namespace():
    assert cuda.libdevice is libdevice
    assert libdevice.sinf.__tidal_intrinsic__ == "libdevice.sinf"
    assert "float32" in libdevice.sinf.__doc__
    assert {"sincos", "frexp", "sad", "fadd_rz", "popcll", "normcdfinvf"} <= set(libdevice.__all__)
    with pytest.raises(RuntimeError, match="can only be used inside a kernel"):
        libdevice.sinf(1.0)


def _compile_error(kernel, *args):
    with pytest.raises(CompileError) as info:
        kernel[1, 1](*args)
    return info.value


def test_wrong_argument_count_is_located():
    @cuda.jit
    def k(out):
        out[0] = libdevice.atan2(1.0)

    err = _compile_error(k, np.zeros(1))
    assert isinstance(err, TypingError)
    assert "libdevice.atan2() takes 2 arguments, got 1" in str(err)
    line, column = position_of(k.py_func, "libdevice.atan2(1.0)")
    assert (err.line, err.column) == (line, column)


def test_wrong_argument_type_is_located():
    @cuda.jit
    def k(out, x):
        out[0] = libdevice.sinf(x)

    err = _compile_error(k, np.zeros(1), np.zeros(3))
    assert isinstance(err, TypingError)
    assert ("libdevice.sinf() argument 1 must be a real number (it is converted to float32), "
            "not array(float64, 1d, C)") in str(err)
    line, column = position_of(k.py_func, "sinf(x)")
    assert (err.line, err.column) == (line, column + len("sinf("))


def test_complex_argument_is_rejected():
    @cuda.jit
    def k(out, z):
        out[0] = libdevice.exp(z[0])

    err = _compile_error(k, np.zeros(1), np.zeros(1, np.complex128))
    assert "libdevice.exp() argument 1 must be a real number" in str(err)
    assert "complex128" in str(err)


# --- argument conversion and Numba's signed typing of unsigned functions -------

@cuda.jit
def conversions(out_float, out_int):
    out_float[0] = libdevice.exp(2)            # int64 literal -> float64
    out_float[1] = libdevice.sinf(True)        # bool -> float32
    out_int[0] = libdevice.umax(-1, 5)         # unsigned max: 0xFFFFFFFF, typed int32
    out_int[1] = libdevice.sad(7.9, 2, 0)      # float64 -> int32 truncates, as a cast
    out_int[2] = libdevice.popcll(-1)          # int64 operand


def test_arguments_convert_to_the_parameter_types(target):
    out_float = np.zeros(2)
    out_int = np.zeros(3, np.int64)
    conversions[1, 1](out_float, out_int)
    if target.ran("conversions"):
        assert out_float[0] == math.exp(2.0)
        assert out_float[1] == np.float32(math.sin(1.0))
        assert out_int.tolist() == [-1, 5, 64]


# --- the cpu target's own algorithms, against mpmath --------------------------

@cuda.jit
def own_algorithms(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = libdevice.erfinv(v)
        out[i, 1] = libdevice.erfcinv(v + 1.0)
        out[i, 2] = libdevice.erfcx(v * 40)
        out[i, 3] = libdevice.normcdf(v * 40)
        out[i, 4] = libdevice.normcdfinv((v + 1.0) / 2)
        out[i, 5] = libdevice.cyl_bessel_i0(v * 100)
        out[i, 6] = libdevice.cyl_bessel_i1(v * 100)
        out[i, 7] = libdevice.sinpi(v * 1000)
        out[i, 8] = libdevice.cospi(v * 1000)


def test_own_algorithms_are_within_4_ulp_on_the_cpu_target():
    """The functions libm lacks (llvm-plugin/host-libdevice/HostLibdevice.cpp)
    against mpmath at 120 bits; libdevice's own bounds are 2 to 6 ulp."""
    mpmath = pytest.importorskip("mpmath")
    from tidal.cuda.target import use_target
    mpmath.mp.prec = 120
    x = np.concatenate([np.random.default_rng(7).uniform(-1, 1, 300),
                        [0.0, -1e-10, 0.5, -0.5, 0.25, 0.999999, -0.9999999999]])
    out = np.zeros((x.size, 9))
    with use_target("cpu"):
        own_algorithms[4, 128](x, out)
    mp = mpmath.mpf
    references = [
        lambda v: mpmath.erfinv(v),
        lambda v: mpmath.erfinv(1 - mp(v + 1.0)) if 0 < v + 1.0 < 2 else None,
        lambda v: mpmath.exp(mp(v * 40) ** 2) * mpmath.erfc(v * 40),
        lambda v: mpmath.ncdf(v * 40),
        lambda v: mpmath.sqrt(2) * mpmath.erfinv(2 * mp((v + 1.0) / 2) - 1)
        if 0 < (v + 1.0) / 2 < 1 else None,
        lambda v: mpmath.besseli(0, v * 100),
        lambda v: mpmath.besseli(1, v * 100),
        lambda v: mpmath.sinpi(mp(v * 1000)),
        lambda v: mpmath.cospi(mp(v * 1000)),
    ]
    names = ["erfinv", "erfcinv", "erfcx", "normcdf", "normcdfinv", "cyl_bessel_i0",
             "cyl_bessel_i1", "sinpi", "cospi"]
    for column, (name, reference) in enumerate(zip(names, references)):
        for row, v in enumerate(x.tolist()):
            expected = reference(v)
            if expected is None:
                continue
            expected = float(expected) if abs(expected) < 1.7e308 else float(np.sign(expected)) * np.inf
            got = out[row, column]
            if expected == 0 or np.isinf(expected):
                assert got == expected, (name, v, got)
                continue
            ulps = abs(got - expected) / np.spacing(abs(expected))
            assert ulps <= 4, (name, v, got, expected, ulps)


# --- from device functions ---------------------------------------------------

@cuda.jit(device=True)
def _mantissa_and_exponent(value):
    return libdevice.frexp(value)


@cuda.jit
def through_a_device_function(x, fractions, exponents):
    i = cuda.grid(1)
    if i < x.size:
        fractions[i], exponents[i] = _mantissa_and_exponent(x[i])


def test_libdevice_in_a_device_function(target):
    x = np.array([0.75, 8.0, -3.0, 1e-300])
    fractions, exponents = np.zeros_like(x), np.zeros(x.size, np.int32)
    through_a_device_function[1, 32](x, fractions, exponents)
    if target.ran("through_a_device_function"):
        expected_fractions, expected_exponents = np.frexp(x)
        np.testing.assert_array_equal(fractions, expected_fractions)
        np.testing.assert_array_equal(exponents, expected_exponents)
