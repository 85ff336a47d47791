"""Numba's performance warnings (python/src/PerformanceWarnings.cpp), on
every target: a grid too small to fill a GPU (once per grid size and
kernel) and a host array that a GPU's launch copies (on the cuda target at
each launch, on the cpu target, which reads it in place, once per kernel),
as tidal.errors.PerformanceWarning (alias NumbaPerformanceWarning). Each
has its switch: TIDAL_ variables, else Numba's config when the program
imported numba.core.config, else NUMBA_ variables. And Numba's warning
for cuda.jit(debug=True) with opt=True (tidal.errors.InvalidConfigWarning)."""

import sys
import types
import warnings

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import (
    InvalidConfigWarning, NumbaInvalidConfigWarning, NumbaPerformanceWarning,
    PerformanceWarning,
)

SWITCHES = ("CUDA_LOW_OCCUPANCY_WARNINGS", "CUDA_WARN_ON_IMPLICIT_COPY")
SMALL_GRID = "Grid size 1 will likely result in GPU under-utilization due to low occupancy."
HOST_COPY = "Host array used in CUDA kernel will incur copy overhead to/from device."
CPU_NOTE = " (On a GPU; the cpu target reads host arrays in place, without copies.)"


def host_copy(target):
    """Numba's text; the cpu target, which copies nothing, says whose cost it is."""
    return HOST_COPY + (CPU_NOTE if target.name == "cpu" else "")


@pytest.fixture
def switches(monkeypatch):
    for name in SWITCHES:
        for prefix in ("TIDAL_", "NUMBA_"):
            monkeypatch.delenv(prefix + name, raising=False)
    # Numba's config, as a program that imported Numba has it (a stand-in
    # module: the tests do not import Numba).
    monkeypatch.delitem(sys.modules, "numba.core.config", raising=False)
    return monkeypatch


def numba_config(monkeypatch, **values):
    """Puts a numba.core.config with these switches in sys.modules."""
    config = types.ModuleType("numba.core.config")
    for name, value in values.items():
        setattr(config, name, value)
    monkeypatch.setitem(sys.modules, "numba.core.config", config)
    return config


def make_kernel():
    @cuda.jit
    def store(r, x):
        r[0] = x + 1

    return store


def recorded(launch):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        launch()
    return [str(w.message) for w in caught if issubclass(w.category, PerformanceWarning)]


def test_numba_names_are_the_same_classes():
    assert NumbaPerformanceWarning is PerformanceWarning
    assert NumbaInvalidConfigWarning is InvalidConfigWarning
    assert issubclass(PerformanceWarning, Warning) and issubclass(InvalidConfigWarning, Warning)


def test_a_small_grid_warns_once_per_grid_size(target, switches):
    kernel = make_kernel()
    r = cuda.to_device(np.zeros(1, np.float32))
    assert recorded(lambda: kernel[1, 1](r, 1)) == [SMALL_GRID]
    # Once per grid size and kernel, as Numba's cached configurations.
    assert recorded(lambda: kernel[1, 1](r, 1)) == []
    assert recorded(lambda: kernel[(2, 3), 1](r, 1)) == [
        "Grid size 6 will likely result in GPU under-utilization due to low occupancy."]
    assert recorded(lambda: make_kernel()[1, 1](r, 1)) == [SMALL_GRID]  # another kernel


def test_a_large_grid_does_not_warn(target, switches):
    kernel = make_kernel()
    r = cuda.to_device(np.zeros(1, np.float32))
    assert recorded(lambda: kernel[128, 32](r, 1)) == []
    assert recorded(lambda: kernel[(16, 8), 32](r, 1)) == []


@pytest.mark.parametrize("variable", ["TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS",
                                      "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"])
def test_the_low_occupancy_switch(target, switches, variable):
    switches.setenv(variable, "0")
    kernel = make_kernel()
    r = cuda.to_device(np.zeros(1, np.float32))
    assert recorded(lambda: kernel[1, 1](r, 1)) == []
    switches.setenv(variable, "1")  # read at each launch
    assert recorded(lambda: kernel[1, 1](r, 1)) == [SMALL_GRID]


def test_numbas_config_switches_them_when_numba_is_imported(target, switches):
    config = numba_config(switches, CUDA_LOW_OCCUPANCY_WARNINGS=0, CUDA_WARN_ON_IMPLICIT_COPY=0)
    kernel = make_kernel()
    assert recorded(lambda: kernel[1, 1](np.zeros(1, np.float32), 1)) == []
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 1  # as numba.tests.support.override_config
    config.CUDA_WARN_ON_IMPLICIT_COPY = 1
    assert recorded(lambda: kernel[1, 1](np.zeros(1, np.float32), 1)) == [SMALL_GRID, host_copy(target)]
    # NUMBA_ variables are Numba's config's business once it is imported;
    # TIDAL_ variables come first.
    switches.setenv("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    assert recorded(lambda: make_kernel()[1, 1](cuda.device_array(1, np.float32), 1)) == \
        [SMALL_GRID]
    switches.setenv("TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    assert recorded(lambda: make_kernel()[1, 1](cuda.device_array(1, np.float32), 1)) == []
    # A config without the switch (an older Numba): the NUMBA_ variable, then on.
    del config.CUDA_WARN_ON_IMPLICIT_COPY
    switches.setenv("NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", "0")
    assert recorded(lambda: make_kernel()[1, 1](np.zeros(1, np.float32), 1)) == []


def test_a_host_array_warns(target, switches):
    switches.setenv("TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    kernel = make_kernel()
    assert recorded(lambda: kernel[1, 1](np.zeros(1, np.float32), 1)) == [host_copy(target)]
    # The cuda target copies at each launch and warns each time; the cpu
    # target reads the array in place and says it once per kernel.
    again = recorded(lambda: kernel[1, 1](np.zeros(1, np.float32), 1))
    assert again == ([] if target.name == "cpu" else [host_copy(target)])
    # A pinned array is a host array too (Numba's test_pinned_warn_on_host_array).
    assert recorded(lambda: make_kernel()[1, 1](cuda.pinned_array(1, np.float32), 1)) == \
        [host_copy(target)]


def test_arrays_a_gpu_reads_in_place_do_not_warn(target, switches):
    switches.setenv("TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    for array in (cuda.InOut(np.zeros(1, np.float32)),  # asked for
                  cuda.to_device(np.zeros(1, np.float32)),
                  cuda.mapped_array(1, np.float32),
                  cuda.managed_array(1, np.float32)):
        assert recorded(lambda: make_kernel()[1, 1](array, 1)) == [], array


def test_the_implicit_copy_switch(target, switches):
    switches.setenv("TIDAL_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    switches.setenv("NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", "0")
    kernel = make_kernel()
    assert recorded(lambda: kernel[1, 1](np.zeros(1, np.float32), 1)) == []
    # Switched on later: the cpu target's once per kernel is still to come.
    switches.setenv("NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", "1")
    assert recorded(lambda: kernel[1, 1](np.zeros(1, np.float32), 1)) == [host_copy(target)]


def test_a_filter_can_make_it_an_error(target, switches):
    kernel = make_kernel()
    r = cuda.to_device(np.zeros(1, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaPerformanceWarning)
        with pytest.raises(NumbaPerformanceWarning, match="Grid size 1"):
            kernel[1, 1](r, 1)
        # Raised, not given: it raises again.
        with pytest.raises(NumbaPerformanceWarning, match="Grid size 1"):
            kernel[1, 1](r, 1)


def caught_config_warnings(make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make()
    return [w for w in caught if issubclass(w.category, InvalidConfigWarning)]


def test_debug_with_opt_warns_as_numba():
    def f(x):
        x[0] = 1

    for options in ({"debug": True}, {"debug": True, "opt": True},
                    {"debug": True, "device": True}):
        (caught,) = caught_config_warnings(lambda: cuda.jit(**options)(f))
        assert "debug=True with opt=True (the default) is not supported by CUDA" in \
            str(caught.message)
        assert caught.filename == __file__  # the user's cuda.jit line
    for options in ({}, {"debug": True, "opt": False}, {"debug": False}, {"opt": True}):
        assert caught_config_warnings(lambda: cuda.jit(**options)(f)) == []


def test_the_warning_names_the_users_line(target, switches):
    # A launch made inside tidal (kernel.forall, a ufunc) is reported where
    # the user's code called it.
    kernel = make_kernel()
    r = cuda.to_device(np.zeros(1, np.float32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel.forall(1)(r, 1)
    (warning,) = [w for w in caught if issubclass(w.category, PerformanceWarning)]
    assert warning.filename == __file__ and str(warning.message) == SMALL_GRID


def test_library_kernels_whose_grids_the_library_chooses_do_not_warn(target, switches):
    from tidal import vectorize
    from tidal.cuda.kernels.transpose import transpose

    @vectorize(["int64(int64, int64)"], target="cuda")
    def add(x, y):
        return x + y

    def library_calls():
        cuda.reduce(lambda a, b: a + b)(np.arange(1000))
        transpose(cuda.to_device(np.zeros((3, 5))))
        add.reduce(np.arange(1001))

    assert recorded(library_calls) == []
    # The ufunc itself still warns for a small launch, as Numba's.
    assert recorded(lambda: add(np.arange(10), np.arange(10))) == [SMALL_GRID]
