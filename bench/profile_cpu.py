"""Profiling driver for the cpu target: runs one kernel of kernel_source.py
at the benchmark's size (bench/cpu_target.py's problem()) many times in this
process and prints per-launch times, or writes the host IR of the kernels.

    PYTHONPATH=build-perf/python /usr/bin/python3 bench/profile_cpu.py saxpy [--seconds 3]
    PYTHONPATH=build-perf/python /usr/bin/python3 bench/profile_cpu.py all --njit
    /usr/bin/python3 bench/profile_cpu.py --ir OUTDIR [--tidalc build-perf/bin/tidalc]

Unlike cpu_target.py it takes tidal from PYTHONPATH (any build directory),
prints min/median/mean, and with --njit times the @njit loops beside it."""

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_target  # noqa: E402
import kernels  # noqa: E402


def timings(call, seconds, minimum=20):
    call()
    samples = []
    start = time.perf_counter()
    while len(samples) < minimum or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        call()
        samples.append(time.perf_counter() - t0)
    return samples


def describe(samples):
    ms = sorted(s * 1e3 for s in samples)
    return (f"median {statistics.median(ms):.3f} ms  min {ms[0]:.3f}  "
            f"q1 {ms[len(ms) // 4]:.3f}  q3 {ms[3 * len(ms) // 4]:.3f}  n {len(ms)}")


def run(names, seconds, with_njit):
    from tidal import cuda
    namespace = kernels.define(cuda)
    compiled = cpu_target.njit_kernels() if with_njit else None
    for name in names:
        launch, check, njit_call = cpu_target.problem(name, cpu_target.FULL[name])
        samples = timings(lambda: launch(namespace), seconds)
        print(f"tidal {name:10s} {describe(samples)}  check {'OK' if check() else 'MISMATCH'}",
              flush=True)
        if compiled is not None:
            samples = timings(lambda: njit_call(compiled), seconds)
            print(f"njit  {name:10s} {describe(samples)}", flush=True)


def write_ir(directory, tidalc):
    """tidalc --target cpu --emit=llvm for every benchmark kernel."""
    os.makedirs(directory, exist_ok=True)
    source = os.path.join(directory, "kernels.py")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_source.py")) as f:
        text = f.read()
    with open(source, "w") as f:
        f.write("from tidal import cuda, float32, int32\n" + text)
    for name in cpu_target.KERNELS:
        out = os.path.join(directory, name + ".ll")
        subprocess.run([tidalc, source, "--kernel", name, "--sig", kernels.SIGNATURES[name],
                        "--emit=llvm", "--target", "cpu", "-o", out], check=True)
        print(out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("kernel", nargs="?", default="all",
                        help="one of " + ", ".join(cpu_target.KERNELS) + " or all")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--njit", action="store_true")
    parser.add_argument("--ir", metavar="DIR")
    parser.add_argument("--tidalc", default=os.path.join(cpu_target.common.ROOT, "build", "bin", "tidalc"))
    args = parser.parse_args()
    if args.ir:
        write_ir(args.ir, args.tidalc)
    else:
        run(cpu_target.KERNELS if args.kernel == "all" else [args.kernel], args.seconds, args.njit)
