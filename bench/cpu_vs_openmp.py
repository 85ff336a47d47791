"""`make bench` section vs-openmp: tidal's cpu target beside the same
computations written for the CPU, hand-written C++ with OpenMP and Numba's
@njit(parallel=True), with STREAM's triad as the memory's limit (issue 25).

Each system runs in a worker process of its own that uses every core and
answers one command at a time on its stdin (the protocol of
bench/openmp/main.cpp, which the Python workers below speak too): the
OpenMP kernels (bench/openmp/, built by build_openmp() with g++ -O3
-march=native -fopenmp into build/bench/), tidal running the CUDA-style
kernels of vs_openmp_cuda.py on NumPy arrays, and vs_openmp_njit.py. For
each kernel the harness writes the inputs to .npy files, every system runs
the kernel once and writes its outputs, and each output is checked against
NumPy (vs_openmp_problems.py): a wrong result is reported, never timed.
Then the checked systems take turns, round after round (tidal and its other
block shapes, OpenMP, njit, tidal, ...), and each time is the median over
the rounds.

    /usr/bin/python3 bench/run.py --only vs-openmp [--quick]
    /usr/bin/python3 bench/cpu_vs_openmp.py --worker tidal|njit   # a worker (stdin/stdout)
"""

import math
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import vs_openmp_problems as problems  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
OPENMP_SOURCES = [os.path.join(BENCH, "openmp", f) for f in ("main.cpp", "kernels.cpp", "kernels.h")]
OPENMP_FLAGS = ["-O3", "-march=native", "-fopenmp", "-std=c++17"]
BUILD = os.path.join(common.ROOT, "build", "bench")
TRIAD_DOUBLES = {False: 1 << 25, True: 1 << 24}  # three arrays of 256 (quick: 128) MiB
REPLY_TIMEOUT_S = 600
ROUND_TARGET_S = 0.02  # a system's share of a round: repeat the kernel to about this long
PAUSE_S = 0.005  # between two systems' turns, after the last one's threads went idle
# A system's threads keep running after its turn: libgomp's (OpenMP's, and
# njit's "omp" threading layer) spin about 8 ms of CPU after each parallel
# region (measured here: 7.6-8.9 ms of process CPU time in the 100 ms after
# a region, the main thread asleep), tidal's workers 0.1 ms. A turn starts
# once the last turn's process has been idle this long (at most IDLE_LIMIT_S).
IDLE_QUIET_S = 0.002
IDLE_LIMIT_S = 0.2


def _last_level_cache_bytes(default=32 << 20):
    """The size of the largest CPU cache Linux lists (sysfs), else `default`."""
    sizes = []
    folder = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for index in os.listdir(folder):
            with open(os.path.join(folder, index, "size")) as text:
                value = text.read().strip()
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(value[-1:], 1)
            sizes.append(int(value.rstrip("KMG")) * scale)
    except (OSError, ValueError):
        pass
    return max(sizes, default=default)


_SWEEP = []


def evict_caches():
    """Writes a buffer twice the size of the last-level cache, so that every
    turn starts with the caches holding none of its kernel's data. Without
    it a turn that followed a turn of the same process (tidal's block-shape
    variants follow each other) found its arrays in the cache, where the
    others found another process's: the 2048² stencil (32 MiB, this VM's
    L3) ran 0.55-0.94 ms in OpenMP's warm loop and 1.2-1.4 ms after a pause."""
    if not _SWEEP:
        _SWEEP.append(np.zeros(2 * _last_level_cache_bytes() // 8, np.int64))
    _SWEEP[0] += 1


def build_openmp(out_dir=BUILD):
    """Builds bench/openmp/ into out_dir/vs_openmp unless it is newer than its
    sources; returns its path. Raises RuntimeError without g++ or on an error."""
    compiler = shutil.which("g++")
    if compiler is None:
        raise RuntimeError("g++ is not installed")
    binary = os.path.join(out_dir, "vs_openmp")
    if os.path.exists(binary) and os.path.getmtime(binary) >= max(map(os.path.getmtime, OPENMP_SOURCES)):
        return binary
    os.makedirs(out_dir, exist_ok=True)
    command = [compiler] + OPENMP_FLAGS + [s for s in OPENMP_SOURCES if s.endswith(".cpp")] + \
        ["-o", binary + ".tmp"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError("g++ failed: " + (done.stderr.strip().splitlines() or ["?"])[-1])
    os.replace(binary + ".tmp", binary)
    return binary


class Worker:
    """A system's worker process: one command line in, one answer line out."""

    def __init__(self, system, args, env=None):
        self.system = system
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env,
                                        cwd=common.ROOT, bufsize=1)

    def ask(self, line, timeout=REPLY_TIMEOUT_S):
        """The answer to `line`; RuntimeError when the worker answers an error, dies or hangs."""
        if self.process.poll() is not None:
            raise RuntimeError(f"the {self.system} worker has exited ({self._exit()})")
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise RuntimeError(f"the {self.system} worker has exited ({self._exit()})") from None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            self.close()
            raise RuntimeError(f"no answer from the {self.system} worker within {timeout} s")
        answer = self.process.stdout.readline().strip()
        if not answer:
            self.process.wait()
            raise RuntimeError(f"the {self.system} worker has exited ({self._exit()})")
        if answer.startswith("error "):
            raise RuntimeError(answer[len("error "):])
        return answer

    def _exit(self):
        code = self.process.returncode
        said = (self.process.stderr.read() or "").strip().splitlines()
        how = f"signal {-code}" if code is not None and code < 0 else f"status {code}"
        return how + (f": {said[-1]}" if said else "")

    def alive(self):
        return self.process.poll() is None

    def run_time(self):
        """The CPU time its threads have run, in seconds (the kernel's
        schedstat, in ns; None where Linux does not keep it)."""
        folder = f"/proc/{self.process.pid}/task"
        total = 0
        try:
            for task in os.listdir(folder):
                try:
                    with open(f"{folder}/{task}/schedstat") as stat:
                        total += int(stat.read().split()[0])
                except (FileNotFoundError, ProcessLookupError):
                    continue  # a thread that has just ended
        except OSError:
            return None
        return total * 1e-9

    def wait_until_idle(self, quiet=IDLE_QUIET_S, limit=IDLE_LIMIT_S):
        """Returns once no thread of the worker has run for `quiet` seconds
        (its spinning threads asleep), or after `limit`."""
        start = last_change = time.perf_counter()
        ran = self.run_time()
        while ran is not None:
            time.sleep(quiet / 4)
            now, later = time.perf_counter(), self.run_time()
            if later is None or now - start > limit:
                return
            if later - ran > quiet / 20:  # more than a twentieth of the interval
                last_change, ran = now, later
            elif now - last_change >= quiet:
                return

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            stream.close()


def start_worker(system):
    """The worker of 'openmp', 'tidal' or 'njit' (RuntimeError if it cannot run here)."""
    if system == "openmp":
        return Worker(system, [build_openmp()])
    if system == "njit":
        import importlib.util
        if importlib.util.find_spec("numba") is None:
            raise RuntimeError("numba is not installed (Debian: python3-numba)")
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(BUILD, "numba-cache"))
        return Worker(system, [common.PYTHON, os.path.abspath(__file__), "--worker", "njit"], env)
    if system == "tidal":
        return Worker(system, [common.PYTHON, os.path.abspath(__file__), "--worker", "tidal"],
                      common.tidal_env(TIDAL_TARGET="cpu"))
    raise KeyError(system)


def shape_text(block):
    return "x".join(map(str, block)) if len(block) > 1 else f"{block[0]}x1"


def parse_shape(text):
    return tuple(int(v) for v in text.split("x"))


def load_line(name, folder, label, inputs, outputs, params, block=None):
    params_text = ",".join(repr(float(p)) for p in params) or "-"
    line = f"load {name} {folder} {label} {','.join(inputs) or '-'} {','.join(outputs)} {params_text}"
    return line + (f" {shape_text(block)}" if block else "")


def run_kernel(name, size, workers, rounds, folder, log=print, tamper=None):
    """One kernel on every worker: check each system's result, then `rounds`
    alternating rounds of the systems whose result was right. Returns
    {'size', 'systems': {label: {'check': 'OK' | 'wrong: ...' | error,
    'time': summary, 'samples': [...]}}}. `tamper(expected)` changes the
    reference (the tests use it to see a wrong result reported)."""
    inputs, outputs, params = problems.make(name, size)
    for key, array in {**inputs, **outputs}.items():
        np.save(os.path.join(folder, key + ".npy"), array)
    expected = problems.reference(name, inputs, params)
    if tamper is not None:
        tamper(expected)
    entries = {}
    timed = []  # (label, worker, shape or None)
    for system, worker in workers.items():
        blocks = [None]
        if system == "tidal":
            blocks = list(problems.BLOCK_VARIANTS.get(name, (problems.BLOCK[name],)))
        for block in blocks:
            label = system if block is None else f"tidal@{shape_text(block)}"
            entry = entries.setdefault(label, {})
            if isinstance(worker, str):
                entry["error"] = worker
                continue
            try:
                worker.ask(load_line(name, folder, label, inputs, outputs, params, block))
                got = {key: np.load(os.path.join(folder, f"{label}-{key}.npy")) for key in outputs}
                wrong = problems.check(name, got, expected)
            except RuntimeError as error:
                entry["error"] = common.unsupported(error)
                log(f"  {name} {label}: {entry['error']}")
                continue
            entry["check"] = "OK" if wrong is None else f"wrong: {wrong}"
            if wrong is None:
                timed.append((label, worker, block))
            else:
                log(f"  {name} {label}: {entry['check']}")
    repeats = {}
    for label, worker, block in timed:
        first = _times(worker, 1, block)[0]  # a warm call, and how many fit in a round
        repeats[label] = max(1, min(50, int(ROUND_TARGET_S / max(first, 1e-6))))
    last = None
    for _ in range(rounds):
        for label, worker, block in timed:
            if "error" in entries[label]:
                continue
            if last is not None and last.alive():
                last.wait_until_idle()
            evict_caches()
            time.sleep(PAUSE_S)
            last = worker
            try:
                samples = _times(worker, repeats[label], block)
            except RuntimeError as error:
                entries[label]["error"] = common.unsupported(error)
                continue
            entries[label].setdefault("samples", []).append(sum(samples) / len(samples))
    for label, entry in entries.items():
        if entry.get("samples"):
            entry["time"] = common.summary(entry["samples"])
            entry["repeats_per_round"] = repeats[label]
    return {"size": size, "size_text": problems.size_text(name, size), "systems": entries,
            "bytes": problems.bytes_moved(name, size)}


def _times(worker, repeats, block):
    answer = worker.ask(f"time {repeats}" + (f" {shape_text(block)}" if block else ""))
    if not answer.startswith("times "):
        raise RuntimeError(f"unexpected answer {answer[:60]!r}")
    return [float(t) for t in answer.split()[1:]]


def measure_triad(worker, doubles, rounds):
    """STREAM's triad bandwidth in GB/s (24 bytes per element), one sample per round."""
    worker.ask(f"triad {doubles}")
    samples = []
    for _ in range(max(rounds, 3)):
        best = min(_times(worker, 3, None))
        samples.append(24 * doubles / best / 1e9)
    return samples


def measure(log=print, quick=False, rounds=None, kernels=problems.KERNELS, sizes=None,
            systems=("tidal", "openmp", "njit"), tamper=None, triad=True):
    """The section: every kernel on every system (rounds=0: checks only; the
    triad is measured when there are rounds, OpenMP and `triad`)."""
    rounds = (3 if quick else 14) if rounds is None else rounds
    column = 2 if quick else 1
    workers = {}
    for system in systems:
        try:
            workers[system] = start_worker(system)
        except RuntimeError as error:
            workers[system] = f"not run: {error}"
            log(f"  {system}: {workers[system]}")
    results = {"rounds": rounds, "cores": os.cpu_count(), "kernels": {},
               "openmp_flags": " ".join(OPENMP_FLAGS), "load_before": os.getloadavg()[0]}
    measure_bandwidth = rounds and triad and not isinstance(workers.get("openmp"), (str, type(None)))
    triad = []
    try:
        with tempfile.TemporaryDirectory(prefix="tidal-vs-openmp-",
                                         dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as folder:
            for name in kernels:
                size = sizes[name] if sizes else problems.SIZES[name][column]
                for system, worker in list(workers.items()):  # a worker that died restarts
                    if not isinstance(worker, str) and not worker.alive():
                        worker.close()
                        workers[system] = start_worker(system)
                t0 = time.perf_counter()
                if measure_bandwidth and name == kernels[0]:
                    triad += measure_triad(workers["openmp"], TRIAD_DOUBLES[quick], rounds)
                results["kernels"][name] = run_kernel(name, size, workers, rounds, folder, log, tamper)
                for file in os.listdir(folder):
                    os.remove(os.path.join(folder, file))
                log("  " + _progress(name, results["kernels"][name], time.perf_counter() - t0))
            if measure_bandwidth:
                triad += measure_triad(workers["openmp"], TRIAD_DOUBLES[quick], rounds)
    finally:
        for worker in workers.values():
            if not isinstance(worker, str):
                worker.close()
    results["load_after"] = os.getloadavg()[0]
    if triad:
        results["triad_gbs"] = common.summary(triad, unit="GB/s")
        log(f"  triad: {results['triad_gbs']['median']:.1f} GB/s (median of {len(triad)})")
    return results


def _progress(name, entry, seconds):
    cells = []
    for label, system in entry["systems"].items():
        if "time" in system:
            cells.append(f"{label} {system['time']['median'] * 1e3:.2f} ms")
        else:
            cells.append(f"{label} {system.get('error') or system.get('check', '?')}"[:90])
    return f"{name} {entry['size_text']}: " + ", ".join(cells) + f" ({seconds:.1f} s)"


# --- workers ---------------------------------------------------------------

def worker_main(system):
    """A tidal or njit worker: the commands of bench/openmp/main.cpp on stdin."""
    if system == "tidal":
        from tidal import cuda
        import kernels
        namespace = kernels.define(cuda, os.path.join(BENCH, "vs_openmp_cuda.py"))

        def bind(name, arrays, params, block):
            return problems.tidal_call(name, namespace, arrays, params, block)
    else:
        import vs_openmp_njit

        def bind(name, arrays, params, block):
            return problems.njit_call(name, vs_openmp_njit.KERNELS, arrays, params)
    loaded = {}   # block shape text -> call
    arrays = {}
    current = None
    for line in sys.stdin:
        words = line.split()
        try:
            if words[0] == "load":
                name, folder, label, inputs, outputs, params = words[1:7]
                shape = words[7] if len(words) > 7 else "-"
                names = [n for n in (inputs + "," + outputs).split(",") if n != "-"]
                if current != (name, folder):
                    loaded.clear()
                    arrays = {n: np.load(os.path.join(folder, n + ".npy")) for n in names}
                    current = (name, folder)
                for n in outputs.split(","):  # as written: a shape that writes nothing fails
                    arrays[n][...] = np.load(os.path.join(folder, n + ".npy"))
                values = [float(p) for p in params.split(",")] if params != "-" else []
                call = bind(name, arrays, values, parse_shape(shape) if shape != "-" else None)
                call()
                loaded[shape] = call
                for n in outputs.split(","):
                    np.save(os.path.join(folder, f"{label}-{n}.npy"), arrays[n])
                answer = "ok"
            elif words[0] == "time":
                call = loaded[words[2] if len(words) > 2 else "-"]
                times = []
                for _ in range(int(words[1])):
                    t0 = time.perf_counter()
                    call()
                    times.append(time.perf_counter() - t0)
                answer = "times " + " ".join(f"{t:.9g}" for t in times)
            else:
                answer = f"error unknown command {words[0]!r}"
        except Exception as error:  # noqa: BLE001 - reported to the harness as one line
            text = str(error).strip().splitlines()
            answer = "error " + (f"{type(error).__name__}: {text[0]}" if text else type(error).__name__)
        print(answer, flush=True)


# --- report ----------------------------------------------------------------

def _ms(entry):
    return f"{entry['time']['median'] * 1e3:.2f} ms" if "time" in entry else \
        (entry.get("error") or entry.get("check") or "–").replace("|", "\\|")


def _ratio(a, b):
    if "time" in a and "time" in b:
        return a["time"]["median"] / b["time"]["median"]
    return None


def _tidal(entry, name):
    """tidal's entry at the block shape the CUDA author chose."""
    systems = entry["systems"]
    return systems.get(f"tidal@{shape_text(problems.BLOCK[name])}", systems.get("tidal", {}))


def geometric_mean(values):
    values = [v for v in values if v]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def table(results):
    lines = ["## vs-openmp: the cpu target beside C++/OpenMP and @njit(parallel=True) (issue 25)", ""]
    if "error" in results:
        return lines + [results["error"], ""]
    triad = results.get("triad_gbs")
    load = ""
    if "load_before" in results:
        load = (f" The machine's load average (1 min) was {results['load_before']:.1f} before and "
                f"{results['load_after']:.1f} after")
        busy = max(results["load_before"], results["load_after"]) > results["cores"]
        load += (": more than its cores, so other work shared them and the times are noisy."
                 if busy else ".")
    lines += [f"{results['cores']} cores, every system in its own process with all of them; "
              f"each result checked against NumPy before it is timed; median of "
              f"{results['rounds']} alternating rounds (a round repeats a kernel to about "
              f"{ROUND_TARGET_S * 1e3:g} ms). OpenMP: `g++ {results['openmp_flags']}`. tidal: the "
              "CUDA-style kernel (`bench/vs_openmp_cuda.py`) on NumPy arrays with its author's "
              "block shape. GB/s counts each array once (STREAM's rule); the triad is "
              f"STREAM's (C++/OpenMP, double): "
              + (f"**{triad['median']:.1f} GB/s** (median; {triad['min']:.1f}–{triad['max']:.1f})."
                 if triad else "not measured.") + load, "",
              "| kernel | size | OpenMP | tidal | njit(parallel) | tidal ÷ OpenMP | tidal ÷ njit "
              "| GB/s OpenMP / tidal / njit | tidal % of triad |",
              "|---|---|---|---|---|---|---|---|---|"]
    vs_openmp, vs_njit = [], []
    for name, entry in results["kernels"].items():
        systems = entry["systems"]
        tidal, openmp, njit = _tidal(entry, name), systems.get("openmp", {}), systems.get("njit", {})
        r_omp, r_njit = _ratio(tidal, openmp), _ratio(tidal, njit)
        vs_openmp.append(r_omp)
        vs_njit.append(r_njit)
        bandwidth = percent = ""
        if name in problems.MEMORY_BOUND and entry.get("bytes"):
            gbs = [entry["bytes"] / s["time"]["median"] / 1e9 if "time" in s else None
                   for s in (openmp, tidal, njit)]
            bandwidth = " / ".join(f"{g:.1f}" if g else "–" for g in gbs)
            if triad and gbs[1]:
                percent = f"{100 * gbs[1] / triad['median']:.0f}%"
        lines.append(f"| {problems.SIZES[name][0]} | {entry['size_text']} | {_ms(openmp)} | "
                     f"{_ms(tidal)} | {_ms(njit)} | {_fmt(r_omp)} | {_fmt(r_njit)} | "
                     f"{bandwidth} | {percent} |")
    lines += [f"| **geometric mean** | | | | | **{_fmt(geometric_mean(vs_openmp))}** | "
              f"**{_fmt(geometric_mean(vs_njit))}** | | |", "",
              "Ratios above 1: tidal is slower. The geometric means are over the kernels with both "
              "times. The issue's goals: every kernel ≤ 1.25× OpenMP, the mean ≤ 1.1×, every kernel "
              "≤ 1× njit, the memory-bound kernels ≥ 85% of the triad.", ""]
    lines += shape_table(results)
    return lines


def shape_table(results):
    rows = []
    for name, entry in results["kernels"].items():
        if name not in problems.BLOCK_VARIANTS:
            continue
        openmp = entry["systems"].get("openmp", {})
        for block in problems.BLOCK_VARIANTS[name]:
            tidal = entry["systems"].get(f"tidal@{shape_text(block)}", {})
            cells = [problems.SIZES[name][0], entry["size_text"], shape_text(block), _ms(tidal),
                     _fmt(_ratio(tidal, openmp))]
            if name in problems.MEMORY_BOUND and "time" in tidal and results.get("triad_gbs"):
                gbs = entry["bytes"] / tidal["time"]["median"] / 1e9
                cells.append(f"{gbs:.1f} GB/s, {100 * gbs / results['triad_gbs']['median']:.0f}%")
            else:
                cells.append("")
            rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return []
    return ["### tidal per block shape", "",
            "The same kernel launched with each of the issue's block shapes (the goal: the same "
            "ratios whatever the shape).", "",
            "| kernel | size | block | tidal | tidal ÷ OpenMP | GB/s, % of triad |",
            "|---|---|---|---|---|---|"] + rows + [""]


def _fmt(ratio):
    return f"{ratio:.2f}" if ratio else "–"


def plot(results, save, plt):
    """tidal ÷ OpenMP and tidal ÷ njit per kernel, log scale."""
    names = [n for n in results.get("kernels", {})]
    if not names:
        return
    omp = [_ratio(_tidal(results["kernels"][n], n), results["kernels"][n]["systems"].get("openmp", {}))
           for n in names]
    njit = [_ratio(_tidal(results["kernels"][n], n), results["kernels"][n]["systems"].get("njit", {}))
            for n in names]
    if not any(omp) and not any(njit):
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.38
    xs = range(len(names))
    ax.bar([x - width / 2 for x in xs], [v or float("nan") for v in omp], width, label="tidal ÷ OpenMP")
    ax.bar([x + width / 2 for x in xs], [v or float("nan") for v in njit], width,
           label="tidal ÷ njit(parallel)")
    ax.axhline(1, color="black", linewidth=0.8)
    ax.axhline(1.25, color="gray", linestyle="--", linewidth=0.8, label="goal: 1.25× OpenMP")
    ax.set_yscale("log")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("time ratio (above 1: tidal slower)")
    ax.set_title(f"cpu target vs OpenMP and njit(parallel) ({results.get('cores')} cores)")
    ax.legend(fontsize=8)
    save(fig, "vs-openmp")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker_main(sys.argv[2])
    else:
        import json
        print(json.dumps(measure(quick="--quick" in sys.argv), indent=1))
