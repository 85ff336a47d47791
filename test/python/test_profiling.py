"""Numba's profiler switches (tidal.cuda.profile_start, profile_stop,
profiling; python/tidal/cuda/profiling.py) on every target: over the mock
driver they are cuProfilerStart/cuProfilerStop, stopped also when the block
raises; on the cpu target they do nothing and a kernel inside runs."""

import numpy as np
import pytest

from tidal import cuda


@cuda.jit
def add_one(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] += 1


def profiler_calls(target):
    calls = target.driver_calls()
    if calls is None:  # not the mock
        return None
    return [c["call"] for c in calls if c["call"].startswith("cuProfiler")]


def test_profiling_brackets_the_block_even_when_it_raises(target):
    a = np.zeros(16, np.int32)
    with cuda.profiling():
        add_one[1, 16](a)
    with pytest.raises(KeyError):
        with cuda.profiling():
            raise KeyError("in the profiled block")
    cuda.profile_start()
    cuda.profile_stop()
    if target.computes:
        np.testing.assert_array_equal(a, 1)
    calls = profiler_calls(target)
    if calls is not None:
        assert calls == ["cuProfilerStart", "cuProfilerStop"] * 3


PERF_MAP_SCRIPT = """
import os
import numpy as np
from tidal import cuda

@cuda.jit
def add_one_for_perf(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] += 1

a = np.zeros(64, np.float32)
add_one_for_perf[2, 32](a)
print(os.getpid(), a.sum())
"""


@pytest.mark.parametrize("setting", ["1", "0"])
def test_perf_map_names_the_cpu_targets_block_functions(target, setting):
    # TIDAL_PERF_MAP=1: the cpu target's JIT writes /tmp/perf-<pid>.map,
    # "<address> <size> <name>" per function, which `perf report` reads;
    # the cuda target and TIDAL_PERF_MAP=0 write none.
    import subprocess
    import sys
    from pathlib import Path
    from child_processes import python_environment
    from mock_driver import MOCK

    environment = python_environment(TIDAL_TARGET=target.name, TIDAL_PERF_MAP=setting)
    if target.mock:
        environment["TIDAL_CUDA_DRIVER"] = str(MOCK)
    out = subprocess.run([sys.executable, "-c", PERF_MAP_SCRIPT], env=environment,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    pid, total = out.stdout.split()
    perf_map = Path(f"/tmp/perf-{pid}.map")
    if target.computes:
        assert float(total) == 64.0
    lines = ([line.split(" ", 2) for line in perf_map.read_text().splitlines()]
             if perf_map.exists() else [])
    named = {name: (int(address, 16), int(size, 16)) for address, size, name in lines}
    if target.name != "cpu" or setting == "0":
        # (a file of an earlier process with the same pid may be there)
        assert "__tidal_block_add_one_for_perf" not in named
        return
    perf_map.unlink()  # ours
    address, size = named["__tidal_block_add_one_for_perf"]
    assert address > 0 and size > 0
