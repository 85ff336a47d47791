"""saxpy: out = a * x + y, one thread per element.

Run it with `make demo`, or: PYTHONPATH=build/python /usr/bin/python3 examples/saxpy.py
It runs on the GPU when one is usable and on the cpu target otherwise.
"""

import numpy as np

from tidal import cuda


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def main():
    n = 1_000_003  # not a multiple of the block size
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.zeros_like(x)
    threads = 256
    blocks = (n + threads - 1) // threads
    saxpy[blocks, threads](np.float32(2.0), x, y, out)

    expected = np.float32(2.0) * x + y
    ok = np.allclose(out, expected, rtol=1e-6, atol=1e-6)
    print(f"saxpy on the {cuda.current_target()} target: n={n}, "
          f"{blocks} blocks of {threads} threads")
    print(f"out[:4]      = {out[:4]}")
    print(f"expected[:4] = {expected[:4]}")
    print(f"check against NumPy: {'OK' if ok else 'MISMATCH'} "
          f"(max abs error {np.max(np.abs(out - expected)):.3g})")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
