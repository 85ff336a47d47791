"""A tidal kernel over the chunks of a dask.array, on a Dask cluster of
worker processes: map_blocks (an element-wise kernel) and a reduction
across chunks (a kernel per chunk, then Dask sums the partial results).

Run it with: PYTHONPATH=build/python /usr/bin/python3 examples/dask_map_blocks.py
(Debian's python3-distributed). The kernels travel to the workers pickled
by value with their source (docs/ecosystem.md); each worker compiles a
kernel once per signature and reuses it for every later chunk.

On the cpu target each worker runs kernels on a pool of TIDAL_CPU_THREADS
threads, set here so that workers x threads do not exceed the cores. On the
cuda target give each worker its own GPU, as dask-cuda does, through
CUDA_VISIBLE_DEVICES.
"""

import os
import sys
import time

import numpy as np

from tidal import cuda

WORKERS = 2
CHUNKS = 8


@cuda.jit
def polynomial(x, out):
    """out = 3x^2 - 2x + 1, element-wise."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = 3 * v * v - 2 * v + 1


@cuda.jit
def sum_of_squares(x, total):
    """total[0] += the sum of x^2 over this chunk."""
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, 0, x[i] * x[i])


def polynomial_chunk(block):
    out = np.empty_like(block)
    polynomial[(block.size + 255) // 256, 256](block, out)
    return out


def sum_of_squares_chunk(block, axis, keepdims):
    # dask.array.reduction's chunk step: one partial sum per chunk.
    total = np.zeros(1, dtype=block.dtype)
    flat = np.ascontiguousarray(block).ravel()
    sum_of_squares[(flat.size + 255) // 256, 256](flat, total)
    return total.reshape((1,) * block.ndim) if keepdims else total[0]


def sum_partials(partials, axis, keepdims):
    # The aggregate step: the partial sums of all chunks, added by NumPy.
    return partials.sum(axis=axis, keepdims=keepdims)


def main():
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    cores = os.cpu_count() or 1
    # Inherited by the worker processes: workers x threads <= cores.
    os.environ.setdefault("TIDAL_CPU_THREADS", str(max(1, cores // WORKERS)))

    n = 2_000_000
    host = np.arange(n, dtype=np.int64) % 1000 - 500
    started = time.perf_counter()
    with LocalCluster(n_workers=WORKERS, processes=True, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        cluster_ready = time.perf_counter()
        x = da.from_array(host, chunks=n // CHUNKS)

        first = time.perf_counter()
        mapped = x.map_blocks(polynomial_chunk, dtype=x.dtype).compute()
        first_map = time.perf_counter() - first
        again = time.perf_counter()
        mapped = x.map_blocks(polynomial_chunk, dtype=x.dtype).compute()
        second_map = time.perf_counter() - again

        total = da.reduction(x, sum_of_squares_chunk, sum_partials, dtype=x.dtype,
                             concatenate=True).compute()
        workers = len(client.scheduler_info()["workers"])

    expected_map = 3 * host * host - 2 * host + 1
    expected_total = int((host * host).sum())
    ok = np.array_equal(mapped, expected_map) and int(total) == expected_total
    print(f"dask: {workers} workers x {os.environ['TIDAL_CPU_THREADS']} threads "
          f"({cuda.current_target()} target), {CHUNKS} chunks of {n // CHUNKS}")
    print(f"cluster start {cluster_ready - started:.2f} s; map over {CHUNKS} chunks: "
          f"{first_map:.2f} s first (compiles on each worker), {second_map:.2f} s again")
    print(f"map_blocks equals NumPy: {np.array_equal(mapped, expected_map)}; "
          f"sum of squares {int(total)} (NumPy {expected_total})")
    print("ok" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
