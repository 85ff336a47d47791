"""Shared pieces of the benchmarks: statistics, timing, the machine, errors."""

import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_PYTHON = os.path.join(ROOT, "build", "python")
PYTHON = "/usr/bin/python3"


def summary(samples, unit="s"):
    """Median over repeats with the spread: {'median', 'min', 'max', 'q1', 'q3', 'n', 'unit'}."""
    values = sorted(samples)
    if not values:
        return None
    n = len(values)
    if n >= 4:
        q1, _, q3 = statistics.quantiles(values, n=4)
    else:
        q1, q3 = values[0], values[-1]
    return {"median": statistics.median(values), "min": values[0], "max": values[-1],
            "q1": q1, "q3": q3, "n": n, "unit": unit}


def repeat(func, repeats, budget_s=None, minimum=3):
    """Runs func() `repeats` times (fewer, but at least `minimum`, once `budget_s`
    is spent) and returns the wall times in seconds."""
    times = []
    start = time.perf_counter()
    for k in range(repeats):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
        if budget_s is not None and k + 1 >= minimum and time.perf_counter() - start > budget_s:
            break
    return times


def unsupported(error):
    """'unsupported: <first line of the error>' for a kernel tidal can't compile or run yet."""
    text = str(error).strip().splitlines()
    first = text[0] if text else type(error).__name__
    return f"unsupported: {first}"


def git_commit():
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def gpu_info():
    """GPU names and driver through nvidia-smi, or None without one."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return [line.strip() for line in out.stdout.strip().splitlines()]


def machine():
    return {
        "host": socket.gethostname(),
        "cores": os.cpu_count(),
        "cpu_model": cpu_model(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "gpu": gpu_info(),
        "tidal_commit": git_commit(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def tidal_env(**extra):
    """The environment of a child process that imports tidal from the build tree."""
    env = dict(os.environ)
    env["PYTHONPATH"] = BUILD_PYTHON + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env


def run_child(code_or_args, env, timeout=300):
    """Runs a child Python (`-c code` or a script with arguments) and parses the
    JSON that it prints on its last stdout line. A child that crashes (the
    compiler is being written: a segfault must not end the benchmark) or
    fails raises RuntimeError with what it said last."""
    args = [PYTHON, "-c", code_or_args] if isinstance(code_or_args, str) else [PYTHON] + code_or_args
    try:
        out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timed out after {timeout} s") from None
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    if out.returncode != 0 or not lines:
        tail = [line for line in (out.stderr or out.stdout).strip().splitlines()
                if "no usable CUDA GPU" not in line]
        said = tail[-1] if tail else ""
        if out.returncode < 0:
            try:
                name = signal.Signals(-out.returncode).name
            except ValueError:
                name = f"signal {-out.returncode}"
            raise RuntimeError(f"the process crashed ({name})" + (f": {said}" if said else ""))
        raise RuntimeError(said or f"exit status {out.returncode}")
    return json.loads(lines[-1])


def tidal_child(script, args, timeout=300, target="cpu", **env):
    """Runs bench/<script> with `args` in a new process that imports tidal from
    the build (with these environment variables too)."""
    return run_child([os.path.join(ROOT, "bench", script)] + list(args),
                     tidal_env(TIDAL_TARGET=target, **env), timeout=timeout)


MOCK_DRIVER = os.path.join(ROOT, "build", "lib", "libtidal_mock_cuda.so")
