"""Python kernels calling the CUDA C++ device functions of functions.cu, with
and without signatures (docs/cpp.md, "Calling CUDA C++ from Python
kernels"). Runs on either target; `TIDAL_TARGET=cpu` runs it without a GPU:

    PYTHONPATH=build/python python3 examples/cuda_cpp/call_functions.py
"""

import os

import numpy as np

from tidal import cuda

FUNCTIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "functions.cu")

# Numba's way: declare each function with its signature and the file.
mul = cuda.declare_device("mul_f32", "float32(float32, float32)", link=[FUNCTIONS])
axpy = cuda.declare_device("axpy", "float32(float32, float32, float32)", abi="c")


@cuda.jit(link=[FUNCTIONS])  # axpy's file, for the whole kernel
def numba_way(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = axpy(2.0, mul(x[i], y[i]), 1.0)


# tidal's way: include the file and call what is in it, no signatures.
lib = cuda.include(FUNCTIONS)


@cuda.jit
def tidal_way(x, y, xd, yd, norms, norms64, dots):
    i = cuda.grid(1)
    if i < norms.size:
        norms[i] = lib.geometry.norm(x[i], y[i])        # the float overload
        norms64[i] = lib.geometry.norm(xd[i], yd[i])    # the double overload
    cuda.syncthreads()
    if i == 0:
        dots[0] = lib.geometry.dot(x, y, x.size)        # arrays as pointers
        lib.clamp(norms, norms.size, 0.0, 1.0)


def main():
    n = 1000
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    numba_way[(n + 127) // 128, 128](x, y, out)
    assert np.allclose(out, 2 * x * y + 1, rtol=1e-6)

    norms = np.zeros(n, dtype=np.float32)
    norms64 = np.zeros(n, dtype=np.float64)
    dots = np.zeros(1, dtype=np.float32)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    # One block: thread 0 clamps every norm after the barrier.
    tidal_way[1, n](x, y, xd, yd, norms, norms64, dots)
    print(f"target: {cuda.current_target()}")
    print(f"numba way:  out[:3]   = {out[:3]}")
    print(f"tidal way:  norms64[:3] = {norms64[:3]}, dot = {dots[0]:.4f} "
          f"(NumPy {np.dot(x.astype(np.float64), y):.4f})")
    assert np.allclose(norms64, np.hypot(xd, yd))
    assert np.allclose(norms, np.minimum(np.hypot(x, y), 1.0), rtol=1e-6)
    assert np.isclose(dots[0], np.dot(x.astype(np.float64), y), rtol=1e-4)
    print("same results as NumPy")


if __name__ == "__main__":
    main()
