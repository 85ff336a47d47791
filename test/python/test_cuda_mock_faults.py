"""Kernel faults on the cuda target, against the mock CUDA driver (no GPU
needed; see test_cuda_mock.py for how a script runs and what the mock logs).

A launch whose arguments are all device arrays is asynchronous, so a kernel
that faults (an illegal address, ...) makes whichever CUDA call comes next
fail: cuda.synchronize(), a stream's or an event's synchronize(), a copy, an
allocation, the next launch, a module load. With
TIDAL_MOCK_CUDA_FAULT_KERNEL=faulty the mock fails every call after the
launch of ``faulty_kernel`` with CUDA_ERROR_ILLEGAL_ADDRESS, as a real driver
does. What it shows: each of those calls raises CudaDriverError naming the
kernel(s) launched since the last successful synchronisation, the call that
observed the fault and the error, and saying that the context is no longer
usable; later calls raise the same at once, without reaching the driver; an
error that is not sticky (too many resources for a launch) is not a fault.
"""

import json

import pytest

from test_cuda_mock import MOCK, run  # noqa: F401  (run is a fixture)

pytestmark = pytest.mark.skipif(not MOCK.is_file(), reason=f"no mock CUDA driver at {MOCK}")

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
def test_whichever_call_observes_an_asynchronous_fault_names_the_kernel(run, setup, observe,
                                                                        call):
    r = run(PRELUDE + setup + f"""
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


def test_every_kernel_since_the_last_synchronisation_is_named(run):
    r = run(PRELUDE + """
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
def test_a_successful_synchronisation_forgets_earlier_kernels(run, synchronise):
    r = run(PRELUDE + f"""
fill_seven[1, 32](d, 0.0, b)
{synchronise}
faulty_kernel[1, 1](d)
print(json.dumps(report(lambda: cuda.synchronize())))
""", fault_kernel="faulty")
    message, call, _, _ = r.result
    assert call == "cuCtxSynchronize"
    assert message == f"{FAULTY}: reported by cuCtxSynchronize{UNUSABLE}"
    assert "fill_seven" not in message


def test_a_launch_that_waits_for_its_kernel_reports_its_fault(run):
    r = run(PRELUDE + """
print(json.dumps([report(lambda: faulty_kernel[1, 1](np.zeros(4, np.int32))),
                  report(lambda: d.copy_to_host())]))
""", fault_kernel="faulty")
    (message, call, name, code), later = r.result
    assert (call, name, code) == ("cuCtxSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS", 700)
    assert message == ("kernel 'faulty_kernel' (griddim (1, 1, 1), blockdim (1, 1, 1)) failed on "
                       f"device 0 (tidal mock GPU 0): reported by cuCtxSynchronize{UNUSABLE}")
    assert later == [message, call, name, code]


def test_a_launch_error_that_is_not_sticky_is_not_a_fault(run):
    # CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many registers per thread for
    # the block, say): the launch fails, the context stays usable.
    r = run(PRELUDE + """
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


def test_a_fault_on_another_device_is_reported_for_that_device(run):
    # The stream belongs to device 1; device 0 is current when it is
    # synchronised: the fault is device 1's, and device 0 stays usable.
    r = run(PRELUDE + """
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


def test_the_error_class_says_the_context_is_lost(run):
    # The exception is a tidal.cuda.CudaDriverError, a RuntimeError.
    r = run(PRELUDE + """
faulty_kernel[1, 1](d)
try:
    cuda.synchronize()
except RuntimeError as e:
    print(json.dumps([type(e).__module__ + "." + type(e).__qualname__,
                      isinstance(e, cuda.CudaDriverError)]))
""", fault_kernel="faulty")
    assert r.result == ["tidal.cuda.driver.CudaDriverError", True]
