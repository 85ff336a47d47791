"""Warps: collectives that only some warps of a block execute (the last-warp
reduction), warps taking different branches to different collectives,
activemask inside a branch that splits a warp, on every target; on the cpu
target, which runs them in warp rounds (docs/cpu-target.md), the report of a
divergent syncthreads."""

import numpy as np
import pytest

from targets import on_targets
from tidal import cuda, float32


def make_last_warp_sum(threads):
    @cuda.jit
    def last_warp_sum(x, out):
        # Shared-memory tree down to 64 values, then the last warp shuffles.
        s = cuda.shared.array(threads, float32)
        tid = cuda.threadIdx.x
        i = cuda.grid(1)
        s[tid] = x[i] if i < x.size else 0
        cuda.syncthreads()
        stride = cuda.blockDim.x // 2
        while stride > 32:
            if tid < stride:
                s[tid] += s[tid + stride]
            cuda.syncthreads()
            stride //= 2
        if tid < 32:
            v = s[tid] + s[tid + 32]
            off = 16
            while off > 0:
                v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
                off //= 2
            if tid == 0:
                out[cuda.blockIdx.x] = v

    return last_warp_sum


@pytest.mark.parametrize("threads", [128, 256])
def test_last_warp_reduction(target, rng, threads):
    x = rng.random(10_000).astype(np.float32)
    blocks = (x.size + threads - 1) // threads
    out = np.zeros(blocks, np.float32)
    make_last_warp_sum(threads)[blocks, threads](x, out)
    expected = np.pad(x, (0, blocks * threads - x.size)).reshape(blocks, threads)
    target.assert_result("last_warp_sum", out, expected.astype(np.float64).sum(1), rtol=1e-5)


def _match_reference(values, threads):
    """What match_all_sync / match_any_sync give each thread of blocks of
    `threads` threads over `values`, with the full mask: only the lanes that
    exist take part (Numba's test_warp_ops: 10 threads of equal values get
    0b1111111111)."""
    all_masks, any_masks = np.zeros(values.size, np.int64), np.zeros(values.size, np.int64)
    for i in range(values.size):
        warp = (i % threads) // 32 * 32 + (i // threads) * threads
        lanes = range(warp, min(warp + 32, (i // threads + 1) * threads))
        existing = sum(1 << (lane - warp) for lane in lanes)
        same = sum(1 << (lane - warp) for lane in lanes if values[lane] == values[i])
        all_masks[i] = existing if same == existing else 0
        any_masks[i] = same
    return all_masks, any_masks


@pytest.mark.parametrize("threads", [10, 40, 64])
def test_match_sync_when_fewer_than_32_threads_exist(target, threads):
    # Issue 12 section 3: match_all_sync gave the mask (0xffffffff) instead
    # of the lanes that exist when a warp had fewer than 32 threads.
    @cuda.jit
    def match(values, all_masks, all_equal, any_masks):
        i = cuda.grid(1)
        mask, equal = cuda.match_all_sync(0xFFFFFFFF, values[i])
        all_masks[i] = mask
        all_equal[i] = equal
        any_masks[i] = cuda.match_any_sync(0xFFFFFFFF, values[i])

    blocks = 2
    values = np.zeros(blocks * threads, np.int32)
    values[threads + 1] = 4  # one lane of the second block's first warp differs
    tail = np.arange(values.size - 3 * threads // 2)
    values[3 * threads // 2:] = np.where(tail % 3, 7, 8)  # two groups of lanes
    outputs = [np.zeros(values.size, np.int64), np.zeros(values.size, np.bool_),
               np.zeros(values.size, np.int64)]
    match[blocks, threads](values, *outputs)
    all_masks, any_masks = _match_reference(values, threads)
    if threads == 10:
        assert all_masks[:10].tolist() == [0b1111111111] * 10  # Numba's own case
    target.assert_result("match", outputs[0], all_masks)
    target.assert_result("match", outputs[1], all_masks != 0)
    target.assert_result("match", outputs[2], any_masks)


def test_ballot_in_the_first_warp_only(target, rng):
    @cuda.jit
    def first_warp_ballot(x, out):
        tid = cuda.threadIdx.x
        if tid < 32:
            b = cuda.ballot_sync(0xFFFFFFFF, x[cuda.grid(1)] > 0.5)
            if tid == 0:
                out[cuda.blockIdx.x] = b

    x = rng.random(3 * 96).astype(np.float32)
    out = np.zeros(3, np.uint32)
    first_warp_ballot[3, 96](x, out)
    lanes = (x.reshape(3, 96)[:, :32] > 0.5).astype(np.uint64)
    expected = (lanes << np.arange(32, dtype=np.uint64)).sum(1).astype(np.uint32)
    target.assert_result("first_warp_ballot", out, expected)


def test_warps_shuffle_in_different_branches(target):
    @cuda.jit
    def two_warps(out):
        tid = cuda.threadIdx.x
        lane = cuda.laneid
        if tid < 32:
            out[tid] = cuda.shfl_down_sync(0xFFFFFFFF, tid * 10, 1)
        else:
            out[tid] = cuda.shfl_xor_sync(0xFFFFFFFF, tid * 10, 3)
        out[64 + tid] = lane

    out = np.zeros(128, np.int64)
    two_warps[1, 64](out)
    lanes = np.arange(32)
    down = np.where(lanes + 1 < 32, (lanes + 1) * 10, lanes * 10)
    xor = (32 + (lanes ^ 3)) * 10
    target.assert_result("two_warps", out[:32], down)
    target.assert_result("two_warps", out[32:64], xor)
    target.assert_result("two_warps", out[64:], np.tile(lanes, 2))


def test_activemask_in_a_branch_that_splits_the_warp(target):
    @cuda.jit
    def masks(out):
        i = cuda.grid(1)
        lane = cuda.laneid
        if lane < 16:
            out[i] = cuda.activemask()
        else:
            out[i] = cuda.activemask() + 1
        out[64 + i] = cuda.activemask()

    out = np.zeros(128, np.int64)
    masks[1, 48](out)
    lanes = np.arange(48) % 32
    target.assert_result("masks", out[:48], np.where(lanes < 16, 0x0000FFFF, 0xFFFF0000 + 1))
    # After the branch the warp is whole again: 32 lanes, then the 16 of
    # the partial last warp.
    target.assert_result("masks", out[64:112], np.where(np.arange(48) < 32, 0xFFFFFFFF, 0xFFFF))


@on_targets("cpu")
def test_divergent_syncthreads_is_still_reported(target):
    # A collective that every thread reaches: block rounds.
    @cuda.jit
    def divergent(out):
        if cuda.threadIdx.x < 16:
            cuda.syncthreads()
        out[cuda.grid(1)] = cuda.shfl_xor_sync(0xFFFFFFFF, cuda.laneid, 1)

    with pytest.raises(RuntimeError) as info:
        divergent[1, 64](np.zeros(64))
    message = str(info.value)
    assert "kernel 'divergent' reached different barriers" in message
    assert "threads (0, 0, 0)..(15, 0, 0) at syncthreads" in message
    assert "threads (16, 0, 0)..(63, 0, 0) at shfl_xor" in message


@on_targets("cpu")
def test_divergent_syncthreads_is_reported_with_warp_rounds(target):
    # A collective in the first warp only: warp rounds; warp 0 waits at the
    # shuffle for lanes 0..15, which are at a syncthreads the others skip.
    @cuda.jit
    def divergent(out):
        tid = cuda.threadIdx.x
        if tid < 16:
            cuda.syncthreads()
        if tid < 32:
            out[tid] = cuda.shfl_xor_sync(0xFFFFFFFF, tid, 1)

    with pytest.raises(RuntimeError) as info:
        divergent[1, 64](np.zeros(64))
    message = str(info.value)
    assert "kernel 'divergent' reached different barriers" in message
    assert "threads (0, 0, 0)..(15, 0, 0) at syncthreads" in message
    assert "threads (16, 0, 0)..(31, 0, 0) at shfl_xor" in message
    assert "threads (32, 0, 0)..(63, 0, 0) finished" in message


@on_targets("cpu")
def test_collective_waiting_for_a_lane_at_syncthreads_is_reported(target):
    @cuda.jit
    def waits(out):
        lane = cuda.laneid
        if lane == 5:
            cuda.syncthreads()
        else:
            out[cuda.grid(1)] = cuda.ballot_sync(0xFFFFFFFF, lane > 3)

    with pytest.raises(RuntimeError) as info:
        waits[1, 32](np.zeros(32))
    message = str(info.value)
    assert "reached different barriers" in message
    assert "thread (5, 0, 0) at syncthreads" in message
    assert "threads (0, 0, 0)..(4, 0, 0) at vote_ballot" in message
