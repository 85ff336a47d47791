"""CUDA C++ from Python (tidal.cuda.RawModule, docs/cpp.md): the in-process
Clang compile of a ~50-line .cu (the reduction and histogram kernels with
their device functions), first and cached, and the first launch on the cpu
target (tidal-raise-nvvm, the host lowering and the JIT, for one argument
list).

first compile: a source the process has not compiled (each repeat changes a
comment, so clang parses and generates code anew, and the compile is written
to the on-disk cache, in a folder of the bench's own; clang's own start-up is
outside it: one compile runs before the samples); cached: the same source
again, answered from the in-memory bitcode cache; first launch: a new
RawKernel's first kernel[8, 256](...) on the cpu target."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def _source():
    parts = []
    for name in ("reduction", "histogram"):
        with open(os.path.join(ROOT, "examples", "cuda_cpp", name + ".cu")) as f:
            parts.append(f.read())
    return "\n".join(parts)


def measure(repeats=5, log=print):
    # The samples' compiles (new sources each) go to the on-disk cache of
    # compiled C++ too, as a user's first compile does: a folder of the
    # bench's own, not the user's cache.
    import tempfile
    with tempfile.TemporaryDirectory(prefix="tidal-bench-cxx-") as folder:
        previous = os.environ.get("TIDAL_CACHE_DIR")
        os.environ["TIDAL_CACHE_DIR"] = folder
        try:
            return _measure(repeats, log)
        finally:
            if previous is None:
                del os.environ["TIDAL_CACHE_DIR"]
            else:
                os.environ["TIDAL_CACHE_DIR"] = previous


def _measure(repeats, log):
    import numpy as np
    from tidal import cuda
    from tidal.cuda.target import use_target
    source = _source()
    lines = source.count("\n") + 1
    cuda.RawModule(code="// warm-up\n" + source)
    first, cached, launch = [], [], []
    values = np.ones(4096, np.float32)
    total = np.zeros(1, np.float32)
    for repeat in range(repeats):
        code = f"// sample {repeat} {time.time()}\n" + source
        t0 = time.perf_counter()
        module = cuda.RawModule(code=code)
        t1 = time.perf_counter()
        cuda.RawModule(code=code)
        t2 = time.perf_counter()
        with use_target("cpu"):
            kernel = module.get_function("sum_reduce")
            t3 = time.perf_counter()
            kernel[8, 256](values, len(values), total)
            t4 = time.perf_counter()
        first.append(t1 - t0)
        cached.append(t2 - t1)
        launch.append(t4 - t3)
    results = {"lines": lines, "first_compile": common.summary(first),
               "cached_compile": common.summary(cached),
               "first_launch_cpu": common.summary(launch)}
    log(f"  {lines}-line .cu: first compile {results['first_compile']['median'] * 1e3:.1f} ms, "
        f"cached {results['cached_compile']['median'] * 1e3:.2f} ms, first cpu launch "
        f"{results['first_launch_cpu']['median'] * 1e3:.1f} ms")
    return results


def table(results):
    lines = ["## CUDA C++ (RawModule)", "",
             f"A {results.get('lines', '?')}-line .cu (examples/cuda_cpp reduction + histogram) "
             "compiled in process by Clang: first compile, the same source cached, and a new "
             "RawKernel's first launch on the cpu target (raise, host lowering, JIT). "
             "Medians (min–max).", "",
             "| first compile | cached compile | first cpu launch |", "|---|---|---|"]
    if "error" in results:
        return lines + [f"| {results['error']} | | |", ""]

    def ms(s):
        return f"{s['median'] * 1e3:.2f} ms ({s['min'] * 1e3:.2f}–{s['max'] * 1e3:.2f})"
    return lines + [f"| {ms(results['first_compile'])} | {ms(results['cached_compile'])} | "
                    f"{ms(results['first_launch_cpu'])} |", ""]


if __name__ == "__main__":
    import json
    print(json.dumps(measure(), indent=1))
