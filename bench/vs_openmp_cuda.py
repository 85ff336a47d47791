"""The CUDA-style kernels of the OpenMP comparison (bench/cpu_vs_openmp.py),
written as Numba's documentation writes kernels: one thread per output
element, cuda.grid, shared-memory tiles with cuda.syncthreads, global
atomics. `cuda`, `float32` and `int32` are put into this module's globals by
kernels.define(cuda, source=...) before it runs.

2-D kernels put threadIdx.x on the last (contiguous) index, as Numba's
documented shared-memory matmul does (C[y, x]), so that a warp's accesses
coalesce on a GPU: the choice a CUDA author makes."""
# flake8: noqa: F821  (cuda, float32, int32 come from kernels.define)

import math

TILE = 16          # matmul tile edge (threads per block: TILE x TILE)
BLOCK = 256        # threads per block of the reduction and the convolution
BODY_TILE = 128    # n-body: bodies per shared tile = threads per block
TRANSPOSE_TILE = 32
RADIUS = 8         # convolution: 2 * RADIUS + 1 taps


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def stencil(a, out):
    # one Jacobi step of the 5-point Laplace stencil; the border is copied
    x, y = cuda.grid(2)
    n = a.shape[0]
    m = a.shape[1]
    if y < n and x < m:
        if y > 0 and x > 0 and y < n - 1 and x < m - 1:
            out[y, x] = float32(0.25) * (a[y - 1, x] + a[y + 1, x] + a[y, x - 1] + a[y, x + 1])
        else:
            out[y, x] = a[y, x]


@cuda.jit
def matmul(A, B, C):
    # C = A @ B with TILE x TILE tiles in shared memory (Numba's documented kernel)
    sA = cuda.shared.array(shape=(TILE, TILE), dtype=float32)
    sB = cuda.shared.array(shape=(TILE, TILE), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.0)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TILE) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TILE]
        if x < B.shape[1] and (ty + i * TILE) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TILE, x]
        cuda.syncthreads()
        for j in range(TILE):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


@cuda.jit
def reduction(x, partial):
    # each block sums BLOCK elements in shared memory (a tree); partial[block] = its sum
    buf = cuda.shared.array(shape=BLOCK, dtype=float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        buf[tid] = x[i]
    else:
        buf[tid] = 0
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = buf[0]


@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i], 1)


@cuda.jit
def mandelbrot(counts, x0, y0, step, iterations):
    # escape-time counts of the pixel grid x0 + step * col, y0 + step * row
    col, row = cuda.grid(2)
    if row < counts.shape[0] and col < counts.shape[1]:
        cr = x0 + step * float32(col)
        ci = y0 + step * float32(row)
        zr = float32(0.0)
        zi = float32(0.0)
        k = 0
        while k < iterations and zr * zr + zi * zi <= float32(4.0):
            t = zr * zr - zi * zi + cr
            zi = float32(2.0) * zr * zi + ci
            zr = t
            k += 1
        counts[row, col] = k


@cuda.jit
def nbody(pos, acc, softening):
    # accelerations of all-pairs gravity; pos[i] = (x, y, z, mass); bodies
    # come through shared memory BODY_TILE at a time (GPU Gems 3, ch. 31)
    tile = cuda.shared.array(shape=(BODY_TILE, 4), dtype=float32)
    i = cuda.grid(1)
    tid = cuda.threadIdx.x
    n = pos.shape[0]
    px = float32(0.0)
    py = float32(0.0)
    pz = float32(0.0)
    if i < n:
        px = pos[i, 0]
        py = pos[i, 1]
        pz = pos[i, 2]
    ax = float32(0.0)
    ay = float32(0.0)
    az = float32(0.0)
    for start in range(0, n, BODY_TILE):
        j = start + tid
        for c in range(4):
            tile[tid, c] = pos[j, c] if j < n else float32(0.0)
        cuda.syncthreads()
        for k in range(BODY_TILE):
            dx = tile[k, 0] - px
            dy = tile[k, 1] - py
            dz = tile[k, 2] - pz
            r2 = dx * dx + dy * dy + dz * dz + softening
            inv = float32(1.0) / math.sqrt(r2)
            s = tile[k, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        cuda.syncthreads()
    if i < n:
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


@cuda.jit
def black_scholes(price, strike, years, rate, volatility, call, put):
    # European options; the normal CDF through math.erf
    i = cuda.grid(1)
    if i < price.size:
        s = price[i]
        k = strike[i]
        t = years[i]
        root_t = math.sqrt(t)
        d1 = (math.log(s / k) + (rate + float32(0.5) * volatility * volatility) * t) / \
            (volatility * root_t)
        d2 = d1 - volatility * root_t
        cdf1 = float32(0.5) * (float32(1.0) + math.erf(d1 * float32(0.7071067811865476)))
        cdf2 = float32(0.5) * (float32(1.0) + math.erf(d2 * float32(0.7071067811865476)))
        discount = k * math.exp(-rate * t)
        call[i] = s * cdf1 - discount * cdf2
        put[i] = discount * (float32(1.0) - cdf2) - s * (float32(1.0) - cdf1)


@cuda.jit
def copy2d(a, out):
    x, y = cuda.grid(2)
    if y < a.shape[0] and x < a.shape[1]:
        out[y, x] = a[y, x]


@cuda.jit
def transpose(a, out):
    # out = a.T through a padded shared tile, TRANSPOSE_TILE^2 threads per block
    tile = cuda.shared.array(shape=(TRANSPOSE_TILE, TRANSPOSE_TILE + 1), dtype=float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TRANSPOSE_TILE + tx
    y = cuda.blockIdx.y * TRANSPOSE_TILE + ty
    if y < a.shape[0] and x < a.shape[1]:
        tile[ty, tx] = a[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TRANSPOSE_TILE + tx
    y = cuda.blockIdx.x * TRANSPOSE_TILE + ty
    if y < out.shape[0] and x < out.shape[1]:
        out[y, x] = tile[tx, ty]


@cuda.jit
def convolution(x, weights, out):
    # out[i] = sum_k weights[k] * x[i + k - RADIUS] (zero outside x); each
    # block stages its BLOCK elements and both halos in shared memory
    buf = cuda.shared.array(shape=BLOCK + 2 * RADIUS, dtype=float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    buf[tid + RADIUS] = x[i] if i < n else float32(0.0)
    if tid < RADIUS:
        left = i - RADIUS
        buf[tid] = x[left] if left >= 0 and left < n else float32(0.0)
        right = i + BLOCK
        buf[tid + BLOCK + RADIUS] = x[right] if right < n else float32(0.0)
    cuda.syncthreads()
    if i < n:
        s = float32(0.0)
        for k in range(2 * RADIUS + 1):
            s += weights[k] * buf[tid + k]
        out[i] = s
