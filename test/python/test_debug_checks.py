"""The gaps of debug=True found by fuzzing (issue 16; the reproducers are
in shared/bugs/debug_*.py): an integer index that selects a sub-array is
bounds-checked, dynamic shared arrays are checked against the launch's
dynamic shared size (not reported out of bounds at every access), and
kernels that call device functions compile with debug information."""

import numpy as np
import pytest

from tidal import cuda, float32
from targets import on_targets


# --- an integer index that selects a sub-array ------------------------------------------


@on_targets("cpu")
@pytest.mark.parametrize("index", [100, 8, -9, 2 ** 40])
def test_index_selecting_a_row_is_bounds_checked(target, index):
    @cuda.jit(debug=True)
    def first_of_row(a, out, i):
        row = a[i]  # a has 8 rows
        out[0] = row[0]

    a = np.arange(40.0).reshape(8, 5)
    with pytest.raises(IndexError) as info:
        first_of_row[1, 1](a, np.zeros(1), index)
    message = str(info.value)
    assert message.startswith(f"index {index} is out of bounds for axis 0 with size 8 in kernel "
                              "'first_of_row' at ")
    assert "test_debug_checks.py:" in message and "array 'a'" in message


@on_targets("cpu")
def test_index_selecting_a_column_of_a_view_is_bounds_checked(target):
    @cuda.jit(debug=True)
    def middle(a, out, j):
        out[0] = a[1:, j][0]  # a has 5 columns

    with pytest.raises(IndexError) as info:
        middle[1, 1](np.arange(40.0).reshape(8, 5), np.zeros(1), 5)
    assert str(info.value).startswith("index 5 is out of bounds for axis 1 with size 5 in kernel "
                                      "'middle' at ")


def test_rows_within_bounds_read_right_in_debug_mode(target):
    @cuda.jit(debug=True)
    def row_sums(a, out):
        i = cuda.grid(1)
        if i < out.size:
            row = a[i]
            last = a[-1 - i]  # negative indices wrap, as in Python
            out[i] = row[0] + row[4] + last[0]

    a = np.arange(40.0).reshape(8, 5)
    out = np.zeros(8)
    row_sums[1, 8](a, out)
    target.assert_result("row_sums", out, a[:, 0] + a[:, 4] + a[::-1, 0])


# --- dynamic shared arrays ---------------------------------------------------------------


def test_dynamic_shared_array_works_in_debug_mode(target):
    @cuda.jit(debug=True)
    def through_shared(out):
        s = cuda.shared.array(0, float32)
        t = cuda.threadIdx.x
        s[t] = t
        cuda.syncthreads()
        out[t] = s[3 - t]

    out = np.zeros(4, np.float32)
    through_shared[1, 4, 0, 16](out)  # 16 bytes: 4 float32 for 4 threads
    target.assert_result("through_shared", out, np.array([3, 2, 1, 0], np.float32))


def test_dynamic_shared_array_passed_to_a_device_function_in_debug_mode(target):
    @cuda.jit(device=True, debug=True)
    def store(s, t):
        s[t] = 2 * t

    @cuda.jit(debug=True)
    def through_shared(out):
        s = cuda.shared.array(0, float32)
        t = cuda.threadIdx.x
        store(s, t)
        cuda.syncthreads()
        out[t] = s[t]

    out = np.zeros(8, np.float32)
    through_shared[1, 8, 0, 32](out)
    target.assert_result("through_shared", out, 2 * np.arange(8, dtype=np.float32))


@on_targets("cpu")
def test_dynamic_shared_array_past_the_launch_size_is_reported(target):
    @cuda.jit(debug=True)
    def past_the_end(out):
        s = cuda.shared.array(0, float32)
        s[4] = 1.0  # 16 bytes: 4 float32
        out[0] = s[0]

    with pytest.raises(IndexError) as info:
        past_the_end[1, 1, 0, 16](np.zeros(1, np.float32))
    assert str(info.value).startswith("index 4 is out of bounds for axis 0 with size 4 in kernel "
                                      "'past_the_end' at ")


@on_targets("cpu")
def test_empty_array_is_still_checked_in_debug_mode(target):
    # An extent of 0 alone does not mean a dynamic shared array.
    @cuda.jit(debug=True)
    def first(a, out):
        out[0] = a[0]

    with pytest.raises(IndexError) as info:
        first[1, 1](np.zeros(0), np.zeros(1))
    assert str(info.value).startswith("index 0 is out of bounds for axis 0 with size 0 in kernel "
                                      "'first' at ")


# --- device functions --------------------------------------------------------------------


@pytest.mark.parametrize("option", ["debug", "lineinfo"])
def test_kernel_calling_device_functions_compiles_with_debug_info(target, option):
    @cuda.jit(device=True)
    def plus_one(v):
        return v + 1.0

    @cuda.jit(device=True)
    def plus_two(v):
        return plus_one(plus_one(v))

    @cuda.jit(**{option: True})
    def add_three(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = plus_one(plus_two(x[i]))

    x = np.arange(4.0)
    add_three[1, 4](x)
    target.assert_result("add_three", x, np.arange(4.0) + 3.0)


@on_targets("cpu")
def test_bounds_error_in_a_device_function_names_it(target):
    @cuda.jit(device=True)
    def get(a, i):
        return a[i]

    @cuda.jit(debug=True)
    def k(a, out):
        out[0] = get(a, 7)

    with pytest.raises(IndexError) as info:
        k[1, 1](np.zeros(4), np.zeros(1))
    message = str(info.value)
    assert message.startswith("index 7 is out of bounds for axis 0 with size 4 in device "
                              "function 'get' at ")
