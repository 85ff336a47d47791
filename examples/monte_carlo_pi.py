"""Monte Carlo estimate of pi with cuda.random and cuda.reduce.

Each thread has its own xoroshiro128+ generator (the same streams as
Numba's for the same seed), draws points in the unit square and counts
those inside the quarter circle; cuda.reduce sums the counts on the device.

    PYTHONPATH=build/python /usr/bin/python3 examples/monte_carlo_pi.py

It runs on the GPU when one is usable and on the cpu target otherwise.
"""

import math

import numpy as np

from tidal import cuda
from tidal.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32


@cuda.jit
def count_inside(rng_states, samples_per_thread, counts):
    thread = cuda.grid(1)
    if thread < counts.size:
        inside = 0
        for _ in range(samples_per_thread):
            x = xoroshiro128p_uniform_float32(rng_states, thread)
            y = xoroshiro128p_uniform_float32(rng_states, thread)
            if x * x + y * y <= 1.0:
                inside += 1
        counts[thread] = inside


@cuda.reduce
def sum_reduce(a, b):
    return a + b


def main():
    threads_per_block, blocks = 256, 64
    threads = threads_per_block * blocks
    samples_per_thread = 500
    rng_states = create_xoroshiro128p_states(threads, seed=2024)
    counts = cuda.device_array(threads, dtype=np.int64)
    count_inside[blocks, threads_per_block](rng_states, samples_per_thread, counts)
    inside = sum_reduce(counts)
    samples = threads * samples_per_thread
    estimate = 4.0 * inside / samples
    # The standard error of the estimate: 4 * sqrt(p (1 - p) / samples).
    p = math.pi / 4
    tolerance = 5 * 4 * math.sqrt(p * (1 - p) / samples)
    ok = abs(estimate - math.pi) < tolerance
    print(f"pi on the {cuda.current_target()} target from {samples:,} points: {estimate:.6f} "
          f"(error {estimate - math.pi:+.2e}, tolerance {tolerance:.1e}): "
          f"{'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
