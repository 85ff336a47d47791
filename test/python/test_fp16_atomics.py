"""cuda.fp16.atomicAdd(address, val) (numba-cuda's binding of cuda_fp16.h's
atomicAdd(__half *, __half)) on every target: many threads add to one half
through a CPointer(float16) parameter or ffi.from_buffer(); with values that
are exact in float16 the sum is exact whatever the order, and each thread
gets back a different old value. Bad arguments are refused with their
position."""

import numpy as np
import pytest

from tidal import cuda, types
from tidal.errors import TypingError
from source_positions import position_of

cffi = pytest.importorskip("cffi", reason="python3-cffi is a test dependency (utils/setup.sh)")


def address(device_array):
    return device_array.__cuda_array_interface__["data"][0]


def test_atomic_add_through_a_pointer_parameter(target):
    # 4 blocks of 64 threads each add 0.25: every partial sum is a multiple
    # of 0.25 below 64, exact in float16, so the old values are 0, 0.25, ...
    # 63.75 in some order and the total is 64.
    @cuda.jit(types.void(types.CPointer(types.float16), types.float16[::1]))
    def accumulate(total, olds):
        i = cuda.grid(1)
        olds[i] = cuda.fp16.atomicAdd(total, np.float16(0.25))

    total = cuda.to_device(np.zeros(1, np.float16))
    olds = cuda.device_array(256, np.float16)
    accumulate[4, 64](address(total), olds)
    target.assert_result("accumulate", total.copy_to_host(), np.array([64.0], np.float16))
    if target.ran("accumulate"):
        np.testing.assert_array_equal(np.sort(olds.copy_to_host()),
                                      np.arange(256, dtype=np.float16) * np.float16(0.25))


def test_atomic_add_through_ffi_from_buffer(target):
    # Each thread adds its own element (small integers and halves, exact in
    # float16) to one of 4 slots, picked with a view's pointer; other values
    # convert to float16 as numba-cuda's float16 parameter takes them.
    ffi = cffi.FFI()

    @cuda.jit
    def bins(values, slots, counts):
        i = cuda.grid(1)
        if i < values.size:
            cuda.fp16.atomicAdd(ffi.from_buffer(slots[i % 4:]), values[i])
            cuda.fp16.atomicAdd(ffi.from_buffer(counts), i % 3)   # an int64, converted

    values = (np.arange(200) % 7 * 0.5).astype(np.float16)
    slots = np.zeros(4, np.float16)
    counts = np.zeros(1, np.float16)
    bins[2, 128](values, slots, counts)
    expected = np.array([values[k::4].astype(np.float64).sum() for k in range(4)], np.float16)
    target.assert_result("bins", slots, expected)
    target.assert_result("bins", counts, np.array([sum(i % 3 for i in range(200))], np.float16))


def test_atomic_add_rounds_each_sum_to_half(target):
    # One thread, so the order is known: 2048 + 1 is 2049, which float16
    # rounds to 2048 (to even); the old values are the rounded sums.
    @cuda.jit("void(CPointer(float16), float16[::1])")
    def rounding(total, olds):
        olds[0] = cuda.fp16.atomicAdd(total, 1.0)
        olds[1] = cuda.fp16.atomicAdd(total, 3.0)
        olds[2] = total[0]

    total = cuda.to_device(np.array([2048.0], np.float16))
    olds = cuda.device_array(3, np.float16)
    rounding[1, 1](address(total), olds)
    target.assert_result("rounding", olds.copy_to_host(),
                         np.array([2048.0, 2048.0, 2052.0], np.float16))


def test_atomic_add_needs_a_float16_pointer():
    def on_an_array(a):
        cuda.fp16.atomicAdd(a, 1.0)

    with pytest.raises(TypingError, match=r"cuda\.fp16\.atomicAdd\(\) needs a CPointer\(float16\)"
                                          r".*not array\(float16") as info:
        cuda.jit(on_an_array)[1, 1](np.zeros(1, np.float16))
    assert (info.value.line, info.value.column) == position_of(on_an_array, "a, 1.0)")

    def on_a_float32_pointer(p):
        cuda.fp16.atomicAdd(p, 1.0)

    with pytest.raises(TypingError, match=r"needs a CPointer\(float16\).*not float32\*"):
        cuda.jit("void(CPointer(float32))")(on_a_float32_pointer)

    def on_a_voidptr(p):
        cuda.fp16.atomicAdd(p, 1.0)

    with pytest.raises(TypingError, match=r"needs a CPointer\(float16\).*not void\*"):
        cuda.jit("void(voidptr)")(on_a_voidptr)


def test_atomic_add_value_must_be_real():
    def complex_value(p, z):
        cuda.fp16.atomicAdd(p, z)

    with pytest.raises(TypingError, match=r"the value of cuda\.fp16\.atomicAdd\(\) must be a real "
                                          r"number.*not complex128") as info:
        cuda.jit("void(CPointer(float16), complex128)")(complex_value)
    line, column = position_of(complex_value, "atomicAdd(p, z)")
    assert (info.value.line, info.value.column) == (line, column + len("atomicAdd(p, "))


def test_atomic_add_argument_count():
    def one_argument(p):
        cuda.fp16.atomicAdd(p)

    with pytest.raises(TypingError, match=r"missing required argument 'val'"):
        cuda.jit("void(CPointer(float16))")(one_argument)


def test_atomic_add_is_in_cuda_fp16():
    assert "atomicAdd" in dir(cuda.fp16)
