"""The gaps of debug=True found by fuzzing (issue 16; the reproducers are
in shared/bugs/debug_*.py): kernels that call device functions compile
with debug information."""

import numpy as np
import pytest

from tidal import cuda, float32
from targets import on_targets


# --- device functions --------------------------------------------------------------------


@pytest.mark.parametrize("option", ["debug", "lineinfo"])
def test_kernel_calling_device_functions_compiles_with_debug_info(target, option):
    @cuda.jit(device=True)
    def plus_one(v):
        return v + 1.0

    @cuda.jit(device=True)
    def plus_two(v):
        return plus_one(plus_one(v))

    @cuda.jit(**{option: True})
    def add_three(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = plus_one(plus_two(x[i]))

    x = np.arange(4.0)
    add_three[1, 4](x)
    target.assert_result("add_three", x, np.arange(4.0) + 3.0)


@on_targets("cpu")
def test_bounds_error_in_a_device_function_names_it(target):
    @cuda.jit(device=True)
    def get(a, i):
        return a[i]

    @cuda.jit(debug=True)
    def k(a, out):
        out[0] = get(a, 7)

    with pytest.raises(IndexError) as info:
        k[1, 1](np.zeros(4), np.zeros(1))
    message = str(info.value)
    assert message.startswith("index 7 is out of bounds for axis 0 with size 4 in device "
                              "function 'get' at ")
