"""a.copy() and np.copy(a) in kernels (language.md, "Array methods"): a new
C-contiguous array in the thread's local memory where the shape is known
when compiling, and a located error where it is not. numba-cuda allocates
the copy on its device heap (NRT, test_array_methods.py::test_array_copy
copies a global array); the values here are NumPy's for the same copies."""

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError, UnsupportedError

REVERSED = np.array([1, 2, 3])[::-1]   # a strided global, as numba-cuda's test


def test_copy_of_a_global_array(target):
    # numba-cuda's test_array_copy: a copy of a frozen global, read back.
    @cuda.jit
    def k(out):
        q = REVERSED.copy()
        q[0] += 10                     # the copy is writable
        for i in range(len(out)):
            out[i] = q[i]

    out = np.zeros(3)
    k[1, 1](out)
    target.assert_result("k", out, np.array([13.0, 2.0, 1.0]))


def test_copies_of_local_arrays_and_their_views(target):
    @cuda.jit
    def k(x, out):
        loc = cuda.local.array((2, 3), np.float64)
        for i in range(2):
            for j in range(3):
                loc[i, j] = x[i * 3 + j]
        c = loc.copy()
        loc[0, 0] = 100.0              # the copy keeps the old value
        row = loc[1, 1:3].copy()       # a slice with constant bounds
        t = np.copy(loc.T)             # np.copy, of a transposed view
        out[0] = c[0, 0]
        out[1] = c[1, 2]
        out[2] = row[0] + row.size * 1000
        out[3] = t[2, 1] + t.shape[0] * 100
        out[4] = t[0, 0]
        out[5] = c.strides[0]

    x = np.arange(6.0) + 1
    out = np.zeros(6)
    k[1, 1](x, out)
    target.assert_result("k", out, np.array([1.0, 6.0, 2005.0, 306.0, 100.0, 24.0]))


def test_copy_of_a_window_of_an_argument(target):
    # a[i:i + n]: at most n elements, whatever a's shape.
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            w = x[i:i + 2].copy()
            w[0] = -1.0                # does not write into x
            out[i, 0] = w[0] + (w[1] if w.size == 2 else 0.0)
            out[i, 1] = w.size

    x = np.arange(5.0)
    out = np.zeros((5, 2))
    k[1, 5](x, out)
    i = np.arange(5)
    second = np.where(i + 1 < 5, i + 1.0, 0.0)
    sizes = np.minimum(2, 5 - i)
    expected = np.stack([np.where(sizes == 2, second - 1.0, -1.0), sizes], axis=1)
    target.assert_result("k", out, expected)
    target.assert_result("k", x, np.arange(5.0))


def test_copy_of_an_array_of_unknown_shape_is_a_located_error():
    @cuda.jit
    def k(x, out):
        y = np.copy(x)
        out[0] = y[0]

    with pytest.raises(UnsupportedError) as e:
        k[1, 1](np.zeros(3), np.zeros(1))
    assert "copy() of array(float64, 1d, C) in a kernel would allocate a new array" in str(e.value)
    assert "numba-cuda needs its NRT" in str(e.value)
    assert "y = np.copy(x)" in str(e.value)


def test_device_function_cannot_return_its_copy():
    @cuda.jit(device=True)
    def head(x):
        loc = cuda.local.array(4, np.float64)
        return loc.copy()

    @cuda.jit
    def k(out):
        out[0] = head(out)[0]

    with pytest.raises(TypingError, match="makes a local array, whose memory ends with the call"):
        k[1, 1](np.zeros(1))
