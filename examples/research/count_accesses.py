"""The research example's plugin in a Python program (docs/research.md):
each thread of a stencil kernel counts its loads and stores.

    make build     # builds build/examples/research/CountMemoryAccesses.so too
    PYTHONPATH=build/python /usr/bin/python3 examples/research/count_accesses.py [PLUGIN.so]
"""

import os
import sys

import numpy as np

import tidal.compiler
from tidal import cuda

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PLUGIN = os.path.join(HERE, "..", "..", "build", "examples", "research",
                              "CountMemoryAccesses.so")


@cuda.jit(passes={"after-frontend": "count-memory-accesses"})
def smooth(x, out, counts):
    i = cuda.grid(1)
    if 0 < i < x.size - 1:
        out[i] = (x[i - 1] + x[i] + x[i + 1]) / 3
    elif i < x.size:
        out[i] = x[i]


def main():
    tidal.compiler.load_pass_plugin(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_PLUGIN)
    n, threads = 1000, 128
    blocks = (n + threads - 1) // threads
    x = np.linspace(0, 1, n, dtype=np.float32)
    out = np.zeros_like(x)
    counts = np.zeros(2 * blocks * threads, np.int64)  # loads, stores per thread
    smooth[blocks, threads](x, out, counts)
    per_thread = counts.reshape(-1, 2)
    print(f"on the {cuda.current_target()} target: loads and stores of threads 0, 1, 999, 1000:")
    print(per_thread[[0, 1, 999, 1000]])
    print(f"total: {per_thread[:, 0].sum()} loads, {per_thread[:, 1].sum()} stores")
    ok = np.allclose(out[1:-1], (x[:-2] + x[1:-1] + x[2:]) / 3)
    print(f"the kernel's result: {'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
