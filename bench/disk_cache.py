"""The disk cache (@cuda.jit(cache=True), docs/cache.md): the time from a new
process to a launchable kernel, beside the cold compile.

Each sample is a new process that imports tidal, imports a module of
`@cuda.jit(cache=True)` kernels and launches saxpy once ([1, 32]); it
reports `import tidal` alone and the time from there to the end of that
first launch (Python's bytecode cache on, as for an installed package). miss: the cache folder (TIDAL_CACHE_DIR) is empty, so this is
the cold compile; hit: the folder holds the entry an earlier process wrote.
The goal of a hit is 2 ms beyond `import tidal`. `second kernel` is a hit of
another kernel in the same process (the per-kernel cost, once the process's
JIT and pools exist). Targets: cpu, and cuda over the mock driver (PTX read
from the cache, loaded by the mock; no GPU figure)."""

import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

KERNELS = '''
from tidal import cuda


@cuda.jit(cache=True)
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@cuda.jit(cache=True)
def axpb(a, x, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + b
'''


def _child(folder):
    """In a new process: import tidal, then the kernels, then launch each once."""
    t0 = time.perf_counter()
    import numpy as np
    from tidal import cuda  # noqa: F401
    t1 = time.perf_counter()
    sys.path.insert(0, folder)
    import cached_bench_kernels as k
    x = np.ones(32, np.float32)
    out = np.empty(32, np.float32)
    k.saxpy[1, 32](np.float32(2), x, x, out)
    t2 = time.perf_counter()
    k.axpb[1, 32](np.float32(2), x, np.float32(1), out)
    t3 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "first": t2 - t1, "second": t3 - t2,
                      "hits": sum(k.saxpy.stats.cache_hits.values())}))


def measure(repeats=5, log=print):
    results = {}
    for target in ("cpu", "cuda-mock"):
        env = {}
        if target == "cuda-mock":
            if not os.path.isfile(common.MOCK_DRIVER):
                results[target] = {"error": f"no mock driver at {common.MOCK_DRIVER}"}
                continue
            env = {"TIDAL_CUDA_DRIVER": common.MOCK_DRIVER, "TIDAL_MOCK_CUDA_NOOP_LAUNCHES": "1"}
        # Python's own bytecode cache on, as for an installed package (with
        # PYTHONDONTWRITEBYTECODE=1 each process would compile tidal's modules
        # and the kernels' module from source, inside the measured span).
        env["PYTHONDONTWRITEBYTECODE"] = ""
        folder = tempfile.mkdtemp(prefix="tidal-bench-cache-")
        try:
            with open(os.path.join(folder, "cached_bench_kernels.py"), "w") as f:
                f.write(KERNELS)
            cache = os.path.join(folder, "cache")
            samples = {"miss": [], "hit": []}
            for _ in range(repeats):
                for kind in ("miss", "hit"):  # a miss fills the cache the hit reads
                    if kind == "miss":
                        shutil.rmtree(cache, ignore_errors=True)
                    child = common.tidal_child("disk_cache.py", ["--child", folder],
                                               target=target.split("-")[0],
                                               TIDAL_CACHE_DIR=cache, **env)
                    if (child["hits"] == 1) != (kind == "hit"):
                        raise RuntimeError(f"a {kind} sample reported {child['hits']} hits")
                    samples[kind].append(child)
            entry = {kind: {measure: common.summary([s[measure] for s in runs])
                            for measure in ("import", "first", "second")}
                     for kind, runs in samples.items()}
        except Exception as error:  # noqa: BLE001 - a broken row must not stop the others
            entry = {"error": common.unsupported(error)}
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        results[target] = entry
        if "error" in entry:
            log(f"  {target}: {entry['error']}")
        else:
            log(f"  {target}: hit {entry['hit']['first']['median'] * 1e3:.2f} ms beyond import, "
                f"miss (cold compile) {entry['miss']['first']['median'] * 1e3:.1f} ms")
    return results


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        _child(sys.argv[2])
    else:
        print(json.dumps(measure(), indent=1))
