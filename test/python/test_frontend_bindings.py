"""The binding analysis: a local variable read where no path to the read has
assigned it is a TypingError naming the variable at its file:line:col (Python
would raise UnboundLocalError), found before typing. A local assigned on some
paths only compiles, as Numba compiles it (loops with a known trip count,
if/elif chains that cover every case), and reads zero on the other paths:
never an undefined value; an array or record, whose zero would be a null
pointer, is checked where it is read and raises UnboundLocalError."""

import os

import numpy as np
import pytest

from tidal import cuda, int32
from tidal.errors import TypingError
from source_positions import position_of

THIS_FILE = os.path.abspath(__file__)


def typing_error(kernel, *args):
    with pytest.raises(TypingError) as info:
        kernel[1, 32](*args)
    return info.value


def test_read_before_assignment_on_one_branch():
    # /work/shared/bugs/undefined_variable_branch_segv.py: a SIGSEGV before.
    @cuda.jit
    def k(out):
        s = cuda.shared.array(16, int32)
        t = cuda.threadIdx.x
        if t < 16:
            s[t] = 0
            if n == 5:
                out[0] = 7
        n = cuda.gridsize(1)
        cuda.syncthreads()
        if t < 16:
            out[t] = s[t]

    err = typing_error(k, np.zeros(16, np.int32))
    assert os.path.abspath(err.file) == THIS_FILE
    assert (err.line, err.column) == position_of(k.py_func, "n == 5")
    assert "local variable 'n' is read before it is assigned" in str(err)


def test_read_before_assignment_in_debug_assert():
    @cuda.jit(debug=True)
    def k(out):
        assert i == i
        i = cuda.grid(1)
        out[i] = 1

    err = typing_error(k, np.zeros(32, np.int32))
    assert (err.line, err.column) == position_of(k.py_func, "i == i")
    assert "local variable 'i'" in str(err)


def test_assigned_on_one_branch_reads_zero_on_the_other():
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            if x[i] > 5:
                s = 1.0 / x[i]
            out[i] = s

    x = np.array([10.0, 1.0, 8.0, -3.0])
    out = np.full(4, 99.0)
    k[1, 32](x, out)
    assert out.tolist() == [0.1, 0.0, 0.125, 0.0]


def test_assigned_in_a_loop_body_is_read_after_the_loop():
    # Numba's test_lang.test_issue_872 reads a variable assigned in a loop.
    @cuda.jit
    def k(out):
        for i in range(out.size):
            last = i
        out[0] = last

    out = np.zeros(4, np.int64)
    k[1, 1](out)
    assert out[0] == 3


def test_assigned_later_in_the_loop_body_is_read_on_the_next_run():
    @cuda.jit
    def k(out):
        for i in range(out.size):
            if i > 0:
                out[i] = previous * 10
            previous = i + 1

    out = np.zeros(4, np.int64)
    k[1, 1](out)
    assert out.tolist() == [0, 10, 20, 30]


def test_if_elif_chain_assigning_every_case_compiles():
    # Numba's test_warp_ops.test_independent_scheduling has this shape.
    @cuda.jit
    def k(out):
        i = cuda.threadIdx.x
        if i % 3 == 0:
            v = 10
        elif i % 3 == 1:
            v = 20
        elif i % 3 == 2:
            v = 30
        out[i] = v

    out = np.zeros(6, np.int64)
    k[1, 6](out)
    assert out.tolist() == [10, 20, 30, 10, 20, 30]


def test_read_in_a_loop_before_any_assignment_is_rejected():
    @cuda.jit
    def k(out):
        for i in range(out.size):
            out[i] = later
        later = 1

    err = typing_error(k, np.zeros(4, np.int64))
    assert err.line == position_of(k.py_func, "out[i] = later")[0]
    assert "local variable 'later'" in str(err)


def test_augmented_assignment_reads_first():
    @cuda.jit
    def k(out):
        total += 1
        out[0] = total

    err = typing_error(k, np.zeros(1, np.int64))
    assert "local variable 'total'" in str(err)


def test_assigned_on_every_path_computes():
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            if x[i] > 0:
                sign = 1
            elif x[i] < 0:
                sign = -1
            else:
                sign = 0
            while True:
                magnitude = abs(x[i])
                break
            out[i] = sign * magnitude

    x = np.array([3, -2, 0, 5], np.int64)
    out = np.zeros(4, np.int64)
    k[1, 32](x, out)
    assert out.tolist() == [3, -2, 0, 5]


def test_return_ends_a_path():
    @cuda.jit(device=True)
    def first_positive(x):
        for i in range(x.size):
            if x[i] > 0:
                return x[i]
            elif x[i] == 0:
                continue
            else:
                missing = -1
        return missing

    @cuda.jit
    def k(x, out):
        out[0] = first_positive(x)

    # 'missing' is assigned on the else path of the loop: it compiles, as in
    # Numba; the return paths end where they are.
    out = np.zeros(1, np.int64)
    k[1, 1](np.array([-1, 0, 4, 7], np.int64), out)
    assert out[0] == 4
    k[1, 1](np.array([0, -2, 0], np.int64), out)
    assert out[0] == -1


def test_a_break_path_joins_after_while_true():
    @cuda.jit(device=True)
    def first_positive(x):
        found = -1
        i = 0
        while True:
            if i == x.size:
                result = found
                break
            if x[i] > 0:
                result = x[i]
                break
            i += 1
        return result

    @cuda.jit
    def k(x, out):
        out[0] = first_positive(x)

    out = np.zeros(1, np.int64)
    k[1, 1](np.array([-1, 0, 4, 7], np.int64), out)
    assert out[0] == 4
    k[1, 1](np.array([-1, 0], np.int64), out)
    assert out[0] == -1


def test_an_array_that_may_be_unbound_is_checked_where_it_is_read(target):
    # Frontend fuzzer, seed 19, input 9629: an array assigned later in a loop
    # body was read as a null pointer on the first run, and LLVM made the
    # whole kernel unreachable ("launch of a null block function"). Such a
    # read checks that the array was assigned: it raises UnboundLocalError
    # with debug=True and ends the thread without, as any raise does.
    @cuda.jit
    def assigned_first(out):
        i = cuda.grid(1)
        for j in range(2):
            if j == 1:
                out[i] = tmp[0]
            tmp = cuda.local.array(1, np.float64)
            tmp[0] = i + 0.5

    out = np.zeros(4)
    assigned_first[1, 4](out)
    target.assert_result("assigned_first", out, [0.5, 1.5, 2.5, 3.5])

    def read_first(out):
        i = cuda.grid(1)
        for j in range(2):
            tmp[0] = 1.0
            tmp = cuda.local.array(1, np.float64)
        out[i] = 2.0

    out = np.full(4, 7.0)
    cuda.jit(read_first)[1, 4](out)
    target.assert_result("read_first", out, [7.0, 7.0, 7.0, 7.0])
    checked = cuda.jit(debug=True)(read_first)
    if target.computes:
        with pytest.raises(UnboundLocalError) as info:
            checked[1, 4](out)
        line, _ = position_of(read_first, "tmp[0] = 1.0")
        assert str(info.value) == (
            f"In function 'read_first', file {THIS_FILE}, line {line}, tid=[0, 0, 0] "
            "ctaid=[0, 0, 0]: local variable 'tmp' referenced before assignment")
