"""Unpacking arrays (a, b = p[i]) and tuple() of sized values, a tuple held
in a variable as an index, and declared device-function signatures: the
value cast to the declared return type, several signatures per function."""

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError
from mock_driver import play_raise
from source_positions import position_of


def test_unpacking_a_row_of_a_2d_array(target):
    @cuda.jit
    def lengths(segments, out):
        i = cuda.grid(1)
        if i < out.size:
            x0, y0, x1, y1 = segments[i]   # a row: its four elements
            out[i] = ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5

    segments = np.array([[0.0, 0.0, 3.0, 4.0], [1.0, 1.0, 1.0, 3.0]])
    out = np.zeros(2)
    lengths[1, 2](segments, out)
    target.assert_result("lengths", out, [5.0, 2.0])


def test_unpacking_a_3d_array_gives_its_rows(target):
    @cuda.jit
    def k(p, out):
        first, second = p[0]               # two 1-D rows of a 2-D view
        a, b = first
        c, d = second
        out[0] = a * 1000 + b * 100 + c * 10 + d

    out = np.zeros(1)
    k[1, 1](np.arange(8.0).reshape(2, 2, 2), out)
    target.assert_result("k", out, [123.0])


def test_unpacking_an_array_of_another_length_raises_value_error(target):
    @cuda.jit(debug=True)
    def k(p, out):
        a, b = p[0]
        out[0] = a + b

    out = np.zeros(1)
    k[1, 1](np.ones((1, 2)), out)
    target.assert_result("k", out, [2.0])
    play_raise(target, k, "cannot unpack")
    with pytest.raises(ValueError, match="cannot unpack an array whose length is not 2"):
        k[1, 1](np.ones((1, 3)), out)


def test_unpacking_a_number_is_a_located_error():
    @cuda.jit
    def k(p, out):
        a, b = p[0, 0]
        out[0] = a + b

    line, column = position_of(k.py_func, "p[0, 0]")
    with pytest.raises(TypingError, match=rf":{line}:{column}: cannot unpack a value of type "
                                          r"float64 \(tuples and arrays unpack\)"):
        k[1, 1](np.ones((2, 2)), np.zeros(1))


def test_tuple_of_a_vector_type_and_of_a_tuple(target):
    @cuda.jit
    def k(out):
        v = cuda.float32x3(1.0, 2.0, 3.5)
        t = tuple(v)                       # UniTuple(float32 x 3)
        h = tuple((1, 2.5, np.int8(3)))    # a heterogeneous tuple: itself
        out[0] = t[0] + t[1] + t[2]
        out[1] = len(t)
        out[2] = h[0] + h[1] + h[2]

    out = np.zeros(3)
    k[1, 1](out)
    target.assert_result("k", out, [6.5, 3.0, 6.5])


def test_tuple_of_an_array_is_a_located_error():
    @cuda.jit
    def k(a, out):
        t = tuple(a)
        out[0] = t[0]

    line, column = position_of(k.py_func, "tuple(a)")
    with pytest.raises(TypingError, match=rf":{line}:{column + len('tuple(')}: tuple\(\) of a "
                                          r"value of type array\(float64, 1d, C\)"):
        k[1, 1](np.ones(2), np.zeros(1))


def test_a_tuple_variable_as_an_index(target):
    @cuda.jit
    def k(a, counts):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            idx = (i, j)
            a[idx] = i * 10 + j            # a store
            a[idx] += a[idx]               # a read and a store
            bucket = (i % 2, 0)
            cuda.atomic.add(counts, bucket, 1)

    a = np.zeros((3, 2))
    counts = np.zeros((2, 1), dtype=np.int32)
    k[1, (3, 2)](a, counts)
    target.assert_result("k", a, 2 * np.array([[0, 1], [10, 11], [20, 21]]))
    target.assert_result("k", counts, [[4], [2]])


def test_a_tuple_variable_of_the_wrong_length_is_a_located_error():
    @cuda.jit
    def k(a):
        idx = (0, 0, 0)
        a[idx] = 1

    line, column = position_of(k.py_func, "a[idx]")
    with pytest.raises(TypingError, match=rf":{line}:{column + 2}: cannot index "
                                          r"array\(float64, 2d, C\) with 3 indices"):
        k[1, 1](np.zeros((2, 2)))


def test_the_value_is_cast_to_the_declared_return_type(target):
    @cuda.jit("int32(int64)", device=True)
    def doubled(x):
        return x * 2                      # int64, wraps as an int32

    @cuda.jit("float32(float64)", device=True)
    def third(x):
        return x / 3.0

    @cuda.jit
    def k(out, f):
        out[0] = doubled(2 ** 30)          # 2**31 as an int32
        out[1] = doubled(5)
        f[0] = third(1.0)

    out = np.zeros(2, dtype=np.int64)
    f = np.zeros(1)
    k[1, 1](out, f)
    target.assert_result("k", out, [-2 ** 31, 10])
    target.assert_result("k", f, [np.float64(np.float32(1.0 / 3.0))])


def test_several_declared_signatures_pick_the_best_conversion(target):
    @cuda.jit(["float32(float32)", "float64(float64)", "int32(int32)"], device=True)
    def twice(x):
        return x + x

    @cuda.jit
    def k(f32, out):
        out[0] = twice(f32[0])             # float32: exact
        out[1] = twice(0.1)                # float64: exact
        out[2] = twice(np.int32(7))        # int32: exact
        out[3] = twice(3)                  # int64: safe to float64, not to int32

    out = np.zeros(4)
    k[1, 1](np.array([0.1], dtype=np.float32), out)
    target.assert_result("k", out, [np.float64(np.float32(0.1) * 2), 0.2, 14.0, 6.0])


def test_an_argument_no_declared_signature_takes_is_a_located_error():
    @cuda.jit(["float32(float32)", "float64(float64)"], device=True)
    def twice(x):
        return x + x

    @cuda.jit
    def k(out):
        out[0] = twice((1.0, 2.0))

    line, column = position_of(k.py_func, "(1.0, 2.0)")
    with pytest.raises(TypingError, match=rf":{line}:{column}: .*UniTuple\(float64 x 2\)"):
        k[1, 1](np.zeros(1))


def test_device_functions_return_arrays_and_views_of_their_arguments(target):
    @cuda.jit(device=True)
    def interior(a):
        return a[1:-1]                      # a view: writes reach the caller's array

    @cuda.jit(device=True)
    def halves(a):
        n = a.size // 2
        return a[:n], a[n:]                 # a tuple of views

    @cuda.jit(device=True)
    def row(m, i):
        return m[i]

    @cuda.jit(device=True)
    def same(a):
        return a

    @cuda.jit
    def k(a, m, out):
        b = interior(a)
        b[0] = 100.0
        lo, hi = halves(a)
        out[0] = lo.size
        out[1] = hi[0]
        out[2] = row(m, 1)[2]
        same(out)[3] = interior(a).size

    a = np.arange(6.0)
    out = np.zeros(4)
    k[1, 1](a, np.arange(12.0).reshape(3, 4), out)
    target.assert_result("k", a, [0.0, 100.0, 2.0, 3.0, 4.0, 5.0])
    target.assert_result("k", out, [3.0, 3.0, 6.0, 4.0])


def test_returning_a_local_array_is_a_located_error():
    @cuda.jit(device=True)
    def scratch(n):
        t = cuda.local.array(4, np.float64)
        t[0] = n
        return t[:2]

    @cuda.jit
    def k(out):
        out[0] = scratch(1.0)[0]

    line, column = position_of(scratch.py_func, "cuda.local.array")
    with pytest.raises(TypingError, match=rf":{line}:{column}: device function 'scratch' returns "
                                          r"array\(float64, 1d, C\) and makes a local array"):
        k[1, 1](np.zeros(1))



def test_is_none_of_a_value_is_a_constant_and_prunes_its_branch(target):
    @cuda.jit(device=True)
    def clip(x, limit):
        if limit is None:
            return x
        else:
            return min(x, limit)           # typed only where limit is a number

    @cuda.jit
    def k(a, out):
        out[0] = clip(a[0], None)
        out[1] = clip(a[0], 1.0)
        out[2] = a[0] is None
        out[3] = a[0] is not None
        out[4] = None is None

    out = np.zeros(5)
    k[1, 1](np.array([2.5]), out)
    target.assert_result("k", out, [2.5, 1.0, 0.0, 1.0, 1.0])
