"""Soak: does the process's memory stay flat under long use? Each phase
runs a warm-up, then the rest of its work, and reports the growth of the
resident set (RSS) between the end of the warm-up and the end (goal 0):
10^5 launches, allocations, copies, failing launches, and kernels compiled,
launched once and dropped (1,000 each: closures, kernels defined in new
module files, kernels defined by exec(); goal under 1 KiB per kernel). The
cpu target runs every phase, the cuda target over the mock driver
(build/lib/libtidal_mock_cuda.so, no-op launches) the dropped-kernel
phases; each target in a fresh subprocess.

    /usr/bin/python3 bench/soak.py [--scale 0.1]   # prints JSON
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def make_kernel(constant):
    from tidal import cuda

    @cuda.jit
    def scale_and_shift(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * constant + i
    return scale_and_shift


# A kernel of its own per item: the constant makes each source (and each
# compiled module) different, as a generator of kernels would.
KERNEL_SOURCE = """from tidal import cuda


@cuda.jit
def scale_and_shift(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * {constant} + i
"""


def exec_kernel(constant):
    namespace = {}
    exec(KERNEL_SOURCE.format(constant=constant), namespace)
    return namespace["scale_and_shift"]


def module_kernel(folder, constant):
    """The kernel of a new module file, imported (and then dropped, with
    its module, as a service that generates modules would)."""
    import importlib.util
    name = f"soak_kernel_{constant}"
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write(KERNEL_SOURCE.format(constant=constant))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.scale_and_shift


def phase(name, count, work, warmup_fraction=0.1):
    warmup = max(1, int(count * warmup_fraction))
    for n in range(warmup):
        work(n)
    gc.collect()
    before = rss_bytes()
    for n in range(warmup, count):
        work(n)
    gc.collect()
    after = rss_bytes()
    return {"phase": name, "count": count, "warmup": warmup,
            "rss_after_warmup_mib": round(before / 2**20, 2),
            "rss_growth_kib": round((after - before) / 1024, 1),
            "growth_per_item_bytes": round((after - before) / max(1, count - warmup), 1)}


def dropped_kernel_phases(scale, array):
    """Kernels compiled, launched once and dropped: closures of one
    function, kernels of new module files, kernels exec()'d from strings."""
    folder = tempfile.mkdtemp(prefix="tidal-soak-")
    count = max(10, int(1_000 * scale))

    def closure(n):
        make_kernel(float(n))[1, 32](array)

    def in_module(n):
        module_kernel(folder, n)[1, 32](array)
        os.remove(os.path.join(folder, f"soak_kernel_{n}.py"))

    def by_exec(n):
        exec_kernel(n)[1, 32](array)

    return [phase("compiled kernels", count, closure),
            phase("kernels in modules", count, in_module),
            phase("kernels by exec", count, by_exec)]


def run_phases(scale, target):
    from tidal import cuda

    if target == "cuda-mock":
        return dropped_kernel_phases(scale, cuda.to_device(np.zeros(16)))

    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    @cuda.jit(debug=True)
    def out_of_bounds(a):
        a[cuda.grid(1) + 1000] = 1.0

    x = np.ones(1024, np.float32)
    y = np.ones(1024, np.float32)
    out = np.zeros(1024, np.float32)
    dx, dy, dout = cuda.to_device(x), cuda.to_device(y), cuda.to_device(out)
    small = np.zeros(16)
    host = np.arange(4096, dtype=np.float64)

    def launch(_):
        saxpy[4, 256](np.float32(2.0), dx, dy, dout)

    def allocate(_):
        cuda.device_array(4096, np.float64)

    def copy(_):
        d = cuda.to_device(host)
        d.copy_to_host()

    def failing_launch(_):
        try:
            out_of_bounds[1, 1](small)
        except IndexError:
            pass

    n = lambda base: max(10, int(base * scale))  # noqa: E731
    return [phase("launches", n(100_000), launch),
            phase("allocations", n(100_000), allocate),
            phase("copies", n(100_000), copy),
            phase("failing launches", n(100_000), failing_launch)] + \
        dropped_kernel_phases(scale, small)


TARGETS = ("cpu", "cuda-mock")


def measure(scale=1.0, log=print):
    """Runs the phases of each target in a fresh process and returns their
    results (a target whose process fails is reported as an error)."""
    from common import MOCK_DRIVER, tidal_env
    results = []
    for target in TARGETS:
        if target == "cuda-mock":
            if not os.path.isfile(MOCK_DRIVER):
                log(f"  cuda-mock: no mock driver at {MOCK_DRIVER}")
                continue
            env = tidal_env(TIDAL_TARGET="cuda", TIDAL_CUDA_DRIVER=MOCK_DRIVER,
                            TIDAL_MOCK_CUDA_NOOP_LAUNCHES="1")
            env.pop("TIDAL_MOCK_CUDA_LOG", None)  # the mock's log would grow
        else:
            env = tidal_env(TIDAL_TARGET="cpu")
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                               "--scale", str(scale), "--target", target],
                              env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"soak on {target} failed ({done.returncode}): "
                               f"{done.stderr.strip()[-500:]}")
        for r in json.loads(done.stdout.strip().splitlines()[-1]):
            r["target"] = target
            results.append(r)
            log(f"  {target:9s} {r['phase']:18s} {r['count']:7d}: RSS "
                f"{r['rss_after_warmup_mib']:8.1f} MiB after warm-up, growth "
                f"{r['rss_growth_kib']:8.1f} KiB ({r['growth_per_item_bytes']} B per item)")
    return {"phases": results}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--target", choices=TARGETS, default="cpu", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        import warnings
        warnings.simplefilter("ignore")  # one performance warning per kernel
        print(json.dumps(run_phases(options.scale, options.target)))
        return 0
    measure(options.scale)
    return 0


if __name__ == "__main__":
    sys.exit(main())
