"""The launches just after a pause, tidal's and OpenMP's, for one kernel of
the OpenMP comparison: how much of a system's time in the vs-openmp table
comes from its threads having slept while the other systems took their
turns (docs/cpu-speed.md, "What the vs-openmp table measures on this VM").

    /usr/bin/python3 bench/after_pause.py matmul 512 [--pauses 0,5,20,50,100] [--repeats 11]

One worker process per system, as the table's (bench/cpu_vs_openmp.py),
each result checked against NumPy first; then, for each pause, `repeats`
times: sleep, time three launches back to back. Prints the median of the
first, second and third launch after the pause, in ms.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

import cpu_vs_openmp as harness  # noqa: E402
import vs_openmp_problems as problems  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kernel", choices=sorted(problems.KERNELS))
    parser.add_argument("size", type=int)
    parser.add_argument("--pauses", default="0,5,20,50,100", help="ms, comma-separated")
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()
    pauses = [float(p) / 1e3 for p in args.pauses.split(",")]
    inputs, outputs, params = problems.make(args.kernel, args.size)
    expected = problems.reference(args.kernel, inputs, params)
    blocks = {"tidal": problems.BLOCK[args.kernel], "openmp": None}
    workers = {}
    with tempfile.TemporaryDirectory(prefix="tidal-after-pause-") as folder:
        for key, array in {**inputs, **outputs}.items():
            np.save(os.path.join(folder, key + ".npy"), array)
        try:
            for system, block in blocks.items():
                worker = workers[system] = harness.start_worker(system)
                worker.ask(harness.load_line(args.kernel, folder, system, inputs, outputs,
                                             params, block))
                got = {key: np.load(os.path.join(folder, f"{system}-{key}.npy"))
                       for key in outputs}
                wrong = problems.check(args.kernel, got, expected)
                if wrong:
                    sys.exit(f"{args.kernel} on {system}: wrong result: {wrong}")
                harness._times(worker, 5, block)  # warm
            for pause in pauses:
                for system, worker in workers.items():
                    launches = [[], [], []]
                    for _ in range(args.repeats):
                        time.sleep(pause)
                        for n, seconds in enumerate(harness._times(worker, 3, blocks[system])):
                            launches[n].append(seconds)
                    text = " / ".join(f"{statistics.median(t) * 1e3:.3f}" for t in launches)
                    print(f"{args.kernel} {args.size} {system:6s} pause {pause * 1e3:4.0f} ms: "
                          f"launches 1/2/3 after it {text} ms", flush=True)
        finally:
            for worker in workers.values():
                worker.close()


if __name__ == "__main__":
    main()
