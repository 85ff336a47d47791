"""Compile-time values passed to device functions: intrinsics, device
functions, dtypes and integer literals (and tuples of them). Each distinct
value gives its own specialisation of the callee, inside which the parameter
is that value: callable, usable as a dtype, a constant where one is needed."""

import numpy as np
import pytest

from tidal import cuda, float32, int32, uint32, uint64
from tidal.errors import TypingError


@cuda.jit(device=True)
def apply_atomic(op, array, index, value):
    return op(array, index, value)


@cuda.jit(device=True)
def double(x):
    return 2 * x


@cuda.jit(device=True)
def negate(x):
    return -x


@cuda.jit(device=True)
def apply(function, x):
    return function(x)


@cuda.jit(device=True)
def shared_staging(source, out, count, dtype):
    # count and dtype are compile-time values here: the array's size and type.
    staged = cuda.shared.array(count, dtype)
    i = cuda.threadIdx.x
    if i < count:
        staged[i] = source[i]
    cuda.syncthreads()
    if i < count:
        out[i] = staged[count - 1 - i]


@cuda.jit(device=True)
def local_sum(source, shape, dtype):
    scratch = cuda.local.array(shape, dtype)
    total = 0
    for r in range(shape[0]):
        for c in range(shape[1]):
            scratch[r, c] = source[r * shape[1] + c]
    for r in range(shape[0]):
        for c in range(shape[1]):
            total += scratch[r, c]
    return total


def test_an_intrinsic_passed_to_a_device_function(target):
    @cuda.jit
    def k(counts, maxima, values):
        i = cuda.grid(1)
        if i < values.size:
            apply_atomic(cuda.atomic.add, counts, 0, 1)
            apply_atomic(cuda.atomic.max, maxima, 0, values[i])

    values = np.arange(40, dtype=np.int32) % 17
    counts = np.zeros(1, np.int32)
    maxima = np.zeros(1, np.int32)
    k[1, 64](counts, maxima, values)
    target.assert_result("k", counts, [40])
    target.assert_result("k", maxima, [16])


def test_device_functions_passed_to_a_device_function_get_their_own_code(target):
    @cuda.jit
    def k(x, doubled, negated):
        i = cuda.grid(1)
        if i < x.size:
            doubled[i] = apply(double, x[i])
            negated[i] = apply(negate, x[i])

    x = np.linspace(-2, 2, 20)
    doubled = np.zeros(20)
    negated = np.zeros(20)
    k[1, 32](x, doubled, negated)
    target.assert_result("k", doubled, 2 * x)
    target.assert_result("k", negated, -x)
    # Two call sites with different functions: two specialisations of apply.
    markers = k.inspect_markers(k.signatures[0])
    assert "define internal double @apply.xdouble.f64(" in markers
    assert "define internal double @apply.xnegate.f64(" in markers


def test_a_dtype_and_a_literal_size_for_a_shared_array(target):
    @cuda.jit
    def k(ints, ints_out, floats, floats_out):
        shared_staging(ints, ints_out, 16, uint32)
        shared_staging(floats, floats_out, 8, float32)

    ints = np.arange(16, dtype=np.uint32)
    ints_out = np.zeros(16, np.uint32)
    floats = np.arange(8, dtype=np.float32) / 4
    floats_out = np.zeros(8, np.float32)
    k[1, 16](ints, ints_out, floats, floats_out)
    target.assert_result("k", ints_out, ints[::-1])
    target.assert_result("k", floats_out, floats[::-1])


def test_a_tuple_shape_for_a_local_array(target):
    @cuda.jit
    def k(source, out):
        out[0] = local_sum(source, (2, 3), int32)
        out[1] = local_sum(source, (3, 4), int32)

    source = np.arange(12, dtype=np.int32)
    out = np.zeros(2, np.int64)
    k[1, 1](source, out)
    target.assert_result("k", out, [source[:6].sum(), source.sum()])


def test_a_module_global_constant_is_a_literal_too(target):
    @cuda.jit
    def k(source, out):
        shared_staging(source, out, SIZE, int32)

    source = np.arange(SIZE, dtype=np.int32)
    out = np.zeros(SIZE, np.int32)
    k[1, SIZE](source, out)
    target.assert_result("k", out, source[::-1])


SIZE = 12


def test_a_run_time_size_is_an_error_inside_the_callee():
    @cuda.jit
    def k(source, out, n):
        shared_staging(source, out, n, int32)

    with pytest.raises(TypingError) as info:
        k[1, 1](np.zeros(4, np.int32), np.zeros(4, np.int32), 4)
    message = str(info.value)
    # Located at the use inside the callee, and naming the call site.
    assert "cuda.shared.array(count, dtype)" in message
    assert "in device function 'shared_staging' called at" in message
    assert "test_device_function_values.py" in message


def test_calling_a_parameter_that_is_not_callable_is_an_error():
    @cuda.jit
    def k(out):
        out[0] = apply(3, 1.0)

    with pytest.raises(TypingError, match="not callable") as info:
        k[1, 1](np.zeros(1))
    assert "return function(x)" in str(info.value)
    assert "in device function 'apply' called at" in str(info.value)


def test_a_string_cannot_be_passed_to_a_device_function():
    @cuda.jit
    def k(out):
        out[0] = apply("double", 1.0)

    with pytest.raises(TypingError, match="cannot pass a string to device function 'apply'"):
        k[1, 1](np.zeros(1))


def test_a_parameter_the_callee_reassigns_is_not_a_constant():
    # A loop's n + 1 reads the parameter and its own earlier values: one
    # variable, so the parameter is assigned. (n = n + 1 alone would make a
    # new version of n, a local bound once, as m = n + 1 is.)
    @cuda.jit(device=True)
    def grows(n):
        for _ in range(2):
            n = n + 1
        scratch = cuda.local.array(n, int32)
        scratch[0] = 1
        return scratch[0]

    @cuda.jit
    def k(out):
        out[0] = grows(3)

    with pytest.raises(TypingError) as info:
        k[1, 1](np.zeros(1, np.int32))
    assert "cuda.local.array(n, int32)" in str(info.value)


@cuda.jit(device=True)
def shifted(array, index, wrap):
    if wrap:
        # Only valid for wrap=True calls: index is a uint64 here, and
        # uint64 - int64 is float64, not an index.
        index = index - array.shape[0]
    return array[index]


def test_if_on_a_literal_flag_types_only_the_branch_taken(target):
    @cuda.jit
    def k(values, out):
        out[0] = shifted(values, 1, True)
        out[1] = shifted(values, uint64(2), False)

    values = np.arange(5, dtype=np.int64) * 10
    out = np.zeros(2, np.int64)
    k[1, 1](values, out)
    target.assert_result("k", out, [values[-4], values[2]])


def test_a_run_time_flag_types_both_branches():
    @cuda.jit
    def k(values, out, wrap):
        out[0] = shifted(values, uint64(2), wrap)

    with pytest.raises(TypingError, match="with float64") as info:
        k[1, 1](np.zeros(4, np.int64), np.zeros(1, np.int64), False)
    assert "in device function 'shifted' called at" in str(info.value)
