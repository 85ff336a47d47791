"""Reduction throughput on the cpu target: tidal's cuda.Reduce (a sum)
against a hand-written tidal kernel doing the same sum and NumPy's sum, for
float32 arrays of 2^16, 2^20 and 2^24 elements.

The hand-written kernel is the usual one: each thread folds a grid-strided
slice, the block halves in shared memory, and thread 0 adds the block's sum
into the result with an atomic (one launch). Reduce runs its two launches
(blocks, then the final pass) and copies the scalar back; it is timed on a
device array and on a host array (which adds the copy to the device).

    /usr/bin/python3 bench/reduce.py --child   # prints JSON (TIDAL_TARGET=cpu)
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SIZES = (1 << 16, 1 << 20, 1 << 24)
BLOCK = 256
BLOCKS = 256


def define_hand_written(cuda, float32):
    @cuda.jit
    def hand_written_sum(x, out):
        buffer = cuda.shared.array(BLOCK, float32)
        thread = cuda.threadIdx.x
        value = float32(0)
        for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            value += x[i]
        buffer[thread] = value
        cuda.syncthreads()
        width = BLOCK // 2
        while width > 0:
            if thread < width:
                buffer[thread] += buffer[thread + width]
            cuda.syncthreads()
            width //= 2
        if thread == 0:
            cuda.atomic.add(out, 0, buffer[0])
    return hand_written_sum


def child(repeats):
    from tidal import cuda, float32
    hand_written = define_hand_written(cuda, float32)
    sum_reduce = cuda.Reduce(lambda a, b: a + b)
    rng = np.random.default_rng(0)
    results = {}
    for size in SIZES:
        host = rng.random(size, dtype=np.float32)
        device = cuda.to_device(host)
        out = cuda.to_device(np.zeros(1, np.float32))
        expected = host.sum(dtype=np.float64)

        def run_hand_written():
            out.copy_to_device(np.zeros(1, np.float32))
            hand_written[BLOCKS, BLOCK](device, out)
            return out.copy_to_host()[0]

        runs = {"reduce_device": lambda: sum_reduce(device),
                "reduce_host": lambda: sum_reduce(host),
                "hand_written": run_hand_written,
                "numpy": lambda: host.sum()}
        row = {}
        for name, run in runs.items():
            value = run()  # warm: compiles once
            times = common.repeat(run, repeats, budget_s=10)
            row[name] = {"time": common.summary(times),
                         "check": bool(abs(float(value) - expected) <= 1e-4 * expected)}
        results[str(size)] = row
    return results


def measure(log, repeats=9):
    """Runs the child in a new process on the cpu target; {size: {name: ...}}."""
    log("  reduce: Reduce vs a hand-written kernel vs NumPy (cpu target)")
    return common.tidal_child("reduce.py", ["--child", str(repeats)], target="cpu")


def table(results, cores):
    """The Markdown lines of the reduction section."""
    lines = [f"## 5. Reduction (cpu target, {cores} cores)", "",
             "A float32 sum: `cuda.Reduce(lambda a, b: a + b)` on a device array and on a host "
             "array (copied first), a hand-written tidal kernel (grid-strided fold, shared-memory "
             "halving, one atomic add per block, one launch), NumPy's `sum`. Milliseconds, median "
             "(min–max); 'check': the result within 1e-4 of the float64 sum.", ""]
    if "error" in results:
        return lines + [results["error"], ""]
    names = ("reduce_device", "reduce_host", "hand_written", "numpy")
    lines += ["| size | " + " | ".join(names) + " | Reduce vs hand-written |",
              "|" + "---|" * (len(names) + 2)]
    for size, row in results.items():
        cells = []
        for name in names:
            t = row[name]["time"]
            cells.append(f"{t['median'] * 1e3:.3f} ({t['min'] * 1e3:.3f}–{t['max'] * 1e3:.3f})"
                         + ("" if row[name]["check"] else " WRONG"))
        ratio = row["hand_written"]["time"]["median"] / row["reduce_device"]["time"]["median"]
        power = int(size).bit_length() - 1
        lines.append(f"| 2^{power} | " + " | ".join(cells) + f" | {ratio:.2f}× |")
    return lines + ["", "'Reduce vs hand-written': the kernel's time over Reduce's (above 1: "
                    "Reduce is faster).", ""]


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--child":
        print(json.dumps(child(int(sys.argv[2]) if len(sys.argv) > 2 else 9)))
    else:
        print("\n".join(table(measure(print), os.cpu_count())))
