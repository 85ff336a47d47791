"""A 2-D Jacobi stencil split by rows over MPI ranks, halo rows exchanged
with mpi4py, checked against a single-process run of the same kernel.

Run it with (Debian's python3-mpi4py and openmpi-bin):
    PYTHONPATH=build/python mpirun -n 2 --oversubscribe /usr/bin/python3 examples/mpi_stencil.py
(as root, add --allow-run-as-root). On the cpu target the halos travel
in host buffers. On the cuda target each rank keeps its rows in a device
array; with a CUDA-aware MPI (TIDAL_MPI_CUDA_AWARE=1) mpi4py sends the
device rows themselves, through their __cuda_array_interface__, otherwise
they are copied through the host.
"""

import os
import sys

import numpy as np

from tidal import cuda

ROWS, COLUMNS, STEPS = 256, 192, 40


@cuda.jit
def jacobi_step(u, out):
    """out = the mean of u's four neighbours, inside; the edges are kept."""
    i, j = cuda.grid(2)
    if i < u.shape[0] and j < u.shape[1]:
        if i == 0 or j == 0 or i == u.shape[0] - 1 or j == u.shape[1] - 1:
            out[i, j] = u[i, j]
        else:
            out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


def initial_grid():
    grid = np.zeros((ROWS, COLUMNS))
    grid[0, :] = 100.0          # a hot top edge
    grid[:, 0] = np.linspace(100.0, 0.0, ROWS)
    return grid


def launch(u, out):
    threads = (16, 16)
    blocks = ((u.shape[0] + 15) // 16, (u.shape[1] + 15) // 16)
    jacobi_step[blocks, threads](u, out)


def run_single(grid):
    u, out = grid.copy(), np.empty_like(grid)
    for _ in range(STEPS):
        launch(u, out)
        u, out = out, u
    return u


def exchange_halos(comm, local, up, down, cuda_aware):
    """Sends this rank's first and last own rows to its neighbours and
    receives theirs into its halo rows (local[0] and local[-1]). A missing
    neighbour (-1) is MPI.PROC_NULL: nothing goes there, and the row at
    that end, the grid's own edge, stays as it is."""
    from mpi4py import MPI
    if isinstance(local, cuda.DeviceNDArray):
        if not cuda_aware:
            host = local.copy_to_host()
            exchange_halos(comm, host, up, down, False)
            local.copy_to_device(host)
            return
        cuda.synchronize()  # the kernel's writes, before MPI reads the rows
    up = MPI.PROC_NULL if up < 0 else up
    down = MPI.PROC_NULL if down < 0 else down
    comm.Sendrecv(local[1], dest=up, recvbuf=local[-1], source=down)
    comm.Sendrecv(local[-2], dest=down, recvbuf=local[0], source=up)


def run_distributed(comm, grid, cuda_aware):
    rank, size = comm.Get_rank(), comm.Get_size()
    bounds = np.linspace(0, ROWS, size + 1).astype(int)
    start, stop = bounds[rank], bounds[rank + 1]
    # This rank's rows with a halo row above and below; the first and the
    # last rank have the grid's edge row there instead.
    low, high = max(start - 1, 0), min(stop + 1, ROWS)
    up = rank - 1 if rank > 0 else -1
    down = rank + 1 if rank < size - 1 else -1
    on_gpu = cuda.current_target() == "cuda"
    u = cuda.to_device(grid[low:high].copy()) if on_gpu else grid[low:high].copy()
    out = cuda.device_array_like(u) if on_gpu else np.empty_like(u)
    for _ in range(STEPS):
        launch(u, out)
        u, out = out, u
        exchange_halos(comm, u, up, down, cuda_aware)
    result = u.copy_to_host() if on_gpu else u
    pieces = comm.gather(result[start - low:stop - low], root=0)
    return np.vstack(pieces) if rank == 0 else None


def main():
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    cuda_aware = os.environ.get("TIDAL_MPI_CUDA_AWARE", "") == "1"
    grid = initial_grid()
    result = run_distributed(comm, grid, cuda_aware)
    if comm.Get_rank() != 0:
        return 0
    expected = run_single(grid)
    ok = np.array_equal(result, expected)
    print(f"mpi: {comm.Get_size()} ranks, {ROWS}x{COLUMNS} grid, {STEPS} steps "
          f"({cuda.current_target()} target): "
          f"{'equals' if ok else 'DIFFERS FROM'} the single-process run")
    print("ok" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
