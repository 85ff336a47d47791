"""Kernels end to end on every target (the `target` fixture: cpu, cuda over the
mock driver, cuda on a GPU): Python source -> markers -> a lowering -> launch.
Indexing and grids of 1 to 3 dimensions, array layouts, shared memory (static,
dynamic, per block), barriers in loops, warp collectives, atomics across
blocks, local and constant arrays, checked against NumPy where kernels run;
on the mock driver, that each kernel compiled and was launched."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tidal import cuda, float32, int32
from tidal.errors import CompileWarning
from child_processes import python_environment

THREADS = 128


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


# --- indexing and grids ----------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 31, 127, 128, 129, 1000, 4097, 100_003])
def test_saxpy_matches_numpy(target, dtype, n, rng):
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    a = dtype(1.5)
    out = launch_saxpy(saxpy, a, x, y)
    target.assert_result("saxpy", out, a * x + y, rtol=target.float_rtol)


def test_saxpy_on_device_arrays(target):
    n = 4096
    x = np.arange(n, dtype=np.float32)
    d_out = cuda.device_array(n, np.float32)
    saxpy[n // 128, 128](np.float32(3), cuda.to_device(x), cuda.to_device(x), d_out)
    target.assert_result("saxpy", d_out.copy_to_host(), 4 * x)


def test_threads_past_the_end_write_nothing(target, rng):
    # 10 elements, one block of 64 threads: threads 10..63 must not write.
    backing = np.full(64, -7.0, dtype=np.float32)
    out = backing[:10]
    x = rng.standard_normal(10).astype(np.float32)
    y = rng.standard_normal(10).astype(np.float32)
    saxpy[1, 64](np.float32(2.0), x, y, out)
    target.assert_result("saxpy", out, np.float32(2.0) * x + y, rtol=target.float_rtol)
    assert np.all(backing[10:] == -7.0)


def test_read_only_array_is_not_written_back(target):
    x = np.arange(64, dtype=np.float32)
    x.flags.writeable = False
    out = np.zeros(64, np.float32)
    saxpy[1, 64](np.float32(1), x, x, out)
    target.assert_result("saxpy", out, 2 * x)
    np.testing.assert_array_equal(x, np.arange(64, dtype=np.float32))


def test_python_float_scalar_promotes_like_numba(target, rng):
    # a Python float is float64: a * x[i] computes in float64, stored as float32.
    x = rng.standard_normal(100).astype(np.float32)
    y = rng.standard_normal(100).astype(np.float32)
    out = launch_saxpy(saxpy, 0.1, x, y)
    expected = (0.1 * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)
    target.assert_result("saxpy", out, expected, rtol=target.float_rtol)


def test_integer_arrays(target, rng):
    @cuda.jit
    def scale(a, x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i]

    for launches, dtype in enumerate((np.int32, np.int64), start=1):
        x = rng.integers(-1000, 1000, 777).astype(dtype)
        out = np.zeros_like(x)
        scale[7, 128](3, x, out)
        target.assert_result("scale", out, 3 * x, launches=launches)


def test_grid_2d(target):
    @cuda.jit
    def fill(out):
        x, y = cuda.grid(2)
        if x < out.shape[0] and y < out.shape[1]:
            out[x, y] = x * 1000 + y

    out = np.full((37, 53), -1, dtype=np.int64)
    fill[(5, 7), (8, 8)](out)
    rows, cols = np.indices(out.shape)
    target.assert_result("fill", out, rows * 1000 + cols)


def test_grid_2d_of_many_blocks(target):
    @cuda.jit
    def add_2d(out, x, y):
        i, j = cuda.grid(2)
        if i < out.shape[0] and j < out.shape[1]:
            out[i, j] = x[i, j] + y[i, j] * (i + 1)

    x = np.arange(300 * 200, dtype=np.float64).reshape(300, 200)
    y = np.ones_like(x)
    out = np.zeros_like(x)
    add_2d[(19, 13), (16, 16)](out, x, y)
    target.assert_result("add_2d", out, x + np.arange(1, 301)[:, None])


def test_index_registers_and_gridsize(target):
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
    expected = np.stack([i % 32, i // 32, np.full(100, 32), np.full(100, 4),
                         np.full(100, 128)], axis=1)
    target.assert_result("where", out, expected)


def test_3d_grid_and_blocks(target):
    @cuda.jit
    def where(out):
        x, y, z = cuda.grid(3)
        if x < out.shape[0] and y < out.shape[1] and z < out.shape[2]:
            out[x, y, z] = ((cuda.blockIdx.z * 10 + cuda.threadIdx.z) * 100
                            + cuda.blockIdx.y * 10 + cuda.threadIdx.y) * 100 + x

    out = np.full((6, 9, 5), -1, np.int64)
    where[(2, 3, 2), (4, 3, 3)](out)
    x, y, z = np.indices(out.shape)
    expected = (((z // 3) * 10 + z % 3) * 100 + (y // 3) * 10 + y % 3) * 100 + x
    target.assert_result("where", out, expected)


def test_grid_3d_strided_array(target):
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
    target.assert_result("fill3", view, (x * 100 + y) * 100 + z)
    if target.computes:
        assert np.count_nonzero(base) == view.size - 1  # (0,0,0) is 0


def test_fortran_order_array(target):
    @cuda.jit
    def fill(out):
        x, y = cuda.grid(2)
        if x < out.shape[0] and y < out.shape[1]:
            out[x, y] = x - y

    out = np.zeros((9, 13), dtype=np.int32, order="F")
    fill[(1, 1), (16, 16)](out)
    rows, cols = np.indices(out.shape)
    target.assert_result("fill", out, rows - cols)


# --- shared memory and barriers ----------------------------------------------


@cuda.jit
def block_sum(x, out):
    # Tree reduction in shared memory: syncthreads inside a loop.
    s = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def test_reduction_with_syncthreads_in_a_loop(target, rng):
    x = rng.random(10_000).astype(np.float32)
    blocks = (x.size + THREADS - 1) // THREADS
    out = np.zeros(blocks, np.float32)
    block_sum[blocks, THREADS](x, out)
    expected = np.pad(x, (0, blocks * THREADS - x.size)).reshape(blocks, THREADS).sum(1)
    target.assert_result("block_sum", out, expected, rtol=1e-5)


@pytest.mark.parametrize("threads", [1, 2, 32, 64, THREADS])
def test_reduction_with_blocks_smaller_than_its_shared_array(target, rng, threads):
    # The cpu target runs blocks within the extent its stores' checks compare
    # thread indices with (THREADS here) through a copy of the block function
    # whose thread loops have no checks (docs/cpu-target.md, "Blocks no
    # larger than the kernel's arrays"): every power of two up to it (the
    # tree needs one).
    x = rng.random(1000).astype(np.float32)
    blocks = (x.size + threads - 1) // threads
    out = np.zeros(blocks, np.float32)
    block_sum[blocks, threads](x, out)
    expected = np.pad(x, (0, blocks * threads - x.size)).reshape(blocks, threads).sum(1)
    target.assert_result("block_sum", out, expected, rtol=1e-5)


@pytest.mark.parametrize("threads", [200, 1024])
@pytest.mark.parametrize("shared_bytes", ["exact", 64 * 1024])  # 64 KB: opts in above 48 KB
def test_dynamic_shared_memory_sized_at_launch(target, threads, shared_bytes):
    @cuda.jit
    def reverse(x, out):
        s = cuda.shared.array(0, dtype=np.int32)
        t = cuda.threadIdx.x
        s[t] = x[t] * 2
        cuda.syncthreads()
        out[t] = s[cuda.blockDim.x - 1 - t]

    x = np.arange(threads, dtype=np.int32)
    out = np.zeros_like(x)
    size = threads * x.itemsize if shared_bytes == "exact" else shared_bytes
    reverse[1, threads, 0, size](x, out)
    target.assert_result("reverse", out, (2 * x)[::-1])
    if target.mock:
        (launch,) = target.driver_calls("cuLaunchKernel")
        assert launch["shared"] == size and launch["block"] == [threads, 1, 1]


def test_shared_memory_is_per_block_and_syncthreads_count(target):
    @cuda.jit
    def k(out, counts):
        s = cuda.shared.array(1, int32)
        if cuda.threadIdx.x == 0:
            s[0] = cuda.blockIdx.x
        cuda.syncthreads()
        out[cuda.grid(1)] = s[0]
        counts[cuda.blockIdx.x] = cuda.syncthreads_count(cuda.threadIdx.x % 3 == 0)

    out = np.zeros(64 * 40, np.int32)
    counts = np.zeros(40, np.int32)
    k[40, 64](out, counts)
    target.assert_result("k", out, np.repeat(np.arange(40), 64))
    target.assert_result("k", counts, np.full(40, len(range(0, 64, 3))))


TABLE = np.array([10, 20, 30, 40], dtype=np.int64)


def test_local_and_constant_arrays(target):
    @cuda.jit
    def k(out):
        scratch = cuda.local.array(4, int32)
        table = cuda.const.array_like(TABLE)
        i = cuda.grid(1)
        for j in range(4):
            scratch[j] = i * j
        out[i] = scratch[3] + table[i % 4]

    out = np.zeros(16, np.int64)
    k[1, 16](out)
    target.assert_result("k", out, np.arange(16) * 3 + TABLE[np.arange(16) % 4])


# --- warp collectives ----------------------------------------------------------


def test_warp_shuffle_reduction_and_ballot(target, rng):
    @cuda.jit
    def warp_sum(x, sums, ballots):
        i = cuda.grid(1)
        v = x[i]
        offset = 16
        while offset > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
            offset //= 2
        b = cuda.ballot_sync(0xFFFFFFFF, x[i] > 0.5)
        if cuda.laneid == 0:
            sums[i // 32] = v
            ballots[i // 32] = b

    x = rng.random(256).astype(np.float32)
    sums = np.zeros(8, np.float32)
    ballots = np.zeros(8, np.uint32)
    warp_sum[2, 128](x, sums, ballots)
    target.assert_result("warp_sum", sums, x.reshape(8, 32).sum(1), rtol=1e-5)
    bits = (x.reshape(8, 32) > 0.5).astype(np.uint64) << np.arange(32, dtype=np.uint64)
    target.assert_result("warp_sum", ballots, bits.sum(1).astype(np.uint32))


def test_shuffle_variants_follow_cuda(target):
    @cuda.jit
    def shuffles(out):
        i = cuda.grid(1)
        lane = cuda.laneid
        out[i, 0] = cuda.shfl_sync(0xFFFFFFFF, i, 3)
        out[i, 1] = cuda.shfl_up_sync(0xFFFFFFFF, i, 2)
        out[i, 2] = cuda.shfl_down_sync(0xFFFFFFFF, i, 5)
        out[i, 3] = cuda.shfl_xor_sync(0xFFFFFFFF, i, 1)
        out[i, 4] = lane

    out = np.zeros((64, 5), np.int64)
    shuffles[1, 64](out)
    i = np.arange(64)
    lane = i % 32
    base = i - lane
    target.assert_result("shuffles", out[:, 0], base + 3)
    target.assert_result("shuffles", out[:, 1], np.where(lane >= 2, i - 2, i))
    target.assert_result("shuffles", out[:, 2], np.where(lane + 5 < 32, i + 5, i))
    target.assert_result("shuffles", out[:, 3], i ^ 1)
    target.assert_result("shuffles", out[:, 4], lane)


# --- atomics -------------------------------------------------------------------


def test_contended_atomics_across_blocks_are_exact(target, rng):
    @cuda.jit
    def histogram(x, bins, olds):
        i = cuda.grid(1)
        if i < x.size:
            cuda.atomic.add(bins, x[i], 1)
            olds[i] = cuda.atomic.add(bins, 256, 1)   # one counter for everyone

    x = rng.integers(0, 256, 200_000)
    bins = np.zeros(257, np.int64)
    olds = np.zeros(x.size, np.int64)
    histogram[(x.size + 255) // 256, 256](x, bins, olds)
    target.assert_result("histogram", bins[:256], np.bincount(x, minlength=256))
    target.assert_result("histogram", bins[256], x.size)
    # Each add returned the old value: together a permutation of 0..n-1.
    target.assert_result("histogram", np.sort(olds), np.arange(x.size))


def test_atomic_max_min_cas_and_float_add(target):
    @cuda.jit
    def k(ints, floats):
        i = cuda.grid(1)
        cuda.atomic.max(ints, 0, i)
        cuda.atomic.min(ints, 1, -i)
        cuda.atomic.cas(ints, 2, 0, 7)      # only the first wins
        cuda.atomic.add(floats, 0, 0.5)

    ints = np.zeros(3, np.int64)
    floats = np.zeros(1)
    k[8, 64](ints, floats)
    target.assert_result("k", ints, [511, -511, 7])
    target.assert_result("k", floats, [256.0])


# --- print (the cpu target writes to the process's stdout) ---------------------


def test_print_formats_like_numba(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        from tidal import cuda

        @cuda.jit
        def k(x):
            i = cuda.grid(1)
            print("thread", i, "value", x[i], i < 1)

        k[1, 2](np.array([1.5, -2.25]))
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=python_environment(TIDAL_TARGET="cpu"),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == ["thread 0 value 1.500000 True",
                                                "thread 1 value -2.250000 False"]


def test_print_of_more_than_32_items_prints_its_format_and_warns(target, capfd):
    # Numba's test_print.test_too_many_args: CUDA's vprintf takes 32
    # arguments, so Numba prints the raw format string and warns; tidal
    # does the same on every target.
    @cuda.jit
    def many(r):
        print(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
              r[11], r[12], r[13], r[14], r[15], r[16], r[17], r[18], r[19], r[20],
              r[21], r[22], r[23], r[24], r[25], r[26], r[27], r[28], r[29], r[30],
              r[31], r[32])

    with pytest.warns(CompileWarning, match="cannot print more than 32 items"):
        many[1, 1](np.arange(33))
    cuda.synchronize()
    if target.ran("many"):
        assert capfd.readouterr().out == " ".join(["%lld"] * 33) + "\n"


# --- sleep -----------------------------------------------------------------


@cuda.jit
def sleep_then_write(out, ns):
    i = cuda.grid(1)
    if i < out.size:
        cuda.nanosleep(ns)
        out[i] = i


def test_nanosleep_returns_and_the_kernel_goes_on(target):
    out = np.full(64, -1, np.int64)
    sleep_then_write[2, 32](out, np.uint32(1000))
    target.assert_result("sleep_then_write", out, np.arange(64))


def test_nanosleep_is_the_ptx_instruction():
    ptx = sleep_then_write.inspect_asm("void(int64[::1], uint32)")
    assert "nanosleep.u32" in ptx


def test_nanosleep_takes_an_integer():
    from tidal.errors import TypingError

    @cuda.jit
    def bad(out):
        cuda.nanosleep(1.5)
        out[0] = 1

    with pytest.raises(TypingError, match=r"the time of cuda.nanosleep\(ns\) must be an integer, not float64"):
        bad[1, 1](np.zeros(1, np.int64))


# --- dynamic shared memory: one base, the launch's length -------------------


@cuda.jit
def dynamic_shared_slices(out):
    memory = cuda.shared.array(0, dtype=int32)
    first = memory[0:1]
    rest = memory[1:3]
    first[0] = 1
    rest[0] = 2
    rest[1] = 3
    again = cuda.shared.array(0, dtype=int32)  # the same base
    out[0] = again[0]
    out[1] = memory[1]
    out[2] = memory[2]
    out[3] = memory.size


def test_dynamic_shared_slices_are_where_asked_and_sized_by_the_launch(target):
    # Numba's issue #5073: slices of dynamic shared memory all aliased its start.
    out = np.zeros(4, np.int32)
    dynamic_shared_slices[1, 1, 0, 4 * 5](out)
    target.assert_result("dynamic_shared_slices", out, np.array([1, 2, 3, 5], np.int32))
