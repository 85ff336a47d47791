"""Numba's performance warnings (python/src/PerformanceWarnings.cpp): a grid
too small to fill a GPU and a host array copied at a launch warn on the cuda
target, as tidal.errors.PerformanceWarning (alias NumbaPerformanceWarning),
each with its environment switch; the cpu target, which has no GPU to fill
and copies nothing, never warns."""

import warnings

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import NumbaPerformanceWarning, PerformanceWarning


@pytest.fixture
def switches(monkeypatch):
    for name in ("CUDA_LOW_OCCUPANCY_WARNINGS", "CUDA_WARN_ON_IMPLICIT_COPY"):
        for prefix in ("TIDAL_", "NUMBA_"):
            monkeypatch.delenv(prefix + name, raising=False)
    return monkeypatch


def make_kernel():
    @cuda.jit
    def store(r, x):
        r[0] = x + 1

    return store


def recorded(launch):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        launch()
    return [w for w in caught if issubclass(w.category, PerformanceWarning)]


def test_numba_name_is_the_same_class():
    assert NumbaPerformanceWarning is PerformanceWarning
    assert issubclass(PerformanceWarning, Warning)


def test_a_small_grid_warns_on_the_cuda_target(target, switches):
    kernel = make_kernel()
    r = cuda.to_device(np.zeros(1, np.float32))
    caught = recorded(lambda: kernel[1, 1](r, 1))
    if target.name == "cpu":
        assert caught == []
        return
    assert [str(w.message) for w in caught] == [
        "Grid size 1 will likely result in GPU under-utilization due to low occupancy."]
    # Once per grid size and kernel, as Numba's cached configurations.
    assert recorded(lambda: kernel[1, 1](r, 1)) == []
    assert len(recorded(lambda: kernel[(2, 3), 1](r, 1))) == 1


def test_a_large_grid_does_not_warn(target, switches):
    kernel = make_kernel()
    r = cuda.to_device(np.zeros(1, np.float32))
    assert recorded(lambda: kernel[256, 32](r, 1)) == []


@pytest.mark.parametrize("variable", ["TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS",
                                      "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"])
def test_the_low_occupancy_switch(target, switches, variable):
    switches.setenv(variable, "0")
    kernel = make_kernel()
    r = cuda.to_device(np.zeros(1, np.float32))
    assert recorded(lambda: kernel[1, 1](r, 1)) == []


def test_a_host_array_warns_on_the_cuda_target(target, switches):
    switches.setenv("TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    kernel = make_kernel()
    caught = recorded(lambda: kernel[1, 1](np.zeros(1, np.float32), 1))
    if target.name == "cpu":
        assert caught == []
        return
    assert [str(w.message) for w in caught] == [
        "Host array used in CUDA kernel will incur copy overhead to/from device."]
    # Asked for: no warning.
    assert recorded(lambda: kernel[1, 1](cuda.InOut(np.zeros(1, np.float32)), 1)) == []
    assert recorded(lambda: kernel[1, 1](cuda.to_device(np.zeros(1, np.float32)), 1)) == []


def test_the_implicit_copy_switch(target, switches):
    switches.setenv("TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    switches.setenv("NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", "0")
    kernel = make_kernel()
    assert recorded(lambda: kernel[1, 1](np.zeros(1, np.float32), 1)) == []


def test_a_filter_can_make_it_an_error(target, switches):
    kernel = make_kernel()
    r = cuda.to_device(np.zeros(1, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaPerformanceWarning)
        if target.name == "cpu":
            kernel[1, 1](r, 1)
        else:
            with pytest.raises(NumbaPerformanceWarning, match="Grid size 1"):
                kernel[1, 1](r, 1)
