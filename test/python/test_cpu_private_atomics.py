"""Privatised global atomics (docs/cpu-target.md, "Privatised atomics"): on
the cpu target, a launch whose every global atomic is an integer
add/sub/and/or/xor/max/min with its old value unused, on arrays that the
kernel touches only with such atomics, runs on every core with a private
copy of each such array per host thread, combined into the array at the
end; others run on one host thread. The results are the atomics' on every
target; tidal._tidal.live_code()["cpu_privatised_launches"] counts the
launches that privatised (cpu target only)."""

import ast
import gc
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tidal import _tidal, cuda, int64
from child_processes import python_environment
from targets import on_targets


def privatised_launches():
    return _tidal.live_code()["cpu_privatised_launches"]


def expect_privatised(target, before, privatised):
    """On the cpu target with more than one host thread (cpu_worker_count()
    counts the launching thread), whether the launch since `before`
    privatised; with one, every launch runs alone."""
    if target.name != "cpu":
        return
    expected = 1 if privatised and _tidal.cpu_worker_count() > 1 else 0
    assert privatised_launches() - before == expected


@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i], 1)


def launch_1d(kernel, n, *args, block=128):
    kernel[(n + block - 1) // block, block](*args)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64])
def test_histogram_with_many_collisions_equals_numpy(target, rng, dtype):
    n, nbins = 200_003, 37
    x = rng.integers(0, nbins, n).astype(np.int64)
    x[: n // 3] = 5  # one bin that every block hits
    bins = np.full(nbins, 7, dtype)  # added to what is there
    before = privatised_launches()
    launch_1d(histogram, n, x, bins)
    expect_privatised(target, before, True)
    target.assert_result("histogram", bins,
                         (np.bincount(x, minlength=nbins) + 7).astype(dtype))


def test_bins_past_the_private_limit_take_the_atomic_path(target, rng):
    # 256 KiB of private copies at most: 100,000 int32 bins (400 KB) run alone.
    n, nbins = 300_000, 100_000
    x = rng.integers(0, nbins, n)
    bins = np.zeros(nbins, np.int32)
    before = privatised_launches()
    launch_1d(histogram, n, x, bins)
    expect_privatised(target, before, False)
    target.assert_result("histogram", bins, np.bincount(x, minlength=nbins).astype(np.int32))


def test_views_reversed_and_strided_are_privatised(target, rng):
    n, nbins = 50_000, 64
    x = rng.integers(0, nbins, n)
    counts = np.bincount(x, minlength=nbins)
    store = np.full(2 * nbins, -1, np.int64)
    positions = np.arange(2 * nbins)
    for view, at in [(store[::2], positions[::2]), (store[::-1][::2], positions[::-1][::2])]:
        store[:] = -1
        target.forget_driver_calls()
        before = privatised_launches()
        launch_1d(histogram, n, x, view)
        expect_privatised(target, before, True)
        if not target.ran("histogram"):
            continue
        np.testing.assert_array_equal(store[at], counts - 1)
        # The elements between the view's stay as they were.
        np.testing.assert_array_equal(np.delete(store, at), -1)


@cuda.jit
def scatter_max(keys, values, out):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.max(out, keys[i], values[i])


@cuda.jit
def scatter_min(keys, values, out):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.min(out, keys[i], values[i])


@cuda.jit
def scatter_or(keys, values, out):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.or_(out, keys[i], values[i])


@cuda.jit
def scatter_and(keys, values, out):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.and_(out, keys[i], values[i])


@cuda.jit
def scatter_xor(keys, values, out):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.xor(out, keys[i], values[i])


@cuda.jit
def scatter_sub(keys, values, out):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.sub(out, keys[i], values[i])


def reference(operation, keys, values, out):
    ufunc = {"max": np.maximum, "min": np.minimum, "or": np.bitwise_or,
             "and": np.bitwise_and, "xor": np.bitwise_xor, "sub": np.subtract}[operation]
    ufunc.at(out, keys, values)
    return out


@pytest.mark.parametrize("operation", ["max", "min", "or", "and", "xor", "sub"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64])
def test_other_operations_equal_numpy(target, rng, operation, dtype):
    kernel = {"max": scatter_max, "min": scatter_min, "or": scatter_or, "and": scatter_and,
              "xor": scatter_xor, "sub": scatter_sub}[operation]
    n, nbins = 100_000, 50
    keys = rng.integers(0, nbins, n)
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    start = rng.integers(info.min, info.max, nbins, dtype=dtype, endpoint=True)
    out = start.copy()
    before = privatised_launches()
    launch_1d(kernel, n, keys, values, out)
    expect_privatised(target, before, True)
    target.assert_result(kernel.__name__, out, reference(operation, keys, values, start.copy()))


@cuda.jit
def tickets(keys, bins, old):
    i = cuda.grid(1)
    if i < keys.size:
        old[i] = cuda.atomic.add(bins, keys[i], 1)


def test_a_kernel_that_reads_the_old_value_is_not_privatised(target, rng):
    n, nbins = 20_000, 16
    keys = rng.integers(0, nbins, n)
    bins = np.zeros(nbins, np.int64)
    old = np.full(n, -1, np.int64)
    before = privatised_launches()
    launch_1d(tickets, n, keys, bins, old)
    expect_privatised(target, before, False)
    if not target.ran("tickets"):
        return
    counts = np.bincount(keys, minlength=nbins)
    np.testing.assert_array_equal(bins, counts)
    # Each bin handed out the tickets 0..count-1, each once.
    for b in range(nbins):
        np.testing.assert_array_equal(np.sort(old[keys == b]), np.arange(counts[b]))


@cuda.jit
def count_and_mark(keys, bins):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.add(bins, keys[i], 1)
    if i == 0:
        bins[bins.size - 1] = -100  # a plain store to the same array


def test_atomics_mixed_with_plain_stores_are_not_privatised(target, rng):
    n, nbins = 20_000, 16
    keys = rng.integers(0, nbins - 1, n)  # the last bin only gets the store
    bins = np.zeros(nbins, np.int32)
    before = privatised_launches()
    launch_1d(count_and_mark, n, keys, bins)
    expect_privatised(target, before, False)
    expected = np.bincount(keys, minlength=nbins).astype(np.int32)
    expected[-1] = -100
    target.assert_result("count_and_mark", bins, expected)


@on_targets("cpu")
def test_arrays_that_overlap_are_not_privatised(target, rng):
    n, nbins = 10_000, 32
    x = rng.integers(0, nbins, n)
    store = np.zeros(n + nbins, np.int64)
    # Separate parts of one buffer: privatised.
    keys, bins = store[:n], store[n:]
    keys[:] = x
    before = privatised_launches()
    launch_1d(histogram, n, keys, bins)
    expect_privatised(target, before, True)
    np.testing.assert_array_equal(bins, np.bincount(x, minlength=nbins))
    # The keys read from the bins' memory: not privatised.
    store[:] = 0
    before = privatised_launches()
    launch_1d(histogram, 64, store[:64], store[:nbins])
    expect_privatised(target, before, False)


@on_targets("cpu")
@pytest.mark.parametrize("debug", [False, True])
def test_an_index_error_names_the_thread_and_keeps_the_updates_that_ran(target, debug):
    @cuda.jit(debug=debug)
    def checked_histogram(x, bins):
        i = cuda.grid(1)
        if i < x.size:
            cuda.atomic.add(bins, x[i], 1)

    nbins, blocks, block = 64, 400, 64
    x = np.arange(blocks * block) % nbins
    x[-3] = nbins  # thread 61 of the last block
    bins = np.zeros(nbins, np.int32)
    before = privatised_launches()
    with pytest.raises(IndexError) as info:
        checked_histogram[blocks, block](x, bins)
    expect_privatised(target, before, True)
    assert ("index 64 is out of bounds for axis 0 with size 64 in kernel 'checked_histogram'"
            in str(info.value))
    assert str(info.value).endswith(f"thread (61, 0, 0) of block ({blocks - 1}, 0, 0)")
    # What the blocks that ran added is in the array (combined after the
    # failure), and nothing else.
    full = np.bincount(x[x < nbins], minlength=nbins)
    assert (bins <= full).all() and bins.sum() > 0
    # The copies are clean for the next launch.
    x[-3] = 0
    bins[:] = 0
    checked_histogram[blocks, block](x, bins)
    np.testing.assert_array_equal(bins, np.bincount(x, minlength=nbins))


@on_targets("cpu")
def test_a_kernel_from_the_disk_cache_is_privatised(target, tmp_path):
    (tmp_path / "cached_histogram.py").write_text(textwrap.dedent("""
        from tidal import cuda

        @cuda.jit(cache=True)
        def histogram(x, bins):
            i = cuda.grid(1)
            if i < x.size:
                cuda.atomic.add(bins, x[i], 1)
    """))
    program = f"""
        import sys
        import numpy as np
        sys.path.insert(0, {str(tmp_path)!r})
        from tidal import _tidal
        import cached_histogram
        x = np.arange(100_000) % 50
        bins = np.zeros(50, np.int64)
        cached_histogram.histogram[400, 256](x, bins)
        stats = cached_histogram.histogram.stats
        print(repr((sum(stats.cache_hits.values()), _tidal.live_code()["cpu_privatised_launches"],
                    bool((bins == 2000).all()))))
    """
    results = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(program)],
                              capture_output=True, text=True, timeout=120,
                              env=python_environment(TIDAL_TARGET="cpu", TIDAL_CPU_THREADS="2",
                                                     TIDAL_CACHE_DIR=str(tmp_path / "cache")))
        assert done.returncode == 0, done.stderr
        results.append(ast.literal_eval(done.stdout.strip().splitlines()[-1]))
    assert results == [(0, 1, True), (1, 1, True)]


@on_targets("cpu")
def test_ctrl_c_interrupts_a_privatised_launch_and_keeps_its_counts(target):
    program = """
        import os, signal, threading
        import numpy as np
        from tidal import _tidal, cuda

        @cuda.jit
        def count_then_spin(flag, bins):
            # bins only gets atomics: privatised. Thread 0 of block 0 counts
            # once, then waits for a flag nobody sets.
            cuda.atomic.add(bins, cuda.threadIdx.x % 4, 1)
            if cuda.blockIdx.x == 0:
                while flag[0] == 0:
                    pass

        def press_ctrl_c_until(done):
            while not done.wait(0.5):
                os.kill(os.getpid(), signal.SIGINT)

        flag = np.zeros(1, np.int32)
        bins = np.zeros(4, np.int64)
        done = threading.Event()
        threading.Thread(target=press_ctrl_c_until, args=(done,)).start()
        try:
            count_then_spin[64, 32](flag, bins)
            print("finished")
        except KeyboardInterrupt:
            print("interrupted")
        done.set()
        # Whole blocks add as much to every bin; the interrupted thread's
        # one count is in bins[0] only if its copy was combined.
        print(_tidal.live_code()["cpu_privatised_launches"], bins[0] - bins[1],
              int(bins[1] == bins[2] == bins[3] > 0))

        @cuda.jit
        def histogram(x, bins):
            i = cuda.grid(1)
            if i < x.size:
                cuda.atomic.add(bins, x[i], 1)

        bins[:] = 0
        histogram[100, 100](np.arange(10_000) % 4, bins)
        print(bins.tolist())
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(program)],
                          capture_output=True, text=True, timeout=120,
                          env=python_environment(TIDAL_TARGET="cpu", TIDAL_CPU_THREADS="2"))
    assert done.returncode == 0, done.stderr
    # Interrupted; what the blocks that ran counted reached the array, the
    # interrupted one's too; the copies were clean for the next launch.
    assert done.stdout.splitlines() == ["interrupted", "1 1 1", "[2500, 2500, 2500, 2500]"], (
        done.stdout + done.stderr)


@on_targets("cpu")
def test_a_fitted_block_function_is_privatised_too(target, monkeypatch):
    # y[i]'s check is passed by every block that lies inside y: the first
    # launch builds the fitted block function (test_cpu_fitted_blocks.py),
    # which gets the plan of the kernel's block function.
    monkeypatch.setenv("TIDAL_CPU_FITTED_THREADS", "0")

    @cuda.jit
    def double_and_count(x, y, bins):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = x[i] * 2
            cuda.atomic.add(bins, x[i], 1)

    n = 100_000
    x = np.arange(n) % 50
    y = np.zeros(n, np.int64)
    bins = np.zeros(50, np.int64)
    gc.collect()  # earlier tests' fitted functions, collected midway, would change the count
    gc.disable()
    try:
        fitted = _tidal.live_code()["cpu_fitted_block_functions"]
        for launch in range(1, 3):
            before = privatised_launches()
            double_and_count[(n + 127) // 128, 128](x, y, bins)
            expect_privatised(target, before, True)
            assert _tidal.live_code()["cpu_fitted_block_functions"] == fitted + 1
            np.testing.assert_array_equal(bins, np.full(50, 2000 * launch))
            np.testing.assert_array_equal(y, 2 * x)
    finally:
        gc.enable()


@cuda.jit
def block_sums_into_total(x, total):
    # A tree reduction per block (shared memory, barriers), then one
    # atomic per block into a global total.
    buf = cuda.shared.array(256, int64)
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
        cuda.atomic.add(total, 0, buf[0])


def test_a_reduction_with_barriers_into_one_total_is_privatised(target, rng):
    x = rng.integers(-1000, 1000, 1 << 18)
    total = np.array([123], np.int64)
    before = privatised_launches()
    block_sums_into_total[x.size // 256, 256](x, total)
    expect_privatised(target, before, True)
    target.assert_result("block_sums_into_total", total, [123 + x.sum()])


# A kernel with atomics and a small body runs four threads per iteration of
# its thread loop on the cpu target (test/lit/plugin/lower-host-serial-unroll.ll),
# then the block's remaining one to three: every block shape counts each
# thread once, and a failing thread inside a group of four is the one named.
@pytest.mark.parametrize("block", [1, 3, 5, 127, 255, (7, 3), (2, 3, 5)])
def test_every_thread_of_an_odd_block_counts_once(target, rng, block):
    @cuda.jit
    def count_threads(x, bins):
        y, z = cuda.threadIdx.y, cuda.threadIdx.z
        row = cuda.blockDim.x * (y + cuda.blockDim.y * z)
        t = cuda.blockIdx.x * cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z + row + cuda.threadIdx.x
        if t < x.size:
            cuda.atomic.add(bins, x[t], 1)
            cuda.atomic.add(bins, bins.size - 1, 1)  # every thread once

    shape = block if isinstance(block, tuple) else (block,)
    threads = int(np.prod(shape))
    n = 1000 * threads + threads // 2  # the last block part-filled
    x = rng.integers(0, 16, n)
    bins = np.zeros(17, np.int64)
    count_threads[(n + threads - 1) // threads, shape](x, bins)
    want = np.bincount(x, minlength=17)
    want[16] += n
    target.assert_result("count_threads", bins, want)


@on_targets("cpu")
@pytest.mark.parametrize("bad", [0, 2, 5, 6])
def test_the_failing_thread_of_an_unrolled_group_is_named(target, bad):
    @cuda.jit
    def small_histogram(x, bins):
        i = cuda.grid(1)
        if i < x.size:
            cuda.atomic.add(bins, x[i], 1)

    blocks, block = 10, 7
    x = np.zeros(blocks * block, np.int64)
    x[4 * block + bad] = 9  # past the 8 bins: thread `bad` of block 4
    bins = np.zeros(8, np.int32)
    with pytest.raises(IndexError) as info:
        small_histogram[blocks, block](x, bins)
    assert "index 9 is out of bounds for axis 0 with size 8" in str(info.value)
    assert str(info.value).endswith(f"thread ({bad}, 0, 0) of block (4, 0, 0)")
