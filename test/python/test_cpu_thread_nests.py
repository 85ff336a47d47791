"""Rounds whose thread loop holds a loop (docs/cpu-target.md, "Thread loops
that hold a loop"): n-body's `for k in range(TILE): ax += ...` between two
barriers runs vectorised across the threads on the cpu target, each thread
adding its terms in its own order. The results must be those of each
thread adding alone, bit for bit: the same as float32 NumPy adding the
bodies in order, for every block size, with and without the fitted block
function, with a tile count fixed or given at run time."""

import math

import numpy as np
import pytest

from tidal import cuda, float32


def make_gravity(tile):
    @cuda.jit
    def gravity(pos, acc, softening, tiles):
        # tiles: how many of each tile's bodies a thread takes (<= tile)
        shared = cuda.shared.array(shape=(tile, 4), dtype=float32)
        i = cuda.grid(1)
        tid = cuda.threadIdx.x
        n = pos.shape[0]
        px = float32(0.0)
        py = float32(0.0)
        pz = float32(0.0)
        if i < n:
            px = pos[i, 0]
            py = pos[i, 1]
            pz = pos[i, 2]
        ax = float32(0.0)
        ay = float32(0.0)
        az = float32(0.0)
        for start in range(0, n, tile):
            j = start + tid
            for c in range(4):
                shared[tid, c] = pos[j, c] if j < n else float32(0.0)
            cuda.syncthreads()
            for k in range(tiles):
                dx = shared[k, 0] - px
                dy = shared[k, 1] - py
                dz = shared[k, 2] - pz
                r2 = dx * dx + dy * dy + dz * dz + softening
                inv = float32(1.0) / math.sqrt(r2)
                s = shared[k, 3] * inv * inv * inv
                ax += dx * s
                ay += dy * s
                az += dz * s
            cuda.syncthreads()
        if i < n:
            acc[i, 0] = ax
            acc[i, 1] = ay
            acc[i, 2] = az

    return gravity


def gravity_in_order(pos, softening, tile, tiles):
    # float32 throughout, the bodies of each tile in order, as each thread adds them
    n = pos.shape[0]
    blocks = (n + tile - 1) // tile
    padded = np.zeros((blocks * tile, 4), np.float32)
    padded[:n] = pos
    acc = np.zeros((n, 3), np.float32)
    for start in range(0, n, tile):
        for body in padded[start:start + tiles]:
            d = body[:3] - pos[:, :3]
            r2 = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2] + softening
            inv = np.float32(1.0) / np.sqrt(r2)
            s = body[3] * inv * inv * inv
            acc += d * s[:, None]
    return acc


@pytest.mark.parametrize("fitted_threads", ["0", str(1 << 30)])
@pytest.mark.parametrize("tile,extra,tiles", [(32, 0, 32), (64, -5, 64), (128, 7, 128),
                                              (64, 3, 17)])
def test_each_thread_adds_in_its_own_order(target, monkeypatch, rng, fitted_threads,
                                           tile, extra, tiles):
    # "0": the fitted block function from the first launch; 2^30: the
    # block function with its checks. extra: bodies past (or short of) a
    # multiple of the block; tiles < tile: an inner trip count known only
    # at run time.
    monkeypatch.setenv("TIDAL_CPU_FITTED_THREADS", fitted_threads)
    gravity = make_gravity(tile)
    n = 3 * tile + extra
    pos = rng.standard_normal((n, 4)).astype(np.float32)
    pos[:, 3] = np.abs(pos[:, 3])
    acc = np.zeros((n, 3), np.float32)
    softening = np.float32(0.01)
    gravity[(n + tile - 1) // tile, tile](pos, acc, softening, tiles)
    if target.ran("gravity"):
        np.testing.assert_array_equal(acc, gravity_in_order(pos, softening, tile, tiles))
