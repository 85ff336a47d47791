"""`for` over enumerate(), zip() (of ranges, arrays, tuples and of each
other), 1-D arrays and tuples (heterogeneous ones unrolled), nested, with
break and continue; and the iterables kernels refuse."""

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError

COEFFICIENTS = (1, 2.5, 4)


def test_enumerate_and_zip_of_arrays(target):
    @cuda.jit
    def k(x, y, out):
        total = 0.0
        count = 0
        for i, v in enumerate(x):
            total += i * v
        for a, b in zip(x, y):  # stops at the shorter
            total += a * b
            count += 1
        for i, (a, b) in enumerate(zip(x, y), 10):
            total += i
        for (i, a), b in zip(enumerate(x), y):
            total -= i
        out[0] = total
        out[1] = count

    x = np.arange(5, dtype=np.float64)
    y = np.arange(3, dtype=np.float32) + 1
    out = np.zeros(2)
    k[1, 1](x, y, out)
    expected = (sum(i * v for i, v in enumerate(x)) + sum(a * b for a, b in zip(x, y))
                + sum(range(10, 13)) - sum(range(3)))
    target.assert_result("k", out, [expected, 3])


def test_arrays_tuples_and_ranges_nested_with_break_and_continue(target):
    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if i >= out.size:
            return
        acc = 0.0
        for c in COEFFICIENTS:  # int64, float64, int64: unrolled, acc is float64
            for v in a:
                if v == 3:
                    continue
                if v > 5:
                    break
                acc += c * v
        for j, c in zip(range(i, 100, 2), (10, 20, 30)):
            acc += j * c
        out[i] = acc

    a = np.array([1, 2, 3, 4, 6, 7], np.int32)
    out = np.zeros(4)
    k[1, 4](a, out)
    def expected(i):
        acc = 0.0
        for c in COEFFICIENTS:
            for v in a:
                if v == 3:
                    continue
                if v > 5:
                    break
                acc += c * v
        for j, c in zip(range(i, 100, 2), (10, 20, 30)):
            acc += j * c
        return acc
    target.assert_result("k", out, [expected(i) for i in range(4)])


def test_zip_of_a_tuple_and_a_shorter_array_stops_at_the_array(target):
    @cuda.jit
    def k(a, out):
        n = 0
        for t, v in zip((1, 2, 3, 4), a):
            out[n] = t * v
            n += 1
        out[4] = n

    out = np.zeros(5, np.int64)
    k[1, 1](np.array([5, 6], np.int64), out)
    target.assert_result("k", out, [5, 12, 0, 0, 2])


def test_iterating_records_gives_references(target):
    dtype = np.dtype([("x", np.float64), ("n", np.int32)])

    @cuda.jit
    def k(records, out):
        for r in records:
            r.x = r.x * 2
            out[0] += r.n

    records = np.zeros(3, dtype)
    records["x"] = [1, 2, 3]
    records["n"] = [4, 5, 6]
    out = np.zeros(1, np.int64)
    k[1, 1](records, out)
    if target.ran("k"):
        np.testing.assert_array_equal(records["x"], [2, 4, 6])
        assert out[0] == 15


def test_refused_iterables_are_located():
    @cuda.jit
    def number(x, out):
        for v in x:
            out[0] = v

    with pytest.raises(TypingError, match="cannot iterate over a value of type int64"):
        number[1, 1](3, np.zeros(1))

    @cuda.jit
    def bad_start(a, out):
        for i, v in enumerate(a, 1.5):
            out[0] = v

    with pytest.raises(TypingError, match="enumerate\\(\\)'s start must be an integer, not float64"):
        bad_start[1, 1](np.zeros(2), np.zeros(1))

    @cuda.jit
    def unpack(a, out):
        for i, j, k in enumerate(a):
            out[0] = i

    with pytest.raises(TypingError, match=r"cannot unpack Tuple\(int64, float64\) into 3 targets"):
        unpack[1, 1](np.zeros(2), np.zeros(1))


def test_loops_reusing_a_variable_give_it_each_loop_its_type(target):
    @cuda.jit
    def k(out):
        j = 0
        for v in ((1, 2), (3, 4)):      # v: UniTuple(int64 x 2)
            out[j] = v[0] + v[1]
            j += 1
        for v in (2.5, 3.5):            # v: float64
            out[j] = v
            j += 1
        for v in range(2):              # v: int64
            out[j] = v * 10
            j += 1

    out = np.zeros(6)
    k[1, 1](out)
    target.assert_result("k", out, [3, 7, 2.5, 3.5, 0, 10])


def test_a_loop_variable_read_after_its_loop_keeps_one_type():
    @cuda.jit
    def k(out):
        for v in ((1, 2), (3, 4)):
            out[0] = v[0]
        for v in (2.5, 3.5):
            out[1] = v
        out[2] = v  # reads the last loop's value: one variable, two types

    with pytest.raises(TypingError, match=r"test_iteration\.py:\d+:\d+: variable 'v' has type "
                                          r"UniTuple\(int64 x 2\) and cannot also hold"):
        k[1, 1](np.zeros(3))


def test_iterating_an_n_d_array_gives_its_rows_as_views(target):
    @cuda.jit
    def k(a, f, out):
        i = 0
        for row in a:            # array(float64, 1d, C) views
            total = 0.0
            for v in row:
                total += v
            out[i] = total
            row[0] = -1.0        # writes go to a
            i += 1
        for j, plane in enumerate(f):   # 2-D views of a 3-D F-ordered array
            out[3 + j] = plane[1, 0]
        for row in a[:, ::2]:    # rows of a strided view
            out[5] += row[1]

    a = np.arange(12.0).reshape(3, 4)
    f = np.asfortranarray(np.arange(8.0).reshape(2, 2, 2))
    out = np.zeros(6)
    expected_a = a.copy()
    expected_a[:, 0] = -1
    k[1, 1](a, f, out)
    target.assert_result("k", out, [6, 22, 38, 2, 6, 2 + 6 + 10])
    if target.ran("k"):
        np.testing.assert_array_equal(a, expected_a)


def test_for_and_while_else_run_when_no_break_ends_the_loop(target):
    @cuda.jit(device=True)
    def find(a, x):
        for i in range(a.size):
            if a[i] == x:
                break
        else:
            return -1           # every path returns: no fall-through error
        return i

    @cuda.jit
    def k(a, out):
        out[0] = find(a, 3.0)
        out[1] = find(a, 7.0)
        n = 0
        while n < 10:
            n += 1
            if n == 20:
                break
        else:
            out[2] = n          # assigned only here: the binding analysis follows the else
        for v in a:
            if v > 2:
                break
        else:
            out[3] = 1          # not reached: the loop breaks
        for c in (1, 2.5):      # an unrolled loop
            if c > 2:
                out[4] = c
                break
        else:
            out[4] = -1
        for w in (1, 2):
            pass
        else:
            out[5] = w

    out = np.zeros(6)
    k[1, 1](np.array([1.0, 2, 3, 4]), out)
    target.assert_result("k", out, [2, -1, 10, 0, 2.5, 2])
