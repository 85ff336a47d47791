"""The cost of barrier rounds on the cpu target (docs/cpu-target.md, "Rounds
with one outcome" and "Thread loops bounded by their guard"): a round whose
threads all stop at one sync point keeps no record per thread, and a thread
loop whose body runs only below a block-uniform bound (`if tid < s:`,
`if tid == 0:`) ends there. These tests check that the results stay right
on every target and block size, with and without the fitted block function,
and that a round whose threads stop at different points is still reported,
as is a failure in a round with one outcome."""

import os

import numpy as np
import pytest

from tidal import cuda, float32
from source_positions import position_of
from targets import on_targets


def make_tree_reduction():
    @cuda.jit
    def tree(x, sums):
        buf = cuda.shared.array(1024, float32)
        tid = cuda.threadIdx.x
        i = cuda.grid(1)
        buf[tid] = x[i] if i < x.size else 0
        cuda.syncthreads()
        s = cuda.blockDim.x // 2
        while s > 0:
            if tid < s:
                buf[tid] += buf[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            sums[cuda.blockIdx.x] = buf[0]

    return tree


@pytest.mark.parametrize("fitted_threads", ["0", str(1 << 30)])
@pytest.mark.parametrize("block", [1, 2, 32, 64, 256, 1024])
def test_tree_reduction_sums_every_block(target, monkeypatch, rng, block, fitted_threads):
    # "0": the fitted block function (bounded loops, no checks) from the
    # first launch; 2^30: the block function with its checks.
    monkeypatch.setenv("TIDAL_CPU_FITTED_THREADS", fitted_threads)
    tree = make_tree_reduction()
    n = block * 5 - 3
    x = rng.standard_normal(n).astype(np.float32)
    blocks = (n + block - 1) // block
    sums = np.zeros(blocks, np.float32)
    tree[blocks, block](x, sums)
    padded = np.zeros(blocks * block, np.float32)
    padded[:n] = x
    if target.ran("tree"):
        np.testing.assert_allclose(sums, padded.reshape(blocks, block).sum(axis=1),
                                   rtol=1e-5, atol=1e-5)


def test_only_the_first_thread_writes(target, monkeypatch):
    # `if tid == 0:` after a barrier: one thread loop iteration, the others
    # (which must not write) skipped.
    monkeypatch.setenv("TIDAL_CPU_FITTED_THREADS", "0")

    @cuda.jit
    def first(out):
        buf = cuda.shared.array(128, float32)
        tid = cuda.threadIdx.x
        buf[tid] = tid + 1
        cuda.syncthreads()
        if tid == 0:
            out[cuda.blockIdx.x] = buf[cuda.blockDim.x - 1]
        cuda.syncthreads()
        out[cuda.gridDim.x + cuda.grid(1)] = buf[tid]

    out = np.full(3 + 3 * 128, -1, np.float32)
    first[3, 128](out)
    expected = np.concatenate([[128, 128, 128], np.tile(np.arange(1, 129), 3)])
    target.assert_result("first", out, expected)


@pytest.mark.parametrize("fitted_threads", ["0", str(1 << 30)])
def test_threads_below_a_bound_that_shrinks_below_zero(target, monkeypatch, fitted_threads):
    # The bound s goes 3, 1, -1: threads 0..2, then 0, then none (a round
    # whose loop ends at max(s, 1) = 1 thread, whose test must stay).
    monkeypatch.setenv("TIDAL_CPU_FITTED_THREADS", fitted_threads)

    @cuda.jit
    def rounds(out):
        buf = cuda.shared.array(8, float32)
        tid = cuda.threadIdx.x
        buf[tid] = 0
        cuda.syncthreads()
        s = 3
        while s > -3:
            if tid < s:
                buf[tid] += 1
            cuda.syncthreads()
            s -= 2
        out[tid] = buf[tid]

    out = np.zeros(8, np.float32)
    rounds[1, 8](out)
    target.assert_result("rounds", out, np.array([2, 1, 1, 0, 0, 0, 0, 0], np.float32))


@on_targets("cpu")
def test_a_round_whose_threads_stop_at_different_barriers_is_reported(target):
    # The first round has one outcome (every thread at the first barrier);
    # the second does not, and is reported as before.
    @cuda.jit
    def split(out):
        buf = cuda.shared.array(64, float32)
        tid = cuda.threadIdx.x
        buf[tid] = tid
        cuda.syncthreads()
        if tid < 8:
            cuda.syncthreads()
        else:
            cuda.syncthreads()
        out[tid] = buf[63 - tid]

    with pytest.raises(RuntimeError) as info:
        split[1, 64](np.zeros(64, np.float32))
    message = str(info.value)
    assert "kernel 'split' reached different barriers" in message
    assert "threads (0, 0, 0)..(7, 0, 0) at syncthreads" in message
    assert "threads (8, 0, 0)..(63, 0, 0) at syncthreads" in message
    line, _ = position_of(split.py_func, "if tid < 8:")
    _, column = position_of(split.py_func, "cuda.syncthreads()")
    where = f"{os.path.abspath(__file__)}:{line + 1}:{column + 4}"
    assert f"threads (0, 0, 0)..(7, 0, 0) at syncthreads at {where}" in message


@on_targets("cpu")
def test_a_failure_in_a_round_with_one_outcome_stops_the_block(target):
    # buf[tid + s] past the array in the tree's first round (s starts one
    # step too high): every thread below s fails; the first is reported.
    @cuda.jit(debug=True)
    def too_far(sums):
        buf = cuda.shared.array(64, float32)
        tid = cuda.threadIdx.x
        buf[tid] = 1
        cuda.syncthreads()
        s = cuda.blockDim.x
        while s > 0:
            if tid < s:
                buf[tid] += buf[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            sums[cuda.blockIdx.x] = buf[0]

    with pytest.raises(IndexError) as info:
        too_far[2, 64](np.zeros(2, np.float32))
    message = str(info.value)
    assert "index 64 is out of bounds for axis 0 with size 64" in message
    assert "thread (0, 0, 0) of block (" in message
