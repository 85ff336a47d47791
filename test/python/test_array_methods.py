"""Array attributes and methods in kernels (a.dtype, a.itemsize, a.nbytes,
a.T, a.reshape(...), a.item()), scalar methods (i.bit_count()),
math.nextafter, and print() of tuples, dim3 objects and booleans, on every
target, as numba-cuda gives them; the located errors of what stays refused."""

import math

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import TypingError, UnsupportedError

from mock_driver import play_raise
from source_positions import position_of


def test_dtype_makes_local_arrays_and_casts(target):
    @cuda.jit
    def k(a, out):
        tmp = cuda.local.array(3, a.dtype)
        for i in range(3):
            tmp[i] = a[i] * 2
        out[0] = tmp[0] + tmp[1] + tmp[2]
        out[1] = a.dtype.type(7) / 2        # int32(7) / 2: true division
        out[2] = a.itemsize
        out[3] = a.nbytes

    a = np.array([1, 2, 3, 4], np.int32)
    out = np.zeros(4)
    k[1, 1](a, out)
    target.assert_result("k", out, np.array([12.0, 3.5, 4.0, 16.0]))


def test_dtype_of_a_float32_array_keeps_the_local_array_float32(target):
    @cuda.jit
    def k(x, out):
        tmp = cuda.local.array(1, x.dtype)
        tmp[0] = 1.0 / 3.0                   # rounded to float32 on the store
        out[0] = tmp[0]

    out = np.zeros(1)
    k[1, 1](np.zeros(2, np.float32), out)
    target.assert_result("k", out, np.array([np.float32(1.0 / 3.0)], np.float64))


def test_transpose_is_a_view_with_reversed_axes(target):
    @cuda.jit
    def k(a, out, shape):
        t = a.T
        for i in range(t.shape[0]):
            for j in range(t.shape[1]):
                out[i, j] = t[i, j]
        t[0, 1] = -1.0                        # writes a[1, 0]
        shape[0], shape[1] = t.shape
        shape[2], shape[3] = t.strides

    a = np.arange(6.0).reshape(2, 3)
    out = np.zeros((3, 2))
    shape = np.zeros(4, np.int64)
    want_a = a.copy()
    want_a[1, 0] = -1.0
    k[1, 1](a, out, shape)
    target.assert_result("k", out, np.arange(6.0).reshape(2, 3).T)
    target.assert_result("k", a, want_a)
    target.assert_result("k", shape, np.array([3, 2, 8, 24]))


def test_reshape_of_a_contiguous_array_is_a_view(target):
    @cuda.jit
    def k(a, out, shapes):
        b = a.reshape(3, 4)
        c = a.reshape((2, -1, 3))
        d = b.reshape(-1)
        out[0] = b[2, 1]
        out[1] = c[1, 1, 2]
        out[2] = d[11]
        b[0, 0] = 100                          # the same memory as a
        shapes[0], shapes[1], shapes[2] = c.shape
        shapes[3], shapes[4], shapes[5] = c.strides

    a = np.arange(12, dtype=np.int64)
    out = np.zeros(3, np.int64)
    shapes = np.zeros(6, np.int64)
    k[1, 1](a, out, shapes)
    target.assert_result("k", out, np.array([9, 11, 11]))
    target.assert_result("k", a, np.array([100] + list(range(1, 12))))
    target.assert_result("k", shapes, np.array([2, 2, 3, 48, 24, 8]))


def test_reshape_to_another_size_raises_value_error_in_debug_mode(target):
    @cuda.jit(debug=True, opt=False)
    def k(a, n, out):
        b = a.reshape(n, 5)
        out[0] = b[0, 0]

    out = np.zeros(1)
    k[1, 1](np.arange(10.0), 2, out)
    target.assert_result("k", out, np.array([0.0]))
    play_raise(target, k, "total size of new array must be unchanged")
    with pytest.raises(ValueError, match="total size of new array must be unchanged"):
        k[1, 1](np.arange(10.0), 3, out)


def test_reshape_of_a_non_contiguous_array_is_a_located_error():
    @cuda.jit
    def k(a, out):
        b = a[::2].reshape(2, 2)
        out[0] = b[0, 0]

    with pytest.raises(TypingError, match=r"reshape\(\) supports contiguous array only") as info:
        k[1, 1](np.zeros(8), np.zeros(1))
    assert (info.value.file, info.value.line, info.value.column) == \
        (__file__, *position_of(k.py_func, "a[::2].reshape(2, 2)"))

    @cuda.jit
    def floats(a, out):
        out[0] = a.reshape(2.0, 2)[0, 0]

    with pytest.raises(TypingError, match=r"reshape\(\) takes integers or a tuple of integers, "
                                          r"not float64"):
        floats[1, 1](np.zeros(4), np.zeros(1))


def test_item_of_a_one_element_array(target):
    @cuda.jit
    def k(a, flags, out, out_flag):
        out[0] = a[1:2, 2:3].item()
        out_flag[0] = flags[1:].item()

    a = np.arange(6.0).reshape(2, 3)
    out = np.zeros(1)
    out_flag = np.zeros(1, np.bool_)
    k[1, 1](a, np.array([False, True]), out, out_flag)
    target.assert_result("k", out, np.array([5.0]))
    target.assert_result("k", out_flag, np.array([True]))


def test_item_of_a_larger_array_raises_value_error_in_debug_mode(target):
    @cuda.jit(debug=True, opt=False)
    def k(a, out):
        out[0] = a.item()

    out = np.zeros(1)
    k[1, 1](np.array([4.5]), out)
    target.assert_result("k", out, np.array([4.5]))
    play_raise(target, k, "can only convert an array of size 1")
    with pytest.raises(ValueError, match="can only convert an array of size 1"):
        k[1, 1](np.array([1.0, 2.0]), out)


def test_bit_count_is_popc_of_the_twos_complement(target):
    # numba-cuda's int.bit_count is cuda.popc: (-1).bit_count() of an int64
    # is 64 (CPython's counts the bits of abs(-1): 1).
    @cuda.jit
    def k(a, out):
        for i in range(a.size):
            out[i] = a[i].bit_count()

    a = np.array([0, 1, 7, 255, 2**40 + 3, -1], np.int64)
    out = np.zeros(6, np.int64)
    k[1, 1](a, out)
    target.assert_result("k", out, np.array([0, 1, 3, 8, 3, 64]))

    @cuda.jit
    def of_float(x, out):
        out[0] = x[0].bit_count()

    with pytest.raises(TypingError, match=r"unknown attribute 'bit_count' of float64"):
        of_float[1, 1](np.zeros(1), np.zeros(1))


def test_math_nextafter_in_float32_and_float64(target):
    @cuda.jit
    def k(x32, x64, out32, out64):
        for i in range(x32.size):
            out32[i] = math.nextafter(x32[i], np.float32(10))
            out64[i] = math.nextafter(x64[i], -math.inf)

    values = np.array([0.0, 1.0, -1.5, 1e-30, np.inf])
    out32 = np.zeros(5, np.float32)
    out64 = np.zeros(5)
    k[1, 1](values.astype(np.float32), values, out32, out64)
    target.assert_result("k", out32, np.nextafter(values.astype(np.float32), np.float32(10)))
    target.assert_result("k", out64, np.nextafter(values, -np.inf))


def test_print_of_tuples_dim3_and_booleans_as_numba_cuda(target, capfd):
    @cuda.jit
    def k(x):
        print((1, x[0]), (True,), ((2, 3), False))
        print(cuda.threadIdx, cuda.blockDim, x[0] > 1)

    k[1, 1](np.array([2.5]))
    cuda.synchronize()
    if target.ran("k"):
        assert capfd.readouterr().out == ("(1, 2.500000) (True,) ((2, 3), False)\n"
                                          "(0, 0, 0) (1, 1, 1) True\n")


def test_print_of_an_array_is_a_located_error():
    @cuda.jit
    def k(x):
        print("x", x[0:2])

    with pytest.raises(TypingError, match=r"print\(\) in kernels prints numbers, tuples of them, "
                                          r"dim3 objects and string literals, not array") as info:
        k[1, 1](np.zeros(2))
    assert (info.value.line, info.value.column) == position_of(k.py_func, "x[0:2]")


def test_record_array_dtype_and_item_are_refused():
    rec = np.dtype([("a", np.int32), ("b", np.float32)])

    @cuda.jit
    def k(r, out):
        t = cuda.local.array(1, r.dtype)
        out[0] = 0

    with pytest.raises(UnsupportedError, match="the dtype of a record array"):
        k[1, 1](np.zeros(2, rec), np.zeros(1))


def test_ravel_of_a_contiguous_array_is_a_view(target):
    @cuda.jit
    def k(a, out):
        flat = a.ravel()
        for i in range(flat.size):
            out[i] = flat[i]
        flat[5] = -1

    a = np.arange(6.0).reshape(2, 3)
    out = np.zeros(6)
    k[1, 1](a, out)
    target.assert_result("k", out, np.arange(6.0))
    target.assert_result("k", a, np.array([[0.0, 1, 2], [3, 4, -1]]))


@pytest.mark.parametrize("call", ["a.copy()", "a.astype(np.float32)", "a.flatten()",
                                  "a[:, ::2].ravel()"])
def test_methods_that_allocate_are_located_errors(call):
    namespace = {"cuda": cuda, "np": np}
    exec(f"def k(a, out):\n    b = {call}\n    out[0] = b[0]\n", namespace)
    kernel = cuda.jit(namespace["k"])
    with pytest.raises(UnsupportedError, match=r"in a kernel would allocate a new array, which "
                                               r"kernels cannot") as info:
        kernel[1, 1](np.zeros((2, 4)), np.zeros(1))
    assert (info.value.line, info.value.column) == (2, 9)
