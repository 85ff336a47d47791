"""Optional values (issue 24 section 2; pyfrontend/OptionalValues.cpp): where
None and a number meet (a device function returning None on one path, a
variable assigned None on one path, `x if c else None`), the value is Numba's
Optional(T): `r is None` / `r is not None` test it at run time, and used as a
number it is unwrapped as Numba's cast from Optional does: a None there raises
TypeError("expected int64, got None") (with debug=True; without, the thread
ends, as any raise in a kernel in Numba). Device functions called with None
and with a number are two specialisations, as Numba compiles two versions.
The expected values are Python's (the functions' py_func, as Numba's
simulator runs them)."""

import os

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError
from mock_driver import play_raise
from source_positions import position_of


@cuda.jit(device=True)
def maybe(x):
    if x < 0:
        return None
    return x


@cuda.jit(device=True)
def add_or(x, y):
    if y is None:
        return x
    return x + y


def _none_as(value, sentinel):
    return sentinel if value is None else value


def test_a_device_function_returning_none_on_one_path_is_optional(target):
    @cuda.jit
    def k(out, x):
        for i in range(x.size):
            r = maybe(x[i])
            if r is None:
                out[0, i] = -1
            else:
                out[0, i] = r + 1  # known not None here: used as int64
            if r is not None:
                out[1, i] = r * 2
            out[2, i] = maybe(x[i]) is None

    x = np.array([5, -3, 0])
    out = np.zeros((3, 3), np.int64)
    k[1, 1](out, x)
    expected = np.zeros((3, 3), np.int64)
    for i, v in enumerate(x.tolist()):
        r = maybe.py_func(v)
        expected[0, i] = -1 if r is None else r + 1
        expected[1, i] = 0 if r is None else r * 2
        expected[2, i] = maybe.py_func(v) is None
    assert expected.tolist() == [[6, -1, 1], [10, 0, 0], [0, 1, 0]]
    target.assert_result("k", out, expected)
    # The marker IR returns the pair {valid, value}: no marker of its own.
    markers = k.inspect_markers(k.signatures[0])
    assert "define internal { i1, i64 } @maybe.i64(i64 %x)" in markers


def test_the_optional_type_is_numbas(capsys):
    @cuda.jit
    def k(out, x):
        r = maybe(x[0])
        out[0] = 0 if r is None else r

    k[1, 1](np.zeros(1, np.int64), np.array([1]))
    k.inspect_types()
    assert "r = OptionalType(int64)" in capsys.readouterr().out


def test_none_and_numbers_as_arguments_are_specialisations(target):
    # add_or(x, None) prunes `if y is None` (Numba's dead-branch pruning, the
    # `return x + y` after it never typed); add_or(x, 3) is another version;
    # add_or(x, maybe(x)) a third, taking OptionalType(int64).
    @cuda.jit
    def k(out, x):
        out[0] = add_or(x[0], None)
        out[1] = add_or(x[0], 3)
        out[2] = add_or(x[0], maybe(x[0]))
        out[3] = add_or(x[0], maybe(-x[0]))

    out = np.zeros(4, np.int64)
    k[1, 1](out, np.array([5]))
    expected = [add_or.py_func(5, None), add_or.py_func(5, 3),
                add_or.py_func(5, maybe.py_func(5)), add_or.py_func(5, maybe.py_func(-5))]
    assert expected == [5, 8, 10, 5]
    target.assert_result("k", out, expected)
    definitions = [line for line in k.inspect_markers(k.signatures[0]).splitlines()
                   if line.startswith("define internal i64 @add_or.")]
    assert len(definitions) == 3, definitions


def test_a_variable_assigned_none_on_one_path(target):
    @cuda.jit
    def k(out, x):
        for i in range(x.size):
            y = None
            if x[i] > 0:
                y = x[i] * 2.0
            if y is not None:
                out[0, i] = y
            z = 5 if x[i] > 1 else None  # OptionalType(int64)
            out[1, i] = 0 if z is None else z
            t = (z, 2)  # Tuple(OptionalType(int64), int64)
            out[2, i] = 7 if t[0] is None else t[0] + t[1]
            if z is not None:
                z += 10  # its value, plus 10, back into the Optional
                out[2, i] += z

    x = np.array([3.0, -3.0, 1.0])
    out = np.zeros((3, 3))
    k[1, 1](out, x)
    expected = [[6.0, 0.0, 2.0], [5.0, 0.0, 0.0], [7.0 + 15.0, 7.0, 7.0]]
    target.assert_result("k", out, expected)


def test_a_none_used_as_a_number_raises_type_error(target):
    # Numba's cast from Optional: TypeError, at the expression that uses it.
    @cuda.jit(debug=True)
    def k(out, x):
        r = maybe(x[0])
        out[0] = r + 1

    out = np.zeros(1, np.int64)
    k[1, 1](out, np.array([4]))
    target.assert_result("k", out, [5])
    play_raise(target, k, "expected int64, got None")
    with pytest.raises(TypeError) as info:
        k[1, 1](out, np.array([-4]))
    line, _ = position_of(k.py_func, "r + 1")
    assert str(info.value) == (f"In function 'k', file {os.path.abspath(__file__)}, "
                               f"line {line}, tid=[0, 0, 0] ctaid=[0, 0, 0]: "
                               "expected int64, got None")


def test_without_debug_a_none_used_as_a_number_ends_the_thread(target):
    @cuda.jit
    def k(out, x):
        i = cuda.grid(1)
        r = maybe(x[i])
        out[i] = r + 1

    out = np.full(3, 100, np.int64)
    k[1, 3](out, np.array([1, -1, 2]))
    target.assert_result("k", out, [2, 100, 3])


def test_the_end_of_a_function_returns_none(target):
    @cuda.jit(device=True)
    def positive_half(x):
        if x > 0:
            return x / 2

    @cuda.jit
    def k(out, x):
        for i in range(x.size):
            out[i] = -1.0 if positive_half(x[i]) is None else positive_half(x[i])

    x = np.array([3.0, -1.0])
    out = np.zeros(2)
    k[1, 1](out, x)
    target.assert_result("k", out, [_none_as(positive_half.py_func(v), -1.0) for v in x])


def test_none_and_a_value_that_do_not_unify():
    @cuda.jit(device=True)
    def odd(x, a):
        if x < 0:
            return None
        if x > 5:
            return a
        return x

    @cuda.jit
    def k(out, x):
        r = odd(x[0], out)
        out[0] = 0 if r is None else 1

    with pytest.raises(TypingError, match=r"device function returns OptionalType\(array\(int64, 1d, C\)\) "
                                          r"and int64, which cannot unify"):
        k[1, 1](np.zeros(1, np.int64), np.array([1]))


def test_is_none_of_a_number_is_folded(target):
    # Not an Optional: `x is None` is a constant, and the branch it rules out
    # is pruned (never typed: it could not be).
    @cuda.jit
    def k(out, x):
        v = x[0]
        if v is None:
            out[0] = v.no_such_attribute
        else:
            out[0] = v + 1
        out[1] = v is not None

    out = np.zeros(2, np.int64)
    k[1, 1](out, np.array([4]))
    target.assert_result("k", out, [5, 1])
