"""Dispatch and launch overhead on the current tidal target: kernel[1, 1](...)
of an empty kernel with 0, 1, 4 and 16 arguments (arrays and scalars), per
call, median over repeats of many calls; and a tiny real launch (saxpy, one
block of 32 threads)."""

import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import kernels  # noqa: E402


def launch_args(count):
    """The arguments of empty<count>, as kernels.EMPTY_SIGNATURES describes them."""
    a = np.zeros(16, dtype=np.float32)
    if count == 0:
        return ()
    if count == 1:
        return (a,)
    if count == 4:
        return (a, a, np.float32(1.0), 3)
    return (a,) * 8 + (np.float32(1.0),) * 4 + (3,) * 4


def per_call(launch, repeats, target_s=0.05):
    """Seconds per call: `repeats` batches of as many calls as fill ~target_s."""
    launch()  # compiles
    t0 = time.perf_counter()
    launch()
    one = max(time.perf_counter() - t0, 1e-7)
    calls = int(min(20000, max(10, target_s / one)))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            launch()
        samples.append((time.perf_counter() - t0) / calls)
    result = common.summary(samples)
    result["calls_per_repeat"] = calls
    return result


def measure_one(name, repeats):
    """In this process: per-call time of one launch ('empty<N>' or 'saxpy_1x32')."""
    from tidal import cuda
    namespace = kernels.define(cuda)
    if name == "saxpy_1x32":
        n = 32
        x = np.arange(n, dtype=np.float32)
        y = np.ones(n, dtype=np.float32)
        out = np.zeros(n, dtype=np.float32)
        entry = {"args": 4}
        try:
            entry["time"] = per_call(lambda: namespace.saxpy[1, 32](np.float32(2.0), x, y, out), repeats)
            if not np.array_equal(out, np.float32(2.0) * x + y):
                entry["check"] = "MISMATCH"
        except Exception as error:  # noqa: BLE001
            entry["error"] = common.unsupported(error)
        return entry
    count = int(name[len("empty"):])
    kernel = kernels.kernel(namespace, name)
    args = launch_args(count)
    try:
        return {"args": count, "time": per_call(lambda: kernel[1, 1](*args), repeats)}
    except Exception as error:  # noqa: BLE001
        return {"args": count, "error": common.unsupported(error)}


def measure(repeats=9, log=print):
    """Each launch shape in a process of its own (a crash costs one row)."""
    results = {}
    for name, count in (("empty0", 0), ("empty1", 1), ("empty4", 4), ("empty16", 16), ("saxpy_1x32", 4)):
        try:
            results[name] = common.tidal_child("launch.py", ["--one", name, str(repeats)])
        except Exception as error:  # noqa: BLE001
            results[name] = {"args": count, "error": common.unsupported(error)}
        entry = results[name]
        log(f"  {name}: " + (entry["error"] if "error" in entry
                             else f"{entry['time']['median'] * 1e6:.2f} us per launch"))
    return results


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        print(json.dumps(measure_one(sys.argv[2], int(sys.argv[3]))))
    else:
        print(json.dumps(measure(), indent=1))
