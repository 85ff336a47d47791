"""Kernel faults and Ctrl-C on the cpu target (issue 16, docs/cpu-target.md
"Faults and interrupts"): a faulting kernel raises an exception naming the
kernel, the address and the block, the interpreter survives and later
launches run; Ctrl-C interrupts a kernel that never finishes. Each scenario
runs in a subprocess, so that a regression is a failed test, not a crash of
pytest."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap

import pytest

from build_tree import BUILD

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
BUILD_PYTHON = str(BUILD / "python")

PRELUDE = """
import numpy as np
from tidal import cuda

@cuda.jit
def fill(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i

def check_pool():
    b = np.zeros(256)
    fill[8, 32](b)
    assert (b == np.arange(256)).all(), b
    print("pool ok")
"""


def run_script(body, timeout=60, threads=None, after_start=None, environment=None,
               with_stderr=False):
    env = dict(os.environ, TIDAL_TARGET="cpu", **(environment or {}))
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [os.environ.get("PYTHONPATH"), BUILD_PYTHON] if p)
    if threads:
        env["TIDAL_CPU_THREADS"] = str(threads)
    # From a file: tidal compiles kernels from their source.
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(PRELUDE + textwrap.dedent(body))
    process = subprocess.Popen([sys.executable, script.name], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if after_start:
        after_start(process)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"timed out after {timeout} s\nstdout:\n{out}\nstderr:\n{err}")
    finally:
        os.unlink(script.name)
    assert process.returncode == 0, (
        f"exit status {process.returncode}\nstdout:\n{out}\nstderr:\n{err}")
    return (out, err) if with_stderr else out


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_wild_read_is_reported_and_the_pool_survives(threads):
    out = run_script("""
        @cuda.jit
        def wild(a, far):
            # A read far away (a store's index is checked without debug=True:
            # test_store_just_past_a_global_array_...).
            i = cuda.grid(1)
            a[i % 4] = a[i + far]

        a = np.zeros(4)
        for far in [1 << 40, -(1 << 40), 1 << 44]:
            try:
                wild[4, 8](a, far)
                print("no error")
            except RuntimeError as e:
                print("error:", e)
            check_pool()
    """, threads=threads)
    lines = out.splitlines()
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 3, out
    for line in errors:
        assert "kernel 'wild' faulted: illegal memory access (SIGSEGV" in line
        assert "at address 0x" in line
        assert "in block (" in line
        assert "The process continues" in line
    assert lines.count("pool ok") == 3


def test_fault_names_the_faulting_block_among_many():
    out = run_script("""
        @cuda.jit
        def one_block_faults(a, bad_block, far):
            i = cuda.grid(1)
            if cuda.blockIdx.x == bad_block:
                a[0] = a[i + far]
            elif i < a.size:
                a[i] = 1.0

        a = np.zeros(64 * 32)
        try:
            one_block_faults[64, 32](a, 37, 1 << 42)
        except RuntimeError as e:
            print("error:", e)
        check_pool()
    """, threads=2)
    assert "kernel 'one_block_faults' faulted" in out, out
    assert "in block (37, 0, 0)" in out, out
    assert "pool ok" in out


def test_many_faults_in_a_row():
    # The signal is unblocked after each jump: the hundredth fault is
    # reported like the first.
    out = run_script("""
        @cuda.jit
        def wild(a, far):
            a[0] = a[far]

        a = np.zeros(1)
        caught = 0
        for n in range(100):
            try:
                wild[1, 1](a, (1 << 40) + n * 4096)
            except RuntimeError as e:
                caught += "faulted" in str(e)
        print("caught", caught)
        check_pool()
    """, threads=2)
    assert "caught 100" in out, out
    assert "pool ok" in out


def test_huge_local_array_is_an_error_not_a_crash():
    # Either the frontend rejects the size at compile time (a located
    # error), or the stack overflow is caught as a fault at launch.
    out = run_script("""
        @cuda.jit
        def big_local(out):
            buf = cuda.local.array(100000000, np.float64)
            for j in range(100000000):
                buf[j] = j
            out[0] = buf[99999999]

        out = np.zeros(1)
        try:
            big_local[1, 1](out)
            print("no error")
        except Exception as e:
            print("error:", type(e).__name__, e)
        check_pool()
    """, threads=2)
    assert "error:" in out, out
    located_compile_error = re.search(r"error: \w*Error .*\.py:\d+", out)
    assert ("stack overflow" in out and "kernel 'big_local' faulted" in out) or \
        located_compile_error, out
    assert "pool ok" in out


@pytest.mark.parametrize("threads", [1, 2])
def test_access_past_a_local_array_is_an_index_error_not_a_crash(threads):
    # frontend fuzzer, seed 19, input 2996: the store overwrote the worker's
    # stack and killed the process (SIGSEGV past the fault handler's reach).
    # Without debug=True the frontend checks a store's index (located), and
    # the host lowering checks every access to a local array, reads too,
    # also in a device function that is given one (inlined to be checked).
    out = run_script("""
        @cuda.jit
        def past_local(x, out):
            tmp = cuda.local.array(4, dtype=np.float32)
            i = cuda.grid(1)
            for k in range(4):
                tmp[i] = k * 1.5
            out[i] = x[i] + tmp[i % 4]

        @cuda.jit
        def read_past_local(out):
            tmp = cuda.local.array(4, dtype=np.float32)
            for k in range(4):
                tmp[k] = k
            out[cuda.grid(1)] = tmp[cuda.grid(1)]

        @cuda.jit(device=True)
        def get(array, i):
            return array[i // 2, i % 2]

        @cuda.jit
        def past_local_in_device_function(out):
            tmp = cuda.local.array((2, 2), dtype=np.int64)
            tmp[0, 0] = 7
            i = cuda.grid(1)
            out[i] = get(tmp, i)

        x = np.arange(64, dtype=np.float32)
        for kernel, args in [(past_local, (x, np.zeros(64, np.float32))),
                             (read_past_local, (np.zeros(64, np.float32),)),
                             (past_local_in_device_function, (np.zeros(64, np.int64),))]:
            for _ in range(2):
                try:
                    kernel[2, 32](*args)
                    print("no error")
                except IndexError as e:
                    print("error:", e)
            check_pool()

        # In range, the same kernels compute.
        out = np.zeros(4, np.float32)
        past_local[1, 4](x, out)
        print("in range", out.tolist())
    """, threads=threads)
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 6, out
    for line in errors[:2]:  # the frontend's check of the store, located
        assert "index 4 is out of bounds for axis 0 with size 4 in kernel 'past_local' at " \
               in line and ", array 'tmp', thread (4, 0, 0) of block (0, 0, 0)" in line, line
    for line in errors[2:4]:  # the host lowering's check of the read
        assert "index 4 is out of bounds for axis 0 with size 4 in a local array of " \
               "16 bytes of kernel 'read_past_local'" in line, line
        assert "thread (4, 0, 0) of block (0, 0, 0)" in line, line
    for line in errors[4:]:
        assert "index 4 is out of bounds for axis 0 with size 4 in a local array of " \
               "32 bytes of kernel 'past_local_in_device_function'" in line, line
    assert out.count("pool ok") == 3, out
    assert "in range [4.5, 5.5, 6.5, 7.5]" in out, out


@pytest.mark.parametrize("threads", [1, 2])
def test_store_past_a_shared_array_is_a_fault_not_heap_corruption(threads):
    # The frontend fuzzer's 10^5 run: a store a few elements past a shared
    # array (no debug=True) went into the malloc heap; the process aborted
    # later ("corrupted size vs. prev_size"). Shared memory now has its own
    # mapping whose end touches an unmapped guard region.
    out = run_script("""
        @cuda.jit
        def past_shared(x, out):
            buf = cuda.shared.array(32, np.float32)
            tid = cuda.threadIdx.x
            buf[tid + 40] = 1.0
            cuda.syncthreads()
            out[tid] = buf[tid % 32]

        # CUDA C++ has no checks: its store past a shared array hits the
        # guard region.
        past_cxx = cuda.RawKernel(r'''
            extern "C" __global__ void past_cxx(float *out) {
                __shared__ float buf[32];
                buf[threadIdx.x * 64] = 1.0f;
                __syncthreads();
                out[threadIdx.x % 32] = buf[threadIdx.x % 32];
            }''', "past_cxx")

        x = np.zeros(64, np.float32)
        for _ in range(5):
            for kernel, args, config in [(past_shared, (x, np.zeros(64, np.float32)), (4, 64)),
                                         (past_cxx, (np.zeros(32, np.float32),), (2, 64))]:
                try:
                    kernel[config](*args)
                    print("no error")
                except (IndexError, RuntimeError) as e:
                    print("error:", e)
            junk = [np.zeros(i * 10) for i in range(300)]  # the heap, used again
        check_pool()
    """, threads=threads)
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 10, out
    # A shared array's store in a Python kernel is checked by the frontend;
    # CUDA C++'s store past the end faults at the guard region.
    for line in errors[0::2]:
        assert "index 40 is out of bounds for axis 0 with size 32 in kernel 'past_shared'" \
            in line, line
    for line in errors[1::2]:
        assert "faulted: illegal memory access (SIGSEGV" in line, line
    assert "pool ok" in out


def test_store_just_past_a_global_array_is_an_index_error_not_heap_corruption():
    # The frontend fuzzer's 10^5 run, inputs 40970 and 47491: a matmul whose
    # guard became `i <= c.shape[0]` stored a row past C, into the malloc
    # heap, and the process died later (SIGABRT, SIGSEGV). Without
    # debug=True the cpu target checks the index of every store
    # (tidal.bounds.fault); reads are not checked.
    out = run_script("""
        @cuda.jit
        def matmul(a, b, c):
            i, j = cuda.grid(2)
            if i <= c.shape[0] and j < c.shape[1]:
                acc = 0.0
                for k in range(a.shape[1]):
                    acc += a[min(i, a.shape[0] - 1), k] * b[k, j]
                c[i, j] = acc

        @cuda.jit
        def atomic_past(counts):
            cuda.atomic.add(counts, cuda.grid(1), 1)

        a, b = np.ones((16, 16)), np.ones((16, 16))
        for _ in range(3):
            c = np.zeros((16, 16))
            try:
                matmul[(2, 1), (16, 16)](a, b, c)
                print("no error")
            except IndexError as e:
                print("error:", e)
            try:
                atomic_past[1, 32](np.zeros(16, np.int32))
                print("no error")
            except IndexError as e:
                print("error:", e)
            junk = [np.zeros(i * 10) for i in range(300)]  # the heap, used again
        check_pool()
    """, threads=2)
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 6, out
    assert "index 16 is out of bounds for axis 0 with size 16 in kernel 'matmul' at " in errors[0]
    assert ", array 'c', thread (0, 0, 0) of block (1, 0, 0)" in errors[0], errors[0]
    assert "index 16 is out of bounds for axis 0 with size 16 in kernel 'atomic_past'" in errors[1]
    assert "pool ok" in out


def test_cxx_writes_past_a_global_array_are_index_errors_not_heap_corruption():
    # CUDA C++ has no index checks of its own: the adapter of a RawKernel
    # checks every write through an array's pointer parameter (a store, an
    # atomic, a memset) against the array passed, as Python kernels' stores
    # are checked. Reads are not checked.
    out = run_script("""
        past = cuda.RawModule(code=r'''
            extern "C" __global__ void store_past(float *out, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i <= n)  // one past the end
                    out[i] = 2.0f;
            }
            extern "C" __global__ void count_past(int *counts) {
                atomicAdd(&counts[threadIdx.x], 1);
            }
            extern "C" __global__ void fill_past(char *bytes, int n) {
                if (threadIdx.x == 0)
                    __builtin_memset(bytes + 8, 0, n);
            }
            extern "C" __global__ void before_start(double *out) {
                double *p = out;
                for (int k = 0; k < 3; ++k)
                    p -= threadIdx.x;
                *p = 1.0;
            }''')
        for _ in range(3):
            out = np.zeros(16, np.float32)
            for name, config, args in [
                    ("store_past", (2, 16), (out, np.int32(16))),
                    ("count_past", (1, 32), (np.zeros(16, np.int32),)),
                    ("fill_past", (1, 1), (np.zeros(16, np.int8), np.int32(9))),
                    ("before_start", (1, 4), (np.zeros(4),))]:
                try:
                    past.get_function(name)[config](*args)
                    print("no error")
                except IndexError as e:
                    print("error:", e)
            print("kept:", out.sum())
            junk = [np.zeros(i * 10) for i in range(300)]  # the heap, used again
        check_pool()
    """, threads=2)
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 12, out
    assert ("index 16 is out of bounds for axis 0 with size 16 in CUDA C++ kernel 'store_past' at "
            "rawmodule.cu") in errors[0], errors[0]
    assert "pointer 'out', thread (0, 0, 0) of block (1, 0, 0)" in errors[0], errors[0]
    assert "size 16 in CUDA C++ kernel 'count_past'" in errors[1], errors[1]
    assert "pointer 'counts', thread (16, 0, 0)" in errors[1], errors[1]
    assert "index 16 is out of bounds for axis 0 with size 16 in CUDA C++ kernel 'fill_past'" in errors[2]
    assert "index -3 is out of bounds for axis 0 with size 4 in CUDA C++ kernel 'before_start'" in errors[3]
    # The threads before the failing one wrote what they were meant to.
    assert "kept: 32.0" in out, out
    assert "pool ok" in out


SPIN_ON_ANOTHER_THREAD = """
    import os, signal, threading

    @cuda.jit
    def spin(flag, out):
        i = cuda.threadIdx.x
        if i == 0:
            while cuda.atomic.add(flag, 0, 0) == 0:
                pass
            out[0] = 1
        if i == 1:
            cuda.atomic.exch(flag, 0, 1)

    @cuda.jit
    def spin_plain(flag, out):
        # Every block waits for a flag nobody sets (no atomics: blocks run
        # on every worker).
        i = cuda.grid(1)
        while flag[0] == 0:
            out[i] += 1

    def press_ctrl_c_until(done):
        # Again and again, as a user would: the first may come while the
        # kernel still compiles (raised before the launch starts).
        while not done.wait(0.5):
            os.kill(os.getpid(), signal.SIGINT)

    flag = np.zeros(1, np.int32)
    for kernel, grid in [(spin, 1), (spin, 4), (spin_plain, 16)]:
        out = np.zeros(16 * 2, np.int32)
        done = threading.Event()
        threading.Thread(target=press_ctrl_c_until, args=(done,)).start()
        try:
            kernel[grid, 2](flag, out)
            print("finished")
        except KeyboardInterrupt:
            print("interrupted")
        done.set()
        check_pool()
"""


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_ctrl_c_interrupts_a_kernel_that_never_finishes(threads):
    out = run_script(SPIN_ON_ANOTHER_THREAD, threads=threads, timeout=60)
    assert out.splitlines().count("interrupted") == 3, out
    assert out.splitlines().count("pool ok") == 3, out


def test_sigint_outside_a_launch_is_still_keyboard_interrupt():
    out = run_script("""
        import os, signal, time
        check_pool()
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
            print("not raised")
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
    """)
    assert "KeyboardInterrupt" in out, out


def test_a_crash_outside_kernels_is_not_swallowed(tmp_path):
    # A segfault in the process but outside a block function still kills it
    # (the handler it replaced, here the default, gets it).
    env = dict(os.environ, TIDAL_TARGET="cpu", PYTHONPATH=BUILD_PYTHON)
    script = tmp_path / "crash.py"
    script.write_text(PRELUDE + "\ncheck_pool()\nimport ctypes\nctypes.string_at(0)\n")
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                            text=True, timeout=60)
    assert "pool ok" in result.stdout
    if "AddressSanitizer" in result.stderr:  # make check-asan: ASan's handler was there before
        assert "SEGV on unknown address" in result.stderr and result.returncode != 0
    else:
        assert result.returncode == -signal.SIGSEGV, (result.returncode, result.stderr)


def test_debug_watchdog_names_the_kernel_and_the_blocks_not_finishing():
    out, err = run_script("""
        import os, signal, threading

        @cuda.jit(debug=True)
        def spin_debug(flag, out):
            i = cuda.threadIdx.x
            if i == 0:
                while cuda.atomic.add(flag, 0, 0) == 0:
                    pass
                out[0] = 1
            if i == 1:
                cuda.atomic.exch(flag, 0, 1)

        out = np.zeros(2, np.int32)
        spin_debug[1, 2](np.ones(1, np.int32), out)  # compiled now, and finishes
        flag = np.zeros(1, np.int32)
        def press_ctrl_c_until(done):
            while not done.wait(4.0):
                os.kill(os.getpid(), signal.SIGINT)
        done = threading.Event()
        threading.Thread(target=press_ctrl_c_until, args=(done,)).start()
        try:
            spin_debug[1, 2](flag, out)
        except KeyboardInterrupt:
            print("interrupted")
        done.set()
        check_pool()
    """, threads=2, environment={"TIDAL_CPU_WATCHDOG_SECONDS": "1"}, with_stderr=True)
    assert "interrupted" in out and "pool ok" in out, (out, err)
    assert "tidal: watchdog: kernel 'spin_debug' has not finished after 1 s" in err, err
    assert "block (0, 0, 0) on the launching thread is not finishing" in err, err
    assert "Progress guarantees" in err, err


def test_no_watchdog_report_for_kernels_that_finish():
    out, err = run_script("""
        @cuda.jit(debug=True)
        def quick(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = 1.0

        a = np.zeros(64)
        for _ in range(200):
            quick[2, 32](a)
        print("done", a.sum())
    """, environment={"TIDAL_CPU_WATCHDOG_SECONDS": "0.5"}, with_stderr=True)
    assert "done 64.0" in out
    assert "watchdog" not in err, err
