"""Pointer types in signatures (language.md, "Pointers"): numba-cuda's
CPointer(T) and voidptr for kernels, launched with an address (an integer:
a device array's __cuda_array_interface__ pointer), indexed p[i]; cffi's
ffi.from_buffer(a) in kernels, passed to a foreign function declared with
a CPointer parameter; cuda.carray/farray, arrays over a pointer. The cpu
target's addresses are host addresses, the cuda target's (over the mock
driver) device pointers: the same code reads both from the device array."""

import numpy as np
import pytest

from tidal import cuda, types
from tidal.errors import TypingError
from source_positions import position_of

cffi = pytest.importorskip("cffi", reason="python3-cffi is a test dependency (utils/setup.sh)")


def address(device_array):
    return device_array.__cuda_array_interface__["data"][0]


def test_numba_cuda_cpointer_example(target):
    # numba-cuda's doc example (test_cpointer.py): a uint8 pointer and a length.
    sig = types.void(types.CPointer(types.uint8), types.uint32)

    @cuda.jit(sig)
    def add_one(x, n):
        i = cuda.grid(1)
        if i < n:
            x[i] += 1

    x = cuda.to_device(np.arange(10, dtype=np.uint8))
    add_one[1, 32](address(x), len(x))
    target.assert_result("add_one", x.copy_to_host(), np.arange(1, 11, dtype=np.uint8))


def test_pointer_arguments_of_a_dispatcher(target):
    # numba-cuda's test_dispatcher_cpointer_arguments, in text and objects.
    @cuda.jit("void(CPointer(int32), int32, int32*, CPointer(int32), uint32)")
    def axpy(r, a, x, y, n):
        i = cuda.grid(1)
        if i < n:
            r[i] = a * x[i] + y[i]

    hx = np.arange(10, dtype=np.int32)
    hy = np.arange(10, dtype=np.int32) * 2
    dx, dy = cuda.to_device(hx), cuda.to_device(hy)
    dr = cuda.device_array_like(dx)
    axpy[1, 32](address(dr), 5, address(dx), address(dy), 10)
    target.assert_result("axpy", dr.copy_to_host(), 5 * hx + hy)
    assert axpy.signatures == ["(int32*, int32, int32*, int32*, uint32)"]


def test_voidptr_is_passed_but_not_indexed():
    with pytest.raises(TypingError, match=r"cannot index a void\* \(voidptr\)"):
        @cuda.jit(types.void(types.voidptr, types.int32[::1]))
        def k(p, out):
            out[0] = p[0]


def test_ffi_from_buffer_to_a_foreign_function(target):
    # numba-cuda's test_ffi.py::test_ex_from_buffer: the pointer of an array
    # passed to a CUDA C++ function declared with a CPointer parameter.
    source = """
    extern "C" __device__ float sum_reduce(float *array, int n) {
      float total = 0.0f;
      for (int i = 0; i < n; ++i) total += array[i];
      return total;
    }
    """
    sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)",
                                     link=[cuda.CUSource(source)], abi="c")
    ffi = cffi.FFI()

    @cuda.jit
    def reduction_caller(result, array):
        array_ptr = ffi.from_buffer(array)
        result[()] = sum_reduce(array_ptr, len(array))

    x = np.arange(10).astype(np.float32)
    r = np.ndarray((), dtype=np.float32)
    reduction_caller[1, 1](r, x)
    target.assert_result("reduction_caller", r[()], np.float32(45.0))


def test_pointer_indexing_in_a_kernel_from_ffi(target):
    ffi = cffi.FFI()

    @cuda.jit
    def k(a, out):
        p = ffi.from_buffer(a[2:])
        p[1] = 7.5              # a[3]
        p[0] += 1.0             # a[2]
        out[0] = p[2]           # a[4]

    a = np.arange(6.0)
    out = np.zeros(1)
    k[1, 1](a, out)
    target.assert_result("k", a, np.array([0.0, 1.0, 3.0, 7.5, 4.0, 5.0]))
    target.assert_result("k", out, np.array([4.0]))


def test_ffi_from_buffer_needs_a_contiguous_array():
    ffi = cffi.FFI()

    @cuda.jit
    def k(a, out):
        p = ffi.from_buffer(a[::2])
        out[0] = p[0]

    with pytest.raises(TypingError, match="ffi.from_buffer\\(\\) needs a C-contiguous array"):
        k[1, 1](np.zeros(6), np.zeros(1))


def test_pointer_type_text():
    assert str(types.CPointer(types.uint8)) == "uint8*"
    assert str(types.voidptr) == "void*"
    assert types.void(types.CPointer(types.float32)).args[0] == types.CPointer(types.float32)


@cuda.jit(types.float64(types.CPointer(types.float64), types.int32), device=True)
def pointer_sum(p, n):
    total = 0.0
    for i in range(n):
        total += p[i]
    return total


@cuda.jit(device=True)
def second(p):
    return p[1]


def test_pointers_to_device_functions(target):
    ffi = cffi.FFI()

    @cuda.jit
    def k(a, out):
        p = ffi.from_buffer(a)
        out[0] = pointer_sum(p, 3)   # a declared CPointer parameter
        out[1] = second(p)           # specialised on the pointer's type

    a = np.array([1.0, 2.0, 4.0, 8.0])
    out = np.zeros(2)
    k[1, 1](a, out)
    target.assert_result("k", out, np.array([7.0, 2.0]))
    assert "@second.pf64(ptr" in k.inspect_markers(k.signatures[0])


def test_cffi_and_ctypes_pointers_as_launch_arguments(target):
    # An ffi.from_buffer object (and a ctypes c_void_p) of managed memory,
    # whose host address is its device address, for a CPointer parameter.
    import ctypes
    ffi = cffi.FFI()

    @cuda.jit("void(CPointer(int32), int32, int32)")
    def fill(p, n, value):
        i = cuda.grid(1)
        if i < n:
            p[i] = value + i

    a = cuda.managed_array(8, dtype=np.int32)
    a[:] = 0
    fill[1, 8](ffi.from_buffer(a), 4, 10)
    cuda.synchronize()
    target.assert_result("fill", np.asarray(a)[:5], np.array([10, 11, 12, 13, 0]))
    fill[1, 8](ctypes.c_void_p(a.ctypes.data + 4 * 4), 4, 20)
    cuda.synchronize()
    target.assert_result("fill", np.asarray(a), np.array([10, 11, 12, 13, 20, 21, 22, 23]),
                         launches=2)


def test_carray_and_farray_over_a_pointer_parameter(target):
    # numba-cuda's test_array.py::test_carray / test_farray: a 1-element view
    # of a float32 pointer, updated in place; imported from where numba-cuda
    # has them.
    from tidal.cuda.np.numpy_support import carray, farray
    assert (carray, farray) == (cuda.carray, cuda.farray)
    for launches, cfarray in enumerate((carray, farray), start=1):
        @cuda.jit(types.void(types.CPointer(types.float32)))
        def add(a_ptr):
            a = cfarray(a_ptr, (1,), dtype=cuda.float32)
            a[0] += 1.5

        a = cuda.to_device(np.array([0.25], dtype=np.float32))
        add[1, 1](address(a))
        target.assert_result("add", a.copy_to_host(), np.array([1.75], np.float32),
                             launches=launches)


def test_carray_and_farray_shapes_and_orders(target):
    # A runtime 2-D shape over 6 elements: carray reads them in C order,
    # farray in Fortran order (the first index moves fastest); an integer
    # shape is 1-D; a voidptr takes its dtype from the argument.
    @cuda.jit("void(CPointer(int64), int64, int64, voidptr, int64[:, ::1])")
    def views(p, rows, columns, raw, out):
        c = cuda.carray(p, (rows, columns))
        f = cuda.farray(p, (rows, columns))
        flat = cuda.carray(raw, rows * columns, np.int64)
        for i in range(rows):
            for j in range(columns):
                out[i, j] = c[i, j] * 100 + f[i, j] * 10 + flat[flat.size - 1 - (i * columns + j)]

    data = cuda.to_device(np.arange(6, dtype=np.int64))
    out = cuda.device_array((2, 3), np.int64)
    views[1, 1](address(data), 2, 3, address(data), out)
    c = np.arange(6).reshape(2, 3)
    f = np.arange(6).reshape(3, 2).T
    target.assert_result("views", out.copy_to_host(), c * 100 + f * 10 + c[::-1, ::-1])


def test_carray_errors():
    def mismatched_dtype(p):
        a = cuda.carray(p, 4, dtype=np.float64)
        a[0] = 1

    with pytest.raises(TypingError, match=r"cuda\.carray\(\): mismatching dtype 'float64' for "
                                          r"pointer type 'float32\*'"):
        cuda.jit("void(CPointer(float32))")(mismatched_dtype)

    def void_without_dtype(p):
        a = cuda.farray(p, 4)
        a[0] = 1

    with pytest.raises(TypingError, match=r"cuda\.farray\(\): explicit dtype required for void\* "
                                          r"argument"):
        cuda.jit("void(voidptr)")(void_without_dtype)

    def not_a_pointer(a):
        b = cuda.carray(a, 4)
        b[0] = 1

    with pytest.raises(TypingError, match=r"pointer argument expected .*got array\(float32") as info:
        cuda.jit("void(float32[::1])")(not_a_pointer)
    line, column = position_of(not_a_pointer, "carray(a, 4)")
    assert (info.value.line, info.value.column) == (line, column + len("carray("))

    def bad_shape(p):
        b = cuda.carray(p, 4.0)
        b[0] = 1

    with pytest.raises(TypingError, match=r"cuda\.carray\(\): invalid shape 'float64'"):
        cuda.jit("void(CPointer(float32))")(bad_shape)
