"""literal_unroll (issue 24 section 2; pyfrontend/LiteralUnroll.cpp,
python/tidal/_literal_unroll.py): `for v in literal_unroll(t)` runs its body
once per element of the tuple t, each typed as that element is, so that v may
be an int, a float, a bool, a complex number or an array in turn (Numba types
the body once per distinct type; the results are the same). break, continue
and else keep Python's meaning; loops nest, also over the outer element. The
expected values are Python's: literal_unroll is the identity there, as in
Numba's simulator."""

import numpy as np
import pytest

import tidal
from tidal import cuda, literal_unroll
from tidal.errors import UnsupportedError
from source_positions import position_of


def test_each_element_keeps_its_type(target):
    # v // 2 + v is 1 for the int, 3.5 for the float, 4 for the int8 and 1
    # for True (each in its own type: bool // int is int64).
    @cuda.jit
    def k(out):
        i = 0
        for v in literal_unroll((1, 2.5, np.int8(3), True)):
            out[i] = v // 2 + v
            i += 1

    out = np.zeros(4)
    k[1, 1](out)
    expected = [v // 2 + v for v in (1, 2.5, np.int8(3), True)]
    assert expected == [1, 3.5, 4, 1]
    target.assert_result("k", out, expected)


def test_break_continue_and_else(target):
    @cuda.jit
    def k(out):
        acc = 0.0
        for v in literal_unroll((1, 2.5, np.int8(3), 4.0)):
            if v > 2.9:
                break
            acc += v
        else:
            acc += 1000
        out[0] = acc
        acc = 0.0
        for v in literal_unroll((1, 2.5, np.int8(3), 4.0)):
            if v == 2.5:
                continue
            acc += v
        else:
            acc += 100
        out[1] = acc

    def python():
        results = []
        acc = 0.0
        for v in (1, 2.5, np.int8(3), 4.0):
            if v > 2.9:
                break
            acc += v
        else:
            acc += 1000
        results.append(acc)
        acc = 0.0
        for v in (1, 2.5, np.int8(3), 4.0):
            if v == 2.5:
                continue
            acc += v
        else:
            acc += 100
        results.append(acc)
        return results

    out = np.zeros(2)
    k[1, 1](out)
    assert python() == [3.5, 108.0]
    target.assert_result("k", out, python())


def test_nested_and_over_the_outer_element(target):
    @cuda.jit
    def k(out):
        acc = 0.0
        for t in literal_unroll(((1, 2.5), (np.int8(3),), (True, 1j, 2))):
            for v in literal_unroll(t):
                acc += abs(v)
            for w in literal_unroll((10, 0.5)):
                acc += w
        out[0] = acc

    out = np.zeros(1)
    k[1, 1](out)
    expected = sum(abs(v) for t in ((1, 2.5), (np.int8(3),), (True, 1j, 2)) for v in t) + 3 * 10.5
    target.assert_result("k", out, [expected])


def test_over_arguments_and_variables(target):
    # Each tuple type of the argument is a specialisation with its own unrolling.
    @cuda.jit
    def k(out, t, n):
        u = (n, 2.5, np.float32(n))
        acc = 0.0
        for v in literal_unroll(t):
            acc += v
        for w in literal_unroll(u):
            acc += w * 10
        out[0] = acc

    out = np.zeros(1)
    k[1, 1](out, (1, 2.5, np.int8(3)), 3)
    target.assert_result("k", out, [1 + 2.5 + 3 + 10 * (3 + 2.5 + 3)])
    out = np.zeros(1)
    k[1, 1](out, (1, 2), 4)
    target.assert_result("k", out, [1 + 2 + 10 * (4 + 2.5 + 4)], launches=2)
    assert len(k.signatures) == 2


def test_over_arrays_of_different_types_in_a_device_function(target):
    @cuda.jit(device=True)
    def first_and_size(arrays, out):
        i = 0
        for arr in literal_unroll(arrays):
            out[i] = arr.size
            i += 1
        return i

    @cuda.jit
    def k(out, a, b, c):
        out[3] = first_and_size((a, b, c), out)

    a, b, c = np.arange(3.0), np.ones((2, 2), np.int32), np.zeros(5, np.bool_)
    out = np.zeros(4)
    k[1, 1](out, a, b, c)
    target.assert_result("k", out, [3, 4, 5, 3])


def test_numbas_names_and_a_list_of_constants(target):
    # numba.literal_unroll and numba-cuda's numba.cuda.misc.special one (here
    # tidal.cuda.misc.special) are tidal's; a list of constants unrolls as a
    # tuple, as Numba rewrites it; outside a loop it is the tuple itself.
    numba = pytest.importorskip("numba")  # Debian's python3-numba, a test dependency
    from tidal.cuda.misc.special import literal_unroll as cuda_literal_unroll

    @cuda.jit
    def k(out):
        i = 0
        for v in numba.literal_unroll([1, 2.5]):
            out[i] = v
            i += 1
        for v in cuda_literal_unroll((np.int16(7),)):
            out[i] = v
            i += 1
        x = numba.literal_unroll((4, 5))
        out[i] = x[1]

    out = np.zeros(4)
    k[1, 1](out)
    target.assert_result("k", out, [1.0, 2.5, 7.0, 5.0])
    assert tidal.literal_unroll((1, 2)) == (1, 2)


def test_a_non_tuple_argument_is_refused_as_numba_refuses_it():
    @cuda.jit
    def k(out, a):
        for v in literal_unroll(a):
            out[0] = v

    with pytest.raises(UnsupportedError) as info:
        k[1, 1](np.zeros(1), np.zeros(3))
    assert ("Invalid use of literal_unroll with a function argument, only tuples are supported "
            "as function arguments, found array(float64, 1d, C)") in str(info.value)
    line, column = position_of(k.py_func, "literal_unroll(a)")
    assert (info.value.line, info.value.column) == (line, column + len("literal_unroll("))


def test_a_non_tuple_value_and_two_arguments_are_refused():
    @cuda.jit
    def scalar(out):
        for v in literal_unroll(3):
            out[0] = v

    @cuda.jit
    def two(out):
        for v in literal_unroll((1,), (2,)):
            out[0] = v

    with pytest.raises(UnsupportedError, match=r"Invalid use of literal_unroll: its argument must "
                                               r"be a tuple \(or a list of constants\), found int64"):
        scalar[1, 1](np.zeros(1))
    with pytest.raises(UnsupportedError, match=r"literal_unroll takes one argument, found 2"):
        two[1, 1](np.zeros(1))


def test_an_error_in_a_copy_points_at_the_source_line():
    @cuda.jit
    def k(out):
        for v in literal_unroll((1, (2, 3))):
            out[0] = v

    with pytest.raises(Exception) as info:
        k[1, 1](np.zeros(1))
    line, _ = position_of(k.py_func, "out[0] = v")
    assert info.value.line == line
    assert "UniTuple(int64 x 2)" in str(info.value)
