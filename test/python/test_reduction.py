"""cuda.Reduce / cuda.reduce on every target: sums around the block sizes,
every numeric dtype, init, size, res on the device, empty arrays, lambdas
and defs (closures too), host and device arrays, streams; two launches of
the generated kernel at most; Numba's errors for bad input."""

import numpy as np
import pytest

from tidal import cuda

sum_reduce = cuda.Reduce(lambda a, b: a + b)


@cuda.reduce
def max_reduce(a, b):
    return max(a, b)


def launches(count):
    """Launches of the reduction kernel for an array of `count` elements:
    one block's worth (256 threads, 16 elements each) needs one, more a
    second (the final pass)."""
    return 1 if count <= 256 * 16 else 2


@pytest.mark.parametrize("count", [1, 15, 32, 33, 127, 128, 129, 255, 256, 257, 1023,
                                   1025, 4096, 4097, 65536, 65537, 1049600, 1049728 + 4096 * 256])
def test_sums_around_the_block_sizes(target, count):
    values = np.arange(count, dtype=np.float64) + 1
    got = sum_reduce(values)
    if target.ran("reduce_blocks", launches=launches(count)):
        assert got == values.sum() and isinstance(got, np.float64)


@pytest.mark.parametrize("count", [1, 33, 256, 4097, 65537, 1049600 + 3])
def test_the_gpus_grid_strided_kernel_on_the_cpu_target(monkeypatch, count):
    # The cpu target gives each thread consecutive elements; the cuda
    # target's grid stride (chunk 0) is checked here on the cpu target too.
    from tidal.cuda import reduction
    monkeypatch.setattr(reduction, "on_cuda", lambda: True)
    assert reduction._grid(count)[1] == 0
    values = np.arange(count, dtype=np.int64) * 3 + 1
    assert sum_reduce(values, init=2) == values.sum() + 2


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint32, np.uint64, np.float16,
                                   np.float32, np.float64, np.complex64, np.complex128])
def test_every_numeric_dtype(target, dtype, rng):
    values = rng.integers(0, 100, 3000).astype(dtype)
    got = sum_reduce(values, init=5)
    if target.ran("reduce_blocks", launches=1):
        assert got.dtype == np.dtype(dtype)
        # Integers wrap as the dtype does; the floats' values are whole
        # numbers that these sums keep exact (float16: up to 2048).
        expected = (values.sum(dtype=dtype) + dtype(5)) if dtype != np.float16 else None
        if dtype == np.float16:
            small = values[:40]
            assert sum_reduce(small) == small.astype(np.float64).sum()
        else:
            assert got == expected
    if not np.issubdtype(dtype, np.complexfloating):
        largest = max_reduce(values)
        if target.ran("reduce_blocks", launches=2):
            assert largest == values.max()


def test_init_prod_max_and_closures(target):
    values = np.arange(64, dtype=np.float64) + 1
    prod_reduce = cuda.reduce(lambda a, b: a * b)
    scale = 2.0

    def scaled_max(a, b):
        return max(a, b) * scale / scale

    got_sum = sum_reduce(values[:10], init=3)
    got_prod = prod_reduce(values, init=1)
    got_max = cuda.Reduce(scaled_max)(values, init=0)
    got_lambda_closure = cuda.Reduce(lambda a, b: a + b * scale)(values[:1], init=1)
    if target.ran("reduce_blocks", launches=4):
        assert got_sum == 58.0
        np.testing.assert_allclose(got_prod, values.prod())
        assert got_max == 64.0
        assert got_lambda_closure == 1.0 + 2.0  # op(values[0], init) = 1 + 1 * 2


def test_size_res_and_device_arrays(target):
    values = np.arange(1000, dtype=np.int64)
    device_values = cuda.to_device(values)
    res = cuda.to_device(np.full(1, -1, np.int64))
    assert sum_reduce(device_values, res=res) is None
    partial = sum_reduce(device_values, size=300)
    clamped = sum_reduce(values, size=5000)  # as a slice: the whole array
    if target.ran("reduce_blocks", launches=3):
        assert res.copy_to_host()[0] == values.sum()
        assert partial == values[:300].sum()
        assert clamped == values.sum()


def test_empty_arrays_give_init(target):
    assert sum_reduce(np.zeros(0)) == 0.0
    got = sum_reduce(cuda.to_device(np.zeros(0, np.int32)), init=7)
    assert got == 7 and got.dtype == np.int32
    assert sum_reduce(np.arange(10.0), size=0, init=2.5) == 2.5
    assert target.driver_calls("cuLaunchKernel") in (None, [])


def test_streams(target):
    stream = cuda.stream()
    values = np.arange(5000, dtype=np.float32)
    got = sum_reduce(values, stream=stream)
    stream.synchronize()
    if target.ran("reduce_blocks", launches=2):
        assert got == values.sum(dtype=np.float64)


def test_bad_input(target):
    with pytest.raises(TypeError, match="only support 1D array"):
        sum_reduce(np.zeros((4, 4)))
    with pytest.raises(TypeError, match="only support 1D array"):
        sum_reduce(cuda.to_device(np.zeros((4, 4))))
    with pytest.raises(TypeError, match="size must be an integer or None, got 2.5"):
        sum_reduce(np.zeros(4), size=2.5)
    with pytest.raises(TypeError, match="must take two arguments, it takes 3"):
        cuda.Reduce(lambda a, b, c: a)(np.zeros(4))
    with pytest.raises(TypeError, match="Python function of two arguments"):
        cuda.Reduce(42)(np.zeros(4))


def test_every_block_of_the_cpu_grid_holds_elements(monkeypatch):
    # A block whose threads hold no element would write a partial it never
    # computed: the cpu target's chunks are rounded up, so blocks are counted
    # from the threads that hold elements.
    from tidal.cuda import reduction
    monkeypatch.setattr(reduction, "on_cuda", lambda: False)
    for count in list(range(1, 20000, 7)) + list(range(10**6, 2 * 10**7, 99991)):
        blocks, chunk = reduction._grid(count)
        holders = -(-count // chunk)
        assert (blocks - 1) * 256 < holders <= blocks * 256 and blocks <= 256, count


def test_a_bad_function_is_a_located_typing_error():
    from tidal.errors import TypingError
    line = test_a_bad_function_is_a_located_typing_error.__code__.co_firstlineno + 5
    with pytest.raises(TypingError, match=rf"test_reduction.py:{line}>:{line}:\d+: unknown "
                                          r"attribute 'foo' of float64"):
        cuda.Reduce(lambda a, b: a.foo + b)(np.arange(10.0))

    def no_attribute(a, b):
        return a.bar

    with pytest.raises(TypingError, match=rf"test_reduction.py:{line + 3}:\d+: unknown "
                                          r"attribute 'bar' of float64"):
        cuda.Reduce(no_attribute)(np.arange(10.0))
