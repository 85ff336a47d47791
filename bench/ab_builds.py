"""Two builds of tidal side by side on the kernels of the OpenMP comparison:
this checkout's build and another's (a worktree of the commit before a
change), each in a worker process of its own as the vs-openmp table runs
tidal (bench/cpu_vs_openmp.py), in alternating turns (each after the last
one's threads went idle, with the caches evicted; each round in another
order), with OpenMP's time beside them. On a VM whose memory bandwidth drifts from minute to minute,
only turns that alternate compare two builds.

    /usr/bin/python3 bench/ab_builds.py --base ../wt/base/build [--kernels saxpy,reduction]
        [--rounds 14] [--threads 2]

Checks each build's result against NumPy first; prints, per kernel, the
median time of each (ms) and this build's time over the base's.
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

import common  # noqa: E402
import cpu_vs_openmp as harness  # noqa: E402
import vs_openmp_problems as problems  # noqa: E402


def tidal_worker(build_python, threads):
    env = dict(os.environ, PYTHONPATH=build_python, TIDAL_TARGET="cpu")
    if threads:
        env["TIDAL_CPU_THREADS"] = str(threads)
    return harness.Worker("tidal", [common.PYTHON, os.path.join(BENCH, "cpu_vs_openmp.py"),
                                    "--worker", "tidal"], env)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, help="the other build folder (its python/)")
    parser.add_argument("--kernels", default=",".join(problems.KERNELS))
    parser.add_argument("--rounds", type=int, default=14)
    parser.add_argument("--threads", type=int, default=0, help="TIDAL_CPU_THREADS (0: all)")
    parser.add_argument("--column", type=int, default=1, help="problems.SIZES column (1: the table's)")
    args = parser.parse_args()
    base_python = os.path.join(os.path.abspath(args.base), "python")
    if not os.path.isdir(base_python):
        sys.exit(f"no {base_python}: build the base first (make build there)")
    workers = {"this": tidal_worker(common.BUILD_PYTHON, args.threads),
               "base": tidal_worker(base_python, args.threads),
               "openmp": harness.start_worker("openmp")}
    print(f"{'kernel':12s} {'size':>10s} {'this':>9s} {'base':>9s} {'OpenMP':>9s}  this/base")
    try:
        with tempfile.TemporaryDirectory(prefix="tidal-ab-", dir="/dev/shm"
                                         if os.path.isdir("/dev/shm") else None) as folder:
            for name in args.kernels.split(","):
                size = problems.SIZES[name][args.column]
                inputs, outputs, params = problems.make(name, size)
                for key, array in {**inputs, **outputs}.items():
                    np.save(os.path.join(folder, key + ".npy"), array)
                expected = problems.reference(name, inputs, params)
                blocks = {}
                for label, worker in workers.items():
                    block = None if label == "openmp" else problems.BLOCK[name]
                    worker.ask(harness.load_line(name, folder, label, inputs, outputs, params,
                                                 block))
                    got = {key: np.load(os.path.join(folder, f"{label}-{key}.npy"))
                           for key in outputs}
                    wrong = problems.check(name, got, expected)
                    if wrong:
                        sys.exit(f"{name} on {label}: wrong result: {wrong}")
                    blocks[label] = block
                repeats = {label: max(1, min(50, int(harness.ROUND_TARGET_S / max(
                    harness._times(w, 1, blocks[label])[0], 1e-6)))) for label, w in workers.items()}
                samples = {label: [] for label in workers}
                last = None
                order = list(workers.items())
                for round_number in range(args.rounds):
                    # each round in another order: no build always follows OpenMP's turn
                    turn = round_number % len(order)
                    for label, worker in order[turn:] + order[:turn]:
                        if last is not None:
                            last.wait_until_idle()
                        harness.evict_caches()
                        time.sleep(harness.PAUSE_S)
                        last = worker
                        times = harness._times(worker, repeats[label], blocks[label])
                        samples[label].append(sum(times) / len(times))
                median = {label: statistics.median(s) for label, s in samples.items()}
                print(f"{name:12s} {problems.size_text(name, size):>10s} "
                      f"{median['this'] * 1e3:8.3f}  {median['base'] * 1e3:8.3f}  "
                      f"{median['openmp'] * 1e3:8.3f}  {median['this'] / median['base']:.3f}",
                      flush=True)
    finally:
        for worker in workers.values():
            worker.close()


if __name__ == "__main__":
    main()
