"""The cpu target's GPU semantics end to end: barriers (also in loops),
shared memory per block (static and dynamic), warp collectives, atomics
across blocks running in parallel, 3-D grids, print, and the debug mode's
reports."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tidal import cuda, float32, int32

THREADS = 128


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


def test_reduction_with_syncthreads_in_a_loop(rng):
    x = rng.random(10_000).astype(np.float32)
    blocks = (x.size + THREADS - 1) // THREADS
    out = np.zeros(blocks, np.float32)
    block_sum[blocks, THREADS](x, out)
    expected = np.pad(x, (0, blocks * THREADS - x.size)).reshape(blocks, THREADS).sum(1)
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_warp_shuffle_reduction_and_ballot(rng):
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
    np.testing.assert_allclose(sums, x.reshape(8, 32).sum(1), rtol=1e-5)
    bits = (x.reshape(8, 32) > 0.5).astype(np.uint64) << np.arange(32, dtype=np.uint64)
    np.testing.assert_array_equal(ballots, bits.sum(1).astype(np.uint32))


def test_shuffle_variants_follow_cuda():
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
    np.testing.assert_array_equal(out[:, 0], base + 3)
    np.testing.assert_array_equal(out[:, 1], np.where(lane >= 2, i - 2, i))
    np.testing.assert_array_equal(out[:, 2], np.where(lane + 5 < 32, i + 5, i))
    np.testing.assert_array_equal(out[:, 3], i ^ 1)
    np.testing.assert_array_equal(out[:, 4], lane)


def test_contended_atomics_across_blocks_are_exact(rng):
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
    np.testing.assert_array_equal(bins[:256], np.bincount(x, minlength=256))
    assert bins[256] == x.size
    # Each add returned the old value: together a permutation of 0..n-1.
    np.testing.assert_array_equal(np.sort(olds), np.arange(x.size))


def test_atomic_max_min_cas_and_float_add():
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
    assert list(ints) == [511, -511, 7]
    assert floats[0] == 256.0


def test_3d_grid_and_blocks():
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
    np.testing.assert_array_equal(out, expected)


def test_dynamic_shared_memory_sized_at_launch():
    @cuda.jit
    def reverse(x, out):
        s = cuda.shared.array(0, dtype=np.int32)
        t = cuda.threadIdx.x
        s[t] = x[t]
        cuda.syncthreads()
        out[t] = s[cuda.blockDim.x - 1 - t]

    x = np.arange(200, dtype=np.int32)
    out = np.zeros_like(x)
    reverse[1, 200, 0, 200 * 4](x, out)
    np.testing.assert_array_equal(out, x[::-1])


def test_shared_memory_is_per_block_and_syncthreads_count():
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
    np.testing.assert_array_equal(out, np.repeat(np.arange(40), 64))
    assert np.all(counts == len(range(0, 64, 3)))


def test_local_and_constant_arrays():
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
    np.testing.assert_array_equal(out, np.arange(16) * 3 + TABLE[np.arange(16) % 4])


TABLE = np.array([10, 20, 30, 40], dtype=np.int64)


def run_script(tmp_path, source):
    """Runs a kernel program in a fresh interpreter; returns (code, out, err)."""
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(source))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={"PYTHONPATH": ":".join(sys.path), "TIDAL_TARGET": "cpu"},
                          timeout=120)
    return done.returncode, done.stdout, done.stderr


def test_print_formats_like_numba(tmp_path):
    code, out, err = run_script(tmp_path, """
        import numpy as np
        from tidal import cuda

        @cuda.jit
        def k(x):
            i = cuda.grid(1)
            print("thread", i, "value", x[i], i < 1)

        k[1, 2](np.array([1.5, -2.25]))
    """)
    assert code == 0, err
    assert sorted(out.splitlines()) == ["thread 0 value 1.500000 True",
                                        "thread 1 value -2.250000 False"]


# --- debug mode ---------------------------------------------------------------


def test_out_of_bounds_access_is_reported():
    @cuda.jit(debug=True)
    def shifted(x, out):
        i = cuda.grid(1)
        out[i] = x[i + 1]

    with pytest.raises(IndexError) as info:
        shifted[1, 10](np.zeros(10), np.zeros(10))
    message = str(info.value)
    assert message.startswith("index 10 is out of bounds for axis 0 with size 10 in kernel "
                              "'shifted' at ")
    assert "test_cpu_target.py:" in message and "array 'x'" in message
    assert "thread (9, 0, 0) of block (0, 0, 0)" in message
    # The next launch of a correct kernel works.
    out = np.zeros(10)
    shifted[1, 9](np.arange(10.0), out)
    np.testing.assert_array_equal(out[:9], np.arange(1.0, 10.0))


def test_tidal_cpu_debug_checks_every_kernel(tmp_path):
    code, out, err = run_script(tmp_path, """
        import numpy as np
        from tidal import cuda

        @cuda.jit
        def k(out):
            out[cuda.grid(1)] = 1

        backing = np.zeros(8)
        try:
            k[1, 5](backing[:4])   # thread 4 is out of bounds
            print("unchecked, wrote", backing[4])
        except IndexError as e:
            print("IndexError:", e)
    """)
    assert code == 0, err
    assert out.strip() == "unchecked, wrote 1.0"  # without the variable: unchecked
    script = tmp_path / "program.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={"PYTHONPATH": ":".join(sys.path), "TIDAL_TARGET": "cpu",
                               "TIDAL_CPU_DEBUG": "1"}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "IndexError: index 4 is out of bounds for axis 0 with size 4 in kernel 'k'" in done.stdout


def test_failed_assert_in_debug_mode():
    @cuda.jit(debug=True)
    def k(out):
        i = cuda.grid(1)
        assert i < 5, "too many threads"
        out[i] = i

    with pytest.raises(AssertionError) as info:
        k[1, 8](np.zeros(8))
    assert "too many threads (assert i < 5 in kernel 'k' at" in str(info.value)
    assert "thread (5, 0, 0) of block (0, 0, 0)" in str(info.value)


def test_divergent_barrier_is_reported_not_hung():
    @cuda.jit
    def divergent(out):
        if cuda.threadIdx.x < 16:
            cuda.syncthreads()
        out[cuda.grid(1)] = 1

    with pytest.raises(RuntimeError) as info:
        divergent[1, 64](np.zeros(64))
    message = str(info.value)
    assert "kernel 'divergent' reached different barriers" in message
    assert "threads (0, 0, 0)..(15, 0, 0) at syncthreads" in message
    assert "threads (16, 0, 0)..(63, 0, 0) finished" in message


def test_shared_memory_is_poisoned_in_debug_mode():
    @cuda.jit(debug=True)
    def read_before_write(out):
        s = cuda.shared.array(32, float32)
        out[cuda.threadIdx.x] = s[cuda.threadIdx.x]

    out = np.zeros(32, np.float32)
    read_before_write[1, 32](out)
    assert np.all(np.isnan(out))


def test_one_worker_runs_blocks_in_order(tmp_path):
    code, out, err = run_script(tmp_path, """
        import os
        import numpy as np
        from tidal import cuda, _tidal

        @cuda.jit
        def order(counter, seen):
            if cuda.threadIdx.x == 0:
                seen[cuda.blockIdx.x] = cuda.atomic.add(counter, 0, 1)

        counter = np.zeros(1, np.int64)
        seen = np.zeros(500, np.int64)
        order[500, 32](counter, seen)
        print(_tidal.cpu_worker_count(), bool(np.all(seen == np.arange(500))))
    """)
    assert code == 0, err
    assert int(out.split()[0]) == os.cpu_count()  # by default one worker per core
    script = tmp_path / "program.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={"PYTHONPATH": ":".join(sys.path), "TIDAL_TARGET": "cpu",
                               "TIDAL_CPU_THREADS": "1"}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "True"]
