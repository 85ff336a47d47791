"""Coarsened block functions (docs/cpu-target.md, "Runs of blocks as one
wider block"): on the cpu target a kernel without sync points, shared
memory or atomics that indexes x only through cuda.grid runs the
consecutive blocks of a grid row that a worker takes as one block, its x
loop as long as the run. The results are the kernel's whatever the block
shape and grid (checked on every target); the counts, failures and faults
are the cpu target's."""

import gc
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tidal import _tidal, cuda, float32
from child_processes import python_environment
from targets import on_targets


def live(name):
    return _tidal.live_code()[name]


@pytest.fixture(autouse=True)
def fitted_at_the_first_fitting_launch(monkeypatch):
    # Small grids: the fitted module (and the coarsened function in it) at
    # the first fitting launch, not after 2^20 threads.
    monkeypatch.setenv("TIDAL_CPU_FITTED_THREADS", "0")


def make_stencil():
    @cuda.jit
    def stencil(a, out):
        x, y = cuda.grid(2)
        n = a.shape[0]
        m = a.shape[1]
        if y < n and x < m:
            if y > 0 and x > 0 and y < n - 1 and x < m - 1:
                out[y, x] = float32(0.25) * (a[y - 1, x] + a[y + 1, x] + a[y, x - 1]
                                             + a[y, x + 1])
            else:
                out[y, x] = a[y, x]

    return stencil


def stencil_reference(a):
    out = a.copy()
    out[1:-1, 1:-1] = np.float32(0.25) * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2]
                                          + a[1:-1, 2:])
    return out


def blocks_for(shape, block, extra=0):
    # x along the columns, y along the rows; `extra` blocks past the array
    return ((shape[1] + block[0] - 1) // block[0] + extra,
            (shape[0] + block[1] - 1) // block[1] + extra)


@pytest.mark.parametrize("shape", [(64, 64), (70, 45), (33, 1000), (5, 300)])
@pytest.mark.parametrize("block", [(16, 16), (32, 8), (256, 1), (1024, 1)])
def test_stencil_matches_numpy_for_every_block_shape(target, shape, block, rng):
    stencil = make_stencil()
    a = rng.standard_normal(shape).astype(np.float32)
    out = np.zeros_like(a)
    stencil[blocks_for(shape, block), block](a, out)
    target.assert_result("stencil", out, stencil_reference(a))


@pytest.mark.parametrize("block", [(16, 16), (8, 4)])
def test_blocks_past_the_array_write_nothing(target, block, rng):
    # Three more blocks than the array needs along x and y.
    @cuda.jit
    def copy2d(a, out):
        x, y = cuda.grid(2)
        if y < a.shape[0] and x < a.shape[1]:
            out[y, x] = a[y, x]

    shape = (37, 101)
    a = rng.standard_normal(shape).astype(np.float32)
    backing = np.full((40, 120), -7.0, np.float32)
    out = backing[:37, :101]
    copy2d[blocks_for(shape, block, extra=3), block](a, out)
    target.assert_result("copy2d", out, a)
    assert np.all(backing[37:] == -7.0) and np.all(backing[:, 101:] == -7.0)


@pytest.mark.parametrize("n", [1, 255, 4097, 100003])
@pytest.mark.parametrize("threads", [16, 96, 256])
def test_one_dimensional_kernels_match_numpy(target, n, threads, rng):
    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + y[i]

    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    saxpy[(n + threads - 1) // threads, threads](np.float32(1.5), x, y, out)
    target.assert_result("saxpy", out, np.float32(1.5) * x + y, rtol=target.float_rtol)


@pytest.mark.parametrize("k", [-3, 0, 1, 7, 250, 10**6, -(1 << 63), -(1 << 63) + 2, (1 << 63) - 1])
@pytest.mark.parametrize("threads", [16, 96])
def test_tests_of_the_index_against_bounds_match_numpy(target, k, threads, rng):
    # Comparisons of cuda.grid's index with a constant, a parameter or a
    # parameter plus a constant, in each form: on the cpu target the
    # coarsened x loop runs in three parts, the middle one where all of them
    # hold (test/lit/plugin/lower-host-coarsen.ll, range_tests), so every
    # index must land on the right side of each.
    @cuda.jit
    def bands(x, out, k):
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            if i >= 3 and i <= x.size - 4:
                v = v * 2
            if 5 < i:
                v = v + 1
            if i < k:
                v = -v
            if i <= k - 5:
                v = v + 10
            if i >= k + 3:
                v = v + 1000
            if i > x.size - 2:
                v = v + 100
            out[i] = v

    n = 1000
    x = rng.integers(-50, 50, n).astype(np.float32)  # every sum exact in float32
    out = np.zeros(n, np.float32)
    bands[(n + threads - 1) // threads, threads](x, out, k)
    i = np.arange(n)
    want = np.where((i >= 3) & (i <= n - 4), x * 2, x)
    want = np.where(i > 5, want + 1, want)
    want = np.where(i < k, -want, want)
    # k - 5 and k + 3 as the kernel computes them: int64, wrapping
    with np.errstate(over="ignore"):
        below, above = np.int64(k) - np.int64(5), np.int64(k) + np.int64(3)
    want = np.where(i <= below, want + 10, want)
    want = np.where(i >= above, want + 1000, want)
    want = np.where(i > n - 2, want + 100, want).astype(np.float32)
    target.assert_result("bands", out, want)


@pytest.mark.parametrize("k", [-(1 << 63) + 10, -(1 << 63) + 5000, (1 << 63) - 10, 500])
def test_bounds_near_the_ends_of_int64_split_the_run_rightly(target, k, rng):
    # k - 5 is near INT64_MIN or INT64_MAX without wrapping: where the split
    # point k - 5 - (the run's first index) overflows, it must saturate (i <=
    # k - 5 holds for no i when k - 5 is below 0, for every i when it is
    # huge), not wrap.
    @cuda.jit
    def near_ends(x, out, k):
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            if i <= k - 5:
                v = v + 10
            out[i] = v

    @cuda.jit
    def near_ends_below(x, out, k):
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            if i > k + 7:
                v = v + 1000
            out[i] = v

    n = 4096
    x = rng.integers(-50, 50, n).astype(np.float32)
    i = np.arange(n)
    out = np.zeros(n, np.float32)
    near_ends[n // 64, 64](x, out, k)
    target.assert_result("near_ends", out, np.where(i <= k - 5, x + 10, x).astype(np.float32))
    near_ends_below[n // 64, 64](x, out, k)
    target.assert_result("near_ends_below", out,
                         np.where(i > k + 7, x + 1000, x).astype(np.float32))


def test_a_kernel_contiguous_along_y_matches_numpy(target, rng):
    # a[i, j] with i, j = cuda.grid(2): contiguous along y (the y-innermost
    # loop order), coarsened along x.
    @cuda.jit
    def scale(a, out):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            out[i, j] = float32(2.0) * a[i, j] + float32(i)

    a = rng.standard_normal((300, 41)).astype(np.float32)
    out = np.zeros_like(a)
    scale[((300 + 15) // 16, (41 + 15) // 16), (16, 16)](a, out)
    target.assert_result("scale", out,
                         np.float32(2.0) * a + np.arange(300, dtype=np.float32)[:, None])


@on_targets("cpu")
def test_a_launch_runs_runs_of_blocks_through_the_coarsened_function(target):
    stencil = make_stencil()
    functions, blocks = live("cpu_coarse_block_functions"), live("cpu_coarsened_blocks")
    a = np.arange(512 * 512, dtype=np.float32).reshape(512, 512) % 13
    out = np.zeros_like(a)
    stencil[(32, 32), (16, 16)](a, out)  # 1024 blocks
    np.testing.assert_array_equal(out, stencil_reference(a))
    assert live("cpu_coarse_block_functions") == functions + 1
    # Runs of consecutive blocks (short only at the launch's end) of one row.
    ran = live("cpu_coarsened_blocks") - blocks
    assert 512 <= ran <= 1024, ran


@on_targets("cpu")
def test_a_dropped_kernel_frees_its_coarsened_function(target):
    stencil = make_stencil()
    gc.collect()
    functions = live("cpu_coarse_block_functions")
    a = np.ones((64, 256), np.float32)
    stencil[(16, 4), (16, 16)](a, np.zeros_like(a))
    assert live("cpu_coarse_block_functions") == functions + 1
    del stencil
    gc.collect()
    assert live("cpu_coarse_block_functions") == functions


@on_targets("cpu")
def test_kernels_that_use_the_thread_index_alone_are_not_coarsened(target):
    # threadIdx.x on its own, and blockIdx.x on its own: a wide block would
    # change them.
    @cuda.jit
    def lanes(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = cuda.threadIdx.x

    @cuda.jit
    def block_numbers(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = cuda.blockIdx.x

    functions, blocks = live("cpu_coarse_block_functions"), live("cpu_coarsened_blocks")
    fitted = live("cpu_fitted_block_functions")
    out = np.zeros(64 * 300, np.int64)
    lanes[300, 64](out)
    np.testing.assert_array_equal(out, np.tile(np.arange(64), 300))
    block_numbers[300, 64](out)
    np.testing.assert_array_equal(out, np.repeat(np.arange(300), 64))
    assert live("cpu_fitted_block_functions") == fitted + 2
    assert live("cpu_coarse_block_functions") == functions
    assert live("cpu_coarsened_blocks") == blocks


def run_program(source, threads=1):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(source)], capture_output=True,
                          text=True, timeout=120,
                          env=python_environment(TIDAL_TARGET="cpu",
                                                 TIDAL_CPU_THREADS=str(threads),
                                                 TIDAL_CPU_FITTED_THREADS="0"))
    assert done.returncode == 0, done.stderr
    return done.stdout


@on_targets("cpu")
@pytest.mark.parametrize("threads", [1, 2])
def test_a_store_past_the_array_names_its_block_and_thread(target, threads):
    # Blocks 0..199 lie inside the array and run coarsened; block 200 reaches
    # past it and runs alone, through the fitted function's per-block path,
    # whose check names thread (5, 0, 0) of block (200, 0, 0).
    out = run_program("""
        import numpy as np
        from tidal import _tidal, cuda

        @cuda.jit
        def unguarded(a, out):
            x, y = cuda.grid(2)
            out[y, x] = a[y, x]

        a = np.ones((16, 16 * 200 + 5), np.float32)
        out = np.zeros_like(a)
        try:
            unguarded[(201, 1), (16, 16)](a, out)
            print("no error")
        except IndexError as e:
            print("error:", e)
        print(_tidal.live_code()["cpu_coarse_block_functions"])
        print(_tidal.live_code()["cpu_coarsened_blocks"] > 0)
    """, threads)
    lines = out.splitlines()
    assert lines[0].startswith("error: index 3205 is out of bounds for axis 1 with size 3205 "
                               "in kernel 'unguarded'"), out
    assert "thread (5, 0, 0) of block (200, 0, 0)" in lines[0], out
    assert lines[1:] == ["1", "True"], out


@on_targets("cpu")
def test_debug_mode_checks_that_a_block_cannot_pass_keep_the_per_block_path(target):
    # debug=True checks the read a[y, x + 1], which no block condition implies:
    # its report must name its thread, so the kernel is not coarsened.
    @cuda.jit(debug=True, opt=False)
    def shifted(a, out):
        x, y = cuda.grid(2)
        if y < out.shape[0] and x < out.shape[1]:
            out[y, x] = a[y, x + 1]

    # debug=True with only checks that the blocks pass: coarsened.
    @cuda.jit(debug=True, opt=False)
    def copied(a, out):
        x, y = cuda.grid(2)
        if y < a.shape[0] and x < a.shape[1]:
            out[y, x] = a[y, x]

    functions = live("cpu_coarse_block_functions")
    a = np.arange(16 * 320, dtype=np.float32).reshape(16, 320)
    out = np.zeros_like(a)
    with pytest.raises(IndexError) as info:
        shifted[(20, 1), (16, 16)](a, out)
    message = str(info.value)
    assert message.startswith("index 320 is out of bounds for axis 1 with size 320"), message
    assert "thread (15, 0, 0) of block (19, 0, 0)" in message, message
    assert live("cpu_coarse_block_functions") == functions
    copied[(20, 1), (16, 16)](a, out)
    np.testing.assert_array_equal(out, a)
    assert live("cpu_coarse_block_functions") == functions + 1


@on_targets("cpu")
def test_a_fault_in_a_coarsened_run_names_the_run(target):
    # A read far away faults (reads are not checked without debug=True). One
    # thread: the first run is blocks 0..7 of 64 (an eighth of the grid).
    out = run_program("""
        import numpy as np
        from tidal import _tidal, cuda

        @cuda.jit
        def wild(a, far, out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = a[i + far]

        a = np.zeros(64 * 32, np.float32)
        out = np.zeros_like(a)
        try:
            wild[64, 32](a, 1 << 40, out)
            print("no error")
        except RuntimeError as e:
            print("error:", e)
        print(_tidal.live_code()["cpu_coarse_block_functions"])
        wild[64, 32](np.arange(64 * 32 + 1, dtype=np.float32), 1, out)
        print(out[:3], out[-1])
    """)
    lines = out.splitlines()
    assert lines[0].startswith("error: kernel 'wild' faulted: illegal memory access (SIGSEGV"), out
    assert "in one of the blocks (0, 0, 0) to (7, 0, 0) (run together" in lines[0], out
    assert lines[1] == "1", out
    assert lines[2] == "[1. 2. 3.] 2048.0", out
