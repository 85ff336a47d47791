"""Tuples and namedtuples: as kernel arguments (nested, empty, holding
arrays that are copied in and out like top-level ones, mixed scalars), as
device-function arguments and results, indexed by a constant or (when
homogeneous) a run-time integer, `x in t`, len(t); and their errors."""

from collections import namedtuple

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError

Point = namedtuple("Point", ("x", "y"))
Body = namedtuple("Body", ("x", "y", "mass"))
WEIGHTS = (0.5, 1.5, 2.5, 3.5)


def test_tuple_arguments_mixed_nested_and_empty(target):
    @cuda.jit
    def k(out, t, empty):
        out[0] = t[0]
        out[1] = t[1]
        out[2] = t[2][0] + t[2][1]
        out[3] = len(t) * 10 + len(t[2]) + len(empty)

    out = np.zeros(4)
    k[1, 1](out, (3, 2.5, (np.int32(7), True)), ())
    target.assert_result("k", out, [3, 2.5, 8, 32])
    assert "Tuple(int64, float64, Tuple(int32, bool))" in k.signatures[0]
    assert k.signatures[0].endswith("Tuple())")


def test_namedtuple_arguments_by_field_and_index(target):
    @cuda.jit
    def k(out, p, b):
        out[0] = p.x + p.y
        out[1] = b.mass * b[0]
        out[2] = p[1]

    out = np.zeros(3)
    k[1, 1](out, Point(1, 2), Body(3, 4, 0.5))
    target.assert_result("k", out, [3, 1.5, 2])
    # A namedtuple of other values, and a plain tuple, are new specialisations.
    k[1, 1](out, Point(1.5, 2.5), Body(3, 4, 0.5))
    assert len(k.signatures) == 2


def test_tuples_of_arrays_are_copied_in_and_out(target):
    @cuda.jit
    def add(arrays, scale):
        i = cuda.grid(1)
        if i < arrays[0].size:
            arrays[0][i] = (arrays[1][i] + arrays[2][1][i]) * scale[1]

    n = 50
    x0, x1, x2 = np.zeros(n), np.arange(n, dtype=np.float64), np.ones(n)
    add[1, 64]((x0, x1, (7, x2)), (0, 2.0))
    target.assert_result("add", x0, (x1 + x2) * 2.0)
    d0 = cuda.to_device(np.zeros(n))
    add[1, 64]((d0, x1, (7, x2)), (0, 2.0))
    target.assert_result("add", d0.copy_to_host(), (x1 + x2) * 2.0, launches=2)


def test_launches_reuse_the_plan_and_check_the_shape(target):
    @cuda.jit
    def k(out, t):
        out[0] = t[0] + t[1]

    out = np.zeros(1, np.int64)
    for v in range(3):
        k[1, 1](out, (v, 10))
    target.assert_result("k", out, [12], launches=3)
    assert len(k.signatures) == 1
    k[1, 1](out, (1, 2, 3))  # another length: another specialisation
    assert len(k.signatures) == 2
    with pytest.raises(TypeError, match="argument 't' of kernel 'k' is a tuple whose element 1 is 'str'"):
        k[1, 1](out, (1, "no"))


def test_homogeneous_tuples_indexed_at_run_time(target):
    table = (10, 20, 30, 40)

    @cuda.jit
    def k(out, t):
        i = cuda.grid(1)
        if i < out.shape[0]:
            local = (i, i * 2, i * 3)
            out[i, 0] = t[i % 3]
            out[i, 1] = WEIGHTS[i % 4]
            out[i, 2] = table[-1 - i % 4]
            out[i, 3] = local[i % 3]

    out = np.zeros((8, 4))
    k[1, 8](out, (1.5, 2.5, 3.5))
    i = np.arange(8)
    expected = np.stack([np.array([1.5, 2.5, 3.5])[i % 3], np.array(WEIGHTS)[i % 4],
                         np.array(table)[-1 - i % 4], np.stack([i, 2 * i, 3 * i])[i % 3, i]],
                        axis=1)
    target.assert_result("k", out, expected)


def test_in_and_len_on_tuples(target):
    @cuda.jit
    def k(out, values, t):
        i = cuda.grid(1)
        if i < values.size:
            out[i] = (values[i] in (2, 3)) + 2 * (values[i] not in t) + 4 * (len(t) == 3)

    values = np.arange(6, dtype=np.int32)
    out = np.zeros(6, np.int64)
    k[1, 8](out, values, (1.0, 4.0, 5.0))
    expected = [(v in (2, 3)) + 2 * (v not in (1, 4, 5)) + 4 for v in range(6)]
    target.assert_result("k", out, expected)


def test_device_functions_take_and_return_tuples(target):
    @cuda.jit(device=True)
    def swap_scaled(p, s):
        return p[1] * s, p[0] * s

    @cuda.jit(device=True)
    def total(t):
        acc = 0.0
        for v in t:
            acc += v
        return acc

    @cuda.jit
    def k(out, p):
        a, b = swap_scaled(p, 2)
        out[0] = a
        out[1] = b
        out[2] = total((a, b, p.x))

    out = np.zeros(3)
    k[1, 1](out, Point(1.5, 4.0))
    target.assert_result("k", out, [8.0, 3.0, 12.5])


def test_tuple_index_errors_are_located():
    @cuda.jit
    def constant_out_of_range(out, t):
        out[0] = t[3]

    with pytest.raises(TypingError, match=r"test_tuples\.py:\d+:\d+: tuple index 3 out of range for "
                                          r"UniTuple\(int64 x 2\) \(2 elements\)"):
        constant_out_of_range[1, 1](np.zeros(1), (1, 2))

    @cuda.jit
    def mixed_at_run_time(out, t, i):
        out[0] = t[i]

    with pytest.raises(TypingError, match=r"cannot index Tuple\(int64, float64\) with an index "
                                          r"computed at run time"):
        mixed_at_run_time[1, 1](np.zeros(1), (1, 2.5), 0)

    @cuda.jit
    def no_field(out, p):
        out[0] = p.z

    with pytest.raises(TypingError, match="namedtuple Point has no field 'z'"):
        no_field[1, 1](np.zeros(1), Point(1, 2))

    @cuda.jit
    def assign(out, t):
        t[0] = 1

    with pytest.raises(TypingError, match="tuples are immutable"):
        assign[1, 1](np.zeros(1), (1, 2))


def test_declared_tuple_signatures_convert_the_elements(target):
    @cuda.jit("void(float64[:], UniTuple(float64 x 2))")
    def k(out, t):
        out[0] = t[0] + t[1]

    out = np.zeros(1)
    k[1, 1](out, (1, 2))  # ints convert to the declared float64s
    target.assert_result("k", out, [3.0])
    with pytest.raises(TypeError, match="No matching definition"):
        k[1, 1](out, (1, 2, 3))


def test_tuples_compare_element_by_element(target):
    @cuda.jit
    def k(out, a, b):
        out[0] = a == b
        out[1] = a != (1, 2.0)
        out[2] = a == (1, 2, 3)
        out[3] = cuda.grid(2) == (0, 0)

    out = np.zeros(4, np.bool_)
    k[1, 1](out, (1, 2), (1, 2.0))
    target.assert_result("k", out, [True, False, False, True])
