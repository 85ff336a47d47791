"""Assigning to views (Numba's setitem with slices) and indexing with 0-d
integer arrays, on every target: a number into every element, an array
copied with NumPy's broadcasting, and the errors."""

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError, UnsupportedError


def test_a_number_fills_a_view_and_an_array_is_copied_into_one(target):
    @cuda.jit
    def k(a, b, c, out):
        aa = cuda.local.array((2, 3), np.float64)
        aa[:] = 0          # Numba's test_caching.many_locals
        aa[1] = 7          # a row of a 2-D array
        aa[0, 1:] = b[:2]  # an array into a 1-D view
        a[1:4] = 5
        a[::-2] = -1       # a strided view
        c[:, 1] = b[:3]    # a column
        c[0] = b[1]        # a number into a row
        out[0] = aa[0, 0] + aa[1, 2] * 10 + aa[0, 2] * 100
        out[1] = aa[0, 1]

    a, b = np.zeros(6), np.array([1.5, 2.5, 3.5])
    c, out = np.zeros((3, 3)), np.zeros(2)
    k[1, 1](a, b, c, out)
    expected_a = np.zeros(6)
    expected_a[1:4] = 5
    expected_a[::-2] = -1
    expected_c = np.zeros((3, 3))
    expected_c[:, 1] = b
    expected_c[0] = b[1]
    target.assert_result("k", a, expected_a)
    if target.computes:
        np.testing.assert_array_equal(c, expected_c)
        np.testing.assert_array_equal(out, [320.0, 1.5])


def test_an_array_broadcasts_as_numpy_broadcasts(target):
    @cuda.jit
    def k(grid, row, column, converted):
        grid[:, :] = row         # (4,) over (3, 4): every row
        grid[0:2, 0:1] = column  # (2, 1) over (2, 1)
        converted[:] = row       # float64 into int32, as a store converts

    grid = np.zeros((3, 4))
    row = np.arange(4.0) + 0.5
    column = np.array([[10.0], [20.0]])
    converted = np.zeros(4, np.int32)
    k[1, 1](grid, row, column, converted)
    expected = np.zeros((3, 4))
    expected[:, :] = row
    expected[0:2, 0:1] = column
    target.assert_result("k", grid, expected)
    if target.computes:
        np.testing.assert_array_equal(converted, row.astype(np.int32))


def test_a_source_that_does_not_broadcast_raises_in_debug_mode(target):
    @cuda.jit(debug=True, opt=False)
    def k(a, b):
        a[:] = b

    k[1, 1](np.zeros(4), np.ones(1))  # an extent of 1 repeats
    if target.computes:
        with pytest.raises(ValueError, match="cannot broadcast the assigned array"):
            k[1, 1](np.zeros(4), np.ones(3))


def test_a_zero_dimensional_index(target):
    # Numba's cache_usecases.record_return: its harness passes every
    # argument through np.asarray, so the index is a 0-d array.
    @cuda.jit
    def k(r, ary, i, j):
        r[()] = ary[i] + ary[j]

    r = np.zeros((), np.float64)
    k[1, 1](r, np.arange(5.0), np.asarray(1), np.asarray(3, np.int32))
    target.assert_result("k", r, np.float64(4.0))


def test_assignment_to_views_rejects_what_it_cannot_store():
    @cuda.jit
    def too_many_dimensions(a, b):
        a[:] = b

    with pytest.raises(TypingError, match="it has more dimensions"):
        too_many_dimensions[1, 1](np.zeros(4), np.zeros((2, 2)))

    @cuda.jit
    def a_tuple(a):
        a[:] = (1, 2)

    with pytest.raises(TypingError, match="expected a number or an array"):
        a_tuple[1, 1](np.zeros(2))

    @cuda.jit
    def read_only(a):
        a[1:] = 0

    with pytest.raises(TypingError, match="read-only"):
        read_only[1, 1](_read_only(np.zeros(2)))

    rec = np.dtype([("x", np.float64)])

    @cuda.jit
    def records(a, b):
        a[:] = b[0]

    with pytest.raises(UnsupportedError, match="slice of a record array"):
        records[1, 1](np.zeros(2, rec), np.zeros(2, rec))


def _read_only(a):
    a.setflags(write=False)
    return a
