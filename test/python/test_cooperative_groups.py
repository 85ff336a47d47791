"""Cooperative groups (cuda.cg): grid.sync() across every block of a launch,
the cooperative launch that a kernel using cuda.cg.this_grid() gets
(cuLaunchCooperativeKernel on the cuda target; every block at once on the
cpu target), kernel.max_cooperative_grid_blocks, and the errors: a grid
larger than can be co-resident, a grid barrier that a block skips, wrong
arguments."""

import numpy as np
import pytest

from targets import on_targets
from tidal import cuda, int32
from tidal.cuda.driver import CudaDriverError
from tidal.errors import TypingError


@cuda.jit
def neighbours(a, out):
    # Phase 1: every thread writes its value; phase 2 reads the value that a
    # thread of the next block wrote (the last block reads block 0's).
    i = cuda.grid(1)
    n = a.size
    a[i] = i + 1
    g = cuda.cg.this_grid()
    g.sync()
    out[i] = a[(i + cuda.blockDim.x) % n]


def sequential_rows(m):
    # Numba's test: the grid writes row after row, each thread reading what
    # the "opposite" thread (usually of another block) wrote in the row
    # before; without a grid barrier per row, threads run ahead.
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    rows = m.shape[0]
    cols = m.shape[1]
    for row in range(1, rows):
        opposite = cols - col - 1
        m[row, col] = m[row - 1, opposite] + 1
        g.sync()


@cuda.jit(device=True)
def wait_for_grid():
    cuda.cg.this_grid().sync()


@cuda.jit
def neighbours_through_device_function(a, out):
    i = cuda.grid(1)
    a[i] = 2 * i
    wait_for_grid()
    out[i] = a[(i + cuda.blockDim.x) % a.size]


@cuda.jit
def sync_result(out):
    out[cuda.grid(1)] = cuda.cg.this_grid().sync()


@cuda.jit
def only_this_grid(a):
    cuda.cg.this_grid()
    a[0] = 1.0


@cuda.jit
def no_grid(a):
    a[0] = cuda.grid(1)


def _cooperative_launches(target, kernel):
    return [c for c in target.driver_calls("cuLaunchCooperativeKernel") if c["kernel"] == kernel]


@pytest.mark.parametrize("blocks, threads", [(8, 32), (4, 64), (3, 1)])
def test_grid_sync_reads_other_blocks_writes(target, blocks, threads):
    n = blocks * threads
    a = np.zeros(n, np.int64)
    out = np.zeros(n, np.int64)
    neighbours[blocks, threads](a, out)
    expected = (np.arange(n) + threads) % n + 1
    target.assert_result("neighbours", out, expected)
    if target.mock:
        assert len(_cooperative_launches(target, "neighbours")) == 1
        assert not target.driver_calls("cuLaunchKernel")


def test_grid_sync_in_a_device_function(target):
    a = np.zeros(6 * 16, np.int64)
    out = np.zeros_like(a)
    neighbours_through_device_function[6, 16](a, out)
    expected = 2 * ((np.arange(a.size) + 16) % a.size)
    target.assert_result("neighbours_through_device_function", out, expected)
    (overload,) = neighbours_through_device_function.overloads.values()
    assert overload.cooperative


def test_sync_at_every_row(target):
    # 1023 grid barriers over 8 blocks of 32 threads.
    m = np.zeros((256, 256), np.int32)
    kernel = cuda.jit("void(int32[:, ::1])")(sequential_rows)
    kernel[8, 32](m)
    target.assert_result("sequential_rows", m, np.tile(np.arange(256), (256, 1)).T)


def test_grid_sync_returns_zero(target):
    out = np.full(64, -1, np.int32)
    sync_result[2, 32](out)
    target.assert_result("sync_result", out, np.zeros(64, np.int32))
    assert sync_result.overloads[("array(int32, 1d, C)",)].cooperative


def test_cooperative_only_where_the_grid_group_is_used(target):
    a = np.zeros(1)
    only_this_grid[1, 1](a)
    no_grid[1, 1](a)
    assert [k.cooperative for k in only_this_grid.overloads.values()] == [True]
    assert [k.cooperative for k in no_grid.overloads.values()] == [False]
    if target.mock:
        assert len(_cooperative_launches(target, "only_this_grid")) == 1
        assert [c["kernel"] for c in target.driver_calls("cuLaunchKernel")] == ["no_grid"]
    else:
        assert a[0] == 0  # no_grid ran last


def test_max_cooperative_grid_blocks(target):
    kernel = cuda.jit("void(int32[:, ::1])")(sequential_rows)
    overload = kernel.overloads[("array(int32, 2d, C)",)]
    blocks = overload.max_cooperative_grid_blocks(256)
    assert blocks == overload.max_cooperative_grid_blocks((16, 16))
    assert blocks == overload.max_cooperative_grid_blocks((16, 4, 4))
    assert blocks == kernel.max_cooperative_grid_blocks(256, signature="void(int32[:, ::1])")
    if target.name == "cpu":
        # 65536 threads at once, at most 1024 blocks (docs/cpu-target.md).
        assert blocks == 256
        assert overload.max_cooperative_grid_blocks(1) == 1024
        assert overload.max_cooperative_grid_blocks(1024) == 64
    elif target.mock:
        # The mock's SMs (132) x its resident blocks per SM (2048 threads).
        assert blocks == 132 * 8
        assert target.driver_calls("cuOccupancyMaxActiveBlocksPerMultiprocessor")
    else:
        assert blocks >= 1


def test_max_cooperative_grid_blocks_bad_blockdim():
    kernel = cuda.jit("void(int32[:, ::1])")(sequential_rows)
    overload = kernel.overloads[("array(int32, 2d, C)",)]
    with pytest.raises(TypeError, match="blockdim must be an int or a tuple"):
        overload.max_cooperative_grid_blocks("256")
    with pytest.raises(ValueError, match="must be positive"):
        overload.max_cooperative_grid_blocks((0, 4))


def test_grid_too_large_for_a_cooperative_launch(target):
    a = np.zeros(1 << 20, np.int64)
    out = np.zeros_like(a)
    neighbours[1, 1024](a[:1024], out[:1024])  # compiled
    (overload,) = neighbours.overloads.values()
    most = overload.max_cooperative_grid_blocks(1024)
    with pytest.raises(CudaDriverError, match="CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE") as caught:
        neighbours[most + 1, 1024](a[:(most + 1) * 1024], out[:(most + 1) * 1024])
    assert caught.value.code == 720
    assert caught.value.call == "cuLaunchCooperativeKernel"
    # The largest grid runs.
    neighbours[most, 64](a[:most * 64], out[:most * 64])


@cuda.jit
def smooth(buf0, buf1, steps):
    # Numba's Laplace example's shape: threads past the end return before the
    # grid barriers, which the others then pass without them.
    i = cuda.grid(1)
    n = buf0.size
    if i >= n:
        return
    g = cuda.cg.this_grid()
    for step in range(steps):
        if step % 2 == 0:
            data = buf0
            out = buf1
        else:
            data = buf1
            out = buf0
        v = data[i]
        if i > 0:
            v += data[i - 1]
        if i < n - 1:
            v += data[i + 1]
        out[i] = v
        g.sync()


def test_threads_that_return_before_the_grid_barrier(target):
    n, steps = 50, 5
    buf0 = np.arange(n, dtype=np.int64) % 7
    buf1 = np.zeros(n, np.int64)
    expected = buf0.copy()
    for _ in range(steps):
        expected = expected + np.concatenate(([0], expected[:-1])) + \
            np.concatenate((expected[1:], [0]))
    smooth[4, 16](buf0, buf1, steps)
    target.assert_result("smooth", buf1 if steps % 2 else buf0, expected)


@on_targets("cpu")
def test_block_that_skips_the_grid_barrier_is_reported(target):
    @cuda.jit
    def skips(a):
        if cuda.blockIdx.x == 1:
            return
        cuda.cg.this_grid().sync()
        a[cuda.grid(1)] = 1

    with pytest.raises(RuntimeError,
                       match=r"grid.sync\(\) in kernel 'skips' cannot complete: 1 block\(s\) "
                             r"finished without reaching it while 2 wait there"):
        skips[3, 4](np.zeros(12))
    # The pool is usable afterwards.
    out = np.zeros(8, np.int64)
    neighbours[2, 4](np.zeros(8, np.int64), out)
    assert out.tolist() == [5, 6, 7, 8, 1, 2, 3, 4]


@on_targets("cpu")
def test_failure_in_one_block_stops_the_others(target):
    @cuda.jit(debug=True)
    def fails(a):
        i = cuda.grid(1)
        if cuda.blockIdx.x == 2:
            a[i + 1000] = 1  # out of bounds: the block stops
        cuda.cg.this_grid().sync()
        a[i] = 1

    with pytest.raises(IndexError, match="out of bounds"):
        fails[4, 8](np.zeros(32))


def test_wrong_arguments():
    @cuda.jit
    def sync_with_argument(a):
        cuda.cg.this_grid().sync(1)

    @cuda.jit
    def this_grid_with_argument(a):
        cuda.cg.this_grid(0)

    with pytest.raises(TypingError, match="GridGroup.sync"):
        sync_with_argument[1, 1](np.zeros(1))
    with pytest.raises(TypingError, match="cuda.cg.this_grid"):
        this_grid_with_argument[1, 1](np.zeros(1))


def test_called_from_python_raises():
    with pytest.raises(RuntimeError, match="only be used inside a kernel"):
        cuda.cg.this_grid()
    assert cuda.cg.GridGroup.sync.__tidal_intrinsic__ == "cuda.cg.GridGroup.sync"


def test_int32_signature_runs(target):
    # The Numba suite's form: an explicit signature with int32.
    m = np.zeros((4, 8), np.int32)
    kernel = cuda.jit((int32[:, ::1],))(sequential_rows)
    kernel[2, 4](m)
    target.assert_result("sequential_rows", m, np.tile(np.arange(4), (8, 1)).T)


COOPERATIVE_SOURCE = '''
from tidal import cuda


@cuda.jit(cache=True)
def cached_neighbours(a, out):
    i = cuda.grid(1)
    a[i] = i + 1
    cuda.cg.this_grid().sync()
    out[i] = a[(i + cuda.blockDim.x) % a.size]
'''


def test_a_cache_hit_is_still_cooperative(target, tmp_path, monkeypatch):
    import importlib.util

    monkeypatch.setenv("TIDAL_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "cooperative_kernels.py"
    path.write_text(COOPERATIVE_SOURCE)
    for run in range(2):  # compiled, then from the cache in a new module
        spec = importlib.util.spec_from_file_location(f"cooperative_kernels_{run}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        target.forget_driver_calls()
        a, out = np.zeros(4 * 8, np.int64), np.zeros(4 * 8, np.int64)
        module.cached_neighbours[4, 8](a, out)
        target.assert_result("cached_neighbours", out, (np.arange(32) + 8) % 32 + 1)
        stats = module.cached_neighbours.stats
        assert (sum(stats.cache_hits.values()), sum(stats.cache_misses.values())) == \
            ((0, 1) if run == 0 else (1, 0))
        (overload,) = module.cached_neighbours.overloads.values()
        assert overload.cooperative
        if target.mock:
            assert len(_cooperative_launches(target, "cached_neighbours")) == 1
