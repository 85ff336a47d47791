"""Kernel faults and the checks of debug mode. The cpu target checks array
bounds, asserts and barriers that not every thread reaches (with
debug=True, or TIDAL_CPU_DEBUG=1 for every kernel) and reports the kernel,
the source line and the thread; on the cuda target a faulting kernel (an
illegal address) makes the next CUDA call fail with an error that names it
and says the context is lost, on a GPU and on the mock driver (with
TIDAL_MOCK_CUDA_FAULT_KERNEL), as do PTX that the driver's JIT rejects."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tidal import cuda, float32
from source_positions import position_of
from targets import needs_gpu, on_targets
from child_processes import python_environment


# --- debug mode on the cpu target -------------------------------------------------------


def run_script(tmp_path, source):
    """Runs a kernel program in a fresh interpreter; returns (code, out, err)."""
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(source))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=python_environment(TIDAL_TARGET="cpu"),
                          timeout=120)
    return done.returncode, done.stdout, done.stderr


@on_targets("cpu")
def test_out_of_bounds_access_is_reported(target):
    @cuda.jit(debug=True)
    def shifted(x, out):
        i = cuda.grid(1)
        out[i] = x[i + 1]

    with pytest.raises(IndexError) as info:
        shifted[1, 10](np.zeros(10), np.zeros(10))
    message = str(info.value)
    assert message.startswith("index 10 is out of bounds for axis 0 with size 10 in kernel "
                              "'shifted' at ")
    assert "test_faults.py:" in message and "array 'x'" in message
    assert "thread (9, 0, 0) of block (0, 0, 0)" in message
    # The next launch of a correct kernel works.
    out = np.zeros(10)
    shifted[1, 9](np.arange(10.0), out)
    np.testing.assert_array_equal(out[:9], np.arange(1.0, 10.0))


@on_targets("cpu")
def test_block_larger_than_a_shared_array_is_an_index_error(target):
    # Without debug=True: a block of 64 threads runs the copy of the block
    # function without the checks of `buf[tid]` (32 elements), one of 40 the
    # copy that checks, and its thread 32 gets the IndexError.
    @cuda.jit
    def reverse_in_shared(x, out):
        buf = cuda.shared.array(32, float32)
        tid = cuda.threadIdx.x
        buf[tid] = x[tid]
        cuda.syncthreads()
        out[tid] = buf[cuda.blockDim.x - 1 - tid]

    x = np.arange(40, dtype=np.float32)
    out = np.zeros(40, np.float32)
    reverse_in_shared[1, 32](x, out)
    np.testing.assert_array_equal(out[:32], x[:32][::-1])
    with pytest.raises(IndexError) as info:
        reverse_in_shared[1, 40](x, out)
    message = str(info.value)
    assert message.startswith("index 32 is out of bounds for axis 0 with size 32 in kernel "
                              "'reverse_in_shared' at "), message
    assert "thread (32, 0, 0) of block (0, 0, 0)" in message, message
    reverse_in_shared[1, 16](x, out)
    np.testing.assert_array_equal(out[:16], x[:16][::-1])


def test_tidal_cpu_debug_checks_every_kernel(tmp_path):
    code, out, err = run_script(tmp_path, """
        import numpy as np
        from tidal import cuda

        @cuda.jit
        def k(out, source):
            i = cuda.grid(1)
            out[i % 4] = source[i]

        backing = np.arange(8.0)
        out = np.zeros(4)
        try:
            k[1, 5](out, backing[:4])   # thread 4 reads past the view
            print("unchecked, read", out[0])
        except IndexError as e:
            print("IndexError:", e)
    """)
    assert code == 0, err
    # Without the variable a read is unchecked (stores are always checked on
    # the cpu target: test_cpu_faults.py).
    assert out.strip() == "unchecked, read 4.0"
    script = tmp_path / "program.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=python_environment(TIDAL_TARGET="cpu", TIDAL_CPU_DEBUG="1"),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "IndexError: index 4 is out of bounds for axis 0 with size 4 in kernel 'k'" in done.stdout


@on_targets("cpu")
def test_failed_assert_in_debug_mode(target):
    @cuda.jit(debug=True)
    def k(out):
        i = cuda.grid(1)
        assert i < 5, "too many threads"
        out[i] = i

    with pytest.raises(AssertionError) as info:
        k[1, 8](np.zeros(8))
    assert "too many threads (assert i < 5 in kernel 'k' at" in str(info.value)
    assert "thread (5, 0, 0) of block (0, 0, 0)" in str(info.value)


@on_targets("cpu")
def test_divergent_barrier_is_reported_not_hung(target):
    # Threads at two different syncthreads (threads that finished count as
    # arrived at a barrier, as on a GPU: test_exited_threads.py).
    @cuda.jit
    def divergent(out):
        if cuda.threadIdx.x < 16:
            cuda.syncthreads()
        elif cuda.threadIdx.x < 32:
            cuda.syncthreads()
        out[cuda.grid(1)] = 1

    with pytest.raises(RuntimeError) as info:
        divergent[1, 64](np.zeros(64))
    message = str(info.value)
    assert "kernel 'divergent' reached different barriers" in message
    assert "threads (0, 0, 0)..(15, 0, 0) at syncthreads" in message
    assert "threads (16, 0, 0)..(31, 0, 0) at syncthreads" in message
    assert "threads (32, 0, 0)..(63, 0, 0) finished" in message
    # Located without debug information too (the frontend's !tidal.where;
    # the frontend fuzzer counted such reports as unlocated).
    line, column = position_of(divergent.py_func, "cuda.syncthreads()")
    assert f"at syncthreads at {os.path.abspath(__file__)}:{line}:{column}" in message


@on_targets("cpu")
def test_shared_memory_is_poisoned_in_debug_mode(target):
    @cuda.jit(debug=True)
    def read_before_write(out):
        s = cuda.shared.array(32, float32)
        out[cuda.threadIdx.x] = s[cuda.threadIdx.x]

    out = np.zeros(32, np.float32)
    read_before_write[1, 32](out)
    assert np.all(np.isnan(out))


# --- the cuda target over the mock driver: JIT failures and faults ------------------------


def test_jit_failure_carries_the_log(mock_script):
    r = mock_script("""
        try:
            jit_rejected[1, 1](np.zeros(1, np.int32))
        except cuda.CudaDriverError as e:
            print(json.dumps([str(e), e.call, e.error_name, e.code]))
    """, jit_fail_marker="jit_rejected")
    message, call, name, code = r.result
    assert (call, name, code) == ("cuModuleLoadDataEx", "CUDA_ERROR_INVALID_PTX", 218)
    assert "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX" in message
    assert "mock JIT rejects PTX containing 'jit_rejected'" in message


def test_illegal_address_names_the_kernel(mock_script):
    r = mock_script("""
        out = []
        a = np.zeros(1, np.int32)
        for _ in range(2):
            try:
                faulty_kernel[1, 1](a)
            except cuda.CudaDriverError as e:
                out.append([str(e), e.call, e.error_name])
        print(json.dumps(out))
    """, fault_kernel="faulty")
    (first, call, name), (second, _, _) = r.result
    assert (call, name) == ("cuCtxSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS")
    assert "kernel 'faulty_kernel' (griddim (1, 1, 1), blockdim (1, 1, 1)) failed on device 0 " \
        "(tidal mock GPU 0): reported by cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS" in first
    assert "context is no longer usable" in first
    # The second launch raises at once, without reaching the driver.
    assert "no longer usable" in second
    assert len(r.named("cuLaunchKernel")) == 1
    assert not r.named("cuMemcpyDtoH_v2")


# --- the cuda target on a GPU: faults in processes of their own ------------------------------


def _run_alone(tmp_path, script):
    """Runs a script on the cuda target in a process of its own (a fault
    leaves its context unusable)."""
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), TIDAL_TARGET="cuda")
    return subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                          timeout=120)


@on_targets("cuda")
@needs_gpu
def test_illegal_address_on_a_gpu_names_the_kernel(target, tmp_path):
    # In a process of its own: the fault leaves the context unusable.
    proc = _run_alone(tmp_path, """
        import numpy as np
        from tidal import cuda

        @cuda.jit
        def write_far(a, index):
            a[index] = 1.0

        try:
            write_far[1, 1](np.zeros(4, np.float32), 1 << 40)
        except cuda.CudaDriverError as e:
            print("ERROR", e.call, e.error_name)
            print(e)
    """)
    assert "ERROR cuCtxSynchronize CUDA_ERROR_" in proc.stdout, proc.stdout + proc.stderr
    assert "kernel 'write_far'" in proc.stdout and "no longer usable" in proc.stdout


@on_targets("cuda")
@needs_gpu
def test_asynchronous_fault_on_a_gpu_is_reported_by_the_next_call(target, tmp_path):
    # A launch of device arrays returns at once; the copy after it observes
    # the fault, and names the kernel.
    proc = _run_alone(tmp_path, """
        import numpy as np
        from tidal import cuda

        @cuda.jit
        def write_far(a, index):
            a[index] = 1.0

        d = cuda.to_device(np.zeros(4, np.float32))
        write_far[1, 1](d, 1 << 40)
        for work in (d.copy_to_host, cuda.synchronize):
            try:
                work()
            except cuda.CudaDriverError as e:
                print("ERROR", e.call, e.error_name)
                print(e)
    """)
    lines = proc.stdout.splitlines()
    assert len(lines) == 4, proc.stdout + proc.stderr
    assert lines[0].startswith("ERROR cuMemcpyDtoH CUDA_ERROR_"), proc.stdout
    assert lines[1].startswith("kernel 'write_far' (launched asynchronously, griddim (1, 1, 1), "
                               "blockdim (1, 1, 1)) failed on device 0")
    assert "reported by cuMemcpyDtoH" in lines[1] and "no longer usable" in lines[1]
    # The later synchronisation raises the same at once.
    assert lines[2:] == lines[:2]


# --- the cuda target over the mock driver: asynchronous faults ---------------------------
# A launch whose arguments are all device arrays is asynchronous, so a kernel
# that faults (an illegal address, ...) makes whichever CUDA call comes next
# fail: cuda.synchronize(), a stream's or an event's synchronize(), a copy, an
# allocation, the next launch, a module load. With
# TIDAL_MOCK_CUDA_FAULT_KERNEL=faulty the mock fails every call after the
# launch of ``faulty_kernel`` with CUDA_ERROR_ILLEGAL_ADDRESS, as a real driver
# does. What it shows: each of those calls raises CudaDriverError naming the
# kernel(s) launched since the last successful synchronisation, the call that
# observed the fault and the error, and saying that the context is no longer
# usable; later calls raise the same at once, without reaching the driver; an
# error that is not sticky (too many resources for a launch) is not a fault.

# Helpers of every script: report(f) gives [message, call, error_name, code]
# of the CudaDriverError f raises (None if it raises nothing); fault_returns()
# counts the calls the mock answered with the fault's error.
PRELUDE = """
import ctypes, os
_mock = ctypes.CDLL(os.environ["TIDAL_CUDA_DRIVER"])

def report(f):
    try:
        f()
    except cuda.CudaDriverError as e:
        return [str(e), e.call, e.error_name, e.code]
    return None

def fault_returns():
    return _mock.tidalMockFaultReturns()

d = cuda.to_device(np.zeros(4, np.int32))
b = cuda.to_device(np.zeros(1, np.float32))
"""

UNUSABLE = (": CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered). The CUDA "
            "context is no longer usable: every later CUDA call in this process fails; restart "
            "the process")

FAULTY = ("kernel 'faulty_kernel' (launched asynchronously, griddim (1, 1, 1), blockdim "
          "(1, 1, 1)) failed on device 0 (tidal mock GPU 0)")

# (what runs before the faulting launch, the call that observes the fault,
# the driver call that reports it)
OBSERVERS = [
    ("", "cuda.synchronize()", "cuCtxSynchronize"),
    # (the context object made before: making it asks the driver for the device)
    ("ctx = cuda.current_context()", "ctx.synchronize()", "cuCtxSynchronize"),
    ("s = cuda.stream()", "s.synchronize()", "cuStreamSynchronize"),
    ("e = cuda.event(); e.record()", "e.synchronize()", "cuEventSynchronize"),
    ("e = cuda.event(); e.record()", "e.query()", "cuEventQuery"),
    ("e0, e1 = cuda.event(), cuda.event(); e0.record(); e1.record()", "e0.elapsed_time(e1)",
     "cuEventElapsedTime"),
    ("", "d.copy_to_host()", "cuMemcpyDtoH"),
    ("s = cuda.stream()", "d.copy_to_host(stream=s)", "cuMemcpyDtoHAsync"),
    ("", "d[1]", "cuMemcpyDtoH"),
    ("", "cuda.to_device(np.ones(4, np.int32))", "cuMemAlloc"),
    ("ctx = cuda.current_context()", "ctx.get_memory_info()", "cuMemGetInfo"),
    ("", "cuda.pinned_array(4)", "cuMemHostAlloc"),
    # fill_seven loaded and run before: the next launch reports it ...
    ("fill_seven[1, 32](d, 0.0, b); cuda.synchronize()", "fill_seven[1, 32](d, 0.0, b)",
     "cuLaunchKernel"),
    # ... else loading its module does.
    ("", "fill_seven[1, 32](d, 0.0, b)", "cuModuleLoadDataEx"),
]


@pytest.mark.parametrize("setup, observe, call", OBSERVERS,
                         ids=[f"{o[2]}:{o[1]}" for o in OBSERVERS])
def test_whichever_call_observes_an_asynchronous_fault_names_the_kernel(mock_script, setup, observe,
                                                                        call):
    r = mock_script(PRELUDE + setup + f"""
ev = cuda.event()
faulty_kernel[1, 1](d)  # device arrays only: asynchronous, returns
first = report(lambda: {observe})
before_later = fault_returns()
later = [report(f) for f in (
    lambda: cuda.synchronize(),
    lambda: d.copy_to_host(),
    lambda: cuda.to_device(np.ones(4, np.int32)),
    lambda: faulty_kernel[1, 1](d),
    lambda: fill_seven[1, 32](d, 0.0, b),
    lambda: cuda.stream().synchronize(),
    lambda: cuda.event(),
    lambda: ev.record(),
    lambda: ev.synchronize(),
    lambda: ev.query(),
)]
print(json.dumps({{"first": first, "later": later,
                   "reached_driver": fault_returns() - before_later}}))
""", fault_kernel="faulty")
    res = r.result
    message, error_call, name, code = res["first"]
    assert (error_call, name, code) == (call, "CUDA_ERROR_ILLEGAL_ADDRESS", 700)
    assert message == f"{FAULTY}: reported by {call}{UNUSABLE}"
    # Later calls raise the same (the call that observed the fault), at once.
    assert res["later"] == [res["first"]] * len(res["later"])
    assert res["reached_driver"] == 0


def test_every_kernel_since_the_last_synchronisation_is_named(mock_script):
    r = mock_script(PRELUDE + """
s = cuda.stream()
fill_seven[1, 32](d, 0.0, b)
faulty_kernel[2, 1, s](d)
print(json.dumps({"error": report(lambda: d.copy_to_host()), "stream": int(s)}))
""", fault_kernel="faulty")
    res = r.result
    message, call, name, _ = res["error"]
    assert (call, name) == ("cuMemcpyDtoH", "CUDA_ERROR_ILLEGAL_ADDRESS")
    assert message == (
        "a kernel failed on device 0 (tidal mock GPU 0), one of the kernels launched since the "
        "last synchronisation: 'fill_seven' (griddim (1, 1, 1), blockdim (32, 1, 1)), "
        f"'faulty_kernel' (griddim (2, 1, 1), blockdim (1, 1, 1), stream {res['stream']:#x}): "
        f"reported by cuMemcpyDtoH{UNUSABLE}")


@pytest.mark.parametrize("synchronise", [
    "cuda.synchronize()",
    # a launch with a NumPy argument waits for its kernel: that synchronises too
    "fill_seven[1, 32](np.zeros(4, np.int32), 0.0, b)",
])
def test_a_successful_synchronisation_forgets_earlier_kernels(mock_script, synchronise):
    r = mock_script(PRELUDE + f"""
fill_seven[1, 32](d, 0.0, b)
{synchronise}
faulty_kernel[1, 1](d)
print(json.dumps(report(lambda: cuda.synchronize())))
""", fault_kernel="faulty")
    message, call, _, _ = r.result
    assert call == "cuCtxSynchronize"
    assert message == f"{FAULTY}: reported by cuCtxSynchronize{UNUSABLE}"
    assert "fill_seven" not in message


def test_a_launch_that_waits_for_its_kernel_reports_its_fault(mock_script):
    r = mock_script(PRELUDE + """
print(json.dumps([report(lambda: faulty_kernel[1, 1](np.zeros(4, np.int32))),
                  report(lambda: d.copy_to_host())]))
""", fault_kernel="faulty")
    (message, call, name, code), later = r.result
    assert (call, name, code) == ("cuCtxSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS", 700)
    assert message == ("kernel 'faulty_kernel' (griddim (1, 1, 1), blockdim (1, 1, 1)) failed on "
                       f"device 0 (tidal mock GPU 0): reported by cuCtxSynchronize{UNUSABLE}")
    assert later == [message, call, name, code]


def test_a_launch_error_that_is_not_sticky_is_not_a_fault(mock_script):
    # CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many registers per thread for
    # the block, say): the launch fails, the context stays usable.
    r = mock_script(PRELUDE + """
a = cuda.to_device(np.ones((2, 2), np.float32))
error = report(lambda: scale_2d[1, (16, 16)](a, 2.0))
fill_seven[1, 32](d, 0.0, b)
cuda.synchronize()
print(json.dumps({"error": error, "after": d.copy_to_host().tolist()}))
""", out_of_resources_kernel="scale_2d")
    res = r.result
    message, call, name, code = res["error"]
    assert (call, name, code) == ("cuLaunchKernel", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701)
    assert message == ("cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many "
                       "resources requested for launch): kernel 'scale_2d', griddim (1, 1, 1), "
                       "blockdim (16, 16, 1)")
    assert "no longer usable" not in message
    assert res["after"] == [7, 7, 7, 7]


def test_a_fault_on_another_device_is_reported_for_that_device(mock_script):
    # The stream belongs to device 1; device 0 is current when it is
    # synchronised: the fault is device 1's, and device 0 stays usable.
    r = mock_script(PRELUDE + """
with cuda.gpus[1]:
    s = cuda.stream()
    d1 = cuda.to_device(np.zeros(4, np.int32), stream=s)
    faulty_kernel[1, 1, s](d1)
error = report(lambda: s.synchronize())
print(json.dumps({"error": error, "stream": int(s)}))
""", fault_kernel="faulty", devices=2)
    res = r.result
    message, call, _, _ = res["error"]
    assert call == "cuStreamSynchronize"
    assert message == (
        "kernel 'faulty_kernel' (launched asynchronously, griddim (1, 1, 1), blockdim (1, 1, 1), "
        f"stream {res['stream']:#x}) failed on device 1 (tidal mock GPU 1): reported by "
        f"cuStreamSynchronize{UNUSABLE}")


def test_the_error_class_says_the_context_is_lost(mock_script):
    # The exception is a tidal.cuda.CudaDriverError, a RuntimeError.
    r = mock_script(PRELUDE + """
faulty_kernel[1, 1](d)
try:
    cuda.synchronize()
except RuntimeError as e:
    print(json.dumps([type(e).__module__ + "." + type(e).__qualname__,
                      isinstance(e, cuda.CudaDriverError)]))
""", fault_kernel="faulty")
    assert r.result == ["tidal.cuda.driver.CudaDriverError", True]
