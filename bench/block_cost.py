"""The cost per block and per element of one cpu-target kernel of the OpenMP
comparison, as CPU time of the launching thread with TIDAL_CPU_THREADS=1
(every block runs on that thread), which a loaded machine disturbs much less
than wall time: other processes take turns on the core, not this thread's
clock. (This VM exposes no hardware counters to `perf stat`, and callgrind
takes minutes per run here.)

    TIDAL_TARGET=cpu TIDAL_CPU_THREADS=1 /usr/bin/python3 bench/block_cost.py reduction 1048576 [--launches 50] [--block 256]

Checks the result against NumPy first, then prints the minimum and the
median over the launches of the thread's CPU time, per launch, per block
and per element, and the median wall time.
"""
import argparse
import math
import os
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

TWO_D = ("stencil", "copy2d", "matmul", "transpose", "mandelbrot")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kernel")
    parser.add_argument("size", type=int)
    parser.add_argument("--launches", type=int, default=50)
    parser.add_argument("--block", default=None, help="e.g. 16x16 (default: the kernel's)")
    args = parser.parse_args()
    if os.environ.get("TIDAL_CPU_THREADS") != "1" or os.environ.get("TIDAL_TARGET") != "cpu":
        sys.exit("run with TIDAL_TARGET=cpu TIDAL_CPU_THREADS=1")
    from tidal import cuda
    import kernels
    import vs_openmp_problems as problems
    block = (tuple(int(b) for b in args.block.split("x")) if args.block
             else problems.BLOCK[args.kernel])
    namespace = kernels.define(cuda, os.path.join(BENCH, "vs_openmp_cuda.py"))
    inputs, outputs, params = problems.make(args.kernel, args.size)
    arrays = {**inputs, **outputs}
    call = problems.tidal_call(args.kernel, namespace, arrays, params, block)
    call()
    wrong = problems.check(args.kernel, {k: arrays[k] for k in outputs},
                           problems.reference(args.kernel, inputs, params))
    if wrong:
        sys.exit(f"{args.kernel}: wrong result: {wrong}")
    cpu, wall = [], []
    for _ in range(args.launches):
        c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
        call()
        cpu.append(time.thread_time_ns() - c0)
        wall.append(time.perf_counter_ns() - w0)
    cpu.sort()
    wall.sort()
    elements = args.size ** (2 if args.kernel in TWO_D else 1)
    if len(block) == 2:
        blocks = math.ceil(args.size / block[0]) * math.ceil(args.size / block[1])
    else:
        blocks = math.ceil(elements / math.prod(block))
    shape = "x".join(map(str, block))
    for label, ns in (("min", cpu[0]), ("median", cpu[len(cpu) // 2])):
        print(f"{args.kernel} {args.size} block {shape}: CPU {label} {ns / 1e6:.3f} ms/launch "
              f"{ns / blocks:,.0f} ns/block {ns / elements:.2f} ns/element")
    print(f"  wall median {wall[len(wall) // 2] / 1e6:.3f} ms ({args.launches} launches)")


if __name__ == "__main__":
    main()
