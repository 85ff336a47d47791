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
