"""Threads that returned take no part in later barriers (issue 24 §1): on a
GPU an exited thread counts as arrived at every later syncthreads (PTX's
bar.sync waits for the non-exited threads), contributes nothing to
syncthreads_count/and/or, and its warp's collectives go on without it (their
masks still say who takes part). The cpu target's rounds skip finished
threads (docs/cpu-target.md, "Threads that finished"); threads that wait at
*different* barriers are still reported, and so, in debug mode only, is a
syncwarp whose mask names a thread that finished."""

import os

import numpy as np
import pytest

from tidal import cuda
from source_positions import position_of
from targets import on_targets


@cuda.jit
def half_return(a):
    # shared/bugs/exited_threads_at_barrier.py
    i = cuda.threadIdx.x
    if i >= 8:
        return
    cuda.syncthreads()
    a[i] = 1


def test_threads_that_returned_do_not_hold_up_syncthreads(target):
    a = np.zeros(16)
    half_return[1, 16](a)
    target.assert_result("half_return", a, np.r_[np.ones(8), np.zeros(8)])


@cuda.jit
def blelloch_scan(data, out):
    # Work-efficient exclusive scan of up to 64 values: the tree needs 32
    # threads; a block launched with more returns the others first.
    temp = cuda.shared.array(64, np.float64)
    n = data.size
    tid = cuda.threadIdx.x
    if tid >= 32:
        return
    temp[2 * tid] = data[2 * tid] if 2 * tid < n else 0.0
    temp[2 * tid + 1] = data[2 * tid + 1] if 2 * tid + 1 < n else 0.0
    offset = 1
    d = 32
    while d > 0:
        cuda.syncthreads()
        if tid < d:
            ai = offset * (2 * tid + 1) - 1
            bi = offset * (2 * tid + 2) - 1
            temp[bi] += temp[ai]
        offset *= 2
        d //= 2
    if tid == 0:
        temp[63] = 0
    d = 1
    while d < 64:
        offset //= 2
        cuda.syncthreads()
        if tid < d:
            ai = offset * (2 * tid + 1) - 1
            bi = offset * (2 * tid + 2) - 1
            t = temp[ai]
            temp[ai] = temp[bi]
            temp[bi] += t
        d *= 2
    cuda.syncthreads()
    if 2 * tid < n:
        out[2 * tid] = temp[2 * tid]
    if 2 * tid + 1 < n:
        out[2 * tid + 1] = temp[2 * tid + 1]


@pytest.mark.parametrize("threads", [32, 64, 100])
def test_blelloch_scan_whose_tail_threads_return(target, threads):
    data = np.arange(1, 41, dtype=np.float64)
    out = np.full(40, -1.0)
    blelloch_scan[1, threads](data, out)
    target.assert_result("blelloch_scan", out, np.r_[0.0, np.cumsum(data)[:-1]])


@cuda.jit
def bfs_expand(offsets, edges, frontier, visited, next_frontier, found):
    # One BFS step: threads whose vertex is not in the frontier return; the
    # others mark the unvisited neighbours and count them per block.
    v = cuda.grid(1)
    count = cuda.shared.array(1, np.int32)
    if cuda.threadIdx.x == 0:
        count[0] = 0
    cuda.syncthreads()
    if v >= frontier.size or frontier[v] == 0:
        return
    for e in range(offsets[v], offsets[v + 1]):
        u = edges[e]
        if visited[u] == 0:
            next_frontier[u] = 1
            cuda.atomic.add(count, 0, 1)
    cuda.syncthreads()
    found[v] = count[0]


def test_graph_kernel_returning_idle_threads(target, rng):
    vertices, block = 200, 32
    degrees = rng.integers(0, 5, vertices)
    offsets = np.r_[0, np.cumsum(degrees)].astype(np.int64)
    edges = rng.integers(0, vertices, offsets[-1]).astype(np.int64)
    frontier = (rng.random(vertices) < 0.3).astype(np.int32)
    visited = (rng.random(vertices) < 0.5).astype(np.int32)
    next_frontier = np.zeros(vertices, np.int32)
    found = np.full(vertices, -1, np.int32)
    blocks = -(-vertices // block)
    bfs_expand[blocks, block](offsets, edges, frontier, visited, next_frontier, found)

    expected_next = np.zeros(vertices, np.int32)
    expected_found = np.full(vertices, -1, np.int32)
    per_block = np.zeros(blocks, np.int32)
    for v in np.flatnonzero(frontier):
        for u in edges[offsets[v]:offsets[v + 1]]:
            if not visited[u]:
                expected_next[u] = 1
                per_block[v // block] += 1
    for v in np.flatnonzero(frontier):
        expected_found[v] = per_block[v // block]
    target.assert_result("bfs_expand", next_frontier, expected_next)
    target.assert_result("bfs_expand", found, expected_found)


@cuda.jit
def predicates_after_return(values, active, out):
    tid = cuda.threadIdx.x
    if tid >= active[0]:
        return
    p = values[tid] > 0
    out[tid, 0] = cuda.syncthreads_count(p)
    out[tid, 1] = cuda.syncthreads_and(p)
    out[tid, 2] = cuda.syncthreads_or(p)


@pytest.mark.parametrize("active, positive, expected", [
    # Threads 24..31 returned: they count for nothing, whatever their value
    # (and whatever an earlier launch left in their slots).
    (24, range(0, 24), (24, 1, 1)),
    (24, range(24, 32), (0, 0, 0)),
    (24, range(0, 12), (12, 0, 1)),
    (32, range(0, 32), (32, 1, 1)),
    (1, range(0, 1), (1, 1, 1)),
])
def test_syncthreads_count_and_or_over_the_threads_that_arrived(target, active, positive,
                                                               expected):
    # First a launch in which every thread holds, then the one checked: the
    # returned threads' predicates from the first must not count.
    out = np.full((32, 3), -1, np.int32)
    predicates_after_return[1, 32](np.ones(32), np.array([32]), out)
    values = -np.ones(32)
    values[list(positive)] = 1
    out = np.full((32, 3), -1, np.int32)
    predicates_after_return[1, 32](values, np.array([active]), out)
    expected_out = np.full((32, 3), -1, np.int32)
    expected_out[:active] = expected
    target.assert_result("predicates_after_return", out, expected_out, launches=2)


@cuda.jit
def warp_after_return(out):
    tid = cuda.threadIdx.x
    lane = cuda.laneid
    if lane >= 20:
        return
    out[tid, 0] = cuda.activemask()
    # Full mask: the lanes that returned do not hold it up and vote 0.
    out[tid, 1] = cuda.ballot_sync(0xFFFFFFFF, True)
    # The masks say who takes part: two groups of the same warp.
    if lane < 16:
        out[tid, 2] = cuda.ballot_sync(0x0000FFFF, lane % 2 == 0)
    else:
        out[tid, 2] = cuda.ballot_sync(0x000F0000, True)
    out[tid, 3] = cuda.shfl_xor_sync(0x000FFFFF, tid, 1)
    cuda.syncthreads()
    out[tid, 4] = cuda.syncthreads_count(True)


def test_warp_collectives_after_some_lanes_returned(target):
    out = np.full((64, 5), -1, np.int64)
    warp_after_return[1, 64](out)
    expected = np.full((64, 5), -1, np.int64)
    for tid in range(64):
        lane = tid % 32
        if lane >= 20:
            continue
        expected[tid] = (0x000FFFFF, 0x000FFFFF, 0x5555 if lane < 16 else 0x000F0000,
                         tid ^ 1, 40)
    target.assert_result("warp_after_return", out, expected)


@on_targets("cpu")
@pytest.mark.parametrize("debug", [False, True])
def test_threads_at_different_barriers_are_still_reported(target, debug):
    @cuda.jit(debug=debug, opt=not debug)
    def two_barriers(out):
        tid = cuda.threadIdx.x
        if tid >= 48:
            return
        if tid < 16:
            cuda.syncthreads()
        else:
            cuda.syncthreads()
        out[tid] = 1

    with pytest.raises(RuntimeError) as info:
        two_barriers[1, 64](np.zeros(64))
    message = str(info.value)
    # Located from the marker's !tidal.where (the absolute path), or from
    # the debug information in debug mode (the file's name).
    path = os.path.abspath(__file__) if not debug else os.path.basename(__file__)
    line, column = position_of(two_barriers.py_func, "cuda.syncthreads()")
    assert "kernel 'two_barriers' reached different barriers" in message
    assert (f"threads (0, 0, 0)..(15, 0, 0) at syncthreads at {path}:{line}:{column}; "
            f"threads (16, 0, 0)..(47, 0, 0) at syncthreads at {path}:{line + 2}:{column}; "
            f"threads (48, 0, 0)..(63, 0, 0) finished") in message


@cuda.jit
def syncwarp_after_return(out):
    lane = cuda.laneid
    if lane >= 8:
        return
    out[lane] = lane
    cuda.syncwarp(0xFFFFFFFF)
    out[8 + lane] = out[(lane + 1) % 8]


@cuda.jit(debug=True, opt=False)
def syncwarp_after_return_debug(out):
    lane = cuda.laneid
    if lane >= 8:
        return
    out[lane] = lane
    cuda.syncwarp(0xFFFFFFFF)
    out[8 + lane] = out[(lane + 1) % 8]


def test_syncwarp_with_lanes_that_returned_runs_without_debug(target):
    out = np.full(16, -1, np.int64)
    syncwarp_after_return[1, 32](out)
    target.assert_result("syncwarp_after_return", out, np.r_[np.arange(8), (np.arange(8) + 1) % 8])


@on_targets("cpu")
def test_syncwarp_naming_lanes_that_returned_is_reported_in_debug_mode(target):
    with pytest.raises(RuntimeError) as info:
        syncwarp_after_return_debug[1, 32](np.zeros(16, np.int64))
    message = str(info.value)
    line, column = position_of(syncwarp_after_return_debug.py_func, "cuda.syncwarp(0xFFFFFFFF)")
    assert (f"threads (0, 0, 0)..(7, 0, 0) of block (0, 0, 0) of kernel "
            f"'syncwarp_after_return_debug' wait at syncwarp at "
            f"{os.path.basename(__file__)}:{line}:{column} with mask 0xffffffff, "
            f"which names threads (8, 0, 0)..(31, 0, 0), finished") in message
    assert "debug mode" in message
    # The next launch runs normally.
    out = np.full(16, -1, np.int64)
    syncwarp_after_return[1, 32](out)
    assert (out[8:] == (np.arange(8) + 1) % 8).all()
