"""Ufuncs and a generalized ufunc: NumPy-style functions whose loops run as
tidal kernels.

Run it with: PYTHONPATH=build/python /usr/bin/python3 examples/ufunc.py
It runs on the GPU when one is usable and on the cpu target otherwise.
"""

import math

import numpy as np

from tidal import cuda, guvectorize, vectorize


# One kernel per signature, compiled now; a call picks the signature from
# the input dtypes.
@vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
def hypotenuse(a, b):
    return math.sqrt(a * a + b * b)


# A gufunc: each (n)-long row of x and y gives one number.
@guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()", target="cuda")
def row_dot(x, y, result):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * y[i]
    result[0] = total


def main():
    rng = np.random.default_rng(0)
    a = rng.random((500, 400)).astype(np.float32)
    b = rng.random(400).astype(np.float32)  # broadcast along the rows of a
    h = hypotenuse(a, b)
    ok = np.allclose(h, np.hypot(a, b), rtol=1e-6)
    print(f"hypotenuse on the {cuda.current_target()} target: {h.shape} {h.dtype}, "
          f"{'OK' if ok else 'MISMATCH'} against np.hypot")

    # Device arrays in, device array out: nothing comes back until asked.
    da = cuda.to_device(a.astype(np.float64))
    dh = hypotenuse(da, 3.0)
    print(f"on the device: {type(dh).__name__} {dh.shape}; first row starts "
          f"{dh.copy_to_host()[0, :3]}")

    # .reduce of a binary ufunc over a 1-D array.
    @vectorize(["int64(int64, int64)"], target="cuda")
    def add(x, y):
        return x + y

    total = add.reduce(np.arange(1_000_001, dtype=np.int64))
    ok_reduce = total == 1_000_001 * 1_000_000 // 2
    print(f"add.reduce(arange(1000001)) = {total} ({'OK' if ok_reduce else 'MISMATCH'})")

    x = rng.standard_normal((1000, 16))
    y = rng.standard_normal((1000, 16))
    dots = row_dot(x, y)
    ok_dot = np.allclose(dots, (x * y).sum(axis=1))
    print(f"row_dot: {dots.shape}, {'OK' if ok_dot else 'MISMATCH'} against NumPy")
    return 0 if ok and ok_reduce and ok_dot else 1


if __name__ == "__main__":
    raise SystemExit(main())
