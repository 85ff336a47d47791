"""Calling CPU-jitted functions from kernels, as Numba does: a dispatcher of
Numba's @jit/@njit (told by its `py_func`; tidal never imports Numba) has
its Python function compiled as a device function. One with an explicit
signature cannot compile, as in Numba; a plain Python function is refused
with what to write instead."""

import types

import numpy as np
import pytest

from tidal import cuda
from tidal.errors import CompileError, TypingError, UnsupportedError
from source_positions import position_of


class CpuDispatcher:
    """What tidal looks for in a CPU dispatcher: py_func, _can_compile."""

    def __init__(self, function, can_compile=True):
        self.py_func = function
        self._can_compile = can_compile

    def __call__(self, *args):
        return self.py_func(*args)


def _add(a, b):
    return a + b


def test_a_cpu_dispatcher_compiles_as_a_device_function(target):
    add = CpuDispatcher(_add)

    @cuda.jit
    def add_kernel(ary):
        i = cuda.grid(1)
        ary[i] = add(ary[i], 1)

    ary = np.arange(10)
    add_kernel[1, ary.size](ary)
    target.assert_result("add_kernel", ary, np.arange(10) + 1)


def test_a_cpu_dispatcher_from_another_module(target):
    module = types.ModuleType("elsewhere")
    module.add = CpuDispatcher(_add)

    @cuda.jit
    def add_kernel(ary):
        i = cuda.grid(1)
        ary[i] = module.add(ary[i], 2.5)

    ary = np.zeros(4)
    add_kernel[1, 4](ary)
    target.assert_result("add_kernel", ary, np.full(4, 2.5))


def test_numbas_njit_compiles_as_a_device_function(target):
    numba = pytest.importorskip("numba")

    @numba.njit
    def scale(x, k):
        return x * k

    @cuda.jit
    def scale_kernel(ary):
        i = cuda.grid(1)
        ary[i] = scale(ary[i], 3)

    ary = np.arange(5.0)
    scale_kernel[1, 5](ary)
    target.assert_result("scale_kernel", ary, np.arange(5.0) * 3)


def test_a_cpu_dispatcher_that_cannot_compile_is_a_located_typing_error():
    add = CpuDispatcher(_add, can_compile=False)

    @cuda.jit
    def add_kernel(ary):
        ary[0] = add(ary[0], 1)

    with pytest.raises(TypingError) as info:
        add_kernel[1, 1](np.zeros(1))
    assert "Untyped global name 'add': using cpu function on device" in str(info.value)
    line, column = position_of(add_kernel.py_func, "add(ary[0], 1)")
    assert (info.value.line, info.value.column) == (line, column)


def test_a_plain_python_function_is_refused_with_what_to_write():
    @cuda.jit
    def add_kernel(ary):
        ary[0] = _add(ary[0], 1)

    with pytest.raises(UnsupportedError) as info:
        add_kernel[1, 1](np.zeros(1))
    assert ("call to the Python function '_add' in a kernel: make it a device function "
            "with @cuda.jit(device=True)") in str(info.value)
    line, column = position_of(add_kernel.py_func, "_add(ary[0], 1)")
    assert (info.value.line, info.value.column) == (line, column)
