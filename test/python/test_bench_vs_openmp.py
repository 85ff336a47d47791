"""The vs-openmp section of `make bench` (bench/cpu_vs_openmp.py) at tiny
sizes, timing nothing: each kernel's three versions (tidal's cpu target on
the CUDA-style kernel, C++/OpenMP, @njit(parallel=True)) give results that
pass the harness's checks against NumPy, and a wrong result is reported and
never timed.

The benchmark measures the cpu target only (its workers are processes of
their own with TIDAL_TARGET=cpu), so these tests take no `target` fixture:
the cuda target over the mock driver runs no kernels to check."""

import importlib.util
import os
import shutil
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import cpu_vs_openmp  # noqa: E402
import vs_openmp_problems as problems  # noqa: E402

TINY = {name: sizes[3] for name, sizes in problems.SIZES.items()}
ABSENT = {"openmp": None if shutil.which("g++") else "g++ is not installed (Debian: g++)",
          "njit": None if importlib.util.find_spec("numba") else
          "numba is not installed (Debian: python3-numba)"}


@pytest.fixture(scope="module")
def checked():
    """Every kernel on every system present, checks only (rounds=0)."""
    systems = [s for s in ("tidal", "openmp", "njit") if not ABSENT.get(s)]
    return cpu_vs_openmp.measure(log=lambda _: None, rounds=0, sizes=TINY, systems=systems)


@pytest.mark.parametrize("system", ["tidal", "openmp", "njit"])
@pytest.mark.parametrize("kernel", problems.KERNELS)
def test_every_version_passes_its_check(checked, kernel, system):
    if ABSENT.get(system):
        pytest.skip(ABSENT[system])
    entries = checked["kernels"][kernel]["systems"]
    labels = [label for label in entries if label.split("@")[0] == system]
    if system == "tidal":  # each block shape of the launch is checked on its own
        shapes = problems.BLOCK_VARIANTS.get(kernel, (problems.BLOCK[kernel],))
        assert labels == [f"tidal@{cpu_vs_openmp.shape_text(s)}" for s in shapes]
    else:
        assert labels == [system]
    for label in labels:
        assert entries[label] == {"check": "OK"}, (kernel, label)


def test_a_wrong_result_is_reported_and_not_timed():
    def tamper(expected):
        expected["out"][3] += 1.0  # a reference no system can match

    systems = [s for s in ("tidal", "openmp") if not ABSENT.get(s)]
    results = cpu_vs_openmp.measure(log=lambda _: None, rounds=1, kernels=("saxpy",),
                                    sizes=TINY, systems=systems, tamper=tamper, triad=False)
    entries = results["kernels"]["saxpy"]["systems"]
    assert set(entries) == {"tidal@256x1", "tidal@1024x1"} | ({"openmp"} if "openmp" in systems else set())
    for label, entry in entries.items():
        assert entry["check"].startswith("wrong: out[3] = "), label
        assert "(1 of 1000 elements wrong)" in entry["check"]
        assert "time" not in entry and "samples" not in entry
    assert "triad_gbs" not in results


@pytest.mark.parametrize("kernel", problems.KERNELS)
def test_the_check_catches_a_corrupted_output(kernel):
    inputs, _, params = problems.make(kernel, TINY[kernel])
    expected = problems.reference(kernel, inputs, params)
    right = {key: value.astype(np.int32 if kernel in ("histogram", "mandelbrot") else np.float32)
             for key, value in expected.items()}
    assert problems.check(kernel, right, expected) is None
    key = next(iter(right))
    wrong = {k: v.copy() for k, v in right.items()}
    if kernel == "mandelbrot":  # more than the edge's allowance of pixels
        flat = wrong[key].reshape(-1)
        flat[:int(flat.size * problems.MANDELBROT_EDGE) + 1] += 1
    else:
        wrong[key].reshape(-1)[-1] += 7
    message = problems.check(kernel, wrong, expected)
    assert message is not None and message.startswith(f"{key}["), message
    assert problems.check(kernel, {k: v[:-1] for k, v in right.items()}, expected).startswith(
        f"{key}: shape ")


def test_a_kernel_tidal_cannot_run_is_an_error_line_not_a_crash(tmp_path):
    worker = cpu_vs_openmp.start_worker("tidal")
    try:
        np.save(tmp_path / "out.npy", np.zeros(4, np.float32))
        with pytest.raises(RuntimeError, match="AttributeError: .*no_such_kernel"):
            worker.ask(f"load no_such_kernel {tmp_path} tidal - out - 1x1")
        assert worker.alive()
        with pytest.raises(RuntimeError, match="unknown command 'frobnicate'"):
            worker.ask("frobnicate")
    finally:
        worker.close()


def test_after_pause_times_three_launches_per_system_and_pause():
    # bench/after_pause.py at a tiny size: each system's result is checked,
    # then one line per system and pause with three launches' times.
    import subprocess
    if ABSENT["openmp"]:
        pytest.skip(ABSENT["openmp"])
    script = os.path.join(os.path.dirname(cpu_vs_openmp.__file__), "after_pause.py")
    run = subprocess.run([sys.executable, script, "saxpy", str(TINY["saxpy"]), "--pauses", "0,1",
                          "--repeats", "2"], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 4, run.stdout
    for line, (system, pause) in zip(lines, [("tidal", 0), ("openmp", 0), ("tidal", 1),
                                             ("openmp", 1)]):
        words = line.split()
        assert words[2] == system and words[4] == str(pause), line
        times = [float(t) for t in line.split("after it ")[1].split(" ms")[0].split(" / ")]
        assert len(times) == 3 and all(t >= 0 for t in times), line


def test_a_turn_waits_until_the_last_workers_threads_are_idle():
    # A process whose second thread spins for 0.4 s after it answers, as
    # libgomp's threads spin after a parallel region: wait_until_idle
    # returns only after the spinning stopped, and at once for a quiet one.
    import time
    spinner = ("import sys, threading, time\n"
               "def spin():\n"
               "    end = time.perf_counter() + 0.4\n"
               "    while time.perf_counter() < end: pass\n"
               "for line in sys.stdin:\n"
               "    threading.Thread(target=spin).start()\n"
               "    print('done', flush=True)\n")
    worker = cpu_vs_openmp.Worker("spinner", [sys.executable, "-c", spinner])
    try:
        if worker.run_time() is None:
            pytest.skip("this kernel keeps no /proc/PID/task/*/schedstat")
        worker.ask("go")
        start = time.perf_counter()
        worker.wait_until_idle(quiet=0.05, limit=10)
        waited = time.perf_counter() - start
        assert 0.3 <= waited < 5, waited
        ran = worker.run_time()
        time.sleep(0.1)
        assert worker.run_time() - ran < 0.01  # idle now
        start = time.perf_counter()
        worker.wait_until_idle(quiet=0.05, limit=10)
        assert time.perf_counter() - start < 1
    finally:
        worker.close()


def test_evict_caches_writes_twice_the_last_level_cache():
    last_level = cpu_vs_openmp._last_level_cache_bytes()
    assert last_level >= 1 << 20  # sysfs's largest cache, or the 32 MiB default
    cpu_vs_openmp._SWEEP.clear()
    cpu_vs_openmp.evict_caches()
    cpu_vs_openmp.evict_caches()
    (sweep,) = cpu_vs_openmp._SWEEP
    assert sweep.nbytes >= 2 * last_level
    assert (sweep == 2).all()  # every element written by each call


def test_ab_builds_compares_two_builds_in_alternating_turns():
    # bench/ab_builds.py at the tiny size, this build against itself: each
    # build's result is checked, then one line per kernel with both times,
    # OpenMP's and their ratio.
    import subprocess
    if ABSENT["openmp"]:
        pytest.skip(ABSENT["openmp"])
    script = os.path.join(os.path.dirname(cpu_vs_openmp.__file__), "ab_builds.py")
    build = os.path.dirname(cpu_vs_openmp.common.BUILD_PYTHON)
    run = subprocess.run([sys.executable, script, "--base", build, "--kernels", "saxpy,stencil",
                          "--rounds", "2", "--column", "3"], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].split() == ["kernel", "size", "this", "base", "OpenMP", "this/base"]
    assert [line.split()[0] for line in lines[1:]] == ["saxpy", "stencil"]
    for line in lines[1:]:
        this, base, openmp, ratio = (float(v) for v in line.split()[2:])
        # the times are printed to the microsecond: the ratio is this / base within that
        assert min(this, base, openmp) > 0 and abs(ratio * base - this) <= 0.0005 + 0.001 * ratio
