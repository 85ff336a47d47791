"""Dispatch and launch overhead on the current tidal target, for the
argument shapes of the runtime issue (kernels.LAUNCH_SHAPES: 0 arguments, 1
and 3 device arrays, 16 scalars, 16 arrays, 256 scalars), each in a process
of its own, per call, median over repeats of many calls:

- dispatch: kernel[1, 1]._dispatch(*args), everything a launch does but
  running the kernel (the configuration, the launch plan, packing the
  arguments, the device's checks): on the cpu target, the time until the
  launch would be handed to the pool;
- launch: kernel[1, 1](*args) of the empty kernel, run;
- foreign arrays: the same shapes with __cuda_array_interface__ objects over
  the same memory instead of tidal device arrays (the cost per argument of
  other libraries' arrays), and with objects that speak DLPack only (whose
  producer's __dlpack_device__ and __dlpack__ are timed apart: their share
  is not tidal's launch);
- saxpy[1, 32]: a tiny real launch.

measure(target="cuda-mock") runs the same on the cuda target over the mock
driver (build/lib/libtidal_mock_cuda.so) with TIDAL_MOCK_CUDA_NOOP_LAUNCHES=1:
cuLaunchKernel checks its arguments and returns, so the launch time is
tidal's own share of a GPU launch (the configuration, the plan, packing,
the device checks, the driver call itself) without the driver's work. It is
no GPU figure: a real cuLaunchKernel adds the driver's cost (about 1.3 us
from C, as the runtime issue says)."""

import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import kernels  # noqa: E402


class ForeignArray:
    """Another library's device array, as CuPy's or PyTorch's look to tidal:
    nothing but __cuda_array_interface__ (version 3, no stream to wait for)."""

    def __init__(self, device_array):
        self.__cuda_array_interface__ = dict(device_array.__cuda_array_interface__, stream=None)


class ForeignDLPack:
    """Another library's array that speaks DLPack only, over a tidal device
    array's memory. The producer is a C one where there is: on the cpu target
    NumPy's __dlpack__ of the array's memory (as a library written in C
    would be); on the cuda target tidal's own (in Python)."""

    def __init__(self, device_array):
        producer = device_array._tidal_host
        if producer is None:
            producer = device_array
        self.__dlpack__ = producer.__dlpack__
        self.__dlpack_device__ = producer.__dlpack_device__


def per_call(call, repeats, target_s=0.05):
    """Seconds per call: `repeats` batches of as many calls as fill ~target_s."""
    call()  # compiles
    t0 = time.perf_counter()
    call()
    one = max(time.perf_counter() - t0, 1e-7)
    calls = int(min(200000, max(10, target_s / one)))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        samples.append((time.perf_counter() - t0) / calls)
    result = common.summary(samples)
    result["calls_per_repeat"] = calls
    return result


def measure_one(name, repeats):
    """In this process: the timings of one shape (a LAUNCH_SHAPES key, or
    'saxpy_1x32')."""
    from tidal import cuda
    namespace = kernels.define(cuda)
    if name == "saxpy_1x32":
        n = 32
        x = np.arange(n, dtype=np.float32)
        y = np.ones(n, dtype=np.float32)
        out = np.zeros(n, dtype=np.float32)
        entry = {"args": 4}
        try:
            entry["launch"] = per_call(lambda: namespace.saxpy[1, 32](np.float32(2.0), x, y, out),
                                       repeats)
            if not np.array_equal(out, np.float32(2.0) * x + y):
                entry["check"] = "MISMATCH"
        except Exception as error:  # noqa: BLE001
            entry["error"] = common.unsupported(error)
        return entry
    kernel_name, arrays, scalars = kernels.LAUNCH_SHAPES[name]
    kernel = kernels.kernel(namespace, kernel_name)
    device = cuda.to_device(np.zeros(16, dtype=np.float32))
    args = kernels.launch_args(name, device, np.float32(1.0))
    entry = {"args": arrays + scalars, "arrays": arrays}
    try:
        entry["dispatch"] = per_call(lambda: kernel[1, 1]._dispatch(*args), repeats)
        entry["launch"] = per_call(lambda: kernel[1, 1](*args), repeats)
        if arrays:
            foreign = kernels.launch_args(name, ForeignArray(device), np.float32(1.0))
            entry["dispatch_foreign"] = per_call(lambda: kernel[1, 1]._dispatch(*foreign), repeats)
            producer = ForeignDLPack(device)
            dlpack = kernels.launch_args(name, producer, np.float32(1.0))
            entry["dispatch_dlpack"] = per_call(lambda: kernel[1, 1]._dispatch(*dlpack), repeats)
            # The producer's own part: what its __dlpack_device__ and
            # __dlpack__ cost, per argument (the capsule given back untaken).
            stream = 1 if cuda.current_target() == "cuda" else None
            entry["producer_dlpack"] = per_call(
                lambda: (producer.__dlpack_device__(), producer.__dlpack__(stream=stream)), repeats)
    except Exception as error:  # noqa: BLE001
        entry["error"] = common.unsupported(error)
    return entry


def measure(repeats=9, log=print, target="cpu"):
    """Each shape in a process of its own (a crash costs one row). target:
    "cpu", or "cuda-mock" (the cuda target over the no-op mock driver)."""
    env = {}
    if target == "cuda-mock":
        if not os.path.isfile(common.MOCK_DRIVER):
            return {"error": f"no mock driver at {common.MOCK_DRIVER}"}
        env = {"TIDAL_CUDA_DRIVER": common.MOCK_DRIVER, "TIDAL_MOCK_CUDA_NOOP_LAUNCHES": "1"}
    shapes = list(kernels.LAUNCH_SHAPES) + (["saxpy_1x32"] if target == "cpu" else [])
    results = {}
    for name in shapes:
        try:
            results[name] = common.tidal_child("launch.py", ["--one", name, str(repeats)],
                                               target=target.split("-")[0], **env)
        except Exception as error:  # noqa: BLE001
            results[name] = {"error": common.unsupported(error)}
        entry = results[name]
        if "error" in entry:
            log(f"  {name}: {entry['error']}")
            continue
        line = f"  {name}: launch {entry['launch']['median'] * 1e6:.2f} us"
        if "dispatch" in entry:
            line += f", dispatch {entry['dispatch']['median'] * 1e6:.2f} us"
        if "dispatch_foreign" in entry:
            extra = (entry["dispatch_foreign"]["median"] - entry["dispatch"]["median"]) / entry["arrays"]
            line += f", foreign arrays +{extra * 1e6:.2f} us per argument"
        if "dispatch_dlpack" in entry:
            extra = (entry["dispatch_dlpack"]["median"] - entry["dispatch"]["median"]) / entry["arrays"]
            line += (f", DLPack +{extra * 1e6:.2f} us per argument (the producer's "
                     f"{entry['producer_dlpack']['median'] * 1e6:.2f} us)")
        log(line)
    return results


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        print(json.dumps(measure_one(sys.argv[2], int(sys.argv[3]))))
    else:
        print(json.dumps(measure(), indent=1))
