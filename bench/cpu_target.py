"""cpu-target throughput: tidal's cpu target against Numba's CUDA simulator
(NUMBA_ENABLE_CUDASIM=1, in a separate process, on a small size within a time
budget, compared per element) and against Numba's @njit of the same loop.

Sizes (the issue's): saxpy of 2^20 float32 with 256 threads per block; one
Jacobi step of a 5-point stencil on 512x512; a 16x16-tiled shared-memory
matmul 256x256; a shared-memory block reduction of 2^20 float32; a histogram
of 2^20 int32 into 256 bins with atomics."""

import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import kernels  # noqa: E402

KERNELS = ("saxpy", "stencil", "matmul", "reduction", "histogram")
FULL = {"saxpy": 1 << 20, "stencil": 512, "matmul": 256, "reduction": 1 << 20, "histogram": 1 << 20}
# Small sizes for the simulator (it runs every CUDA thread as a Python thread).
SMALL = {"saxpy": 1 << 12, "stencil": 64, "matmul": 32, "reduction": 1 << 12, "histogram": 1 << 12}
UNIT = {"saxpy": "element", "stencil": "point", "matmul": "multiply-add",
        "reduction": "element", "histogram": "element"}


def units(name, size):
    """How many units (elements, points, multiply-adds) a problem of `size` has."""
    if name == "stencil":
        return size * size
    if name == "matmul":
        return size ** 3
    return size


def problem(name, size, seed=0):
    """(launch(kernel_namespace), reference check(outputs) -> bool, njit call) for one kernel."""
    rng = np.random.default_rng(seed)
    if name == "saxpy":
        x = rng.standard_normal(size).astype(np.float32)
        y = rng.standard_normal(size).astype(np.float32)
        out = np.zeros_like(x)
        a = np.float32(2.0)
        blocks = (size + 255) // 256
        return ((lambda ns: ns.saxpy[blocks, 256](a, x, y, out)),
                (lambda: np.allclose(out, a * x + y, rtol=1e-5, atol=1e-5)),
                (lambda nj: nj["saxpy"](a, x, y, out)))
    if name == "stencil":
        a = rng.standard_normal((size, size)).astype(np.float32)
        out = np.zeros_like(a)
        grid = ((size + 15) // 16, (size + 15) // 16)
        expected = a.copy()
        expected[1:-1, 1:-1] = np.float32(0.25) * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
        return ((lambda ns: ns.stencil[grid, (16, 16)](a, out)),
                (lambda: np.allclose(out, expected, rtol=1e-5, atol=1e-5)),
                (lambda nj: nj["stencil"](a, out)))
    if name == "matmul":
        A = rng.standard_normal((size, size)).astype(np.float32)
        B = rng.standard_normal((size, size)).astype(np.float32)
        C = np.zeros_like(A)
        grid = ((size + 15) // 16, (size + 15) // 16)
        return ((lambda ns: ns.matmul[grid, (16, 16)](A, B, C)),
                (lambda: np.allclose(C, A @ B, rtol=1e-3, atol=1e-3)),
                (lambda nj: nj["matmul"](A, B, C)))
    if name == "reduction":
        x = rng.standard_normal(size).astype(np.float32)
        blocks = (size + kernels.BLOCK - 1) // kernels.BLOCK
        partial = np.zeros(blocks, dtype=np.float32)
        return ((lambda ns: ns.reduction[blocks, kernels.BLOCK](x, partial)),
                (lambda: np.allclose(partial.sum(dtype=np.float64), x.sum(dtype=np.float64),
                                     rtol=1e-3, atol=1e-2)),
                (lambda nj: nj["reduction"](x, partial)))
    if name == "histogram":
        x = rng.integers(0, kernels.BINS, size, dtype=np.int32)
        bins = np.zeros(kernels.BINS, dtype=np.int32)
        blocks = (size + 255) // 256

        def launch(ns):
            bins[:] = 0
            ns.histogram[blocks, 256](x, bins)

        def njit_call(nj):
            bins[:] = 0
            nj["histogram"](x, bins)
        return (launch, (lambda: np.array_equal(bins, np.bincount(x, minlength=kernels.BINS))),
                njit_call)
    raise KeyError(name)


def njit_kernels():
    """The same loops under Numba's @njit (serial), or None without Numba."""
    try:
        from numba import njit
    except ImportError:
        return None

    @njit
    def saxpy(a, x, y, out):
        for i in range(x.size):
            out[i] = a * x[i] + y[i]

    @njit
    def stencil(a, out):
        n, m = a.shape
        for i in range(n):
            for j in range(m):
                if i > 0 and j > 0 and i < n - 1 and j < m - 1:
                    out[i, j] = np.float32(0.25) * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])
                else:
                    out[i, j] = a[i, j]

    @njit
    def matmul(A, B, C):
        # i-k-j order: the loop a careful @njit user writes (contiguous inner loop)
        n, k = A.shape
        m = B.shape[1]
        for i in range(n):
            for j in range(m):
                C[i, j] = 0
            for p in range(k):
                a = A[i, p]
                for j in range(m):
                    C[i, j] += a * B[p, j]

    @njit
    def reduction(x, partial):
        block = partial.size and (x.size + partial.size - 1) // partial.size
        for b in range(partial.size):
            s = np.float32(0)
            for i in range(b * block, min(x.size, (b + 1) * block)):
                s += x[i]
            partial[b] = s

    @njit
    def histogram(x, bins):
        for i in range(x.size):
            bins[x[i]] += 1

    return {"saxpy": saxpy, "stencil": stencil, "matmul": matmul, "reduction": reduction,
            "histogram": histogram}


def time_it(call, min_repeats=5, budget_s=1.5):
    call()  # compiles and warms up
    return common.summary(common.repeat(call, 50, budget_s=budget_s, minimum=min_repeats))


def measure_tidal_one(name):
    """In this process: tidal's cpu target on one kernel at the full size."""
    from tidal import cuda
    namespace = kernels.define(cuda)
    launch, check, _ = problem(name, FULL[name])
    entry = {"size": FULL[name], "units": units(name, FULL[name]), "unit": UNIT[name]}
    try:
        entry["time"] = time_it(lambda: launch(namespace))
        entry["check"] = "OK" if check() else "MISMATCH"
    except Exception as error:  # noqa: BLE001
        entry["error"] = common.unsupported(error)
    return entry


def measure_tidal(log=print):
    """Each kernel in a process of its own (a crash costs one row)."""
    results = {}
    for name in KERNELS:
        try:
            entry = common.tidal_child("cpu_target.py", ["--tidal", name])
        except Exception as error:  # noqa: BLE001
            entry = {"size": FULL[name], "units": units(name, FULL[name]), "unit": UNIT[name],
                     "error": common.unsupported(error)}
        results[name] = entry
        log(f"  tidal {name}: " + (entry["error"] if "error" in entry else
                                   f"{entry['time']['median'] * 1e3:.3f} ms ({entry['check']})"))
    return results


def measure_njit(log=print):
    compiled = njit_kernels()
    if compiled is None:
        return {"error": "numba is not installed"}
    results = {}
    for name in KERNELS:
        _, check, call = problem(name, FULL[name])
        entry = {"size": FULL[name], "units": units(name, FULL[name])}
        try:
            entry["time"] = time_it(lambda: call(compiled))
            entry["check"] = "OK" if check() else "MISMATCH"
            log(f"  njit {name}: {entry['time']['median'] * 1e3:.3f} ms")
        except Exception as error:  # noqa: BLE001
            entry["error"] = common.unsupported(error)
        results[name] = entry
    return results


def _simulator_child(budget_s):
    """In a process with NUMBA_ENABLE_CUDASIM=1: each kernel on its small size,
    repeated while the kernel's budget lasts."""
    from numba import cuda
    namespace = kernels.define(cuda)
    results = {}
    for name in KERNELS:
        size = SMALL[name]
        launch, check, _ = problem(name, size)
        entry = {"size": size, "units": units(name, size)}
        try:
            entry["time"] = common.summary(
                common.repeat(lambda: launch(namespace), 3, budget_s=budget_s / 2, minimum=1))
            entry["check"] = "OK" if check() else "MISMATCH"
        except Exception as error:  # noqa: BLE001
            entry["error"] = common.unsupported(error)
        results[name] = entry
    print(json.dumps(results))


def measure_simulator(budget_s=20, log=print):
    try:
        import numba  # noqa: F401
    except ImportError:
        return {"error": "numba is not installed"}
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    try:
        results = common.run_child([os.path.abspath(__file__), "--simulator", str(budget_s)], env,
                                   timeout=budget_s * len(KERNELS) * 3 + 60)
    except Exception as error:  # noqa: BLE001
        return {"error": common.unsupported(error)}
    for name, entry in results.items():
        if "time" in entry:
            log(f"  simulator {name} (size {entry['size']}): {entry['time']['median']:.2f} s")
    return results


def compare(tidal, njit, simulator):
    """Speed-ups: simulator per unit (extrapolated to the full size) and @njit, over tidal."""
    rows = {}
    for name in KERNELS:
        row = {}
        t = tidal.get(name, {})
        if "time" in t:
            tidal_s = t["time"]["median"]
            s = simulator.get(name, {}) if isinstance(simulator, dict) else {}
            if "time" in s:
                per_unit = s["time"]["median"] / s["units"]
                row["simulator_extrapolated_s"] = per_unit * t["units"]
                row["vs_simulator"] = row["simulator_extrapolated_s"] / tidal_s
            n = njit.get(name, {}) if isinstance(njit, dict) else {}
            if "time" in n:
                row["vs_njit"] = n["time"]["median"] / tidal_s
        rows[name] = row
    return rows


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--simulator":
        _simulator_child(float(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--tidal":
        print(json.dumps(measure_tidal_one(sys.argv[2])))
    else:
        t = measure_tidal()
        nj = measure_njit()
        sim = measure_simulator()
        print(json.dumps({"tidal": t, "njit": nj, "simulator": sim, "speedup": compare(t, nj, sim)},
                         indent=1))
