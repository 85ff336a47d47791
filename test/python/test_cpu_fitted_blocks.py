"""The cpu target's fitted block functions (docs/cpu-target.md, "Blocks that
pass their checks"): compile() builds a kernel's block function only; the
first launch whose blocks pass some of its store checks by their shape
builds the fitted block function (counted by tidal._tidal.live_code()),
which runs those blocks without the checks, and every block that does not
fit runs the block function, checks and all. Both report IndexError and
faults. The cuda target has no such thing: these tests are the cpu
target's."""

import ast
import gc
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tidal import _tidal, cuda, float32
from child_processes import python_environment
from targets import on_targets


def fitted_count():
    return _tidal.live_code()["cpu_fitted_block_functions"]


@pytest.fixture(autouse=True)
def fitted_at_the_first_fitting_launch(monkeypatch):
    # These tests launch small grids: build the fitted block function at the
    # first fitting launch, not after 2^20 threads (the default, which
    # test_the_fitted_function_waits_for_enough_work checks).
    monkeypatch.setenv("TIDAL_CPU_FITTED_THREADS", "0")


@pytest.fixture(autouse=True)
def no_collection_during_the_test():
    # The count is of fitted block functions alive: earlier tests' kernels,
    # collected in the middle of a test, would lower it.
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def make_reduction():
    # buf[tid] is checked against 256: blocks of at most 256 threads fit.
    @cuda.jit
    def block_sums(x, sums):
        buf = cuda.shared.array(256, float32)
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

    return block_sums


@on_targets("cpu")
def test_compile_builds_no_fitted_block_function_and_a_fitting_launch_builds_one(target):
    block_sums = make_reduction()
    before = fitted_count()
    block_sums.compile("void(float32[::1], float32[::1])")
    assert fitted_count() == before  # compiled, not launched: nothing more
    x = np.arange(4096, dtype=np.float32) % 7
    sums = np.zeros(32, np.float32)
    block_sums[32, 128](x, sums)
    assert fitted_count() == before + 1
    np.testing.assert_array_equal(sums, x.reshape(32, 128).sum(axis=1))
    # Later launches, fitting or not, build nothing more.
    sums = np.zeros(16, np.float32)
    block_sums[16, 256](x, sums)
    np.testing.assert_array_equal(sums, x.reshape(16, 256).sum(axis=1))
    assert fitted_count() == before + 1


@on_targets("cpu")
def test_blocks_of_more_rows_get_a_fitted_function_per_shape(target):
    # tile[ty, tx] is checked against (16, 17): every block below fits. A
    # block of more than one row gets a fitted function specialised to its
    # shape (its thread loops' trip counts constants), up to 4 shapes; blocks
    # of one row share one; a fifth shape runs the block function.
    def make():
        @cuda.jit
        def transpose(a, out):
            tile = cuda.shared.array((16, 17), float32)
            tx = cuda.threadIdx.x
            ty = cuda.threadIdx.y
            x = cuda.blockIdx.x * cuda.blockDim.x + tx
            y = cuda.blockIdx.y * cuda.blockDim.y + ty
            if y < a.shape[0] and x < a.shape[1]:
                tile[ty, tx] = a[y, x]
            cuda.syncthreads()
            if y < a.shape[0] and x < a.shape[1]:
                out[x, y] = tile[ty, tx] + ty * 0.0
        return transpose

    transpose = make()
    a = np.arange(37 * 29, dtype=np.float32).reshape(37, 29)
    before = fitted_count()

    def run(block):
        out = np.zeros((29, 37), np.float32)
        grid = (-(-29 // block[0]), -(-37 // block[1]))
        transpose[grid, block](a, out)
        np.testing.assert_array_equal(out, a.T, err_msg=f"block {block}")

    built = 0
    for block in ((16, 16), (8, 8), (16, 4), (4, 16)):
        run(block)
        built += 1
        assert fitted_count() == before + built, block
        run(block)  # again: the same function
        assert fitted_count() == before + built, block
    run((8, 4))  # a fifth shape: the block function, checks and all
    run((16, 1))  # one row: a fitted function for every block of one row
    run((8, 1))
    assert fitted_count() == before + built + 1
    del transpose
    gc.collect()
    assert fitted_count() == before


@on_targets("cpu")
def test_a_launch_that_does_not_fit_builds_nothing_and_runs_the_checks(target):
    @cuda.jit
    def guarded_copy(x, out):
        buf = cuda.shared.array(64, float32)
        tid = cuda.threadIdx.x
        if tid < 64:
            buf[tid] = x[tid]
        cuda.syncthreads()
        if tid < 64:
            out[tid] = buf[63 - tid]

    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    before = fitted_count()
    guarded_copy[1, 128](x, out)  # 128 threads > 64: the block function
    np.testing.assert_array_equal(out, x[::-1])
    assert fitted_count() == before
    out[:] = 0
    guarded_copy[1, 64](x, out)  # fits: the fitted block function, same result
    np.testing.assert_array_equal(out, x[::-1])
    assert fitted_count() == before + 1


@on_targets("cpu")
def test_index_errors_come_from_both_block_functions(target):
    # buf[tid] is implied by blocks of at most 32 threads; out[tid + 1] is
    # checked in both copies.
    @cuda.jit
    def shift_through_shared(x, out):
        buf = cuda.shared.array(32, float32)
        tid = cuda.threadIdx.x
        buf[tid] = x[tid]
        cuda.syncthreads()
        out[tid + 1] = buf[tid]

    x = np.arange(40, dtype=np.float32)
    before = fitted_count()
    out = np.zeros(33, np.float32)
    shift_through_shared[1, 32](x, out)
    np.testing.assert_array_equal(out[1:], x[:32])
    assert fitted_count() == before + 1
    # The fitted block function's own check: out has 32 elements.
    with pytest.raises(IndexError) as info:
        shift_through_shared[1, 32](x, np.zeros(32, np.float32))
    message = str(info.value)
    assert message.startswith("index 32 is out of bounds for axis 0 with size 32 in kernel "
                              "'shift_through_shared' at "), message
    assert "array 'out'" in message and "thread (31, 0, 0) of block (0, 0, 0)" in message
    # The block function's check of buf[tid], for a block of 40 threads.
    with pytest.raises(IndexError) as info:
        shift_through_shared[1, 40](x, np.zeros(64, np.float32))
    message = str(info.value)
    assert message.startswith("index 32 is out of bounds for axis 0 with size 32 in kernel "
                              "'shift_through_shared' at "), message
    assert "thread (32, 0, 0) of block (0, 0, 0)" in message
    assert fitted_count() == before + 1


def run_program(source, threads=1):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(source)], capture_output=True,
                          text=True, timeout=120,
                          env=python_environment(TIDAL_TARGET="cpu",
                                                 TIDAL_CPU_THREADS=str(threads),
                                                 TIDAL_CPU_FITTED_THREADS="0"))
    assert done.returncode == 0, done.stderr
    return done.stdout


@on_targets("cpu")
def test_faults_come_from_both_block_functions(target):
    # A read far away faults (reads are not checked without debug=True), in
    # a block that fits (the fitted block function) and in one that does not.
    out = run_program("""
        import numpy as np
        from tidal import _tidal, cuda, float32

        @cuda.jit
        def wild(a, far):
            buf = cuda.shared.array(32, float32)
            tid = cuda.threadIdx.x
            if tid < 32:
                buf[tid] = a[tid + far]

        a = np.zeros(64, np.float32)
        for block in (32, 64):
            try:
                wild[1, block](a, 1 << 40)
                print("no error")
            except RuntimeError as e:
                print("error:", e)
            print(_tidal.live_code()["cpu_fitted_block_functions"])
        wild[1, 32](a, 0)
        print("pool ok")
    """)
    lines = out.splitlines()
    assert lines[0].startswith("error: kernel 'wild' faulted: illegal memory access (SIGSEGV"), out
    assert lines[1] == "1", out  # the first launch fitted
    assert lines[2].startswith("error: kernel 'wild' faulted: illegal memory access (SIGSEGV"), out
    assert lines[3] == "1", out
    assert lines[4] == "pool ok", out


@on_targets("cpu")
def test_a_cache_hit_builds_the_fitted_block_function_at_its_launch(target, tmp_path):
    (tmp_path / "cached_sums.py").write_text(textwrap.dedent("""
        import numpy as np
        from tidal import cuda, float32

        @cuda.jit(cache=True)
        def sums_of_pairs(x, out):
            buf = cuda.shared.array(128, float32)
            tid = cuda.threadIdx.x
            buf[tid] = x[cuda.grid(1)]
            cuda.syncthreads()
            out[cuda.grid(1)] = buf[tid] + buf[tid ^ 1]
    """))
    program = f"""
        import sys
        import numpy as np
        sys.path.insert(0, {str(tmp_path)!r})
        from tidal import _tidal
        import cached_sums
        x = np.arange(256, dtype=np.float32)
        out = np.zeros(256, np.float32)
        cached_sums.sums_of_pairs[2, 128](x, out)
        stats = cached_sums.sums_of_pairs.stats
        print(repr((sum(stats.cache_hits.values()), _tidal.live_code()["cpu_fitted_block_functions"],
                    bool((out == x + (x.astype(int) ^ 1)).all()))))
    """
    environment = {"TIDAL_CACHE_DIR": str(tmp_path / "cache"), "TIDAL_CPU_FITTED_THREADS": "0"}
    results = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(program)],
                              capture_output=True, text=True, timeout=120,
                              env=python_environment(TIDAL_TARGET="cpu", **environment))
        assert done.returncode == 0, done.stderr
        results.append(ast.literal_eval(done.stdout.strip().splitlines()[-1]))
    assert results == [(0, 1, True), (1, 1, True)]


@on_targets("cpu")
def test_blocks_inside_the_array_skip_the_check_and_the_others_keep_it(target):
    # Without debug=True: `out[i]` is checked against out's length, which the
    # guard on x does not imply. Blocks that lie inside out run the fitted
    # block function, without the check; the block that reaches past it runs
    # the block function, and its thread whose index is out's length gets
    # the IndexError.
    @cuda.jit
    def saxpy_into(a, x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + y[i]

    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, np.float32)
    out = np.zeros(1000, np.float32)
    before = fitted_count()
    saxpy_into[8, 128](np.float32(2), x, y, out)  # blocks 0..6 fitted, 7 not
    np.testing.assert_array_equal(out, 2 * x + 1)
    assert fitted_count() == before + 1
    # only block 5 (indices 640..767, guarded below 720) reaches past 700
    short = np.zeros(700, np.float32)
    with pytest.raises(IndexError) as info:
        saxpy_into[6, 128](np.float32(2), x[:720], y[:720], short)
    message = str(info.value)
    assert message.startswith("index 700 is out of bounds for axis 0 with size 700 in kernel "
                              "'saxpy_into' at "), message
    assert "thread (60, 0, 0) of block (5, 0, 0)" in message, message
    np.testing.assert_array_equal(short[:640], 2 * x[:640] + 1)


@on_targets("cpu")
def test_a_launch_whose_first_block_passes_the_array_builds_nothing(target):
    @cuda.jit
    def fill(out):
        i = cuda.grid(1)
        if i < 10:
            out[i] = i

    before = fitted_count()
    out = np.zeros(10, np.float32)
    fill[1, 32](out)  # 32 threads > 10 elements: no block lies inside out
    np.testing.assert_array_equal(out, np.arange(10))
    assert fitted_count() == before


@on_targets("cpu")
def test_the_fitted_function_waits_for_enough_work(target, monkeypatch):
    # By default the fitted block function is built once the kernel's fitting
    # launches have run 2^20 threads: small launches run the block function
    # and build nothing; the launch that reaches 2^20 builds it and runs it.
    monkeypatch.delenv("TIDAL_CPU_FITTED_THREADS")
    block_sums = make_reduction()
    before = fitted_count()
    x = np.arange(1 << 18, dtype=np.float32) % 7
    for launch in range(4):  # 2^18 threads each
        sums = np.zeros(1024, np.float32)
        block_sums[1024, 256](x, sums)
        np.testing.assert_array_equal(sums, x.reshape(1024, 256).sum(axis=1))
        assert fitted_count() == before + (launch == 3)
    # The threshold is the one in force when the kernel is compiled.
    monkeypatch.setenv("TIDAL_CPU_FITTED_THREADS", str(1 << 12))
    other = make_reduction()
    other[8, 256](np.ones(2048, np.float32), np.zeros(8, np.float32))  # 2048 threads
    assert fitted_count() == before + 1
    other[8, 256](np.ones(2048, np.float32), np.zeros(8, np.float32))  # 4096: built
    assert fitted_count() == before + 2


@on_targets("cpu")
def test_a_threshold_that_is_not_a_number_is_an_error(target, monkeypatch):
    monkeypatch.setenv("TIDAL_CPU_FITTED_THREADS", "lots")
    with pytest.raises(Exception, match="TIDAL_CPU_FITTED_THREADS must be a number of threads"):
        make_reduction().compile("void(float32[::1], float32[::1])")


# A guard of the kernel's own, cuda.grid's index compared with an integer
# argument (`if i < n:`), is a condition too (test/lit/plugin/
# lower-host-block-shape.ll, guarded_load): the fitted copy has no test of
# it where every thread of the block is below n.
@on_targets("cpu")
@pytest.mark.parametrize("n", [1000, 1024, 0, -5, -(1 << 40)])
def test_a_guard_on_an_argument_is_a_condition_that_holds_only_where_it_should(target, n):
    @cuda.jit
    def guarded_copy(x, out, n):
        i = cuda.grid(1)
        if i < n:
            out[i] = x[i] * 2
        else:
            if i < out.size:
                out[i] = -1

    # n = 1000: the blocks below 1000 fit, the 4th (768..1023) does not; n
    # < 1 (0, negative): no block fits, the guard sends every thread to the
    # else. The fitted function is built when the first block fits.
    x = np.arange(2048, dtype=np.float32)
    out = np.zeros(2048, np.float32)
    before = fitted_count()
    guarded_copy[8, 256](x, out, n)
    want = np.where(np.arange(2048) < n, x * 2, -1).astype(np.float32)
    np.testing.assert_array_equal(out, want)
    assert fitted_count() - before == (1 if n >= 256 else 0)
    # and again, with the fitted function built
    out[:] = 0
    guarded_copy[8, 256](x, out, n)
    np.testing.assert_array_equal(out, want)
    # a negative n through the fitted function's entry, which tests n signed
    out[:] = 0
    guarded_copy[8, 256](x, out, -5)
    np.testing.assert_array_equal(out, np.full(2048, -1, np.float32))


@on_targets("cpu")
def test_a_guard_with_a_barrier_after_it_keeps_the_exited_threads_out(target):
    # `if i >= n: return` before a barrier: the threads past n have exited
    # (CUDA's rule), which blocks below n never see; the last block's
    # survivors still sum their own part.
    @cuda.jit
    def sum_below(x, sums, n):
        buf = cuda.shared.array(128, float32)
        tid = cuda.threadIdx.x
        i = cuda.grid(1)
        buf[tid] = 0
        if i >= n:
            return
        buf[tid] = x[i]
        cuda.syncthreads()
        if tid == 0:
            total = float32(0)
            for k in range(128):
                total += buf[k]
            sums[cuda.blockIdx.x] = total

    x = np.arange(1024, dtype=np.float32) % 7
    for n in (1024, 1000, 900):
        sums = np.full(8, -1, np.float32)
        sum_below[8, 128](x, sums, n)
        blocks_with_threads = (n + 127) // 128
        want = [x[b * 128:min(n, (b + 1) * 128)].sum() for b in range(blocks_with_threads)]
        np.testing.assert_array_equal(sums[:blocks_with_threads], want)
        assert (sums[blocks_with_threads:] == -1).all()
