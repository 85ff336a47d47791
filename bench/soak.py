"""Soak: does the process's memory stay flat under long use of the cpu
target? Each phase runs a warm-up, then the rest of its work, and reports the
growth of the resident set (RSS) between the end of the warm-up and the end
(goal 0): 10^5 launches, allocations, copies, failing launches, and 1,000
kernels compiled and dropped. Runs in a fresh subprocess (TIDAL_TARGET=cpu).

    /usr/bin/python3 bench/soak.py [--scale 0.1]   # prints JSON
"""
import argparse
import gc
import json
import os
import subprocess
import sys

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


def run_phases(scale):
    from tidal import cuda

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

    def compile_kernel(n):
        kernel = make_kernel(float(n))
        kernel[1, 32](small)

    n = lambda base: max(10, int(base * scale))  # noqa: E731
    return [phase("launches", n(100_000), launch),
            phase("allocations", n(100_000), allocate),
            phase("copies", n(100_000), copy),
            phase("failing launches", n(100_000), failing_launch),
            phase("compiled kernels", n(1_000), compile_kernel)]


def measure(scale=1.0, log=print):
    """Runs the phases in a fresh process and returns their results."""
    from common import tidal_env
    env = tidal_env(TIDAL_TARGET="cpu")
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                           "--scale", str(scale)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"soak failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for r in results:
        log(f"  {r['phase']:18s} {r['count']:7d}: RSS {r['rss_after_warmup_mib']:8.1f} MiB "
            f"after warm-up, growth {r['rss_growth_kib']:8.1f} KiB "
            f"({r['growth_per_item_bytes']} B per item)")
    return {"phases": results}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        print(json.dumps(run_phases(options.scale)))
        return 0
    measure(options.scale)
    return 0


if __name__ == "__main__":
    sys.exit(main())
