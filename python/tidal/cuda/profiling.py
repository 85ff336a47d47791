"""Numba's profiler switches: ``cuda.profile_start()``, ``cuda.profile_stop()``
and the ``cuda.profiling()`` context manager, which mark the span of a
program that a CUDA profiler started with collection off (``nsys profile
--capture-range=cudaProfilerApi``, ``ncu --profile-from-start off``)
records. On the cuda target they are the driver's ``cuProfilerStart`` and
``cuProfilerStop`` in the current device's context; on the cpu target there
is no CUDA profiler to tell and they do nothing (use ``perf`` or
``bench/profile_cpu.py`` there, docs/cpu-target.md)."""

import contextlib

from ._native import native
from .target import on_cuda

__all__ = ["profile_start", "profile_stop", "profiling"]


def profile_start():
    """Starts the CUDA profiler's collection (cuProfilerStart)."""
    if on_cuda():
        native.cuda_profile(True)


def profile_stop():
    """Stops the CUDA profiler's collection (cuProfilerStop)."""
    if on_cuda():
        native.cuda_profile(False)


@contextlib.contextmanager
def profiling():
    """The profiler collects inside the block: profile_start() on entry,
    profile_stop() on the way out, also when the block raises."""
    profile_start()
    try:
        yield
    finally:
        profile_stop()
