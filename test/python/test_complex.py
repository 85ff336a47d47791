"""complex64 and complex128 as Numba types them: promotion, arithmetic,
.real/.imag/conjugate(), complex(), abs(), cmath, arrays and arguments, on
every target."""

import cmath

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError


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
