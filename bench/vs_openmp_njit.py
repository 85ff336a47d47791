"""The @njit(parallel=True) versions of the OpenMP comparison's kernels
(bench/cpu_vs_openmp.py), as a Numba CPU user writes them: the natural loop
nest with its outer loop a prange, float32 data and accumulators as the CUDA
kernels have them. Numba is a test-time dependency of the benchmark only.

Nothing is compiled until a function is first called; with
NUMBA_CACHE_DIR set (the benchmark sets it under build/bench/) a later
process reuses the compiled code."""

import math

import numpy as np
from numba import njit, prange

RADIUS = 8


@njit(parallel=True, cache=True)
def saxpy(a, x, y, out):
    for i in prange(x.size):
        out[i] = a * x[i] + y[i]


@njit(parallel=True, cache=True)
def stencil(a, out):
    n, m = a.shape
    for i in prange(n):
        if i == 0 or i == n - 1:
            for j in range(m):
                out[i, j] = a[i, j]
        else:
            out[i, 0] = a[i, 0]
            for j in range(1, m - 1):
                out[i, j] = np.float32(0.25) * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])
            out[i, m - 1] = a[i, m - 1]


@njit(parallel=True, cache=True)
def matmul(A, B, C):
    # i-k-j order: the contiguous inner loop a careful user writes
    n, k = A.shape
    m = B.shape[1]
    for i in prange(n):
        for j in range(m):
            C[i, j] = 0
        for p in range(k):
            a = A[i, p]
            for j in range(m):
                C[i, j] += a * B[p, j]


@njit(parallel=True, cache=True)
def reduction(x, total):
    s = 0.0
    for i in prange(x.size):
        s += x[i]
    total[0] = s


@njit(parallel=True, cache=True)
def histogram(x, bins, chunks):
    # a private histogram per chunk, summed (prange has no atomics); the
    # caller passes numba.get_num_threads() as `chunks`
    local = np.zeros((chunks, bins.size), dtype=bins.dtype)
    per = (x.size + chunks - 1) // chunks
    for c in prange(chunks):
        for i in range(c * per, min(x.size, (c + 1) * per)):
            local[c, x[i]] += 1
    for b in range(bins.size):
        bins[b] = local[:, b].sum()


@njit(parallel=True, cache=True)
def mandelbrot(counts, x0, y0, step, iterations):
    n, m = counts.shape
    for row in prange(n):
        ci = y0 + step * np.float32(row)
        for col in range(m):
            cr = x0 + step * np.float32(col)
            zr = np.float32(0.0)
            zi = np.float32(0.0)
            k = 0
            while k < iterations and zr * zr + zi * zi <= np.float32(4.0):
                t = zr * zr - zi * zi + cr
                zi = np.float32(2.0) * zr * zi + ci
                zr = t
                k += 1
            counts[row, col] = k


@njit(parallel=True, cache=True)
def nbody(pos, acc, softening):
    n = pos.shape[0]
    for i in prange(n):
        px, py, pz = pos[i, 0], pos[i, 1], pos[i, 2]
        ax = np.float32(0.0)
        ay = np.float32(0.0)
        az = np.float32(0.0)
        for j in range(n):
            dx = pos[j, 0] - px
            dy = pos[j, 1] - py
            dz = pos[j, 2] - pz
            r2 = dx * dx + dy * dy + dz * dz + softening
            inv = np.float32(1.0) / np.sqrt(r2)
            s = pos[j, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


@njit(parallel=True, cache=True)
def black_scholes(price, strike, years, rate, volatility, call, put):
    half = np.float32(0.5)
    one = np.float32(1.0)
    for i in prange(price.size):
        s = price[i]
        k = strike[i]
        t = years[i]
        root_t = np.sqrt(t)
        d1 = (np.log(s / k) + (rate + half * volatility * volatility) * t) / (volatility * root_t)
        d2 = d1 - volatility * root_t
        cdf1 = half * (one + math.erf(d1 * np.float32(0.7071067811865476)))
        cdf2 = half * (one + math.erf(d2 * np.float32(0.7071067811865476)))
        discount = k * np.exp(-rate * t)
        call[i] = s * cdf1 - discount * cdf2
        put[i] = discount * (one - cdf2) - s * (one - cdf1)


@njit(parallel=True, cache=True)
def copy2d(a, out):
    n, m = a.shape
    for i in prange(n):
        for j in range(m):
            out[i, j] = a[i, j]


@njit(parallel=True, cache=True)
def transpose(a, out):
    n, m = a.shape
    for i in prange(n):
        for j in range(m):
            out[j, i] = a[i, j]


@njit(parallel=True, cache=True)
def convolution(x, weights, out):
    n = x.size
    taps = weights.size
    for i in prange(n):
        s = np.float32(0.0)
        for k in range(taps):
            j = i + k - RADIUS
            if j >= 0 and j < n:
                s += weights[k] * x[j]
        out[i] = s


KERNELS = {"saxpy": saxpy, "stencil": stencil, "matmul": matmul, "reduction": reduction,
           "histogram": histogram, "mandelbrot": mandelbrot, "nbody": nbody,
           "black_scholes": black_scholes, "copy2d": copy2d, "transpose": transpose,
           "convolution": convolution}
