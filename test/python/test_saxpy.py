"""The foundation's kernel end to end on the cpu target: Python source ->
markers -> tidal-lower-host -> ORC JIT -> blocks on the pool."""

import numpy as np
import pytest

from tidal import cuda


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def launch_saxpy(kernel, a, x, y, threads=128):
    out = np.full_like(x, -7)
    blocks = (x.size + threads - 1) // threads
    kernel[blocks, threads](a, x, y, out)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 31, 127, 128, 129, 1000, 4097])
def test_saxpy_matches_numpy(dtype, n, rng):
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    a = dtype(1.5)
    out = launch_saxpy(saxpy, a, x, y)
    np.testing.assert_array_equal(out, a * x + y)


def test_threads_past_the_end_write_nothing(rng):
    # 10 elements, one block of 64 threads: threads 10..63 must not write.
    backing = np.full(64, -7.0, dtype=np.float32)
    out = backing[:10]
    x = rng.standard_normal(10).astype(np.float32)
    y = rng.standard_normal(10).astype(np.float32)
    saxpy[1, 64](np.float32(2.0), x, y, out)
    np.testing.assert_array_equal(out, np.float32(2.0) * x + y)
    assert np.all(backing[10:] == -7.0)


def test_two_signatures_two_specialisations(rng):
    @cuda.jit
    def axpy(a, x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + y[i]

    x32 = rng.standard_normal(300).astype(np.float32)
    y32 = rng.standard_normal(300).astype(np.float32)
    x64 = rng.standard_normal(300)
    y64 = rng.standard_normal(300)
    out32 = launch_saxpy(axpy, np.float32(3.0), x32, y32)
    out64 = launch_saxpy(axpy, 3.0, x64, y64)
    launch_saxpy(axpy, np.float32(3.0), x32, y32)  # cached: no third one
    np.testing.assert_array_equal(out32, np.float32(3.0) * x32 + y32)
    np.testing.assert_array_equal(out64, 3.0 * x64 + y64)
    assert axpy.signatures == [
        "(float32, array(float32, 1d, C), array(float32, 1d, C), array(float32, 1d, C))",
        "(float64, array(float64, 1d, C), array(float64, 1d, C), array(float64, 1d, C))",
    ]


def test_python_float_scalar_promotes_like_numba(rng):
    # a Python float is float64: a * x[i] computes in float64, stored as float32.
    x = rng.standard_normal(100).astype(np.float32)
    y = rng.standard_normal(100).astype(np.float32)
    out = launch_saxpy(saxpy, 0.1, x, y)
    expected = (0.1 * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(out, expected)


def test_integer_arrays(rng):
    @cuda.jit
    def scale(a, x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i]

    for dtype in (np.int32, np.int64):
        x = rng.integers(-1000, 1000, 777).astype(dtype)
        out = np.zeros_like(x)
        scale[7, 128](3, x, out)
        np.testing.assert_array_equal(out, 3 * x)


def test_grid_2d():
    @cuda.jit
    def fill(out):
        x, y = cuda.grid(2)
        if x < out.shape[0] and y < out.shape[1]:
            out[x, y] = x * 1000 + y

    out = np.full((37, 53), -1, dtype=np.int64)
    fill[(5, 7), (8, 8)](out)
    rows, cols = np.indices(out.shape)
    np.testing.assert_array_equal(out, rows * 1000 + cols)


def test_index_registers_and_gridsize():
    @cuda.jit
    def where(out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i, 0] = cuda.threadIdx.x
            out[i, 1] = cuda.blockIdx.x
            out[i, 2] = cuda.blockDim.x
            out[i, 3] = cuda.gridDim.x
            out[i, 4] = cuda.gridsize(1)

    out = np.zeros((100, 5), dtype=np.int32)
    where[4, 32](out)
    i = np.arange(100)
    np.testing.assert_array_equal(out[:, 0], i % 32)
    np.testing.assert_array_equal(out[:, 1], i // 32)
    assert np.all(out[:, 2] == 32) and np.all(out[:, 3] == 4) and np.all(out[:, 4] == 128)


def test_grid_3d_strided_array():
    @cuda.jit
    def fill3(out):
        x, y, z = cuda.grid(3)
        nx, ny, nz = out.shape
        if x < nx and y < ny and z < nz:
            out[x, y, z] = (x * 100 + y) * 100 + z

    base = np.zeros((12, 10, 18), dtype=np.float64)
    view = base[::2, :, ::3]  # not contiguous: layout A, byte strides
    fill3[(2, 3, 2), (4, 4, 4)](view)
    x, y, z = np.indices(view.shape)
    np.testing.assert_array_equal(view, (x * 100 + y) * 100 + z)
    assert np.count_nonzero(base) == view.size - 1  # (0,0,0) is 0


def test_fortran_order_array():
    @cuda.jit
    def fill(out):
        x, y = cuda.grid(2)
        if x < out.shape[0] and y < out.shape[1]:
            out[x, y] = x - y

    out = np.zeros((9, 13), dtype=np.int32, order="F")
    fill[(1, 1), (16, 16)](out)
    rows, cols = np.indices(out.shape)
    np.testing.assert_array_equal(out, rows - cols)


def test_eager_signatures_as_strings_lists_and_type_objects():
    from tidal import float32, float64, int64, void

    @cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")
    def from_string(a, x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + y[i]

    @cuda.jit([void(float64[:, ::1], int64), "void(float32[:, ::1], int64)"])
    def from_list(grid, n):
        i, j = cuda.grid(2)
        if i < grid.shape[0] and j < grid.shape[1]:
            grid[i, j] = n

    # Compiled at decoration, before any launch.
    assert from_string.signatures == [
        "(float32, array(float32, 1d, C), array(float32, 1d, C), array(float32, 1d, C))"]
    assert from_list.signatures == ["(array(float64, 2d, C), int64)",
                                    "(array(float32, 2d, C), int64)"]
    grid = np.zeros((3, 5))
    from_list[(1, 1), (4, 8)](grid, 7)
    assert np.all(grid == 7)
    assert len(from_list.signatures) == 2  # the launch reused the eager one


def test_bad_signatures_are_clear_errors():
    with pytest.raises(TypeError, match=r"unknown type 'flaot32' at column 6"):
        @cuda.jit("void(flaot32[:])")
        def k(x):
            pass
    with pytest.raises(TypeError, match="a kernel's signature must return void, not float32"):
        @cuda.jit("float32(float32[:])")
        def k2(x):
            pass
