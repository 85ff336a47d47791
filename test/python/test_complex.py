"""complex64 and complex128 as Numba types them: promotion, arithmetic,
.real/.imag/conjugate(), complex(), abs(), cmath, arrays and arguments, on
every target."""

import cmath

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError, UnsupportedError


def test_arithmetic_matches_python(target, rng):
    @cuda.jit
    def k(x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            a = x[i]
            b = y[i]
            out[i, 0] = a + b
            out[i, 1] = a - b * 2
            out[i, 2] = a * b
            out[i, 3] = a / b
            out[i, 4] = -a.conjugate() + complex(a.imag, a.real)
            out[i, 5] = abs(a) + (a == b) + (a != b) * 10

    x = (rng.standard_normal(200) + 1j * rng.standard_normal(200))
    y = (rng.standard_normal(200) + 1j * rng.standard_normal(200))
    y[:3] = [1e-300 + 2j, 3e300 + 1e300j, 1 + 0j]   # where a naive division fails
    out = np.zeros((200, 6), np.complex128)
    k[2, 128](x, y, out)
    if not target.ran("k"):
        return
    for i in range(200):
        a, b = complex(x[i]), complex(y[i])
        expected = [a + b, a - b * 2, a * b, a / b, -a.conjugate() + complex(a.imag, a.real),
                    abs(a) + (a == b) + (a != b) * 10]
        for got, want in zip(out[i], expected):
            assert got == pytest.approx(want, rel=1e-13), (i, got, want)


def test_complex64_stays_complex64_and_promotes_like_numba(target):
    @cuda.jit
    def k(z, out64, out128):
        i = cuda.grid(1)
        if i < z.size:
            out64[i] = z[i] * 2 + np.float32(1)    # complex64 with small ints, float32
            out128[i] = z[i] * 2.5                  # with float64: complex128

    z = np.array([1 + 2j, -3.5 + 0.25j], np.complex64)
    out64 = np.zeros(2, np.complex64)
    out128 = np.zeros(2, np.complex128)
    k[1, 2](z, out64, out128)
    target.assert_result("k", out64, z * np.float32(2) + np.float32(1))
    target.assert_result("k", out128, z.astype(np.complex128) * 2.5)
    markers = k.inspect_markers(k.signatures[0])
    assert "{ float, float }" in markers and "{ double, double }" in markers


def test_scalar_arguments_and_cmath(target, rng):
    @cuda.jit
    def k(c, z, out):
        i = cuda.grid(1)
        if i < z.size:
            w = z[i]
            out[i, 0] = cmath.sqrt(w) + c
            out[i, 1] = cmath.exp(w)
            out[i, 2] = cmath.log(w)
            out[i, 3] = cmath.phase(w)
            out[i, 4] = w.real * w.imag

    z = rng.standard_normal(100) + 1j * rng.standard_normal(100)
    z[:4] = [-4 + 0j, -4 - 0.0j, 0j, 1e-3 - 5j]
    out = np.zeros((100, 5), np.complex128)
    k[1, 128](0.5 - 1j, z, out)
    if not target.ran("k"):
        return
    for i in range(100):
        w = complex(z[i])
        expected = [cmath.sqrt(w) + (0.5 - 1j), cmath.exp(w), cmath.log(w) if w else None,
                    cmath.phase(w), w.real * w.imag]
        for got, want in zip(out[i], expected):
            if want is not None:
                assert got == pytest.approx(want, rel=1e-12, abs=1e-15), (i, w, got, want)


def test_what_complex_numbers_do_not_do(target):
    @cuda.jit
    def ordered(z, out):
        out[0] = z[0] < z[1]

    with pytest.raises(TypingError, match="complex numbers have no order"):
        ordered[1, 1](np.zeros(2, np.complex128), np.zeros(1))

    @cuda.jit
    def to_float(z, out):
        out[0] = z[0]

    with pytest.raises(TypingError, match="cannot convert complex128 to float64: take .real"):
        to_float[1, 1](np.zeros(1, np.complex128), np.zeros(1))


def test_real_and_imag_of_arrays_are_views(target):
    @cuda.jit
    def k(z, x, out):
        i = cuda.grid(1)
        if i < z.shape[0]:
            re = z.real
            z.imag[i, 1] = re[i, 0] * 10       # writes through the view
            out[i] = z[i, 1:].real[0] + z.imag[i, 0] + x.real[i]
            cuda.atomic.add(z.real, (i, 0), 1.0)

    z = (np.arange(8) + 1j * np.arange(8, 16)).reshape(4, 2).astype(np.complex128)
    x = np.arange(4.0)
    out = np.zeros(4)
    expected_z = z.copy()
    expected_z.imag[:, 1] = z.real[:, 0] * 10
    expected_out = expected_z[:, 1].real + expected_z[:, 0].imag + x
    expected_z.real[:, 0] += 1
    k[1, 4](z, x, out)
    target.assert_result("k", out, expected_out)
    target.assert_result("k", z, expected_z)


def test_complex_constants_casts_and_names(target):
    from tidal import complex64, complex128

    @cuda.jit("void(complex64[::1], float16[::1], complex128[::1])")
    def k(z, h, out):
        out[0] = 1j * z[0] + (2 - 0.5j)
        out[1] = complex64(h[0]) + np.complex128(3)   # float16 -> complex64, int -> complex128
        out[2] = complex(z[0])                         # complex(z) of a complex number
        out[3] = complex128(z[0].conjugate())

    z = np.array([1.5 - 2j], np.complex64)
    h = np.array([0.25], np.float16)
    out = np.zeros(4, np.complex128)
    k[1, 1](z, h, out)
    assert str(complex64) == "complex64" and complex128(2) == np.complex128(2)
    target.assert_result("k", out, [1j * complex(z[0]) + (2 - 0.5j), 0.25 + 3, complex(z[0]),
                                    complex(z[0]).conjugate()])


def test_starred_arguments_of_tuples(target):
    @cuda.jit(device=True)
    def weighted(a, b, c):
        return a + 2 * b + 4 * c

    @cuda.jit
    def k(out):
        t = (1, 2)
        out[0] = weighted(*t, 3)
        out[1] = weighted(0, *(5, 6))
        out[2] = complex(*(1.0, -1.0)).imag

    out = np.zeros(3)
    k[1, 1](out)
    target.assert_result("k", out, [17, 34, -1])


def test_array_components_that_kernels_cannot_make(target):
    @cuda.jit
    def imag_of_real(x, out):
        out[0] = x.imag[0]

    with pytest.raises(UnsupportedError, match=r"'imag' of array\(float64, 1d, C\) would be a new "
                                               r"array of zeros"):
        imag_of_real[1, 1](np.zeros(1), np.zeros(1))

    @cuda.jit
    def conjugate_array(z, out):
        out[0] = z.conjugate()[0]

    with pytest.raises(UnsupportedError, match=r"conjugate\(\) of an array would be a new array"):
        conjugate_array[1, 1](np.zeros(1, np.complex128), np.zeros(1, np.complex128))
